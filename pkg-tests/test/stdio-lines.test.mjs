// The package's stdio commands (`subagent-tree-mcp`, `subagent-tree-acp`) as
// child processes, fed a line longer than `--max-line-bytes`: each answers it
// with a JSON-RPC error (id null), says so on stderr, and goes on serving the
// next line; a huge last line with no newline is answered the same way when
// the input closes, and the command then exits 0. Nothing longer than the
// bound is ever held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from './edge-helpers.mjs';

const PKG = path.join(root, 'node_modules', 'subagent-tree');
const manifest = JSON.parse(readFileSync(path.join(PKG, 'package.json'), 'utf8'));

/** The command on a scripted host, with a line bound of `limit`; its stdout as parsed lines. */
function launch(command, limit) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${command}-lines-`));
  const script = path.join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ lead: [{ reply: 'ok' }] }));
  const child = spawn(process.execPath, [path.join(PKG, manifest.bin[command]), '--dir', path.join(dir, 'sessions'), '--script', script, '--max-line-bytes', String(limit)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const lines = [];
  const waiting = [];
  let pending = '';
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(pending.slice(0, newline)));
      pending = pending.slice(newline + 1);
      for (const w of waiting.splice(0)) w();
    }
  });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  /** The `n`th line of stdout (0-based), once it came. */
  const line = async (n) => {
    while (lines.length <= n) await new Promise((resolve) => waiting.push(resolve));
    return lines[n];
  };
  return { child, line, exited, stderr: () => stderr, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const initialize = {
  'subagent-tree-mcp': { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lines-test', version: '1.0.0' } } },
  'subagent-tree-acp': { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } },
};

for (const command of ['subagent-tree-mcp', 'subagent-tree-acp']) {
  test(`${command}: a line over --max-line-bytes is answered with a JSON-RPC error and the next line is served`, async () => {
    const limit = 4096;
    const run = launch(command, limit);
    try {
      // Sent in pieces, as a pipe delivers a long line.
      const long = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"pad":"${'x'.repeat(limit * 3)}"}}`;
      for (let i = 0; i < long.length; i += 1000) run.child.stdin.write(long.slice(i, i + 1000));
      run.child.stdin.write('\n');
      run.child.stdin.write(`${JSON.stringify(initialize[command])}\n`);
      const refused = await run.line(0);
      assert.equal(refused.id, null);
      assert.equal(refused.error.code, -32600);
      assert.match(refused.error.message, new RegExp(`a line of more than ${limit} bytes was skipped`));
      const answered = await run.line(1);
      assert.equal(answered.id, 1, JSON.stringify(answered));
      assert.ok(answered.result, JSON.stringify(answered));
      // A last line with no newline, far past the bound: answered when the input closes.
      run.child.stdin.end('y'.repeat(limit * 50));
      const last = await run.line(2);
      assert.equal(last.id, null);
      assert.match(last.error.message, /was skipped/);
      assert.equal(await run.exited, 0);
      assert.equal(run.stderr().match(/was skipped \(--max-line-bytes\)/g)?.length, 2, run.stderr());
    } finally {
      run.child.kill();
      run.cleanup();
    }
  });
}

test('--max-line-bytes below 1024 is refused with the usage', async () => {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, [path.join(PKG, manifest.bin['subagent-tree-mcp']), '--dir', os.tmpdir(), '--max-line-bytes', '10'], { env: { PATH: process.env.PATH ?? '', OPENAI_MODEL: 'm' }, encoding: 'utf8', input: '' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--max-line-bytes must be a whole number of at least 1024/);
});
