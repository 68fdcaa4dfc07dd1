#!/usr/bin/env node
// subagent-tree-acp: trees as an Agent Client Protocol agent on stdio, for an
// editor to launch, e.g. Zed's `agent_servers`:
//   { "subagent-tree": { "command": "npx", "args": ["subagent-tree-acp", "--dir", "./sessions"] } }
//
// Each ACP session is a tree root in a FileStore directory (`--dir`), so a
// session survives restarts and `session/load` brings it back. Each turn runs
// over an OpenAI-compatible chat-completions API configured by environment:
// OPENAI_MODEL (required), OPENAI_BASE_URL (default https://api.openai.com/v1),
// OPENAI_API_KEY. Stdout carries the protocol only; diagnostics go to stderr.
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { ndJsonStream } from '@agentclientprotocol/sdk/unstable';
import { SubagentRuntime } from '../node.js';
import { FileStore } from '../node/file-store.js';
import { OpenAIHost } from '../edge/openai-host.js';
import { acpAgent } from './acp.js';

const USAGE = `usage: subagent-tree-acp --dir <sessions> [--max-depth <n>]
  --dir        the FileStore directory that holds the trees (created if missing)
  --max-depth  the deepest child (the root is depth 0; default 3)
environment: OPENAI_MODEL (required), OPENAI_BASE_URL, OPENAI_API_KEY`;

function fail(message) {
  process.stderr.write(`subagent-tree-acp: ${message}\n${USAGE}\n`);
  process.exit(2);
}

let args;
try {
  args = parseArgs({ options: { dir: { type: 'string' }, 'max-depth': { type: 'string' }, help: { type: 'boolean' } }, strict: true }).values;
} catch (error) {
  fail(error.message);
}
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!args.dir) fail('--dir is required');
const maxDepth = args['max-depth'] === undefined ? 3 : Number(args['max-depth']);
if (!Number.isSafeInteger(maxDepth) || maxDepth < 1) fail('--max-depth must be a whole number of at least 1');
const model = process.env.OPENAI_MODEL;
if (!model) fail('OPENAI_MODEL is not set');

const dir = path.resolve(args.dir);
const store = await FileStore.open(dir);
const host = new OpenAIHost({
  baseUrl: process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1',
  apiKey: process.env.OPENAI_API_KEY || undefined,
  model,
  store,
});
const runtime = new SubagentRuntime({ store, host, maxDepth });
process.stderr.write(`subagent-tree-acp: sessions in ${dir}\n`);

const connection = acpAgent({ runtime, store }).connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
let closing = null;
const shutdown = () =>
  (closing ??= (async () => {
    connection.close();
    // Turns still running are recorded as lost when their session is loaded again.
    await store.close().catch(() => {});
    process.exit(0);
  })());
connection.closed.then(shutdown, shutdown);
process.stdin.on('end', shutdown); // the editor closed our input
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
