// Builders shared by the suites: catalog events of every payload version,
// logs, and JS stores of every style (sync values, Promises, thenables,
// delays), with call counting.
import { MemoryStore, SubagentError } from 'subagent-tree';
import assert from 'node:assert/strict';

export const CATALOG = 'subagent/catalog';

/** A v3 entry (the version every new entry is written with). */
export function c3(childId, name, mode = 'one-shot', label) {
  const payload = { version: 3, childId, childCreatedAt: 1_700_000_000_000, mode, name };
  if (label !== undefined) payload.label = label;
  return { type: CATALOG, payload };
}
/** A historical v0 entry (no name). */
export function c0(childId, mode = 'one-shot', label) {
  const payload = { version: 0, childId, childCreatedAt: 5, mode };
  if (label !== undefined) payload.label = label;
  return { type: CATALOG, payload };
}
export function c1(childId, mode = 'unknown', label) {
  const payload = { version: 1, childId, childCreatedAt: 6, mode };
  if (label !== undefined) payload.label = label;
  return { type: CATALOG, payload };
}
export function c2(childId, label) {
  const payload = { version: 2, childId, childCreatedAt: 7, mode: 'external' };
  if (label !== undefined) payload.label = label;
  return { type: CATALOG, payload };
}
export function note(text = 'hello') {
  return { type: 'message/user', payload: { text } };
}
export function start(inheritedEventCount) {
  return { type: 'session/start', payload: { inheritedEventCount } };
}

/** Numbers events from 0 (or `from`) in order. */
export function log(events, from = 0) {
  return events.map((e, i) => ({ seq: from + i, ...e }));
}

/** A fork of `parentEvents` (its first `k` events), then its own events. */
export function forkLog(parentEvents, k, ownEvents) {
  const inherited = parentEvents.slice(0, k).map((e) => structuredClone(e));
  return [...inherited, { seq: k, ...start(k) }, ...log(ownEvents, k + 1)];
}

/** A MemoryStore loaded with `{ sessionId: events }`. */
export async function memory(logs) {
  const store = new MemoryStore();
  for (const [id, events] of Object.entries(logs)) await store.append(id, events);
  return store;
}

const answer = {
  sync: (v) => v,
  promise: (v) => Promise.resolve(v),
  async: async (v) => {
    await new Promise((r) => setTimeout(r, 1));
    return v;
  },
  thenable: (v) => ({ then: (ok) => ok(v) }),
};
export const STYLES = Object.keys(answer);

/**
 * A JS store over `{ sessionId: events }`: `style` picks how methods answer;
 * `batch` adds `readMany`. `calls` records every call and its options.
 */
export function jsStore(logs, { style = 'sync', batch = false } = {}) {
  const reply = answer[style];
  const calls = { read: [], readMany: [], readOptions: [], readManyOptions: [], append: [] };
  const get = (id) => (Object.hasOwn(logs, id) ? structuredClone(logs[id]) : null);
  const store = {
    calls,
    append(id, events) {
      calls.append.push([id, events]);
      (logs[id] ??= []).push(...events);
      return reply(undefined);
    },
    read(id, options) {
      calls.read.push(id);
      calls.readOptions.push(options);
      return reply(get(id));
    },
  };
  if (batch) {
    store.readMany = (ids, options) => {
      calls.readMany.push([...ids]);
      calls.readManyOptions.push(options);
      return reply(ids.map(get));
    };
  }
  return store;
}

/** Wraps any store, overriding `read` for some ids (`overrides[id](options)` gives the answer). */
export function withOverrides(inner, overrides) {
  const store = {
    calls: inner.calls,
    append: (...a) => inner.append(...a),
    read(id, options) {
      if (Object.hasOwn(overrides, id)) {
        inner.calls?.read.push(id);
        return overrides[id](options);
      }
      return inner.read(id, options);
    },
  };
  if (inner.readMany) store.readMany = (...a) => inner.readMany(...a);
  return store;
}

/** Counts calls to a store's methods, delegating to it. */
export function counting(inner, { batch = true } = {}) {
  const calls = { read: [], readMany: [] };
  const store = {
    calls,
    append: (id, e) => inner.append(id, e),
    read: (id, o) => {
      calls.read.push(id);
      return inner.read(id, o);
    },
  };
  if (batch) {
    store.readMany = (ids, o) => {
      calls.readMany.push([...ids]);
      return inner.readMany(ids, o);
    };
  }
  return store;
}

/** Asserts `fn()` throws (or its promise rejects) a SubagentError with `code`; returns the error. */
export async function rejects(fnOrPromise, code, messageIncludes) {
  let error;
  try {
    await (typeof fnOrPromise === 'function' ? fnOrPromise() : fnOrPromise);
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected a SubagentError ${code}, got no error`);
  assertCoded(error, code, messageIncludes);
  return error;
}

/** Synchronous variant of `rejects`. */
export function throws(fn, code, messageIncludes) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected a SubagentError ${code}, got no error`);
  assertCoded(error, code, messageIncludes);
  return error;
}

export function assertCoded(error, code, messageIncludes) {
  assert.ok(error instanceof SubagentError, `not a SubagentError: ${error}`);
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'SubagentError');
  assert.equal(error.code, code, `code of: ${error.message}`);
  assert.equal(typeof error.message, 'string');
  assert.ok(error.message.length > 0 && error.message.length < 500, `one short sentence: ${error.message}`);
  if (messageIncludes !== undefined) {
    assert.ok(error.message.includes(messageIncludes), `"${error.message}" should mention ${messageIncludes}`);
  }
}

/** A promise that never settles. */
export const never = () => new Promise(() => {});

/** Rows as compact strings: `id` for a child, `id!reason` for a diagnostic. */
export function ids(rows) {
  return rows.map((r) => (r.kind === 'diagnostic' ? `${r.id}!${r.reason}` : r.id));
}
