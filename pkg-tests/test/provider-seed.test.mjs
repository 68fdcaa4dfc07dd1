// Issue 69, point 4: a custom provider's seed is checked as the built-in fork's prefix is:
// contiguous from seq 0 and balanced (a turn begun in it ends in it). A seed that stops inside a
// turn is INVALID_ARGUMENT, and the child is never created.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';

const seeded = (seed) => ({
  name: 'seeded',
  capabilities: { agentOptions: false, agentPreset: false, outputSchema: false, depthLimit: false },
  inheritsParentContext: true,
  prepareContinuable: () => ({ seed }),
});
const event = (seq, type, payload = {}) => ({ seq, type, payload });

test('a provider\'s seed must be contiguous and end after a completed turn', async () => {
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host: { runTurn: (turn) => ({ messages: [`${turn.name} ran`] }) } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const balanced = [event(0, 'message/input', { id: 'm0', source: { kind: 'user' }, content: [{ type: 'text', text: 'hi' }] }), event(1, 'turn/start', { consumed: ['m0'] }), event(2, 'turn/end', { consumed: ['m0'], stopReason: 'completed', output: [] })];
  runtime.registerProvider(seeded(balanced));
  const ok = await runtime.startActivation({ provider: 'seeded', parent: lead, label: 'x', prompt: 'go', name: 'good' });
  assert.equal((await ok.result).stopReason, 'completed');
  const open = [...balanced, event(3, 'turn/start', { consumed: [] })];
  const runtime2 = new SubagentRuntime({ store, host: { runTurn: () => ({ messages: ['x'] }) } });
  runtime2.registerProvider(seeded(open));
  const lead2 = await runtime2.openRoot({ sessionId: 'other' });
  await assert.rejects(
    runtime2.startActivation({ provider: 'seeded', parent: lead2, label: 'x', prompt: 'go', name: 'bad' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /seed whose turn at seq 3 never ends/.test(e.message),
  );
  assert.deepEqual(await runtime2.listDescendants('other'), [], 'no child was created');
  const gap = [event(0, 'note'), event(2, 'note')];
  const runtime3 = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: () => ({ messages: ['x'] }) } });
  runtime3.registerProvider(seeded(gap));
  const lead3 = await runtime3.openRoot({ sessionId: 'third' });
  await assert.rejects(runtime3.startActivation({ provider: 'seeded', parent: lead3, label: 'x', prompt: 'go' }), (e) => e.code === 'INVALID_ARGUMENT' && /not contiguous/.test(e.message));
});

// Issue 69, point 4: a final flush that fails is reported, not dropped.
test('a failed flush as a member leaves is a subagent/flush-failed event with its Session id and error', async () => {
  const inner = new MemoryStore();
  let failing = false;
  const store = {
    read: (id, options) => inner.read(id, options),
    append: (id, events) => inner.append(id, events),
    flush: async () => {
      if (failing) throw new Error('the disk went away');
    },
  };
  const runtime = new SubagentRuntime({ store, host: { runTurn: () => ({ messages: ['done'] }) } });
  const failed = [];
  runtime.on('subagent/flush-failed', (e) => failed.push(e));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const first = await runtime.startActivation({ parent: lead, label: 'x', prompt: 'p', name: 'first' });
  await first.result;
  assert.deepEqual(failed, []);
  failing = true;
  const second = await runtime.startActivation({ parent: lead, label: 'x', prompt: 'p', name: 'second' });
  assert.equal((await second.result).stopReason, 'completed', 'the member left anyway');
  assert.equal(failed.length, 1);
  assert.deepEqual([failed[0].sessionId, failed[0].name, failed[0].rootSessionId], [second.childId, 'second', 'root']);
  assert.match(failed[0].error, /the disk went away/);
});
