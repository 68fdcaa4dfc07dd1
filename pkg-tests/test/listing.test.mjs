// listDescendants over MemoryStore and JS stores of every style, with and
// without readMany: pre-order rows, diagnostics, reads, cycles, forks, abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { listDescendants, listTree, MemoryStore, SubagentError } from 'subagent-tree';
import { c0, c1, c3, note, log, forkLog, memory, jsStore, withOverrides, counting, rejects, never, ids, STYLES } from './helpers.mjs';

/** The fixture: a three-level named tree, a historical v0 branch, an external
 *  leaf, an unknown-mode entry, a catalog entry that does not decode, a missing session, a
 *  duplicate and two cycles. */
function fixture() {
  return {
    root: log([
      c3('rev', 'reviewer', 'continuable', 'Review the PR'),
      note(),
      c0('old'),
      c3('ext', 'runner', 'external'),
      c1('hist'),
      c3('brk', 'broken'),
      c3('gone', 'gone'),
      c3('rev', 'reviewer', 'continuable', 'again'),
    ]),
    rev: log([c3('chk', 'checker'), c3('root', 'loop')]),
    chk: log([c3('deep', 'deep', 'one-shot', 'Dig'), c3('rev', 'back')]),
    deep: [],
    old: log([c3('oldkid', 'kid')]),
    oldkid: [],
    hist: log([c3('histkid', 'h')]),
    histkid: [],
    brk: log([{ type: 'subagent/catalog', payload: { version: 3, childId: 'x', childCreatedAt: 0, mode: 'one-shot' } }]),
    ext: log([c3('never-listed', 'nope')]),
  };
}

const EXPECTED = [
  { kind: 'child', id: 'rev', parentId: 'root', depth: 1, mode: 'continuable', label: 'Review the PR', name: 'reviewer', path: 'reviewer', hasChildren: true },
  { kind: 'child', id: 'chk', parentId: 'rev', depth: 2, mode: 'one-shot', name: 'checker', path: 'reviewer/checker', hasChildren: true },
  { kind: 'child', id: 'deep', parentId: 'chk', depth: 3, mode: 'one-shot', label: 'Dig', name: 'deep', path: 'reviewer/checker/deep', hasChildren: false },
  { kind: 'child', id: 'old', parentId: 'root', depth: 1, mode: 'one-shot', hasChildren: true },
  { kind: 'child', id: 'oldkid', parentId: 'old', depth: 2, mode: 'one-shot', name: 'kid', hasChildren: false },
  { kind: 'child', id: 'ext', parentId: 'root', depth: 1, mode: 'external', name: 'runner', path: 'runner', hasChildren: false },
  { kind: 'diagnostic', id: 'hist', parentId: 'root', depth: 1, reason: 'unsupported' },
  { kind: 'child', id: 'histkid', parentId: 'hist', depth: 2, mode: 'one-shot', name: 'h', hasChildren: false },
  { kind: 'child', id: 'brk', parentId: 'root', depth: 1, mode: 'one-shot', name: 'broken', path: 'broken', hasChildren: true },
  { kind: 'diagnostic', id: 'x', parentId: 'brk', depth: 2, reason: 'corrupt', seq: 0, detail: 'event 0: catalog payload v3 needs a name' },
  { kind: 'diagnostic', id: 'gone', parentId: 'root', depth: 1, reason: 'unavailable' },
];
const READ_ONCE = ['root', 'rev', 'old', 'hist', 'brk', 'gone', 'chk', 'oldkid', 'histkid', 'deep'];

test('MemoryStore: stable pre-order with parentId, depth, mode, label, name, path and hasChildren', async () => {
  const store = await memory(fixture());
  const rows = await listDescendants(store, 'root');
  assert.deepEqual(rows, EXPECTED);
  // Exactly the keys of the contract, optional ones absent rather than undefined.
  assert.deepEqual(Object.keys(rows[3]), ['kind', 'id', 'parentId', 'depth', 'mode', 'hasChildren']);
  assert.deepEqual(Object.keys(rows[6]), ['kind', 'id', 'parentId', 'depth', 'reason']);
  // Listing again gives the same rows (nothing is cached or consumed).
  assert.deepEqual(await listDescendants(store, 'root'), EXPECTED);
});

