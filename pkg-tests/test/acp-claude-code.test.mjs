// subagent-tree/acp-provider against an ACP agent nobody here wrote: Claude Code, through its
// ACP adapter installed from the registry (`@agentclientprotocol/claude-agent-acp`, a dev
// dependency of these tests only), its model a local mock of Anthropic's Messages API. The child
// answers with the model's words, streamed as its deltas, with its usage; an interrupt cancels it;
// no process of it (the adapter or its `claude`) is left. What it takes to run here is in
// ../shared/notes/acp-agents.md (HOME and TMPDIR of its own, IS_SANDBOX unset as root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';
import { acpProvider } from 'subagent-tree/acp-provider';

/** Claude Code's processes: its ACP adapter, and the `claude` it runs (from the SDK's package). */
const claudeProcesses = () =>
  execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => /claude-agent-acp|@anthropic-ai\/claude/.test(line));

/**
 * Anthropic's Messages API as Claude Code streams it: `respond(body)` gives the answer's text
 * pieces (or `{ hold: true }` to keep the request open until the client goes).
 */
async function mockAnthropic(respond) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    if (req.method !== 'POST' || !req.url.startsWith('/v1/messages')) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(text);
    const record = { body, closed: new Promise((resolve) => res.on('close', () => resolve(!res.writableFinished))) };
    requests.push(record);
    const answer = await respond(body);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message_start', { message: { id: `msg_${requests.length}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 120, output_tokens: 1 } } });
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    if (answer.hold) return; // open until the client closes it
    for (const piece of answer.pieces) send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
    send('content_block_stop', { index: 0 });
    send('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } });
    send('message_stop', {});
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))) };
}

/** Claude Code as a provider, everything it writes in a directory of its own. */
function claudeCode(home, model) {
  return acpProvider.claudeCode({
    env: {
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      HOME: home,
      TMPDIR: home,
    },
    timeouts: { startMs: 60_000, idleMs: 60_000, cancelMs: 5_000 },
  });
}

test('Claude Code as a child: it answers with the model\'s words, streamed as its deltas, with its usage; no process is left', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'acp-claude-'));
  const model = await mockAnthropic(() => ({ pieces: ['The release ', 'is ready ', 'to ship.'] }));
  try {
    const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({}), defaultCwd: home });
    runtime.registerProvider(claudeCode(home, model));
    const deltas = [];
    runtime.on('subagent/delta', (e) => deltas.push(e));
    const lead = await runtime.openRoot({ sessionId: 'root' });
    const run = await runtime.startActivation({ provider: 'claude-code', parent: lead, label: 'Check the release', prompt: 'Is the release ready?', name: 'claude' });
    const result = await run.result;
    assert.equal(result.stopReason, 'completed', result.diagnostic);
    assert.equal(result.output.map((b) => b.text).join(''), 'The release is ready to ship.');
    assert.equal(deltas.filter((e) => e.name === 'claude').map((e) => e.part.text).join(''), 'The release is ready to ship.');
    // The prompt reached the model through Claude Code.
    assert.ok(model.requests.some((r) => JSON.stringify(r.body.messages).includes('Is the release ready?')));
    const usage = await runtime.usage(lead, 'claude');
    assert.ok(usage.own.inputTokens > 0 && usage.own.outputTokens > 0, JSON.stringify(usage));
    const rows = await runtime.listDescendants('root');
    assert.deepEqual(rows.map((r) => [r.path, r.mode]), [['claude', 'external']]);
    assert.deepEqual(claudeProcesses(), [], 'neither the adapter nor claude is left');
  } finally {
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test('Claude Code interrupted mid-answer: session/cancel ends it aborted, and its processes end', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'acp-claude-'));
  let asked;
  const asking = new Promise((resolve) => (asked = resolve));
  const model = await mockAnthropic(() => (asked(), { hold: true }));
  try {
    const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({}), defaultCwd: home });
    runtime.registerProvider(claudeCode(home, model));
    const lead = await runtime.openRoot({ sessionId: 'root' });
    const run = await runtime.startActivation({ provider: 'claude-code', parent: lead, label: 'Think', prompt: 'Think it over.', name: 'claude' });
    await asking;
    assert.ok(claudeProcesses().length >= 1, 'it runs');
    runtime.interrupt('claude', { kind: 'user', root: lead });
    const result = await run.result;
    assert.equal(result.stopReason, 'aborted', result.diagnostic);
    assert.deepEqual(claudeProcesses(), [], 'neither the adapter nor claude is left');
  } finally {
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
});
