#!/usr/bin/env node
// subagent-tree-mcp: one agent tree as an MCP server on stdio, for any MCP
// client to launch, e.g. { "command": "npx", "args": ["subagent-tree-mcp", "--dir", "./sessions"] }.
//
// The tree lives in a FileStore directory (`--dir`), so it survives restarts:
// its root is the one `--root` names, else the one this command opened there
// before (remembered in <dir>/mcp-root), else a new one. Each turn runs over an
// OpenAI-compatible chat-completions API configured by environment:
// OPENAI_MODEL (required), OPENAI_BASE_URL (default https://api.openai.com/v1),
// OPENAI_API_KEY. Stdout carries the protocol only; diagnostics go to stderr.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { SubagentRuntime } from '../node.js';
import { commandLine, storeAndModel } from '../node/command.js';
import { mcpServer } from './mcp.js';

const { args, dir, script, input } = commandLine(
  'subagent-tree-mcp',
  `--dir <sessions> [--root <sessionId>] [--script <file>]
  --dir   the FileStore directory that holds the tree (created if missing)
  --root  the root's Session id (default: the one opened there before, else a new one)`,
  { root: { type: 'string' } },
);
const remembered = path.join(dir, 'mcp-root');
const { store, host } = await storeAndModel(dir, script);
const runtime = new SubagentRuntime({ store, host });
const saved = args.root ?? (await readFile(remembered, 'utf8').then((t) => t.trim(), () => '')) ?? '';
const lead = await runtime.openRoot(saved ? { sessionId: saved } : {});
if (lead.sessionId !== saved) await writeFile(remembered, `${lead.sessionId}\n`);
process.stderr.write(`subagent-tree-mcp: tree ${lead.sessionId} in ${dir}\n`);

const server = mcpServer({ runtime, agent: lead, name: 'subagent-tree' });
let closing = null;
const shutdown = () =>
  (closing ??= (async () => {
    await server.close().catch(() => {});
    await runtime.closeRoot(lead).catch(() => {});
    await store.close().catch(() => {});
    process.exit(0);
  })());
const closed = server.server.onclose;
server.server.onclose = () => {
  closed?.();
  void shutdown();
};
process.stdin.on('end', shutdown);
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
// Stdin through the line bound: a line past --max-line-bytes is answered with an error, not held.
await server.connect(new StdioServerTransport(input(), process.stdout));