for (const style of STYLES) {
  for (const batch of [false, true]) {
    test(`JS store (${style}${batch ? ', readMany' : ''}): same rows, each reachable catalog read once, externals never`, async () => {
      const store = jsStore(fixture(), { style, batch });
      assert.deepEqual(await listDescendants(store, 'root'), EXPECTED);
      if (batch) {
        // The root alone, then one round trip per depth level.
        assert.deepEqual(store.calls.read, ['root']);
        assert.deepEqual(store.calls.readMany, [['rev', 'old', 'hist', 'brk', 'gone'], ['chk', 'oldkid', 'histkid'], ['deep']]);
      } else {
        assert.deepEqual([...store.calls.read].sort(), [...READ_ONCE].sort());
        assert.equal(store.calls.readMany.length, 0);
      }
      const all = [...store.calls.read, ...store.calls.readMany.flat()];
      assert.equal(all.includes('ext'), false, 'external entries are never read');
      assert.equal(new Set(all).size, all.length, 'no catalog read twice');
    });
  }
}

/** The fixture with turns: the root's and rev's ended (rev's last one interrupted), chk's open. */
function withTurns() {
  const logs = fixture();
  const turn = (stopReason, output, id) => [
    { type: 'turn/start', payload: { input: [id] } },
    { type: 'turn/end', payload: { stopReason, output, consumed: [id] } },
  ];
  logs.root = log([...logs.root, ...turn('completed', [{ type: 'text', text: 'All done.' }], 'm1')]);
  logs.rev = log([...logs.rev, ...turn('completed', 'Reviewed: ship it', 'm2'), ...turn('aborted', [], 'm3')]);
  logs.chk = log([...logs.chk, { type: 'turn/start', payload: { input: ['m4'] } }]);
  return logs;
}

test('listTree: the rows of listDescendants, each with what its log says of its turns, and the root', async () => {
  for (const batch of [false, true]) {
    const store = jsStore(withTurns(), { batch });
    const tree = await listTree(store, 'root');
    const listed = await listDescendants(jsStore(withTurns(), { batch }), 'root');
    // The same rows, in the same reads; a row whose log was read adds turnOpen and lastTurn.
    assert.deepEqual(tree.rows.map(({ turnOpen, lastTurn, ...row }) => row), listed);
    assert.deepEqual(tree.root, { id: 'root', turnOpen: false, lastTurn: { stopReason: 'completed', output: 'All done.' } });
    const of = (id) => tree.rows.find((r) => r.id === id);
    // rev: its last turn was interrupted; its latest output is the one before.
    assert.deepEqual([of('rev').turnOpen, of('rev').lastTurn], [false, { stopReason: 'aborted', output: 'Reviewed: ship it' }]);
    assert.deepEqual([of('chk').turnOpen, of('chk').lastTurn], [true, undefined]);
    assert.deepEqual([of('deep').turnOpen, 'lastTurn' in of('deep')], [false, false]);
    // An external run (no log) and diagnostics carry neither.
    for (const id of ['ext', 'hist', 'gone', 'x']) assert.ok(!('turnOpen' in of(id)) && !('lastTurn' in of(id)), id);
    // Turn records are read with the catalogs: one read per log, as a listing.
    assert.deepEqual(store.calls.readOptions[0].types, ['subagent/catalog', 'session/start', 'turn/start', 'turn/end']);
    const all = [...store.calls.read, ...store.calls.readMany.flat()];
    assert.deepEqual([...all].sort(), [...READ_ONCE].sort());
  }
  // A long output is cut to 4096 bytes of UTF-8, ending "…".
  const store = new MemoryStore();
  await store.append('r', [{ seq: 0, type: 'turn/end', payload: { stopReason: 'max-tokens', output: 'ü'.repeat(5000), consumed: [] } }]);
  const { root } = await listTree(store, 'r');
  assert.equal(root.lastTurn.stopReason, 'max-tokens');
  assert.ok(root.lastTurn.output.endsWith('…') && new TextEncoder().encode(root.lastTurn.output).length <= 4096);
  await assert.rejects(listTree(store, ''), (e) => e instanceof SubagentError && e.code === 'INVALID_ARGUMENT');
});

