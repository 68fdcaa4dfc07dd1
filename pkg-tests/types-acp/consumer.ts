// A strict consumer of subagent-tree/acp: an ACP agent app of a runtime's
// trees, connected to the SDK's client app over an in-memory ndjson pair.
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type AgentApp, type SessionNotification } from '@agentclientprotocol/sdk/unstable';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { acpAgent, META_KEY, type AcpAgentOptions } from 'subagent-tree/acp';

export async function prompt(runtime: SubagentRuntime, store: MemoryStore, text: string): Promise<string> {
  const options: AcpAgentOptions = { runtime, store, name: 'my-agent', version: '1.0.0', contextWindow: 200_000 };
  const agent: AgentApp = acpAgent(options);
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  agent.connect(ndJsonStream(toClient.writable, toAgent.readable));
  const seen: SessionNotification[] = [];
  const app = client({ name: 'editor' }).onNotification(methods.client.session.update, ({ params }) => {
    seen.push(params);
  });
  return app.connectWith(ndJsonStream(toAgent.writable, toClient.readable), async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { subagents: {} } });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: '/work', mcpServers: [] });
    const { stopReason } = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
    const key: 'subagent-tree' = META_KEY;
    return `${stopReason} ${seen.length} ${key}`;
  });
}

const store = new MemoryStore();
export const runtime = new SubagentRuntime({ store, host: { runTurn: async () => ({ messages: ['ok'] }) } });
