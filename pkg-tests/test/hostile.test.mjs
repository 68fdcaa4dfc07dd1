// Hostile input of every shape to every export: a coded SubagentError (or a
// documented answer), never a trap, and the module keeps working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as st from 'subagent-tree';
import { SubagentError, MemoryStore } from 'subagent-tree';
import { c3, log } from './helpers.mjs';

function throwingProxy() {
  const boom = () => { throw new Error('trap'); };
  return new Proxy({}, { get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom });
}
function revoked() {
  const { proxy, revoke } = Proxy.revocable([], {});
  revoke();
  return proxy;
}
function throwingGetters() {
  const o = {};
  for (const key of ['seq', 'type', 'payload', 'signal', 'readMany', 'read', 'types', 'fromSeq', 'inheritedEventCount', 'version', 'length', 'then']) {
    Object.defineProperty(o, key, { get() { throw new Error(`getter ${key}`); }, enumerable: true });
  }
  return o;
}
function deep(n) {
  let o = [];
  for (let i = 0; i < n; i++) o = [o];
  return o;
}
function cyclic() {
  const o = { version: 0 };
  o.self = o;
  return o;
}

const HOSTILE = {
  undefined: () => undefined,
  null: () => null,
  true: () => true,
  zero: () => 0,
  NaN: () => NaN,
  Infinity: () => -Infinity,
  bigint: () => 10n ** 30n,
  symbol: () => Symbol('s'),
  function: () => () => 'x',
  'empty object': () => ({}),
  'null-prototype object': () => Object.create(null),
  'array with holes': () => [, , 'a'],
  'String object': () => new String('reviewer'),
  Date: () => new Date(0),
  Map: () => new Map([['a', 1]]),
  'throwing proxy': throwingProxy,
  'revoked proxy': revoked,
  'throwing getters': throwingGetters,
  'huge string': () => 'x'.repeat(3_000_000),
  'deep array': () => deep(100_000),
  cyclic,
  'array of hostiles': () => [throwingProxy(), revoked(), throwingGetters()],
};

function outcome(fn) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error };
  }
}

function assertSafe(name, result, allowed) {
  if ('error' in result) {
    assert.ok(result.error instanceof SubagentError, `${name}: threw a non-SubagentError: ${result.error}`);
    assert.ok(allowed.includes(result.error.code), `${name}: code ${result.error.code} (${result.error.message})`);
    assert.ok(result.error.message.length < 500, `${name}: message too long`);
  }
}

function stillWorks() {
  assert.equal(st.isValidName('reviewer'), true);
  assert.equal(st.defaultName(['agent-1']), 'agent-2');
}

test('synchronous exports: every hostile value gives a coded error or an answer', () => {
  for (const [label, make] of Object.entries(HOSTILE)) {
    const r = outcome(() => st.isValidName(make()));
    assert.ok(!('error' in r), `isValidName(${label}) must not throw`);
    assert.equal(r.value, false, `isValidName(${label})`);
    assertSafe(`validateName(${label})`, outcome(() => st.validateName(make())), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'INVALID_NAME']);
    assertSafe(`defaultName(${label})`, outcome(() => st.defaultName(make())), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']);
    assertSafe(`parseAgentRef(${label})`, outcome(() => st.parseAgentRef(make())), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']);
    const decoded = outcome(() => st.decodeCatalogPayload(make()));
    assert.ok('error' in decoded, `decodeCatalogPayload(${label}) must reject`);
    assertSafe(`decodeCatalogPayload(${label})`, decoded, ['CORRUPT_CATALOG']);
    assertSafe(`projectCatalog(${label})`, outcome(() => st.projectCatalog(make())), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']);
    assertSafe(`projectCatalog([], ${label})`, outcome(() => st.projectCatalog([], make())), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']);
    assertSafe(`projectCatalog([${label}])`, outcome(() => st.projectCatalog([make()])), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']);
    const event = { seq: 0, type: 'subagent/catalog', payload: make() };
    assertSafe(`projectCatalog(payload ${label})`, outcome(() => st.projectCatalog([event])), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'CORRUPT_CATALOG']);
    stillWorks();
  }
});

test('asynchronous exports: never a synchronous throw, always a coded rejection or rows', async () => {
  const store = new MemoryStore();
  await store.append('root', log([c3('kid', 'kid')]));
  for (const [label, make] of Object.entries(HOSTILE)) {
    const calls = {
      [`listDescendants(${label}, ...)`]: [() => st.listDescendants(make(), 'root'), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'PERSISTENCE_UNAVAILABLE']],
      [`listDescendants(store, ${label})`]: [() => st.listDescendants(store, make()), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`listDescendants(store, root, ${label})`]: [() => st.listDescendants(store, 'root', make()), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`listDescendants(store, root, {signal: ${label}})`]: [() => st.listDescendants(store, 'root', { signal: make() }), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`resolveName(store, root, ${label})`]: [() => st.resolveName(store, 'root', make()), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`store read answering ${label}`]: [() => st.listDescendants({ read: () => make() }, 'root'), ['PERSISTENCE_UNAVAILABLE', 'CORRUPT_CATALOG']],
      [`store read answering [${label}]`]: [() => st.listDescendants({ read: () => [make()] }, 'root'), ['PERSISTENCE_UNAVAILABLE', 'CORRUPT_CATALOG']],
      [`store readMany answering ${label}`]: [() => st.listDescendants({ read: () => log([c3('k', 'k')]), readMany: () => make() }, 'root'), []],
      [`store read throwing ${label}`]: [() => st.listDescendants({ read() { throw make(); } }, 'root'), ['PERSISTENCE_UNAVAILABLE']],
      [`MemoryStore.append(${label})`]: [() => store.append('x', make()), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`MemoryStore.append(id, [${label}])`]: [() => store.append('x', [make()]), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`MemoryStore.read(${label})`]: [() => store.read(make()), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`MemoryStore.read(id, ${label})`]: [() => store.read('root', make()), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
      [`MemoryStore.readMany(${label})`]: [() => store.readMany(make()), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']],
    };
    for (const [name, [call, allowed]] of Object.entries(calls)) {
      const r = outcome(call);
      assert.ok(!('error' in r), `${name} threw synchronously: ${r.error}`);
      assert.ok(r.value instanceof Promise, `${name} returns a Promise`);
      try {
        const value = await r.value;
        assert.ok(value === undefined || value === null || Array.isArray(value), `${name} resolved to ${value}`);
      } catch (error) {
        assertSafe(name, { error }, allowed);
      }
    }
    stillWorks();
  }
  // Still fully working after everything above.
  assert.deepEqual((await st.listDescendants(store, 'root')).map((r) => r.id), ['kid']);
});

test('huge inputs are handled without huge messages', async () => {
  const huge = 'é'.repeat(2_000_000);
  const e = await st.listDescendants(new MemoryStore(), huge).then(() => null, (x) => x);
  assert.equal(e.code, 'LIMIT_EXCEEDED');
  assert.ok(e.message.length < 200, e.message);
  assert.deepEqual(st.parseAgentRef('a/'.repeat(10_000) + 'a').segments.length, 10_001);
  const payload = { version: 0, childId: 'c', childCreatedAt: 1, mode: 'one-shot', label: 'L'.repeat(1_000_000) };
  assert.equal(st.decodeCatalogPayload(payload).label.length, 1_000_000);
  const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
  const err = (() => { try { st.decodeCatalogPayload(wide); } catch (x) { return x; } })();
  assert.equal(err.code, 'CORRUPT_CATALOG');
  assert.ok(err.message.length < 200, err.message);
});
