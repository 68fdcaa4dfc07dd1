// A strict consumer of subagent-tree/mcp: an McpServer of a member's tree,
// connected to the SDK's client over its in-memory transport.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { SubagentRuntime, MemoryStore, type Agent } from 'subagent-tree';
import { mcpServer, TREE_URI, type McpServerOptions } from 'subagent-tree/mcp';

export async function serve(runtime: SubagentRuntime, agent: Agent): Promise<string[]> {
  const options: McpServerOptions = { runtime, agent, name: 'my-tree', version: '1.0.0' };
  const server: McpServer = mcpServer(options);
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'c', version: '1.0.0' });
  await Promise.all([server.connect(a), client.connect(b)]);
  const uri: 'subagent-tree://tree' = TREE_URI;
  await client.subscribeResource({ uri });
  const { tools } = await client.listTools();
  await server.close();
  return tools.map((t) => t.name);
}

export const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: async () => ({ messages: ['ok'] }) } });
