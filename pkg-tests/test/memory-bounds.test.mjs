// Memory bounded in total (issue 55, point 1): what a caller can make a
// runtime or a MemoryStore hold is refused past a documented, configurable
// bound with LIMIT_EXCEEDED, changes nothing, and the runtime keeps answering.
// (Before: ~2,700 queued 1 MiB messages to one busy member, or 2,046 accepted
// 1 MiB prompts into a MemoryStore, took the wasm heap to 4 GiB and trapped.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, heapUsage, setHeapLimit } from 'subagent-tree';

const MESSAGE = 'x'.repeat(1000 << 10); // just under messageBytes (1 MiB) once framed as a text block

/** A host whose first turn of lead works until interrupted; later turns answer at once. */
function busyHost() {
  let started;
  const running = new Promise((resolve) => (started = resolve));
  let turns = 0;
  const host = {
    async runTurn(turn) {
      turns += 1;
      if (turns > 1) return { messages: ['done'] };
      started();
      await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
      return { stopReason: 'aborted' };
    },
  };
  return { host, running, turns: () => turns };
}

/** Calls `send` until it is refused (at most 200 times): how many it took, and the refusal. */
async function untilRefused(send, what) {
  for (let accepted = 0; accepted < 200; accepted++) {
    try {
      await send();
    } catch (refused) {
      return { accepted, refused };
    }
  }
  assert.fail(`${what} was never bounded`);
}

// First in the file: the instance's memory has not grown yet, so its growth here is this test's.
test('an append past a MemoryStore\'s room is refused before it is copied whole: the heap grows by at most that room', async () => {
  const before = heapUsage().memoryBytes;
  const store = new MemoryStore({ maxBytes: 8 << 20 });
  // 4 Mi small numbers: 8 MiB of JSON, 64 MiB once held as values.
  const events = [0, 1].map((seq) => ({ seq, type: 'note', payload: new Array(2 << 20).fill(7) }));
  await assert.rejects(store.append('s', events), (e) => e.code === 'LIMIT_EXCEEDED' && /^this MemoryStore holds 0 bytes; the events to append to session "s" take more than the 8388608 left of its maxBytes \(8388608\)$/.test(e.message));
  const grown = heapUsage().memoryBytes - before;
  assert.ok(grown <= 24 << 20, `the heap grew ${grown} bytes (before: about 64 MiB)`);
  assert.deepEqual(store.usage(), { bytes: 0, maxBytes: 8 << 20 });
  await store.append('s', [{ seq: 0, type: 'note', payload: [1, 2, 3] }]);
  assert.equal((await store.read('s')).length, 1, 'the store takes what fits');
});

test('messages queued for a busy member stop at memberQueueBytes; the runtime keeps answering, and room returns when a turn takes them', async () => {
  const { host, running, turns } = busyHost();
  const store = new MemoryStore({ maxBytes: 512 << 20 });
  const runtime = new SubagentRuntime({ store, host });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'Work.');
  await running;
  const { accepted, refused } = await untilRefused(() => runtime.prompt(lead, 'lead', MESSAGE), 'the queue');
  assert.equal(accepted, 65, 'about 64 MiB of 1000 KiB messages');
  assert.equal(refused.code, 'LIMIT_EXCEEDED');
  assert.match(refused.message, /"lead" holds \d+ bytes of input its turns have not taken yet; a message of \d+ bytes would pass limits\.memberQueueBytes \(67108864\)/);
  // Nothing of the refused message was written, and the runtime answers.
  assert.equal((await store.read('root', { types: ['message/input'] })).length, accepted + 1);
  assert.equal((await runtime.listTree('root')).root.activity, 'running');
  // The turn is stopped; a message wakes the member, its next turn takes the queue, and room returns.
  runtime.interrupt('root', { kind: 'user', root: lead });
  const { answer } = await runtime.ask(lead, 'lead', 'Go on.');
  assert.equal((await answer).stopReason, 'completed');
  assert.equal(turns(), 2);
  await runtime.prompt(lead, 'lead', MESSAGE);
  await runtime.waitForQuiescence(lead);
});