test('stores are asked for catalog event types with fromSeq 0 and the caller\'s signal', async () => {
  const store = jsStore(fixture(), { batch: true });
  const controller = new AbortController();
  await listDescendants(store, 'root', { signal: controller.signal });
  assert.deepEqual(Object.keys(store.calls.readOptions[0]).sort(), ['fromSeq', 'signal', 'types']);
  assert.deepEqual(store.calls.readOptions[0].types, ['subagent/catalog', 'session/start']);
  assert.equal(store.calls.readOptions[0].fromSeq, 0);
  assert.equal(store.calls.readOptions[0].signal, controller.signal);
  for (const options of store.calls.readManyOptions) {
    assert.deepEqual(Object.keys(options).sort(), ['signal', 'types']);
    assert.equal(options.signal, controller.signal);
  }
  // No caller signal: stores still get an AbortSignal (one that is not aborted).
  const plain = jsStore(fixture());
  await listDescendants(plain, 'root');
  assert.ok(plain.calls.readOptions[0].signal instanceof AbortSignal);
  assert.equal(plain.calls.readOptions[0].signal.aborted, false);
  // The listener on the caller's signal is removed when the call ends.
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});

test('readMany through a counting wrapper over MemoryStore: one call per level, same rows', async () => {
  const inner = await memory(fixture());
  const batched = counting(inner, { batch: true });
  const single = counting(inner, { batch: false });
  assert.deepEqual(await listDescendants(batched, 'root'), EXPECTED);
  assert.deepEqual(await listDescendants(single, 'root'), EXPECTED);
  assert.equal(batched.calls.read.length, 1);
  assert.equal(batched.calls.readMany.length, 3);
  assert.equal(single.calls.read.length, READ_ONCE.length);
  assert.equal(single.calls.readMany.length, 0);
});

test('a wide and deep tree: readMany round trips equal the depth', async () => {
  const logs = { root: [] };
  let level = ['root'];
  for (let depth = 1; depth <= 4; depth++) {
    const next = [];
    for (const parent of level) {
      const children = Array.from({ length: 5 }, (_, i) => `${parent}.${i}`);
      logs[parent] = log(children.map((id, i) => c3(id, `n${i}`)));
      next.push(...children);
    }
    level = next;
  }
  for (const id of level) logs[id] = [];
  const store = jsStore(logs, { batch: true, style: 'async' });
  const rows = await listDescendants(store, 'root');
  assert.equal(rows.length, 5 + 25 + 125 + 625);
  assert.equal(store.calls.readMany.length, 4);
  assert.deepEqual(store.calls.read, ['root']);
  // Pre-order: every row comes right after its parent's subtree starts.
  const seen = new Set(['root']);
  for (const row of rows) {
    assert.ok(seen.has(row.parentId), `${row.id} after its parent`);
    seen.add(row.id);
  }
  assert.equal(rows[1].path, 'n0/n0');
  assert.equal(rows.at(-1).path, 'n4/n4/n4/n4');
  const plain = jsStore(logs);
  assert.deepEqual(await listDescendants(plain, 'root'), rows);
});

test('a long chain does not exhaust the stack', async () => {
  const logs = {};
  const n = 2000;
  for (let i = 0; i < n; i++) logs[`s${i}`] = log([c3(`s${i + 1}`, 'next')]);
  logs[`s${n}`] = [];
  const rows = await listDescendants(jsStore(logs, { batch: true }), 's0');
  assert.equal(rows.length, n);
  assert.equal(rows.at(-1).depth, n);
  assert.equal(rows[2].path, 'next/next/next');
});

