// OpenAIHost streams its turns (issue 47), against the local mock server:
// deltas emitted in order as subagent/delta events and the output their
// concatenation, usage from the last chunk, an interrupt that closes the
// connection mid-stream, cut and malformed streams, a server that refuses to
// stream (one non-streamed call) or answers JSON anyway, a stalled endpoint's
// timeout, and an oversized answer that says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { mockOpenAI, say } from './edge-helpers.mjs';

const chunk = (delta, finish_reason = null) => ({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] });
const words = ['Stream', 'ing ', 'is ', 'on', '.'];

/** A runtime over OpenAIHost at `mock`, recording every delta part and turn end. */
async function tree(mock, options = {}) {
  const store = new MemoryStore();
  const host = new OpenAIHost({ baseUrl: mock.baseUrl, apiKey: 'sk-test', model: 'mock-1', store, retries: 0, ...options });
  const runtime = new SubagentRuntime({ store, host });
  const parts = [];
  const ends = [];
  runtime.on('subagent/delta', (e) => parts.push(e.part));
  runtime.on('subagent/turn', (e) => e.phase === 'end' && ends.push(e));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  return { store, runtime, lead, parts, ends };
}

test('text and reasoning deltas reach subagent/delta in order, the output is their concatenation, usage comes from the last chunk', async () => {
  const mock = await mockOpenAI(() => ({
    sse: [
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: 'Thinking' }),
      chunk({ reasoning_content: ' briefly.' }),
      ...words.map((w) => chunk({ content: w })),
      chunk({}, 'stop'),
      { choices: [], usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49, prompt_tokens_details: { cached_tokens: 40 } } },
    ],
  }));
  try {
    const { store, runtime, lead, parts, ends } = await tree(mock);
    const answer = await (await runtime.ask(lead, 'lead', 'Go.')).answer;
    assert.equal(answer.stopReason, 'completed');
    assert.deepEqual(parts, [
      { type: 'reasoning-delta', text: 'Thinking' },
      { type: 'reasoning-delta', text: ' briefly.' },
      ...words.map((text) => ({ type: 'text-delta', text })),
    ]);
    assert.deepEqual(answer.output, [{ type: 'text', text: words.join('') }]);
    assert.deepEqual(answer.usage, { inputTokens: 42, outputTokens: 7, cacheReadTokens: 40 });
    assert.deepEqual(ends[0].usage, answer.usage);
    // Recorded and rolled up.
    const turnEnd = (await store.read('root')).find((e) => e.type === 'turn/end');
    assert.deepEqual(turnEnd.payload.usage, answer.usage);
    assert.deepEqual((await runtime.usage(lead)).own, { ...answer.usage, turns: 1 });
    assert.equal(mock.requests[0].body.stream, true);
    assert.deepEqual(mock.requests[0].body.stream_options, { include_usage: true });
  } finally {
    await mock.close();
  }
});

test('an interrupt mid-stream ends the turn aborted and closes the connection; its unfinished text is not output', async () => {
  const mock = await mockOpenAI(() => ({ sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'half an ans' })], stall: true }));
  try {
    const { runtime, lead, parts, ends } = await tree(mock);
    const first = new Promise((resolve) => {
      const off = runtime.on('subagent/delta', () => {
        off();
        resolve();
      });
    });
    const asked = await runtime.ask(lead, 'lead', 'Go.');
    await first;
    assert.equal(runtime.interrupt(lead.sessionId, { kind: 'user' }).signalled, true);
    const answer = await asked.answer;
    assert.equal(answer.stopReason, 'aborted');
    assert.deepEqual(answer.output, []);
    assert.deepEqual(parts, [{ type: 'text-delta', text: 'half an ans' }]);
    assert.equal(ends[0].output, undefined, 'nothing recorded as output');
    assert.equal(await mock.requests[0].closed, true, 'the host closed the connection before the stream ended');
  } finally {
    await mock.close();
  }
});