test('queueBytes bounds what all members of a runtime hold together', async () => {
  const { host, running } = busyHost();
  const runtime = new SubagentRuntime({ store: new MemoryStore({ maxBytes: 512 << 20 }), host, limits: { memberQueueBytes: 8 << 20, queueBytes: 4 << 20 } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'Work.');
  await running;
  const sent = [];
  const refused = await (async () => {
    for (;;) {
      try {
        sent.push(await runtime.prompt(lead, 'lead', MESSAGE));
      } catch (e) {
        return e;
      }
    }
  })();
  assert.equal(sent.length, 4);
  assert.equal(refused.code, 'LIMIT_EXCEEDED');
  assert.match(refused.message, /limits\.queueBytes \(4194304\)/);
  // The limits are options like the others: out of range is a bad option.
  for (const limits of [{ queueBytes: 1024 }, { memberQueueBytes: 2 ** 31 }]) {
    assert.throws(() => new SubagentRuntime({ store: new MemoryStore(), host, limits }), (e) => e.code === 'INVALID_ARGUMENT');
  }
  runtime.interrupt('root', { kind: 'user', root: lead });
});

test('a MemoryStore holds at most maxBytes: a refused append changes nothing; a runtime over a full store answers with the error', async () => {
  const store = new MemoryStore({ maxBytes: 1 << 20 });
  assert.deepEqual(store.usage(), { bytes: 0, maxBytes: 1 << 20 });
  const event = (seq) => ({ seq, type: 'note', payload: { text: 'y'.repeat(100 << 10) } });
  let seq = 0;
  const full = await (async () => {
    for (;;) {
      try {
        await store.append('s', [event(seq)]);
        seq += 1;
      } catch (e) {
        return e;
      }
    }
  })();
  assert.equal(seq, 10);
  assert.equal(full.code, 'LIMIT_EXCEEDED');
  assert.match(full.message, /this MemoryStore holds \d+ bytes; appending \d+ more to session "s" would pass its maxBytes \(1048576\)/);
  assert.equal((await store.read('s')).length, 10, 'the refused append wrote nothing');
  assert.ok(store.usage().bytes <= 1 << 20);
  // Millions of tiny events in one call are measured by what they take, and refused before they are copied.
  const many = new Array(2_200_000).fill({ seq: 0, type: 't', payload: null });
  await assert.rejects(new MemoryStore().append('t', many), (e) => e.code === 'LIMIT_EXCEEDED' && /holds 2200000 events/.test(e.message));
  for (const options of [{ maxBytes: 0 }, { maxBytes: 'big' }, { maxBytes: 2 ** 31 }, { maxBytes: 1.5 * 2 ** 20 + 0.5 }]) {
    assert.throws(() => new MemoryStore(options), (e) => e.code === 'INVALID_ARGUMENT' && /maxBytes/.test(e.message), JSON.stringify(options));
  }
  // A runtime whose store is full refuses prompts with the store's reason and keeps answering.
  const small = new MemoryStore({ maxBytes: 1 << 20 });
  const runtime = new SubagentRuntime({ store: small, host: { runTurn: async () => ({ messages: ['ok'] }) } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const refused = await (async () => {
    for (let i = 0; i < 100; i++) {
      try {
        const { answer } = await runtime.ask(lead, 'lead', 'z'.repeat(200 << 10));
        await answer;
      } catch (e) {
        return e;
      }
    }
    return null;
  })();
  assert.ok(refused, 'a full store refused a prompt');
  assert.match(refused.message, /maxBytes/);
  assert.equal((await runtime.listTree('root')).root.id, 'root');
});

test('past heapBytes every input is refused LIMIT_EXCEEDED, whatever the queue and store limits allow; the runtime keeps answering', async () => {
  const { host, running, turns } = busyHost();
  // The queue and store limits at their highest: only the module's heap limit stops the input.
  const store = new MemoryStore({ maxBytes: 2 ** 31 - 1 });
  const runtime = new SubagentRuntime({ store, host, limits: { memberQueueBytes: 2 ** 30, queueBytes: 2 ** 31 - 1 } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'Work.');
  await running;
  const before = heapUsage();
  assert.equal(before.limitBytes, 2 ** 31, 'the default heapBytes is 2 GiB');
  assert.ok(before.usedBytes > 0 && before.usedBytes <= before.memoryBytes, JSON.stringify(before));
  setHeapLimit(before.usedBytes + (48 << 20));
  const { accepted, refused } = await untilRefused(() => runtime.prompt(lead, 'lead', MESSAGE), 'the heap');
  assert.ok(accepted >= 8 && accepted < 48, `${accepted} messages of 1000 KiB in 48 MiB`);
  assert.equal(refused.code, 'LIMIT_EXCEEDED');
  assert.match(refused.message, /heap that holds \d+ bytes; the limit heapBytes is \d+/);
  assert.ok(heapUsage().usedBytes <= heapUsage().limitBytes + (8 << 20), 'the heap stays near its limit');
  // Data copied in from JS is refused the same way, before it is held, and the store keeps what it had.
  const held = (await store.read('root')).length;
  await assert.rejects(store.append('other', [{ seq: 0, type: 'note', payload: { text: MESSAGE } }]), (e) => e.code === 'LIMIT_EXCEEDED' && /heapBytes/.test(e.message));
  assert.equal(await store.read('other'), null);
  assert.equal((await store.read('root')).length, held);
  // The runtime answers: the turn is stopped, a short message wakes lead, its next turn takes the
  // queue and frees the copies, and room returns under the same limit.
  assert.equal((await runtime.listTree('root')).root.activity, 'running');
  const full = heapUsage().usedBytes;
  runtime.interrupt('root', { kind: 'user', root: lead });
  const woken = await runtime.ask(lead, 'lead', 'Go on.');
  assert.equal((await woken.answer).stopReason, 'completed');
  assert.equal(turns(), 2);
  await runtime.waitForQuiescence(lead);
  assert.ok(heapUsage().usedBytes < full - (8 << 20), `freed: ${full} -> ${heapUsage().usedBytes}`);
  const { answer } = await runtime.ask(lead, 'lead', MESSAGE);
  assert.equal((await answer).stopReason, 'completed');
  for (const bad of [0, 2 ** 32, 1.5, '64M', undefined]) {
    assert.throws(() => setHeapLimit(bad), (e) => e.code === 'INVALID_ARGUMENT' && /heapBytes/.test(e.message), String(bad));
  }
  setHeapLimit(2 ** 31);
});