test('forks: the inherited prefix belongs to the parent', async () => {
  const parent = log([c3('a', 'alpha'), note(), c3('b', 'beta')]);
  const withFork = [...parent, { seq: 3, ...c3('f', 'fork') }];
  const logs = { p: withFork, a: [], b: [], f: forkLog(parent, 3, [note(), c3('own', 'own')]), own: [] };
  const rows = await listDescendants(await memory(logs), 'p');
  assert.deepEqual(ids(rows), ['a', 'b', 'f', 'own']);
  assert.equal(rows[2].hasChildren, true);
  assert.equal(rows[3].path, 'fork/own');
  assert.equal(rows[3].parentId, 'f');
  // Even when a store ignores `types` and returns every event.
  const noisy = jsStore(logs);
  assert.deepEqual(await listDescendants(noisy, 'p'), rows);
});

test('a root without a log has no descendants; a bad entry in the root catalog is one corrupt row', async () => {
  assert.deepEqual(await listDescendants(new MemoryStore(), 'nobody'), []);
  assert.deepEqual(await listDescendants(jsStore({ r: [] }), 'r'), []);
  for (const store of [await memory({ r: fixture().brk }), jsStore({ r: fixture().brk })]) {
    assert.deepEqual(await listDescendants(store, 'r'), [
      { kind: 'diagnostic', id: 'x', parentId: 'r', depth: 1, reason: 'corrupt', seq: 0, detail: 'event 0: catalog payload v3 needs a name' },
    ]);
  }
});

test('root read failures reject with PERSISTENCE_UNAVAILABLE and the original cause', async () => {
  const boom = new Error('disk on fire');
  const cases = {
    'throws synchronously': () => { throw boom; },
    'rejects': () => Promise.reject(boom),
    'rejects later': () => new Promise((_, reject) => setTimeout(() => reject(boom), 2)),
  };
  for (const [how, read] of Object.entries(cases)) {
    const e = await rejects(listDescendants({ read }, 'root'), 'PERSISTENCE_UNAVAILABLE', 'store.read');
    assert.equal(e.cause, boom, how);
    assert.ok(e.message.includes('"root"'), e.message);
    assert.ok(e.message.includes('disk on fire'), e.message);
  }
  // Non-Error values thrown are kept as the cause too.
  for (const thrown of ['just a string', 42, null, undefined, { code: 'E' }]) {
    const e = await rejects(listDescendants({ read() { throw thrown; } }, 'root'), 'PERSISTENCE_UNAVAILABLE');
    assert.equal(e.cause, thrown);
    assert.equal('cause' in e, true);
  }
  // A missing read method, or a read that is not a function.
  const missing = await rejects(listDescendants({ append() {} }, 'root'), 'PERSISTENCE_UNAVAILABLE', 'store.read');
  assert.ok(missing.cause instanceof TypeError);
  await rejects(listDescendants({ read: 'nope' }, 'root'), 'PERSISTENCE_UNAVAILABLE');
  // Malformed answers: not an array, or a malformed event.
  for (const answer of [42, 'events', {}, { length: 1, 0: {} }, true]) {
    await rejects(listDescendants({ read: () => answer }, 'root'), 'PERSISTENCE_UNAVAILABLE', 'store.read returned');
  }
  for (const answer of [[null], [{ seq: -1, type: 'subagent/catalog', payload: {} }], [{ type: 'subagent/catalog' }], [{ seq: 0, type: 7 }]]) {
    await rejects(listDescendants({ read: () => answer }, 'root'), 'CORRUPT_CATALOG', 'malformed event');
  }
});

test('a SubagentError thrown by a store passes through unchanged', async () => {
  const own = new SubagentError('UNAUTHORIZED', 'no access to this tree');
  const e = await rejects(listDescendants({ read() { throw own; } }, 'root'), 'UNAUTHORIZED');
  assert.equal(e, own);
});

