// What the package's stdio commands (subagent-tree-mcp, subagent-tree-acp)
// share: their command line, failing with the usage on bad input, and the
// FileStore and model host the environment configures. Stdout is the
// protocol's alone: usage and diagnostics go to stderr (but `--help`'s).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FileStore } from './file-store.js';
import { OpenAIHost } from '../edge/openai-host.js';
import { scriptedHost } from '../testing/testing.js';

const ENVIRONMENT = `  --script     turns from a JSON script (subagent-tree/testing's scriptedHost) instead of a model
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
    args = parseArgs({ options: { dir: { type: 'string' }, script: { type: 'string' }, help: { type: 'boolean' }, ...options }, strict: true }).values;
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
  return { args, dir: path.resolve(args.dir), script, fail };
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