test('a stream cut before its end, or an event that is not JSON, ends the turn in error and records no output', async () => {
  const answers = [
    { sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'The answer is' })], done: false },
    { sse: [chunk({ content: 'fine so far' }), 'data: {"choices": [{"delta": {"content": "br\n\n'] },
    { sse: [chunk({ content: 'x' }), 'data: {"error": {"message": "overloaded sk-secret-123456"}}\n\n'] },
  ];
  let i = 0;
  const mock = await mockOpenAI(() => answers[i++]);
  try {
    const { runtime, lead } = await tree(mock);
    const diagnostics = [];
    for (let k = 0; k < answers.length; k++) {
      const answer = await (await runtime.ask(lead, 'lead', `try ${k}`)).answer;
      assert.equal(answer.stopReason, 'error');
      assert.deepEqual(answer.output, [], 'the unfinished text is not the output');
      diagnostics.push(answer.diagnostic);
    }
    assert.deepEqual(diagnostics, [
      'the model stream ended before its answer did',
      'the model stream sent an event that is not JSON',
      'the model endpoint reported an error in the middle of its stream',
    ]);
  } finally {
    await mock.close();
  }
});

test('a server that refuses to stream gets one non-streamed call, and one that answers JSON anyway is read as JSON', async () => {
  const mock = await mockOpenAI((body) => (body.stream ? { status: 400, body: { error: { message: 'stream is not supported' } } } : say('plain answer')));
  try {
    const { runtime, lead } = await tree(mock);
    const first = await (await runtime.ask(lead, 'lead', 'one')).answer;
    assert.deepEqual([first.stopReason, first.output], ['completed', [{ type: 'text', text: 'plain answer' }]]);
    await (await runtime.ask(lead, 'lead', 'two')).answer;
    assert.deepEqual(mock.requests.map((r) => r.body.stream), [true, false, false], 'refused once, then not asked to stream again');
  } finally {
    await mock.close();
  }
  const json = await mockOpenAI(() => ({ ...say('json anyway'), json: true }));
  try {
    const { runtime, lead, parts } = await tree(json);
    const answer = await (await runtime.ask(lead, 'lead', 'go')).answer;
    assert.deepEqual([answer.stopReason, answer.output], ['completed', [{ type: 'text', text: 'json anyway' }]]);
    assert.deepEqual(parts, [], 'no stream, no deltas');
    assert.equal(json.requests[0].body.stream, true);
  } finally {
    await json.close();
  }
});

