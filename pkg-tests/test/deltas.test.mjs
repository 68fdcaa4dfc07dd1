// Live output (issue 45): a host streams parts with turn.emit(part); the
// runtime publishes subagent/delta events in order to listeners (scoped by
// tree with { root }); a late part is ignored; a hostile part is refused with
// a coded error and the runtime keeps working; nothing is stored; the test
// kit's scripted host emits parts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, SubagentError } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';

test('turn.emit streams parts to subagent/delta listeners, in order, scoped by tree', async () => {
  const store = new MemoryStore();
  let kept;
  const host = {
    async runTurn(turn) {
      kept ??= turn;
      assert.equal(typeof turn.turnId, 'number');
      for (const text of ['Hel', 'lo', ', world']) assert.equal(turn.emit({ type: 'text-delta', text }), true);
      assert.equal(turn.emit({ type: 'reasoning-delta', text: 'thinking' }), true);
      return { messages: [`${turn.name}: Hello, world`] };
    },
  };
  const runtime = new SubagentRuntime({ store, host });
  const mine = [];
  const all = [];
  runtime.on('subagent/delta', (e) => mine.push(e), { root: 'root' });
  runtime.on('subagent/delta', (e) => all.push(e.rootSessionId));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const other = await runtime.openRoot({ sessionId: 'other' });
  const first = await (await runtime.ask(lead, 'lead', 'hi')).answer;
  await (await runtime.ask(other, 'lead', 'hi')).answer;
  assert.deepEqual(mine.map((e) => [e.name, e.part.type, e.part.text]), [
    ['lead', 'text-delta', 'Hel'],
    ['lead', 'text-delta', 'lo'],
    ['lead', 'text-delta', ', world'],
    ['lead', 'reasoning-delta', 'thinking'],
  ]);
  assert.ok(mine.every((e) => e.sessionId === 'root' && e.rootSessionId === 'root' && e.turnId === kept.turnId));
  assert.deepEqual([...new Set(all)], ['root', 'other'], 'an unscoped listener hears every tree');
  assert.equal(first.output[0].text, 'lead: Hello, world');
  // A part emitted after its turn ended is ignored, even while the next turn runs.
  let release;
  const running = new Promise((r) => (release = r));
  const held = new SubagentRuntime({
    store: new MemoryStore(),
    host: {
      async runTurn(turn) {
        if (kept.turnId !== turn.turnId) await running;
        return { messages: ['ok'] };
      },
    },
  });
  const late = [];
  held.on('subagent/delta', (e) => late.push(e));
  const root = await held.openRoot({ sessionId: 'r' });
  await held.prompt(root, 'lead', 'one');
  assert.equal(kept.emit({ type: 'text-delta', text: 'late' }), false);
  release();
  await held.waitForQuiescence(root);
  assert.deepEqual(late, []);
  // Never stored.
  for (const e of await store.read('root', {})) assert.ok(!JSON.stringify(e).includes('thinking'), e.type);
});