test('a child\'s failure stops only its branch', async () => {
  const boom = new Error('boom');
  const cases = [
    ['throws', () => { throw boom; }, 'unavailable'],
    ['rejects', () => Promise.reject(boom), 'unavailable'],
    ['answers a number', () => 42, 'unavailable'],
    ['answers undefined (no session)', () => undefined, 'unavailable'],
    ['answers a malformed event', () => [{ seq: 'x', type: 'subagent/catalog' }], 'corrupt'],
    ['answers with a SubagentError', () => { throw new SubagentError('UNAUTHORIZED', 'no'); }, 'unavailable'],
  ];
  for (const [how, read, reason] of cases) {
    const store = withOverrides(jsStore(fixture()), { rev: read });
    const rows = await listDescendants(store, 'root');
    assert.deepEqual(ids(rows), [`rev!${reason}`, 'old', 'oldkid', 'ext', 'hist!unsupported', 'histkid', 'brk', 'x!corrupt', 'gone!unavailable'], how);
    assert.deepEqual(rows[0], { kind: 'diagnostic', id: 'rev', parentId: 'root', depth: 1, reason });
  }
  // A catalog whose one entry does not decode: that entry is a row of its own (the empty id: no childId).
  const store = withOverrides(jsStore(fixture()), { rev: () => log([{ type: 'subagent/catalog', payload: { version: 3 } }]) });
  assert.deepEqual(ids(await listDescendants(store, 'root')).slice(0, 3), ['rev', '!corrupt', 'old']);
});

test('readMany answers: an Error for one id, a whole failure, a wrong length', async () => {
  const base = fixture();
  const many = (answer) => {
    const store = jsStore(base, { batch: true });
    const original = store.readMany;
    store.readMany = (ids, options) => answer(ids, options, original);
    return store;
  };
  // One failing id among many.
  const oneFails = many((ids, o, original) => ids.includes('rev') ? ids.map((id) => (id === 'rev' ? new Error('x') : base[id] ?? null)) : original(ids, o));
  assert.deepEqual(ids(await listDescendants(oneFails, 'root')), ['rev!unavailable', 'old', 'oldkid', 'ext', 'hist!unsupported', 'histkid', 'brk', 'x!corrupt', 'gone!unavailable']);
  // The whole first level fails (thrown, rejected, not an array, wrong length).
  for (const answer of [() => { throw new Error('down'); }, () => Promise.reject(new Error('down')), () => 'nope', () => [], () => [null]]) {
    const rows = await listDescendants(many((ids, o, original) => (ids.includes('rev') ? answer() : original(ids, o))), 'root');
    assert.deepEqual(ids(rows), ['rev!unavailable', 'old!unavailable', 'ext', 'hist!unsupported', 'brk!unavailable', 'gone!unavailable']);
  }
  // readMany that is not a function is ignored (one read per catalog).
  const notFn = { ...jsStore(base), readMany: 5 };
  assert.deepEqual(await listDescendants(notFn, 'root'), EXPECTED);
});

test('abort: an already-aborted signal rejects with CANCELLED and reads nothing', async () => {
  const store = jsStore(fixture());
  const reason = new Error('user left');
  const e = await rejects(listDescendants(store, 'root', { signal: AbortSignal.abort(reason) }), 'CANCELLED');
  assert.equal(e.cause, reason);
  assert.equal(store.calls.read.length, 0);
});

