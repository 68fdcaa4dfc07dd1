// Issue 66, point 5: every mistake a new user made gets an error that says what to do, and loses
// nothing. Each was once silent: a misspelt option dropped for its default, a host's usage in the
// wrong shape recorded as 0 tokens, a store of the wrong shape failing later with a minified name,
// an interrupt of a typo answering { signalled: false }, an emit error's reason lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';

const echo = { runTurn: (turn) => ({ messages: [`${turn.name}: ${turn.inputText ?? ''}`] }) };
const invalid = (pattern) => (e) => e.code === 'INVALID_ARGUMENT' && pattern.test(e.message);

test('mistakes: a misspelt option is INVALID_ARGUMENT naming it and the closest known key', async () => {
  const store = new MemoryStore();
  assert.throws(() => new SubagentRuntime({ store, host: echo, maxDeph: 2 }), invalid(/^options has no option "maxDeph"; did you mean maxDepth\?/));
  const runtime = new SubagentRuntime({ store, host: echo });
  await assert.rejects(runtime.openRoot({ sessionID: 'r' }), invalid(/^options has no option "sessionID"; did you mean sessionId\?/));
  assert.deepEqual(await store.read('r', {}), null, 'no root was opened under another id');
  const root = await runtime.openRoot({ sessionId: 'r' });
  await assert.rejects(
    runtime.startActivation({ parent: root, label: 'x', prompt: 'p', name: 'a', descripton: 'typo' }),
    invalid(/^spec has no option "descripton"; .*spec takes provider, label, prompt/),
  );
  assert.deepEqual(await runtime.listDescendants('r'), [], 'nothing was started');
  // The right keys still work.
  const a = await runtime.startActivation({ parent: root, label: 'x', prompt: 'p', name: 'a' });
  assert.equal((await a.result).stopReason, 'completed');
});

test('mistakes: a store of the wrong shape is refused at construction, naming the method', () => {
  assert.throws(() => new SubagentRuntime({ store: {}, host: echo }), invalid(/^options\.store\.read must be a function, not undefined: a store has append\(sessionId, events\) and read\(sessionId, options\)/));
  assert.throws(() => new SubagentRuntime({ store: { read() {} }, host: echo }), invalid(/^options\.store\.append must be a function/));
});

test('mistakes: a host usage key in the wrong shape ends the turn in error naming the right key', async () => {
  const host = { runTurn: () => ({ messages: ['done'], usage: { input_tokens: 5, outputTokens: 1 } }) };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const root = await runtime.openRoot({ sessionId: 'r' });
  const a = await runtime.startActivation({ parent: root, label: 'x', prompt: 'p', name: 'a' });
  const result = await a.result;
  assert.equal(result.stopReason, 'error');
  assert.match(result.diagnostic, /usage has an unknown field "input_tokens"; did you mean inputTokens\?/);
  assert.equal(result.totals.own.inputTokens, 0, 'nothing was recorded from bad usage');
});

test('mistakes: interrupt of a name that names nobody is UNKNOWN_AGENT with the hint', async () => {
  // reviewer works until it is interrupted.
  let entered;
  const running = new Promise((resolve) => (entered = resolve));
  const host = {
    runTurn: (turn) =>
      turn.name === 'lead'
        ? { messages: ['ok'] }
        : new Promise((resolve) => {
            turn.signal.addEventListener('abort', () => resolve({ stopReason: 'aborted' }), { once: true });
            entered();
          }),
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const root = await runtime.openRoot({ sessionId: 'r' });
  const reviewer = await runtime.startActivation({ parent: root, label: 'x', prompt: 'p', name: 'reviewer' });
  await running;
  assert.throws(() => runtime.interrupt('reviewr', { kind: 'user', root }), (e) => e.code === 'UNKNOWN_AGENT' && /did you mean `reviewer`\?/.test(e.message));
  assert.equal(runtime.interrupt('reviewer', { kind: 'user', root }).signalled, true);
  assert.equal((await reviewer.result).stopReason, 'aborted');
});

test('mistakes: ask by a name in capitals or under lead/ says how to write it', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: echo });
  const root = await runtime.openRoot({ sessionId: 'r' });
  await (await runtime.startActivation({ parent: root, label: 'x', prompt: 'p', name: 'reviewer' })).result;
  await assert.rejects(runtime.ask(root, 'Reviewer', 'hi'), (e) => e.code === 'UNAUTHORIZED' && /names are lower case: did you mean `reviewer`\?/.test(e.message));
  await assert.rejects(runtime.ask(root, 'lead/reviewer', 'hi'), (e) => e.code === 'UNAUTHORIZED' && /full names start below lead: did you mean `reviewer`\?/.test(e.message));
});

test('mistakes: a turn.emit error that escapes the host keeps its reason in the diagnostic', async () => {
  const host = { async runTurn(turn) { await turn.emit({ type: 'bogus' }); return { messages: ['never'] }; } };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const root = await runtime.openRoot({ sessionId: 'r' });
  const result = await (await runtime.startActivation({ parent: root, label: 'x', prompt: 'p', name: 'a' })).result;
  assert.equal(result.stopReason, 'error');
  assert.match(result.diagnostic, /^the agent host failed: host\.runTurn failed for agent "a" \(Session "[^"]+"\): .*bogus/);
});
