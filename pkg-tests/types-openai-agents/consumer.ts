// A strict consumer of subagent-tree/openai-agents: the tree's tools on an
// Agent run through run(), and openAIAgentsHost as the runtime's host.
import { Agent, run, type FunctionTool } from '@openai/agents';
import { SubagentRuntime, MemoryStore, type Agent as Member, type AgentHost } from 'subagent-tree';
import { openAIAgentsHost, openAIAgentsTools, type OpenAIAgentsHostOptions } from 'subagent-tree/openai-agents';

export async function delegate(lead: Member, runtime: SubagentRuntime): Promise<unknown> {
  const tools: FunctionTool<any, any, string>[] = openAIAgentsTools(runtime.toolsFor(lead, { except: ['fork_agent'] }), { signal: new AbortController().signal });
  const agent = new Agent({ name: 'lead', instructions: 'Delegate.', tools });
  const result = await run(agent, 'Get the patch reviewed.');
  return result.finalOutput;
}

const store = new MemoryStore();
const options: OpenAIAgentsHostOptions = { agent: new Agent({ name: 'member', instructions: 'Be brief.' }), store, historyTurns: 10, maxTurns: 8, treeTools: { only: ['spawn_agent', 'send_message'] } };
const host: AgentHost = openAIAgentsHost(options);
export const runtime = new SubagentRuntime({ store, host });
