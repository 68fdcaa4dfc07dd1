// The stdio command (`subagent-tree-mcp`, the package's bin) driven by the MCP
// SDK's own StdioClientTransport: it serves a tree over FileStore whose turns
// run over an OpenAI-compatible API (a local mock here), and after a restart
// of the command the same tree is there, with its members' last turns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { root, mockOpenAI, say, agentOf } from './edge-helpers.mjs';

const PKG = path.join(root, 'node_modules', 'subagent-tree');
const manifest = JSON.parse(readFileSync(path.join(PKG, 'package.json'), 'utf8'));
const BIN = path.join(PKG, manifest.bin['subagent-tree-mcp']);

async function launch(dir, env) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--dir', dir], env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk));
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

const text = (result) => result.content.map((c) => c.text).join('');
const tree = async (client) => JSON.parse((await client.readResource({ uri: 'subagent-tree://tree' })).contents[0].text);

test('subagent-tree-mcp --dir: an MCP client drives a tree over FileStore; after a restart the tree is there', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'subagent-tree-mcp-'));
  const model = await mockOpenAI((body) => (agentOf(body) === 'reviewer' ? say('Reviewed: ship it.') : say('Noted.')));
  const env = { OPENAI_BASE_URL: model.baseUrl, OPENAI_MODEL: 'mock-model', OPENAI_API_KEY: 'sk-test' };
  try {
    const first = await launch(dir, env);
    const { tools } = await first.client.listTools();
    assert.ok(tools.some((t) => t.name === 'spawn_agent'), tools.map((t) => t.name).join(' '));
    const started = await first.client.callTool({ name: 'spawn_agent', arguments: { name: 'reviewer', description: 'Review the release', prompt: 'Review it.' } });
    assert.equal(started.isError, false, text(started));
    assert.match(text(started), /^Started agent reviewer/);
    // The reviewer's turn runs over the model; wait until the tree says it ended.
    for (let i = 0; i < 200 && (await tree(first.client)).members[0]?.lastTurn?.output !== 'Reviewed: ship it.'; i++) await new Promise((r) => setTimeout(r, 25));
    const before = await tree(first.client);
    assert.deepEqual(before.members.map((m) => [m.name, m.lastTurn?.output]), [['reviewer', 'Reviewed: ship it.']]);
    assert.match(first.stderr(), /subagent-tree-mcp: tree [\w-]+ in /);
    await first.client.close();
    // Restarted: the same root (remembered in the directory), the same members, from the logs.
    const second = await launch(dir, env);
    const after = await tree(second.client);
    assert.equal(after.root.sessionId, before.root.sessionId);
    assert.deepEqual(after.members.map((m) => [m.name, m.sessionId, m.lastTurn]), before.members.map((m) => [m.name, m.sessionId, m.lastTurn]));
    const listed = await second.client.callTool({ name: 'list_agents', arguments: {} });
    assert.match(text(listed), /- reviewer \(inactive: Review the release/);
    await second.client.close();
    assert.ok(model.requests.some((r) => r.headers.authorization === 'Bearer sk-test' && r.body.model === 'mock-model'));
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('subagent-tree-mcp refuses to start without --dir or a model, saying why', async () => {
  const { spawnSync } = await import('node:child_process');
  const run = (args, env) => spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', input: '' });
  let r = run([], { OPENAI_MODEL: 'm' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--dir is required/);
  r = run(['--dir', os.tmpdir()], {});
  assert.equal(r.status, 2);
  assert.match(r.stderr, /OPENAI_MODEL is not set/);
  r = run(['--bogus'], {});
  assert.equal(r.status, 2);
  assert.match(r.stderr, /Unknown option '--bogus'/);
  r = run(['--help'], {});
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^usage: subagent-tree-mcp --dir <sessions>/);
});
