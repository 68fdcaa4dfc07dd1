// Issue 49, point 3: one bad event costs its own entry, never the tree. A
// store answers events holding lone surrogates (text JavaScript cannot hand
// to the wasm whole), as a corrupted disk or a buggy writer would: the tree
// still lists, the root opens and runs, siblings resume, and nothing is
// delivered twice or read lossily.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, listDescendants } from 'subagent-tree';
import { rejects } from './helpers.mjs';

function recordingHost() {
  const turns = [];
  return {
    turns,
    inputsOf: (name) => turns.filter((t) => t.name === name).map((t) => t.input),
    async runTurn(turn) {
      turns.push({ name: turn.name, input: turn.inputText });
      return { stopReason: 'completed', messages: [`done by ${turn.name}`] };
    },
  };
}

/** A tree written by one runtime (lead ran "first"; alpha and bravo ran once), copied into a plain JS store. */
async function writtenTree() {
  const memory = new MemoryStore();
  const host = recordingHost();
  const runtime = new SubagentRuntime({ store: memory, host });
  const root = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(root, 'root', 'first');
  for (const name of ['alpha', 'bravo']) await runtime.startActivation({ provider: 'spawn', parent: root, name, label: `task ${name}`, prompt: 'go' });
  await runtime.waitForQuiescence(root);
  const logs = new Map([['root', await memory.read('root')]]);
  for (const row of await runtime.listDescendants('root')) logs.set(row.id, await memory.read(row.id));
  const ids = Object.fromEntries((await runtime.listDescendants('root')).map((r) => [r.name, r.id]));
  return { logs, ids };
}

/** A plain store over `logs` (events kept as given, lone surrogates included). */
function plainStore(logs) {
  return {
    async append(id, events) {
      logs.set(id, [...(logs.get(id) ?? []), ...structuredClone(events)]);
    },
    async read(id, options) {
      const log = logs.get(id);
      if (!log) return null;
      return structuredClone(log.filter((e) => e.seq >= (options?.fromSeq ?? 0) && (!options?.types || options.types.includes(e.type))));
    },
  };
}

test('a lone surrogate in one catalog entry and one message: the tree lists, the root opens, a sibling resumes', async () => {
  const { logs, ids } = await writtenTree();
  const rootLog = logs.get('root');
  const entry = rootLog.find((e) => e.type === 'subagent/catalog' && e.payload.childId === ids.alpha);
  entry.payload.label = 'task \uD800alpha';
  rootLog.find((e) => e.type === 'message/input').payload.content[0].text = 'fi\uDC00rst';
  // A message accepted but not yet answered, damaged too.
  const pending = structuredClone(rootLog.find((e) => e.type === 'message/input'));
  Object.assign(pending, { seq: rootLog.length });
  pending.payload.messageId = 'm-pending';
  rootLog.push(pending);
  const store = plainStore(logs);

  // Listing: one corrupt row for the bad entry, the rest as before.
  const rows = await listDescendants(store, 'root');
  assert.deepEqual(rows.map((r) => [r.kind, r.id, r.reason ?? r.name]), [
    ['diagnostic', ids.alpha, 'corrupt'],
    ['child', ids.bravo, 'bravo'],
  ]);
  assert.equal(rows[0].seq, entry.seq);
  assert.match(rows[0].detail, /^event \d+: damaged in the store: payload\.label is not well-formed Unicode/);

  // The runtime opens the root (it failed with CORRUPT_CATALOG before), lists the same, and runs on.
  const host = recordingHost();
  const runtime = new SubagentRuntime({ store, host });
  const root = await runtime.openRoot({ sessionId: 'root' });
  assert.deepEqual((await runtime.listDescendants('root')).map((r) => [r.kind, r.id]), [['diagnostic', ids.alpha], ['child', ids.bravo]]);
  await runtime.prompt(root, 'bravo', 'again');
  await runtime.waitForQuiescence(root);
  assert.deepEqual(host.inputsOf('bravo'), [['again']]);
  // The damaged entry is never a handle; its name stays taken.
  await rejects(runtime.prompt(root, ids.alpha, 'hi'), 'NOT_RESUMABLE');
  await rejects(runtime.startActivation({ provider: 'spawn', parent: root, name: 'alpha', label: 'x', prompt: 'p' }), 'DUPLICATE_NAME');
  // The pending message is answered, the model told it could not be read; the consumed one never returns.
  await runtime.prompt(root, 'root', 'next');
  await runtime.waitForQuiescence(root);
  const lead = host.inputsOf('lead').flat();
  assert.ok(lead.some((t) => /could not be read from the session store.*payload\.content\[0\]\.text is not well-formed Unicode/s.test(t)), lead.join('\n'));
  assert.ok(lead.includes('next'));
  assert.ok(!lead.some((t) => t.includes('rst')), 'the consumed message is not delivered again, lossily or not');

  // A later runtime delivers none of it again.
  const later = recordingHost();
  const again = new SubagentRuntime({ store, host: later });
  const root2 = await again.openRoot({ sessionId: 'root' });
  await again.prompt(root2, 'root', 'last');
  await again.waitForQuiescence(root2);
  assert.deepEqual(later.inputsOf('lead'), [['last']]);
});

test('a throwing getter damages one entry too; an event without a readable seq or type still fails the read', async () => {
  const entry = (childId, name) => ({ version: 3, childId, childCreatedAt: 1, mode: 'external', name });
  const throwing = (fields, key) => Object.defineProperty({ ...fields }, key, { enumerable: true, get() { throw new Error(`no ${key}`); } });
  const events = [
    { seq: 0, type: 'subagent/catalog', payload: throwing(entry('a', 'a'), 'label') },
    Object.defineProperty({ seq: 1, type: 'subagent/catalog' }, 'payload', { get() { throw new Error('no payload'); } }),
    { seq: 2, type: 'subagent/catalog', payload: entry('c', 'c') },
  ];
  const rows = await listDescendants({ read: () => events }, 'root');
  assert.deepEqual(rows.map((r) => [r.kind, r.id, r.seq]), [['diagnostic', 'a', 0], ['diagnostic', '', 1], ['child', 'c', undefined]]);
  assert.match(rows[0].detail, /payload\.label could not be read \(Error: no label\)/);
  assert.match(rows[1].detail, /payload could not be read \(Error: no payload\)/);
  // Nothing places an event without its seq: the root's read fails as a whole, as before.
  const unplaced = [{ seq: 'zero', type: 'subagent/catalog', payload: entry('a', 'a') }, events[2]];
  await rejects(listDescendants({ read: () => unplaced }, 'root'), 'CORRUPT_CATALOG', 'seq');
});
