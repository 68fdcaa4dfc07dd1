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
import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk/unstable';
import { SubagentRuntime } from '../node.js';
import { commandLine, storeAndModel } from '../node/command.js';
import { acpAgent } from './acp.js';

const { args, dir, script, fail, input } = commandLine(
  'subagent-tree-acp',
  `--dir <sessions> [--max-depth <n>] [--script <file>]
  --dir        the FileStore directory that holds the trees (created if missing)
  --max-depth  the deepest child (the root is depth 0; default 3)`,
  { 'max-depth': { type: 'string' } },
);
const maxDepth = args['max-depth'] === undefined ? 3 : Number(args['max-depth']);
if (!Number.isSafeInteger(maxDepth) || maxDepth < 1) fail('--max-depth must be a whole number of at least 1');
const { store, host } = await storeAndModel(dir, script);
const runtime = new SubagentRuntime({ store, host, maxDepth });
process.stderr.write(`subagent-tree-acp: sessions in ${dir}\n`);

const connection = acpAgent({ runtime, store }).connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(input())));
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
