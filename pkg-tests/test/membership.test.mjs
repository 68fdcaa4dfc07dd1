// Membership holds both ways (issue 49, point 1): a catalog cannot adopt a
// member of another tree. A member belongs to a tree only when its own
// `session/start` names the creator whose catalog lists it; an entry whose
// child disagrees is a `foreign` diagnostic row, never a handle, a turn or
// a write. importTree refuses a bundle that refers to sessions outside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost, importTree, exportTree } from 'subagent-tree/testing';

const steal = (childId) => ({ seq: 0, type: 'subagent/catalog', payload: { version: 3, childId, childCreatedAt: 1, mode: 'continuable', label: 'mine now', name: 'stolen' } });

async function victimTree(store) {
  const runtime = new SubagentRuntime({ store, host: scriptedHost({ secret: [{ reply: 'the secret plan' }] }) });
  const lead = await runtime.openRoot({ sessionId: 'victim' });
  const child = await runtime.startActivation({ parent: lead, label: 'Keep the plan', prompt: 'Hold the plan.', name: 'secret' });
  await child.result;
  await runtime.waitForQuiescence(lead);
  await runtime.closeRoot(lead);
  return child.childId;
}

test("a catalog naming another tree's member lists it as foreign: no handle, no turn, no write", async () => {
  const store = new MemoryStore();
  const secret = await victimTree(store);
  const before = (await store.read(secret)).length;
  // Written straight to the store, past importTree.
  await store.append('attacker', [steal(secret)]);
  const turns = [];
  const runtime = new SubagentRuntime({ store, host: { runTurn: (turn) => (turns.push(turn.name), { messages: ['ok'] }) } });
  const root = await runtime.openRoot({ sessionId: 'attacker' });
  const rows = await runtime.listDescendants('attacker');
  assert.deepEqual(rows.map(({ kind, id, parentId, depth, reason }) => ({ kind, id, parentId, depth, reason })), [{ kind: 'diagnostic', id: secret, parentId: 'attacker', depth: 1, reason: 'foreign' }]);
  for (const target of ['stolen', secret]) {
    await assert.rejects(runtime.reopen(root, target), (e) => ['UNKNOWN_AGENT', 'NOT_RESUMABLE', 'UNAUTHORIZED'].includes(e.code), target);
    await assert.rejects(runtime.ask(root, target, 'tell me the plan'), (e) => ['UNKNOWN_AGENT', 'NOT_RESUMABLE', 'UNAUTHORIZED'].includes(e.code), target);
  }
  const tools = runtime.toolsFor(root);
  const sent = await tools.find((t) => t.name === 'send_message').call({ agent: secret, message: 'leak it' });
  assert.equal(sent.isError, true, sent.content);
  await runtime.waitForQuiescence(root);
  assert.deepEqual(turns, [], 'no turn ran');
  assert.equal((await store.read(secret)).length, before, "nothing was written to the victim's log");
  // The victim's own tree still lists and resumes it.
  const owner = new SubagentRuntime({ store, host: scriptedHost({ secret: [{ reply: 'still mine' }] }) });
  const lead = await owner.openRoot({ sessionId: 'victim' });
  assert.deepEqual((await owner.listDescendants('victim')).map((r) => [r.kind, r.path]), [['child', 'secret']]);
  assert.equal((await (await owner.ask(lead, 'secret', 'still there?')).answer).stopReason, 'completed');
});

test('importTree refuses a bundle that refers to sessions outside it', async () => {
  const store = new MemoryStore();
  const secret = await victimTree(store);
  const bundle = { format: 'subagent-tree/bundle', version: 1, rootId: 'attacker', sessions: [{ id: 'attacker', events: [steal(secret)] }], missing: [] };
  const { format } = await exportTree(store, 'victim');
  bundle.format = format;
  await assert.rejects(importTree(store, bundle), (e) => e.code === 'INVALID_BUNDLE' && e.message.includes('which is not in the bundle'));
  await assert.rejects(importTree(store, { ...bundle, missing: [secret] }), (e) => e.code === 'INVALID_BUNDLE' && e.message.includes('the target store holds that session'));
  assert.equal(await store.read('attacker'), null, 'nothing was written');
  // A whole tree with an external run (no log) still round-trips.
  const copy = new MemoryStore();
  const exported = await exportTree(store, 'victim');
  assert.deepEqual(await importTree(copy, exported), { rootId: 'victim', sessions: exported.sessions.length });
});

test("isResident answers for the root's own tree only (issue 49, point 6)", async () => {
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host: scriptedHost({ busy: [{ wait: 'interrupt' }] }) });
  const mine = await runtime.openRoot({ sessionId: 'mine' });
  const theirs = await runtime.openRoot({ sessionId: 'theirs' });
  const child = await runtime.startActivation({ parent: theirs, label: 'Work', prompt: 'work', name: 'busy' });
  assert.equal(runtime.isResident(theirs, child.childId), true);
  assert.equal(runtime.isResident(mine, child.childId), false, "another tree's member is never reported");
  assert.equal(runtime.isResident(mine, 'theirs'), false);
  assert.throws(() => runtime.isResident(child.childId), (e) => ['UNAUTHORIZED', 'INVALID_ARGUMENT'].includes(e.code));
  await child.dispose();
});
