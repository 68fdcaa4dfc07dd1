// A strict consumer of subagent-tree/ai-sdk: the tree's tools in the SDK's
// generateText and streamText, and aiSdkHost as the runtime's host.
import { generateText, streamText, stepCountIs, tool, jsonSchema, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { SubagentRuntime, MemoryStore, type Agent, type AgentHost } from 'subagent-tree';
import { aiSdkHost, aiSdkTools, type AiSdkHostOptions } from 'subagent-tree/ai-sdk';

export async function run(lead: Agent, runtime: SubagentRuntime): Promise<string> {
  const model = new MockLanguageModelV4();
  const tools: ToolSet = aiSdkTools(runtime.toolsFor(lead, { except: ['fork_agent'] }), { signal: new AbortController().signal });
  const own = { now: tool({ description: 'The time', inputSchema: jsonSchema<{ zone: string }>({ type: 'object', properties: { zone: { type: 'string' } } }), execute: async ({ zone }) => `12:00 ${zone}` }) };
  const generated = await generateText({ model, tools: { ...tools, ...own }, prompt: 'Delegate.', stopWhen: stepCountIs(4) });
  const streamed = streamText({ model, tools, prompt: 'Delegate.' });
  return generated.text + (await streamed.text);
}

const options: AiSdkHostOptions = { model: new MockLanguageModelV4(), system: 'Be brief.', maxSteps: 8, temperature: 0, treeTools: { only: ['spawn_agent'] } };
const store = new MemoryStore();
const host: AgentHost = aiSdkHost({ ...options, store });
export const runtime = new SubagentRuntime({ store, host });
