// Given to README blocks marked `given: openai-turn`: the block runs inside a
// host's `runTurn(turn)` with an OpenAI-style client (only the part it uses).
declare var turn: import('subagent-tree').AgentTurn;
declare var model: string;
declare var messages: Array<Record<string, unknown>>;
declare var openai: {
  chat: {
    completions: {
      create(request: { model: string; messages: unknown[]; tools: unknown[] }): Promise<{
        choices: Array<{ message: { tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> } }>;
      }>;
    };
  };
};