test('a hostile part is refused with a coded error; the runtime keeps working', async () => {
  const refusals = [];
  const host = {
    async runTurn(turn) {
      for (const part of [undefined, 'text', { type: 'image', text: 'x' }, { type: 'text-delta', text: 7 }, { type: 'text-delta' }, { type: 'text-delta', text: 'x'.repeat(70_000) }, { type: 'text-delta', text: 'x'.repeat(50_000_000) }, new Proxy({}, { get() { throw new Error('trap'); } })]) {
        try {
          turn.emit(part);
          refusals.push('accepted');
        } catch (e) {
          assert.ok(e instanceof SubagentError, String(e));
          refusals.push(e.code);
        }
      }
      turn.emit({ type: 'text-delta', text: 'still streaming' });
      return { messages: ['ok'] };
    },
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const parts = [];
  runtime.on('subagent/delta', (e) => parts.push(e.part.text));
  const lead = await runtime.openRoot();
  const answer = await (await runtime.ask(lead, 'lead', 'go')).answer;
  assert.equal(answer.stopReason, 'completed');
  assert.deepEqual(refusals, ['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'LIMIT_EXCEEDED', 'INVALID_ARGUMENT']);
  assert.deepEqual(parts, ['still streaming']);
});

test("the test kit's scripted host emits parts, deterministically", async () => {
  const host = scriptedHost({ lead: [{ steps: [{ emit: { type: 'text-delta', text: 'Draft' } }, { emit: [{ type: 'text-delta', text: 'ing' }, { type: 'reasoning-delta', text: 'why' }] }], reply: 'Drafting' }] });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const seen = [];
  runtime.on('subagent/delta', (e) => seen.push(`${e.part.type}:${e.part.text}`));
  const lead = await runtime.openRoot();
  await (await runtime.ask(lead, 'lead', 'go')).answer;
  host.check();
  assert.deepEqual(seen, ['text-delta:Draft', 'text-delta:ing', 'reasoning-delta:why']);
});

test('runtime.events(): an async iterable of the runtime events, by tree and type; a lagging consumer gets deltas coalesced, nothing else dropped', async () => {
  let gate;
  const opened = new Promise((r) => (gate = r));
  const host = {
    async runTurn(turn) {
      if (turn.name === 'lead' && turn.first) {
        await turn.tools.find((t) => t.name === 'spawn_agent').call({ name: 'writer', description: 'Write', prompt: 'Write.' });
      }
      for (let i = 0; i < 500; i++) turn.emit({ type: 'text-delta', text: String(i % 10) });
      if (turn.name === 'writer') await opened;
      return { messages: [`${turn.name} done`] };
    },
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const everything = runtime.events();
  const deltasOfRoot = runtime.events({ root: 'root', types: ['subagent/delta', 'subagent/turn', 'subagent/start'] });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const other = await runtime.openRoot({ sessionId: 'other' });
  await runtime.prompt(lead, 'lead', 'go');
  await runtime.prompt(other, 'lead', 'go');
  gate();
  await runtime.waitForQuiescence(lead);
  await runtime.waitForQuiescence(other);
  // Nothing was read while 2,000 parts streamed: each turn's parts arrive as one coalesced delta.
  const seen = [];
  for await (const { type, event } of deltasOfRoot) {
    assert.equal(event.rootSessionId, 'root');
    seen.push(type === 'subagent/delta' ? `${event.name}:delta:${event.part.text.length}` : `${event.name ?? ''}:${type}${event.phase ? `:${event.phase}` : ''}`);
    if (seen.filter((s) => s === 'lead:subagent/turn:end').length === 2) break;
  }
  assert.deepEqual(seen, [
    'lead:subagent/turn:start',
    'writer:subagent/start',
    'writer:subagent/turn:start',
    'lead:delta:500',
    'writer:delta:500',
    'lead:subagent/turn:end',
    'writer:subagent/turn:end',
    'lead:subagent/turn:start',
    'lead:delta:500',
    'lead:subagent/turn:end',
  ]);
  assert.deepEqual(await deltasOfRoot.next(), { value: undefined, done: true }, 'break unsubscribed');
  // The unfiltered stream kept every other event, of both trees.
  // Each tree: lead's two turns and the writer's one end.
  const types = [];
  let ends = 0;
  for await (const { type, event } of everything) {
    types.push(`${event.rootSessionId ?? '-'}:${type}`);
    if (type === 'subagent/turn' && event.phase === 'end' && ++ends === 6) break;
  }
  assert.ok(types.includes('root:subagent/catalog') && types.includes('root:subagent/end') && types.includes('other:subagent/delta'), types.join(' '));
  await everything.return();
  // A signal ends a waiting next().
  const controller = new AbortController();
  const waiting = runtime.events({ signal: controller.signal }).next();
  controller.abort();
  assert.deepEqual(await waiting, { value: undefined, done: true });
  for (const bad of [{ types: ['subagent/nope'] }, { types: 'subagent/turn' }, { root: 7 }, { signal: {} }]) {
    assert.throws(() => runtime.events(bad), (e) => e.code === 'INVALID_ARGUMENT', JSON.stringify(bad));
  }
});

test('runtime.events(): a reader that lets more than bufferBytes wait misses the oldest, is told with a gap, and reads on', async () => {
  const host = { async runTurn(turn) { return { messages: [`${turn.name}: ${'o'.repeat(1000)}`] }; } };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const lagging = runtime.events({ root: 'root', bufferBytes: 64 << 10 });
  const reading = runtime.events({ root: 'root', bufferBytes: 64 << 10 });
  // 40 rounds of a 1000-character message and answer: about 3 KiB each, 120 KiB in all.
  let ends = 0;
  for (let round = 0; round < 40; round++) {
    await (await runtime.ask(lead, 'lead', 'm'.repeat(1000))).answer;
    for (;;) {
      const { value, done } = await reading.next();
      assert.equal(done, false, 'a reader that keeps up is never cut off');
      if (value.type === 'subagent/turn' && value.event.phase === 'end') break;
    }
    ends += 1;
  }
  assert.equal(ends, 40);
  const gap = await lagging.next();
  assert.equal(gap.value.type, 'subagent/gap', JSON.stringify(gap.value));
  assert.ok(Number.isSafeInteger(gap.value.event.missed) && gap.value.event.missed > 0, JSON.stringify(gap.value));
  // Then the newest events it kept, in order, and it reads on: a last message reaches it too.
  await (await runtime.ask(lead, 'lead', 'the last one')).answer;
  const kept = [];
  for (;;) {
    const { value, done } = await lagging.next();
    assert.equal(done, false);
    kept.push(value);
    if (value.type === 'subagent/message' && JSON.stringify(value.event.content ?? '').includes('the last one')) break;
  }
  // (Another gap may come first: it still had not read what it kept when the last round came.)
  assert.ok(kept.filter((k) => k.type !== 'subagent/gap').length > 3, kept.map((k) => k.type).join(' '));
  await lagging.return();
  await reading.return();
  for (const bad of [{ bufferBytes: 1 }, { bufferBytes: 2 ** 30 }, { bufferBytes: '64k' }, { bufferBytes: 1.5 }]) {
    assert.throws(() => runtime.events(bad), (e) => e.code === 'INVALID_ARGUMENT' && /bufferBytes/.test(e.message), JSON.stringify(bad));
  }
});
