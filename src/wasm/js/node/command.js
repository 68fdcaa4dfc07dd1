// What the package's stdio commands (subagent-tree-mcp, subagent-tree-acp)
// share: their command line, failing with the usage on bad input, and the
// FileStore and model host the environment configures. Stdout is the
// protocol's alone: usage and diagnostics go to stderr (but `--help`'s).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { parseArgs } from 'node:util';
import { FileStore } from './file-store.js';
import { OpenAIHost } from '../edge/openai-host.js';
import { scriptedHost } from '../testing/testing.js';

/** The longest protocol line a command reads by default (16 MiB); `--max-line-bytes` changes it. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

const ENVIRONMENT = `  --script     turns from a JSON script (subagent-tree/testing's scriptedHost) instead of a model
  --max-line-bytes  the longest line read from stdin (default ${DEFAULT_MAX_LINE_BYTES}, 16 MiB): a longer one
               is skipped and answered with a JSON-RPC error (id null), and the command goes on
environment: OPENAI_MODEL (required without --script), OPENAI_BASE_URL, OPENAI_API_KEY`;

/**
 * `name`'s arguments: `--dir` (required) and `--help`, plus `options` (as
 * `node:util` `parseArgs` takes them). Bad input exits 2 with the reason and
 * `usage`; `--help` prints it and exits 0. Returns `{ args, dir, fail }`.
 */
export function commandLine(name, usage, options = {}) {
  const text = `usage: ${name} ${usage}\n${ENVIRONMENT}`;
  const fail = (message) => {
    process.stderr.write(`${name}: ${message}\n${text}\n`);
    process.exit(2);
  };
  let args;
  try {
    const shared = { dir: { type: 'string' }, script: { type: 'string' }, 'max-line-bytes': { type: 'string' }, help: { type: 'boolean' } };
    args = parseArgs({ options: { ...shared, ...options }, strict: true }).values;
  } catch (error) {
    fail(error.message);
  }
  if (args.help) {
    process.stdout.write(`${text}\n`);
    process.exit(0);
  }
  if (!args.dir) fail('--dir is required');
  if (!args.script && !process.env.OPENAI_MODEL) fail('OPENAI_MODEL is not set (or give --script)');
  let script;
  if (args.script) {
    try {
      script = JSON.parse(readFileSync(args.script, 'utf8'));
    } catch (error) {
      fail(`--script ${args.script} is not a readable JSON script (${error.code ?? error.message})`);
    }
  }
  const maxLineBytes = args['max-line-bytes'] === undefined ? DEFAULT_MAX_LINE_BYTES : Number(args['max-line-bytes']);
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1024) fail('--max-line-bytes must be a whole number of at least 1024');
  const input = () => boundedLines(name, process.stdin, process.stdout, maxLineBytes);
  return { args, dir: path.resolve(args.dir), script, fail, input };
}

/**
 * `stdin` as the protocol reads it, one line at most `maxLineBytes` long
 * (its newline aside). A longer line is never held whole: what came of it is
 * dropped as it arrives, the rest of it up to its newline too, and then the
 * client is answered on `stdout` with a JSON-RPC error (id null: the line's
 * id was never read) and told on stderr; the lines after it are read as
 * before. Only complete lines pass, so a client that sends a huge line with
 * no newline costs at most `maxLineBytes`.
 */
export function boundedLines(name, stdin, stdout, maxLineBytes) {
  let held = [];
  let heldBytes = 0;
  let dropping = false;
  const over = () => {
    const message = `${name}: a line of more than ${maxLineBytes} bytes was skipped (--max-line-bytes)`;
    process.stderr.write(`${message}\n`);
    stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message } })}\n`);
  };
  const guard = new Transform({
    transform(chunk, _encoding, done) {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.subarray(start, end);
        start = end;
        if (dropping) {
          if (newline !== -1) {
            dropping = false;
            over();
          }
          continue;
        }
        held.push(piece);
        heldBytes += piece.length;
        if (heldBytes - (newline === -1 ? 0 : 1) > maxLineBytes) {
          held = [];
          heldBytes = 0;
          if (newline === -1) dropping = true;
          else over();
          continue;
        }
        if (newline !== -1) {
          this.push(Buffer.concat(held, heldBytes));
          held = [];
          heldBytes = 0;
        }
      }
      done();
    },
    flush(done) {
      if (dropping) over();
      else if (heldBytes > 0) this.push(Buffer.concat(held, heldBytes));
      done();
    },
  });
  return stdin.pipe(guard);
}

/**
 * The FileStore in `dir`, and its host: a scripted one when `script` is given
 * (a `--script` file: deterministic turns, no model), else an OpenAIHost as
 * OPENAI_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY say.
 */
export async function storeAndModel(dir, script) {
  const store = await FileStore.open(dir);
  if (script !== undefined) return { store, host: scriptedHost(script) };
  const host = new OpenAIHost({
    baseUrl: process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1',
    apiKey: process.env.OPENAI_API_KEY || undefined,
    model: process.env.OPENAI_MODEL,
    store,
  });
  return { store, host };
}
