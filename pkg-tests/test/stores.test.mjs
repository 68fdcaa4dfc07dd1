// The store contract: the embedded MemoryStore, and JS stores whose methods
// return plain values, Promises, thenables, reject or throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore, listDescendants } from 'subagent-tree';
import { c3, note, log, rejects } from './helpers.mjs';

test('MemoryStore: every method returns a Promise', async () => {
  const store = new MemoryStore();
  for (const p of [store.append('s', []), store.read('s'), store.readMany(['s']), store.flush('s')]) assert.ok(p instanceof Promise);
  const bad = store.append(1, []);
  assert.ok(bad instanceof Promise, 'even for bad arguments (a rejection, not a throw)');
  await rejects(bad, 'INVALID_ARGUMENT');
});

test('MemoryStore: append continues the log; read returns events or null', async () => {
  const store = new MemoryStore();
  assert.equal(await store.read('s'), null);
  assert.equal(await store.append('s', log([note('a'), c3('k', 'kid')])), undefined);
  await store.append('s', log([note('b')], 2));
  const events = await store.read('s');
  assert.deepEqual(events, [
    { seq: 0, type: 'message/user', payload: { text: 'a' } },
    { seq: 1, type: 'subagent/catalog', payload: { version: 3, childId: 'k', childCreatedAt: 1_700_000_000_000, mode: 'one-shot', name: 'kid' } },
    { seq: 2, type: 'message/user', payload: { text: 'b' } },
  ]);
  // Appending nothing creates an empty log.
  await store.append('empty', []);
  assert.deepEqual(await store.read('empty'), []);
  assert.equal(await store.read('never'), null);
});

test('MemoryStore: an append that does not continue the log is APPEND_CONFLICT and changes nothing', async () => {
  const store = new MemoryStore();
  await store.append('s', log([note()]));
  await rejects(store.append('s', log([note()])), 'APPEND_CONFLICT', '"s"');
  await rejects(store.append('s', log([note(), note()], 1).reverse()), 'APPEND_CONFLICT');
  await rejects(store.append('t', log([note()], 1)), 'APPEND_CONFLICT');
  assert.equal((await store.read('s')).length, 1);
  assert.equal(await store.read('t'), null);
});

test('MemoryStore: read filters by types and fromSeq; readMany answers per id in order', async () => {
  const store = new MemoryStore();
  await store.append('s', log([note('a'), c3('k', 'kid'), note('b'), c3('j', 'jay')]));
  assert.deepEqual((await store.read('s', { types: ['subagent/catalog'] })).map((e) => e.seq), [1, 3]);
  assert.deepEqual((await store.read('s', { fromSeq: 2 })).map((e) => e.seq), [2, 3]);
  assert.deepEqual((await store.read('s', { fromSeq: 2, types: ['message/user'] })).map((e) => e.seq), [2]);
  assert.deepEqual(await store.read('s', { types: [] }), []);
  assert.deepEqual(await store.read('s', { fromSeq: 99 }), []);
  const many = await store.readMany(['s', 'none', 's'], { types: ['subagent/catalog'] });
  assert.equal(many.length, 3);
  assert.deepEqual(many[0].map((e) => e.seq), [1, 3]);
  assert.equal(many[1], null);
  assert.deepEqual(many[2], many[0]);
  assert.deepEqual(await store.readMany([]), []);
  assert.equal(await store.flush('s'), false);
});

