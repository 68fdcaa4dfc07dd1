// Memory bounded in total (issue 55, point 1): what a caller can make a
// runtime or a MemoryStore hold is refused past a documented, configurable
// bound with LIMIT_EXCEEDED, changes nothing, and the runtime keeps answering.
// (Before: ~2,700 queued 1 MiB messages to one busy member, or 2,046 accepted
// 1 MiB prompts into a MemoryStore, took the wasm heap to 4 GiB and trapped.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';

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

test('messages queued for a busy member stop at memberQueueBytes; the runtime keeps answering, and room returns when a turn takes them', async () => {
  const { host, running, turns } = busyHost();
  const store = new MemoryStore({ maxBytes: 512 << 20 });
  const runtime = new SubagentRuntime({ store, host });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'Work.');
  await running;
  let accepted = 0;
  let refused;
  for (;;) {
    try {
      await runtime.prompt(lead, 'lead', MESSAGE);
      accepted += 1;
    } catch (e) {
      refused = e;
      break;
    }
    assert.ok(accepted < 200, 'the queue was never bounded');
  }
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
