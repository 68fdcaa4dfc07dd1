// subagent-tree/mcp against the real MCP SDK (`@modelcontextprotocol/sdk`, a
// dev dependency): its `Client` over its in-memory transport lists and calls
// the tree's tools (refusals keep isError and the tree's own text), reads the
// tree resource and hears its updates while subscribed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';
import { mcpServer, TREE_URI } from 'subagent-tree/mcp';

/** A root over a fresh store, an MCP server of its tools, and a connected client. */
async function connected(hostScript = {}) {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost(hostScript), maxDepth: 2 });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const server = mcpServer({ runtime, agent: lead, name: 'tree-test', version: '9.9.9' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return { runtime, lead, server, client };
}

test('the client lists the member\'s tree tools with their names, schemas and descriptions', async () => {
  const { runtime, lead, client, server } = await connected();
  assert.deepEqual(client.getServerVersion(), { name: 'tree-test', version: '9.9.9' });
  assert.equal(client.getServerCapabilities().resources.subscribe, true);
  const { tools } = await client.listTools();
  const own = runtime.toolsFor(lead);
  assert.deepEqual(
    tools.map((t) => [t.name, t.description, t.inputSchema]),
    own.map((t) => [t.name, t.description, t.inputSchema]),
  );
  assert.ok(tools.some((t) => t.name === 'spawn_agent') && tools.some((t) => t.name === 'send_message'), tools.map((t) => t.name).join(' '));
  await client.close();
  await server.close();
});

test('calls: spawn_agent and send_message by full name; a refusal keeps isError and the tree\'s text', async () => {
  const { runtime, lead, client, server } = await connected({ reviewer: [{ reply: 'on it' }, { reply: 'noted' }] });
  const started = await client.callTool({ name: 'spawn_agent', arguments: { name: 'reviewer', description: 'Review the patch', prompt: 'Review it.' } });
  assert.equal(started.isError, false);
  assert.match(started.content[0].text, /^Started agent reviewer \(Session id /);
  const rows = await runtime.listDescendants('root');
  assert.deepEqual(rows.map((r) => [r.path, r.label]), [['reviewer', 'Review the patch']]);
  const sent = await client.callTool({ name: 'send_message', arguments: { agent: 'reviewer', message: 'Check the tests too.' } });
  assert.deepEqual([sent.isError, sent.content], [false, [{ type: 'text', text: 'Message delivered to reviewer.' }]]);
  // The same refusal, through MCP and straight from the runtime's tool: same text, isError kept.
  const direct = await runtime.toolsFor(lead).find((t) => t.name === 'spawn_agent').call({ name: 'reviewer', description: 'Again', prompt: 'Again.' });
  const refused = await client.callTool({ name: 'spawn_agent', arguments: { name: 'reviewer', description: 'Again', prompt: 'Again.' } });
  assert.equal(direct.isError, true);
  assert.deepEqual([refused.isError, refused.content], [true, [{ type: 'text', text: direct.content }]]);
  assert.match(refused.content[0].text, /reviewer/);
  const invalid = await client.callTool({ name: 'spawn_agent', arguments: { name: 'Not A Name', description: 'x', prompt: 'x' } });
  assert.equal(invalid.isError, true);
  assert.match(invalid.content[0].text, /name/i);
  // An unknown tool is a protocol error naming the tools there are.
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Tool no_such_tool not found: this server has .*spawn_agent/);
  await runtime.waitForQuiescence(lead);
  await client.close();
  await server.close();
});

test('the tree resource: read as JSON, and updates while subscribed (none after unsubscribing)', async () => {
  const { runtime, lead, client, server } = await connected({ reviewer: [{ reply: 'Reviewed: ship it.' }] });
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => [r.uri, r.name, r.mimeType]), [[TREE_URI, 'tree', 'application/json']]);
  const read = async () => JSON.parse((await client.readResource({ uri: TREE_URI })).contents[0].text);
  const empty = await read();
  assert.deepEqual([empty.root.name, empty.root.sessionId, empty.members], ['lead', 'root', []]);
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  await client.subscribeResource({ uri: TREE_URI });
  await client.callTool({ name: 'spawn_agent', arguments: { name: 'reviewer', description: 'Review', prompt: 'Review it.' } });
  await runtime.waitForQuiescence(lead);
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(updates.length >= 1 && updates.every((u) => u === TREE_URI), JSON.stringify(updates));
  const tree = await read();
  assert.equal(tree.members.length, 1);
  const [reviewer] = tree.members;
  assert.deepEqual(
    [reviewer.name, reviewer.parentId, reviewer.depth, reviewer.mode, reviewer.label, reviewer.activity, reviewer.lastTurn],
    ['reviewer', 'root', 1, 'continuable', 'Review', 'inactive', { stopReason: 'completed', output: 'Reviewed: ship it.' }],
  );
  assert.equal(typeof reviewer.usage.own.inputTokens, 'number');
  await assert.rejects(client.subscribeResource({ uri: 'subagent-tree://other' }), /No resource subagent-tree:\/\/other/);
  await client.unsubscribeResource({ uri: TREE_URI });
  const seen = updates.length;
  await client.callTool({ name: 'send_message', arguments: { agent: 'reviewer', message: 'One more look.' } });
  await runtime.waitForQuiescence(lead);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(updates.length, seen, 'no update after unsubscribing');
  await client.close();
  await server.close();
});

test('mcpServer refuses what is not a runtime and a handle', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({}) });
  const lead = await runtime.openRoot({});
  assert.throws(() => mcpServer({ agent: lead }), (e) => e.code === 'INVALID_ARGUMENT' && /runtime/.test(e.message));
  assert.throws(() => mcpServer({ runtime }), (e) => e.code === 'INVALID_ARGUMENT' && /agent/.test(e.message));
  assert.throws(() => mcpServer({ runtime, agent: { sessionId: lead.sessionId, name: 'lead' } }), (e) => typeof e.code === 'string');
});
