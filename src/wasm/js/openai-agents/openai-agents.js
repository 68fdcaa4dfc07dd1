// subagent-tree/openai-agents: the tree in the OpenAI Agents SDK
// (`@openai/agents`, an optional peer dependency: only this entry imports it).
//
// - `openAIAgentsTools(tools, options?)`: a member's tools (`turn.tools`,
//   `runtime.toolsFor(agent, choice)`) as the SDK's function tools (`tool()`,
//   non-strict JSON Schema: the runtime's own schemas), to put in an
//   `Agent`'s `tools`. Each call passes the run's signal on (and
//   `options.signal`); the model reads the tool's own text, a refusal included.
// - `openAIAgentsHost({ agent, store?, historyTurns?, maxTurns?, treeTools? })`:
//   an `AgentHost` that runs each member's turn with the SDK's `run(agent,
//   input, { signal })`: the member's identity and task context join the
//   agent's instructions, its earlier turns come from its log (the `store` given, else read through the turn),
//   its tree tools are added to the agent's own, the turn's signal aborts the
//   run (`aborted`), and usage is reported in the runtime's shape.
import { run, tool } from '@openai/agents';
import { configError, describe, either, parseStructured, priorTurns } from '../edge/host-shared.js';

const DEFAULT_MAX_TURNS = 16;
const DEFAULT_HISTORY_TURNS = 20;

/** A member's tools as OpenAI Agents function tools (same names, descriptions and schemas). */
export function openAIAgentsTools(tools, options) {
  if (!Array.isArray(tools)) throw configError("openAIAgentsTools takes the member's tools: turn.tools or runtime.toolsFor(agent)");
  const signal = options?.signal;
  return tools.map((t) => {
    if (!t || typeof t.name !== 'string' || typeof t.call !== 'function') {
      throw configError('openAIAgentsTools takes tools of the runtime ({ name, description, inputSchema, call })');
    }
    return tool({
      name: t.name,
      description: t.description,
      parameters: t.inputSchema,
      strict: false,
      async execute(input, _context, details) {
        const aborted = either(details?.signal, signal);
        if (aborted?.aborted) return `${t.name} was not run: the call was aborted.`;
        const result = await t.call(input ?? {}, aborted ? { signal: aborted } : undefined);
        return typeof result?.content === 'string' ? result.content : JSON.stringify(result ?? null);
      },
    });
  });
}

/** The SDK's run usage in the runtime's `Usage` shape. */
function usageOf(u) {
  const n = (v) => (Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const usage = { inputTokens: n(u?.inputTokens), outputTokens: n(u?.outputTokens) };
  const cached = u?.inputTokensDetails?.reduce?.((sum, d) => sum + n(d?.cached_tokens), 0);
  if (cached) usage.cacheReadTokens = cached;
  const reasoning = u?.outputTokensDetails?.reduce?.((sum, d) => sum + n(d?.reasoning_tokens), 0);
  if (reasoning) usage.reasoningTokens = reasoning;
  return usage;
}

/** An earlier turn (`{ role, content }` text) as the SDK's input items. */
function historyItem(m) {
  return m.role === 'assistant'
    ? { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: m.content }] }
    : { role: 'user', content: m.content };
}

/**
 * An `AgentHost` over an OpenAI Agents `Agent`: each turn runs it with
 * `run()`, its tree tools added to its own.
 */
export function openAIAgentsHost(options) {
  const { agent, store, historyTurns, maxTurns, treeTools } = options ?? {};
  if (!agent || typeof agent.clone !== 'function') throw configError('openAIAgentsHost needs { agent }: an Agent of @openai/agents');
  const turnsKept = historyTurns ?? DEFAULT_HISTORY_TURNS;
  if (!Number.isSafeInteger(turnsKept) || turnsKept < 0) throw configError('historyTurns must be a non-negative integer');
  const limit = maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isSafeInteger(limit) || limit < 1) throw configError('maxTurns must be a positive integer');
  if (store !== undefined && typeof store?.read !== 'function') throw configError("store must be the runtime's store");
  if (treeTools !== undefined && (treeTools === null || typeof treeTools !== 'object')) {
    throw configError('treeTools must be an object { only?, except? } of tool names');
  }
  return {
    async runTurn(turn) {
      const signal = turn.signal ?? new AbortController().signal;
      let member;
      let input;
      try {
        const own = treeTools && turn.toolsFor ? turn.toolsFor(treeTools) : turn.tools ?? [];
        const base = typeof agent.instructions === 'string' ? agent.instructions : '';
        const instructions = [base, turn.context];
        if (turn.outputSchema !== undefined && turn.outputSchema !== null) {
          instructions.push(`When you finish, reply with only a JSON object (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(turn.outputSchema)}`);
        }
        member = agent.clone({
          instructions: instructions.filter((s) => s).join('\n\n'),
          tools: [...agent.tools, ...openAIAgentsTools(Array.from(own), { signal })],
        });
        // From the store given, else through the turn: a member's earlier turns are never forgotten.
        const history = await priorTurns(store, turn, turnsKept, signal);
        input = [...history.map(historyItem), { role: 'user', content: (turn.inputText ?? []).join('\n\n') }];
      } catch (e) {
        if (signal.aborted) return { stopReason: 'aborted' };
        return { stopReason: 'error', diagnostic: `the turn could not be prepared (${describe(e)})` };
      }
      try {
        const result = await run(member, input, { signal, maxTurns: limit });
        if (signal.aborted) return { stopReason: 'aborted' };
        const output = typeof result.finalOutput === 'string' ? result.finalOutput : JSON.stringify(result.finalOutput ?? '');
        const outcome = { stopReason: 'completed', messages: output ? [output] : [], usage: usageOf(result.state?.usage) };
        if (turn.outputSchema !== undefined && turn.outputSchema !== null) {
          const structured = parseStructured(output);
          if (structured !== undefined) outcome.structured = structured;
        }
        return outcome;
      } catch (e) {
        if (signal.aborted) return { stopReason: 'aborted' };
        return { stopReason: 'error', diagnostic: `the agent run failed (${describe(e)})` };
      }
    },
  };
}