test('abort: a store that never settles cannot hold the call', async () => {
  for (const batch of [false, true]) {
    const controller = new AbortController();
    const store = withOverrides(jsStore(fixture(), { batch }), { root: never });
    const pending = listDescendants(store, 'root', { signal: controller.signal });
    setTimeout(() => controller.abort('stop'), 5);
    const e = await rejects(pending, 'CANCELLED');
    assert.equal(e.cause, 'stop');
  }
  // Hung mid-tree, on a deeper level's readMany.
  const controller = new AbortController();
  const store = jsStore(fixture(), { batch: true });
  const original = store.readMany;
  let hung = 0;
  store.readMany = (ids, o) => (ids.includes('chk') ? (hung++, never()) : original(ids, o));
  const pending = listDescendants(store, 'root', { signal: controller.signal });
  setTimeout(() => controller.abort(), 5);
  const e = await rejects(pending, 'CANCELLED');
  assert.equal(e.cause.name, 'AbortError');
  assert.equal(store.calls.readMany.length, 1);
  assert.equal(hung, 1, 'the second level was asked for and never answered');
  // AbortSignal.timeout works too, with its TimeoutError as the cause (its
  // timer does not keep Node's event loop alive, so this test does).
  const keepAlive = setTimeout(() => {}, 10_000);
  const t = await rejects(listDescendants({ read: never }, 'root', { signal: AbortSignal.timeout(5) }), 'CANCELLED');
  clearTimeout(keepAlive);
  assert.equal(t.cause.name, 'TimeoutError');
});

test('abort: stores see the signal abort, and can reject with its reason', async () => {
  const controller = new AbortController();
  let seen;
  const store = {
    read(id, { signal }) {
      seen = signal;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    },
  };
  const pending = listDescendants(store, 'root', { signal: controller.signal });
  setTimeout(() => controller.abort(new Error('bye')), 2);
  const e = await rejects(pending, 'CANCELLED');
  assert.equal(seen, controller.signal);
  assert.equal(e.cause.message, 'bye');
});

test('one signal reused by many calls keeps no listeners', async () => {
  const controller = new AbortController();
  const store = await memory(fixture());
  for (let i = 0; i < 50; i++) await listDescendants(store, 'root', { signal: controller.signal });
  await rejects(listDescendants({ read: () => { throw new Error(); } }, 'root', { signal: controller.signal }), 'PERSISTENCE_UNAVAILABLE');
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  controller.abort();
  await rejects(listDescendants(store, 'root', { signal: controller.signal }), 'CANCELLED');
});

test('concurrent listings over one MemoryStore, with writes in between', async () => {
  const store = await memory(fixture());
  const results = await Promise.all([
    listDescendants(store, 'root'),
    listDescendants(counting(store), 'root'),
    listDescendants(counting(store, { batch: false }), 'root'),
    store.append('deep', log([c3('deeper', 'deeper')])),
    listDescendants(store, 'rev'),
  ]);
  const before = ids(EXPECTED).join();
  const withDeeper = ids(EXPECTED).toSpliced(3, 0, 'deeper!unavailable').join();
  for (const rows of results.slice(0, 3)) assert.ok([before, withDeeper].includes(ids(rows).join()), ids(rows).join());
  assert.deepEqual(ids(results[4]).slice(0, 1), ['chk']);
  await store.append('deeper', []);
  const after = await listDescendants(store, 'root');
  assert.equal(after[3].id, 'deeper');
  assert.equal(after[3].path, 'reviewer/checker/deep/deeper');
  assert.equal(after[2].hasChildren, true);
});