test('MemoryStore: payloads round-trip as JSON data, and reads hand out copies', async () => {
  const store = new MemoryStore();
  const payload = { nested: { list: [1, 2.5, -3, true, null, 'é🙂'], empty: {} }, ['__proto__']: 'own key', big: 2 ** 53 - 1 };
  const withProto = JSON.parse(JSON.stringify(payload).replace('"__proto__"', '"__proto__"'));
  await store.append('s', [{ seq: 0, type: 'x', payload: withProto }]);
  const [event] = await store.read('s');
  assert.deepEqual(JSON.stringify(event.payload), JSON.stringify(withProto));
  assert.equal(Object.hasOwn(event.payload, '__proto__'), Object.hasOwn(withProto, '__proto__'));
  event.payload.nested.list.push('mutated');
  const [again] = await store.read('s');
  assert.equal(again.payload.nested.list.length, 6);
  // Undefined properties are dropped (as in JSON); a missing payload is null.
  await store.append('t', [{ seq: 0, type: 'x', payload: { a: undefined, b: 1 } }, { seq: 1, type: 'y' }]);
  assert.deepEqual(await store.read('t'), [{ seq: 0, type: 'x', payload: { b: 1 } }, { seq: 1, type: 'y', payload: null }]);
});

test('MemoryStore: bad arguments reject with INVALID_ARGUMENT and the store keeps working', async () => {
  const store = new MemoryStore();
  const cases = [
    () => store.append(undefined, []),
    () => store.append('', []),
    () => store.append('s', 'events'),
    () => store.append('s', [{ seq: 0 }]),
    () => store.append('s', [{ seq: 0, type: 'x', payload: () => 1 }]),
    () => store.append('s', [{ seq: 0, type: 'x', payload: 1n }]),
    () => store.append('s', [{ seq: 0, type: 'x', payload: Symbol('x') }]),
    () => store.read(7),
    () => store.read('s', 'opts'),
    () => store.read('s', { types: 'x' }),
    () => store.read('s', { types: [1] }),
    () => store.read('s', { fromSeq: -1 }),
    () => store.read('s', { signal: 'no' }),
    () => store.readMany('s'),
    () => store.readMany([1]),
    () => store.flush(null),
  ];
  for (const call of cases) await rejects(call(), 'INVALID_ARGUMENT');
  await store.append('s', log([note()]));
  assert.equal((await store.read('s')).length, 1);
});

test('MemoryStore: an aborted signal rejects reads with CANCELLED', async () => {
  const store = new MemoryStore();
  const reason = new Error('gone');
  const e = await rejects(store.read('s', { signal: AbortSignal.abort(reason) }), 'CANCELLED');
  assert.equal(e.cause, reason);
  await rejects(store.readMany(['s'], { signal: AbortSignal.abort() }), 'CANCELLED');
  assert.equal(await store.read('s', { signal: new AbortController().signal }), null);
});

test('JS store methods may return values, Promises or thenables, reject or throw', async () => {
  const events = log([c3('k', 'kid')]);
  const kid = [];
  const styles = {
    'plain value': (v) => v,
    Promise: (v) => Promise.resolve(v),
    'async function': async (v) => v,
    thenable: (v) => ({ then: (ok) => ok(v) }),
    'late thenable': (v) => ({ then: (ok) => setTimeout(() => ok(v), 1) }),
  };
  for (const [name, wrap] of Object.entries(styles)) {
    const store = { read: (id) => wrap(id === 'root' ? events : kid) };
    assert.deepEqual((await listDescendants(store, 'root')).map((r) => r.id), ['k'], name);
  }
  const failures = {
    'throws an Error': () => { throw new RangeError('r'); },
    'rejects': () => Promise.reject(new Error('x')),
    'thenable rejects': () => ({ then: (_, fail) => fail(new Error('t')) }),
    'thenable whose then throws': () => ({ then() { throw new Error('then'); } }),
    'then getter throws': () => ({ get then() { throw new Error('getter'); } }),
    'Promise with a hostile then': () => { const p = Promise.resolve([]); p.then = () => { throw new Error('hostile'); }; return p; },
  };
  for (const [name, read] of Object.entries(failures)) {
    const e = await rejects(listDescendants({ read }, 'root'), 'PERSISTENCE_UNAVAILABLE');
    assert.ok(e.cause instanceof Error, name);
  }
});
