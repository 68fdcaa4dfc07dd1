// Bridge error messages name the member (full name and Session id) and say
// what to do next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, SubagentError, Agent } from 'subagent-tree';

function runtime(options = {}) {
  const host = { runTurn: (turn) => ({ messages: [`${turn.name} done`] }) };
  return new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2, ...options });
}

async function refusal(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof SubagentError, String(e));
    return e;
  }
  assert.fail('expected a rejection');
}

test('a dead child handle: the parent refusal names the member and says how to get a live handle', async () => {
  const rt = runtime();
  const lead = await rt.openRoot({ sessionId: 'root-1' });
  const reviewer = await rt.startActivation({ provider: 'spawn', parent: lead, name: 'reviewer', label: 'R', prompt: 'p' });
  const checker = await rt.startActivation({ provider: 'spawn', parent: reviewer.agent, name: 'checker', label: 'C', prompt: 'p' });
  await checker.result; // settled: it left residency, its handle is dead
  assert.equal(checker.agent.live, false);
  const e = await refusal(rt.startActivation({ provider: 'spawn', parent: checker.agent, label: 'x', prompt: 'p' }));
  assert.equal(e.code, 'UNAUTHORIZED');
  assert.equal(
    e.message,
    `the parent handle of agent "reviewer/checker" (Session ${JSON.stringify(checker.childId)}) is dead: that member is no longer live ` +
      '(it settled, was disposed, or its root was closed or drained); take a live one with ' +
      'runtime.reopen(root, "reviewer/checker") (held until release()), or use turn.agent in its next turn',
  );
  // The advice works: reopen gives a new, live handle.
  const held = await rt.reopen(lead, 'reviewer/checker');
  assert.equal(held.agent.live, true);
  assert.equal(rt.namesOf(held.agent).self, 'reviewer/checker');
  held.release();
  await rt.closeRoot(lead);
});

test('a closed root: the refusal says to open the root again, with its Session id', async () => {
  const rt = runtime();
  const lead = await rt.openRoot({ sessionId: 'root-2' });
  await rt.closeRoot(lead);
  const e = await refusal(rt.sendMessage(lead, 'root-2', 'x'));
  assert.equal(e.code, 'UNAUTHORIZED');
  assert.match(e.message, /^the sender handle of agent "lead" \(Session "root-2"\) is dead: /);
  assert.match(e.message, /open the root again with openRoot\(\{ sessionId: "root-2" \}\) and use the handle it returns$/);
  const again = await rt.openRoot({ sessionId: 'root-2' });
  assert.equal(again.live, true);
});

test('a Session id or a copy is no handle: the refusal says which handle to pass', async () => {
  const rt = runtime();
  const lead = await rt.openRoot({ sessionId: 'root-3' });
  const e = await refusal(rt.startActivation({ provider: 'spawn', parent: 'root-3', label: 'x', prompt: 'p' }));
  assert.equal(e.code, 'UNAUTHORIZED');
  assert.match(e.message, /^the parent must be an Agent handle from a SubagentRuntime, not "root-3"; pass the handle that openRoot\(\), startActivation\(\.\.\.\)\.agent or turn\.agent gave you/);
  assert.throws(() => rt.namesOf({ ...lead }), (err) => err.code === 'UNAUTHORIZED' && /a copy of its fields is no handle/.test(err.message));
  assert.throws(() => new Agent(), (err) => err instanceof TypeError && /take them from a SubagentRuntime/.test(err.message));
});

test("another runtime's handle: the refusal names the member", async () => {
  const a = runtime();
  const b = runtime();
  const leadB = await b.openRoot({ sessionId: 'root-b' });
  assert.throws(
    () => a.toolsFor(leadB),
    (e) => e.code === 'UNAUTHORIZED' && e.message === 'the agent handle of agent "lead" (Session "root-b") belongs to another SubagentRuntime; use the handle this runtime gave you for that member',
  );
});

test('a historical (unnamed) member is named by its Session id alone', async () => {
  const store = new MemoryStore();
  const payload = { version: 0, childId: 'hist-1', childCreatedAt: 5, mode: 'continuable', label: 'Old task' };
  await store.append('root-4', [{ seq: 0, type: 'subagent/catalog', payload }]);
  await store.append('hist-1', [{ seq: 0, type: 'session/start', payload: {} }]);
  const host = { runTurn: (turn) => ({ messages: [`${turn.name} done`] }) };
  const rt = new SubagentRuntime({ store, host });
  const lead = await rt.openRoot({ sessionId: 'root-4' });
  const held = await rt.reopen(lead, 'hist-1'); // a cold resume of the historical child
  const handle = held.agent;
  assert.equal(handle.name, 'hist-1');
  held.release();
  await rt.waitForQuiescence(lead);
  const e = await refusal(rt.sendMessage(handle, 'root-4', 'x'));
  assert.ok(e.message.startsWith('the sender handle of Session "hist-1" is dead'), e.message);
});