test('class-based stores with prototype methods work', async () => {
  class LogStore {
    #logs;
    constructor(logs) { this.#logs = logs; }
    async read(id) { return this.#logs[id] ?? null; }
    async readMany(ids) { return ids.map((id) => this.#logs[id] ?? null); }
    async append() {}
  }
  assert.deepEqual(await listDescendants(new LogStore(fixture()), 'root'), EXPECTED);
});

test('re-entrancy: a store that aborts synchronously, or calls the library from inside read', async () => {
  const controller = new AbortController();
  const syncAbort = { read(id, { signal }) { controller.abort('from inside'); return signal.aborted ? [] : null; } };
  const e = await rejects(listDescendants(syncAbort, 'root', { signal: controller.signal }), 'CANCELLED');
  assert.equal(e.cause, 'from inside');

  // Data whose getter aborts while the answer is read: the listing stops there,
  // and the store sees no call after the abort (both for read and readMany).
  for (const batch of [false, true]) {
    const aborting = new AbortController();
    const calls = [];
    const answer = (id) => {
      if (id === 'root') return log([c3('rev', 'reviewer')]);
      const event = { seq: 0, type: 'subagent/catalog' };
      Object.defineProperty(event, 'payload', {
        enumerable: true,
        get() {
          aborting.abort('read aborted');
          return { version: 3, childId: 'chk', childCreatedAt: 1, mode: 'continuable', label: 'l', name: 'checker' };
        },
      });
      return [event];
    };
    const store = {
      async read(id) { calls.push(id); return answer(id); },
      ...(batch ? { async readMany(ids) { calls.push(ids.join()); return ids.map(answer); } } : {}),
    };
    const e = await rejects(listDescendants(store, 'root', { signal: aborting.signal }), 'CANCELLED');
    assert.equal(e.cause, 'read aborted');
    assert.deepEqual(calls, ['root', 'rev'], `batch ${batch}: no call after the abort`);
  }

  const inner = await memory(fixture());
  const nested = {
    async read(id, options) {
      // A nested listing and a write, from inside the outer listing's read.
      const rows = await listDescendants(inner, 'rev');
      assert.equal(rows[0].id, 'chk');
      if (id === 'deep') await inner.append('deep', log([note()]));
      return inner.read(id, options);
    },
  };
  assert.deepEqual(await listDescendants(nested, 'root'), EXPECTED);
  assert.equal((await inner.read('deep')).length, 1);
});

test('a 20,000-deep chain of 32-character names lists, each path built from its parent (issue 14)', async () => {
  const DEPTH = 20_000;
  const name = (i) => 'n' + String(i).padStart(31, '0');
  const fullName = (i) => Array.from({ length: i + 1 }, (_, k) => name(k)).join('/');
  const logs = {};
  let parent = 'root';
  for (let i = 0; i < DEPTH; i++) {
    logs[parent] = log([c3(`c${i}`, name(i))]);
    parent = `c${i}`;
  }
  logs[parent] = [];
  const withMany = await memory(logs);
  const readOnly = { read: (id, o) => withMany.read(id, o), append() {} };
  for (const store of [withMany, readOnly]) {
    const rows = await listDescendants(store, 'root');
    assert.equal(rows.length, DEPTH);
    for (const i of [0, 1, 2, 4_999, DEPTH - 2]) {
      assert.equal(rows[i].depth, i + 1);
      assert.equal(rows[i].hasChildren, true);
      assert.equal(rows[i].path.length, (i + 1) * 33 - 1);
    }
    assert.equal(rows[2].path, fullName(2));
    const last = rows[DEPTH - 1];
    assert.equal(last.hasChildren, false);
    assert.equal(last.path, fullName(DEPTH - 1));
  }
});

test('without readMany, reads of one level overlap, at most 64 at once (issue 15)', async () => {
  // Levels of 10, 100 and 1,000 members, every read answered after a timer.
  const logs = {};
  let level = ['root'];
  for (let depth = 1; depth <= 3; depth++) {
    const next = [];
    for (const parent of level) {
      logs[parent] = log(Array.from({ length: 10 }, (_, i) => c3(`${parent}.${i}`, `n${depth}-${i}`)));
      next.push(...logs[parent].map((e) => e.payload.childId));
    }
    level = next;
  }
  for (const id of level) logs[id] = [];
  let inFlight = 0;
  const peaks = [];
  const order = [];
  const store = {
    async read(id) {
      order.push(id);
      peaks.push(++inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      return logs[id] ?? null;
    },
    append() {},
  };
  const rows = await listDescendants(store, 'root');
  assert.equal(rows.length, 1110);
  assert.deepEqual(rows, await listDescendants(await memory(logs), 'root'));
  assert.equal(new Set(order).size, order.length, 'each catalog is read once');
  assert.equal(order.length, 1111);
  const peak = (from, to) => Math.max(...peaks.slice(from, to));
  assert.equal(peak(0, 1), 1);
  assert.equal(peak(1, 11), 10);
  assert.equal(peak(11, 111), 64);
  assert.equal(peak(111, 1111), 64);
  assert.equal(inFlight, 0);
});
