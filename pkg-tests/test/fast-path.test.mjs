// The one-crossing fast path (src/wasm/fast.rs, src/wasm/js/json.js): plain
// JSON data crosses as one string; anything else takes the exact reader. The
// two must accept the same data, give the same results and refuse with the
// same sentence, so each case here runs once as plain data (fast) and once
// wrapped so that only the exact reader can take it (a class instance or an
// accessor), and compares.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore, listDescendants, projectCatalog } from 'subagent-tree';
import { c0, c1, c2, c3, log } from './helpers.mjs';

/** The same data, every object a class instance: the fast path gives it up. */
class Held {}
function exactOnly(value) {
  if (Array.isArray(value)) return value.map(exactOnly);
  if (value === null || typeof value !== 'object') return value;
  const out = new Held();
  for (const [k, v] of Object.entries(value)) out[k] = exactOnly(v);
  return out;
}

function outcome(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

const events = log([
  c0('c-a', 'continuable', 'review the diff'),
  c1('c-b'),
  c2('c-c', 'codex run'),
  c3('c-d', 'checker', 'continuable', 'check the tests'),
  { type: 'subagent/note', payload: { text: 'ignored', n: [1.5, -2, 1e21, 0.1, { deep: [null, true, 'é😀\n"\\'] }] } },
]);

test('projectCatalog gives the same rows from plain data and from data only the exact reader takes', () => {
  const fast = projectCatalog(events);
  const exact = projectCatalog(exactOnly(events));
  assert.deepEqual(fast, exact);
  assert.equal(fast.length, 4);
  assert.deepEqual(fast[3], { id: 'c-d', createdAt: 1_700_000_000_000, mode: 'continuable', label: 'check the tests', name: 'checker' });
  assert.deepEqual(Object.keys(fast[0]), ['id', 'createdAt', 'mode', 'label'], 'absent fields are absent, in order');
});

test('bad data is refused with the same code and sentence on both paths', () => {
  const bad = [
    ['a lone surrogate in a label', log([c0('c-a', 'continuable', 'x\uD800y')])],
    ['a lone surrogate in a key', log([{ type: 'subagent/note', payload: { ['k\uDC00']: 1 } }])],
    ['an unknown catalog field', log([{ type: 'subagent/catalog', payload: { ...c1('c-b').payload, extra: 1 } }])],
    ['a seq that is not an integer', [{ seq: 0.5, type: 'x', payload: null }]],
    ['a type that is not a string', [{ seq: 0, type: 7, payload: null }]],
    ['nesting past the limit', [{ seq: 0, type: 'x', payload: JSON.parse('['.repeat(200) + ']'.repeat(200)) }]],
    ['a bigint', [{ seq: 0, type: 'x', payload: { n: 1n } }]],
    ['a function', [{ seq: 0, type: 'x', payload: [() => 1] }]],
  ];
  for (const [what, list] of bad) {
    const fast = outcome(() => projectCatalog(list));
    const exact = outcome(() => projectCatalog(exactOnly(list)));
    assert.ok(fast.code, `${what}: refused (${JSON.stringify(fast)})`);
    assert.deepEqual(fast, exact, what);
  }
});

test('what JSON cannot spell takes the exact reader: NaN, infinities and -0 come back as they went in', async () => {
  const store = new MemoryStore();
  const payload = { nan: NaN, inf: -Infinity, zero: -0, list: [NaN, 1], date: new Date(0), undef: undefined };
  await store.append('s', [{ seq: 0, type: 'x', payload }, { seq: 1, type: 'y', payload: { plain: [1, 'two'] } }]);
  const [first, second] = await store.read('s');
  assert.ok(Number.isNaN(first.payload.nan));
  assert.equal(first.payload.inf, -Infinity);
  assert.ok(Object.is(first.payload.zero, -0));
  assert.ok(Number.isNaN(first.payload.list[0]));
  assert.deepEqual(first.payload.date, {}, 'a Date has no own keys: read as {} on both paths, never through toJSON');
  assert.ok(!('undef' in first.payload));
  assert.deepEqual(second.payload, { plain: [1, 'two'] });
  // A lone surrogate in stored data is refused, whichever path reads it.
  const ill = [{ seq: 0, type: 'x', payload: { t: 'x\uD800' } }];
  const fast = await store.append('t', ill).then(() => null, (e) => [e.code, e.message]);
  const exact = await store.append('t', exactOnly(ill)).then(() => null, (e) => [e.code, e.message]);
  assert.equal(fast?.[0], 'INVALID_ARGUMENT');
  assert.deepEqual(fast, exact);
  assert.equal(await store.read('t'), null, 'nothing was written');
});

test('toJSON, boxed primitives and accessors are read as the exact reader reads them', () => {
  const withToJSON = { ...c0('c-a', 'continuable', 'L').payload, toJSON: () => ({ version: 0, childId: 'forged', childCreatedAt: 0, mode: 'one-shot' }) };
  const refused = outcome(() => projectCatalog([{ seq: 0, type: 'subagent/catalog', payload: withToJSON }]));
  assert.equal(refused.code, 'INVALID_ARGUMENT', 'toJSON is a function field, not a way to rewrite the payload');
  assert.match(refused.message, /toJSON is a function, which is not JSON data/);
  const boxedList = [{ seq: 0, type: 'subagent/catalog', payload: { ...c1('c-b').payload, label: new String('L') } }];
  const boxed = outcome(() => projectCatalog(boxedList));
  assert.equal(boxed.code, 'CORRUPT_CATALOG', 'a String object is an object, not a string');
  assert.deepEqual(boxed, outcome(() => projectCatalog(exactOnly(boxedList))));
  let reads = 0;
  const payload = c1('c-b').payload;
  const accessor = Object.defineProperty({ ...payload }, 'childId', { enumerable: true, get: () => (reads++, 'c-b') });
  assert.deepEqual(projectCatalog([{ seq: 0, type: 'subagent/catalog', payload: accessor }]), [{ id: 'c-b', createdAt: 6, mode: 'unknown' }]);
  assert.ok(reads >= 1);
});

test('listing rows are the same from plain logs and from logs only the exact reader takes', async () => {
  const logs = new Map([
    ['root', log([c3('k1', 'alpha', 'continuable', 'a'), c3('k2', 'beta', 'continuable', 'b'), c0('k3', 'continuable', 'c')])],
    ['k3', []],
    ['k1', log([c3('g1', 'gamma', 'continuable', 'g')])],
    ['g1', log([c3('h1', 'delta', 'continuable', 'd')])],
    ['h1', []],
    ['k2', []],
  ]);
  const store = (wrap) => ({ append: async () => {}, read: async (id) => (logs.has(id) ? wrap(logs.get(id)) : null) });
  const fast = await listDescendants(store((l) => l), 'root');
  const exact = await listDescendants(store(exactOnly), 'root');
  assert.deepEqual(fast, exact);
  // readMany answers cross as one text; one exact-only answer sends the whole batch to the exact reader.
  const many = (wrap) => ({ ...store(wrap), readMany: async (ids) => ids.map((id) => (logs.has(id) ? wrap(logs.get(id)) : null)) });
  assert.deepEqual(await listDescendants(many((l) => l), 'root'), fast);
  assert.deepEqual(await listDescendants(many((l) => (l.length ? l : exactOnly(l))), 'root'), fast);
  const failing = { ...many((l) => l), readMany: async (ids) => ids.map((id) => (id === 'g1' ? new Error('disk') : logs.get(id) ?? null)) };
  const rows = await listDescendants(failing, 'root');
  assert.deepEqual(rows.find((r) => r.id === 'g1'), { kind: 'diagnostic', id: 'g1', parentId: 'k1', depth: 2, reason: 'unavailable' });
  assert.deepEqual(rows.filter((r) => r.id !== 'g1' && r.id !== 'h1'), fast.filter((r) => r.id !== 'g1' && r.id !== 'h1'));
  assert.deepEqual(fast.map((r) => r.path), ['alpha', 'alpha/gamma', 'alpha/gamma/delta', 'beta', undefined]);
});