test('a stalled endpoint times out (timeoutMs), before its first byte or mid-stream', async () => {
  const answers = [{ sse: [], stall: true }, { sse: [chunk({ content: 'and then' })], stall: true }];
  let i = 0;
  const mock = await mockOpenAI(() => answers[i++]);
  try {
    const { runtime, lead } = await tree(mock, { timeoutMs: 300 });
    for (const k of [0, 1]) {
      const answer = await (await runtime.ask(lead, 'lead', `try ${k}`)).answer;
      assert.equal(answer.stopReason, 'error');
      assert.equal(answer.diagnostic, 'the model endpoint sent nothing for 300 ms (timeoutMs)');
      assert.equal(await mock.requests[k].closed, true, 'the stalled connection was closed');
    }
  } finally {
    await mock.close();
  }
  assert.throws(() => new OpenAIHost({ baseUrl: 'http://x/v1', model: 'm', timeoutMs: 0 }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => new OpenAIHost({ baseUrl: 'http://x/v1', model: 'm', stream: 'yes' }), { code: 'INVALID_ARGUMENT' });
});

test('a valid answer over maxResponseBytes says it is too large, streamed or not', async () => {
  const big = 'x'.repeat(200 * 1024);
  const mock = await mockOpenAI(() => say(big));
  try {
    const diagnostics = [];
    for (const stream of [false, true]) {
      const { runtime, lead } = await tree(mock, { stream, maxResponseBytes: 64 * 1024 });
      const answer = await (await runtime.ask(lead, 'lead', 'go')).answer;
      assert.equal(answer.stopReason, 'error');
      diagnostics.push(answer.diagnostic);
    }
    for (const d of diagnostics) assert.equal(d, "the model endpoint's answer is too large (over maxResponseBytes, 65536 bytes)");
    // Within the bound, the same answer is read whole.
    const { runtime, lead } = await tree(mock, { maxResponseBytes: 1024 * 1024 });
    const answer = await (await runtime.ask(lead, 'lead', 'go')).answer;
    assert.equal(answer.output[0].text.length, big.length);
  } finally {
    await mock.close();
  }
});

/**
 * A raw SSE server: `write(res, body)` writes what it likes, when it likes;
 * `closed` resolves when a client's connection closes.
 */
async function rawServer(write) {
  const http = await import('node:http');
  const timers = new Set();
  let closedOnce;
  const closed = new Promise((resolve) => (closedOnce = resolve));
  const server = http.createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.on('close', () => closedOnce(true));
    const every = (ms, f) => {
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : f()), ms);
      timers.add(t);
    };
    write(res, JSON.parse(text), every);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    closed,
    close: () =>
      new Promise((resolve) => {
        for (const t of timers) clearInterval(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sse = (value) => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;

test('keep-alive comments are not progress: a stream of comments alone times out (timeoutMs)', { timeout: 20_000 }, async () => {
  const server = await rawServer((res, _body, every) => {
    res.write(sse(chunk({ role: 'assistant', content: '' })));
    every(50, () => res.write(': keep-alive\n\n'));
  });
  try {
    const { runtime, lead } = await tree(server, { timeoutMs: 400 });
    const answer = await (await runtime.ask(lead, 'lead', 'Go.')).answer;
    assert.equal(answer.stopReason, 'error');
    assert.equal(answer.diagnostic, 'the model endpoint sent nothing for 400 ms (timeoutMs)');
    assert.equal(await server.closed, true);
  } finally {
    await server.close();
  }
});

test('a request that trickles past requestTimeoutMs fails; one whose finish reason came keeps its answer', { timeout: 20_000 }, async () => {
  // A data event every 50 ms, forever: progress each time, never an end.
  const trickle = await rawServer((res, _body, every) => every(50, () => res.write(sse(chunk({ content: 'a' })))));
  try {
    const { runtime, lead } = await tree(trickle, { timeoutMs: 400, requestTimeoutMs: 1000 });
    const answer = await (await runtime.ask(lead, 'lead', 'Go.')).answer;
    assert.equal(answer.stopReason, 'error');
    assert.equal(answer.diagnostic, 'the model endpoint did not finish its answer within 1000 ms (requestTimeoutMs)');
    assert.deepEqual(answer.output, [], 'its unfinished text is not an answer');
  } finally {
    await trickle.close();
  }
  // The answer and its finish reason came, then the server kept sending (no [DONE]).
  const finished = await rawServer((res, _body, every) => {
    res.write(sse(chunk({ content: 'Done here.' })) + sse(chunk({}, 'stop')));
    every(50, () => res.write(sse({ choices: [] })));
  });
  try {
    const { runtime, lead } = await tree(finished, { timeoutMs: 400, requestTimeoutMs: 1000 });
    const answer = await (await runtime.ask(lead, 'lead', 'Go.')).answer;
    assert.equal(answer.stopReason, 'completed', answer.diagnostic);
    assert.deepEqual(answer.output, [{ type: 'text', text: 'Done here.' }]);
  } finally {
    await finished.close();
  }
  assert.throws(() => new OpenAIHost({ baseUrl: 'http://x/v1', model: 'm', requestTimeoutMs: 0 }), { code: 'INVALID_ARGUMENT' });
});

test('reading stops at [DONE]: a server that keeps sending after it does not hold the turn', { timeout: 20_000 }, async () => {
  const server = await rawServer((res, _body, every) => {
    res.write(sse(chunk({ content: 'The answer.' })) + sse(chunk({}, 'stop')) + sse('[DONE]'));
    every(50, () => res.write(sse(chunk({ content: ' and more' }))));
  });
  try {
    // No deadline to rescue it: only stopping at [DONE] ends this turn.
    const { runtime, lead } = await tree(server, { timeoutMs: 60_000, requestTimeoutMs: 600_000 });
    const answer = await (await runtime.ask(lead, 'lead', 'Go.')).answer;
    assert.equal(answer.stopReason, 'completed', answer.diagnostic);
    assert.deepEqual(answer.output, [{ type: 'text', text: 'The answer.' }]);
    assert.equal(await server.closed, true, 'the connection was closed after [DONE]');
  } finally {
    await server.close();
  }
});
