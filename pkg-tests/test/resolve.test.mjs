// resolveName: lead, full names through only the catalogs along the path,
// and everything else returned unchanged as a Session id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveName } from 'subagent-tree';
import { c0, c3, note, log, jsStore, memory, rejects, never } from './helpers.mjs';

function logs() {
  return {
    root: log([c3('rev', 'reviewer', 'continuable', 'R'), c0('old'), c3('ext', 'runner', 'external'), c3('other', 'other')]),
    rev: log([note(), c3('chk', 'checker'), c3('chk2', 'checker-2')]),
    chk: log([c3('deep', 'deep')]),
    old: log([c3('oldkid', 'kid')]),
    other: log([c3('o1', 'o1')]),
    o1: [],
    ext: log([c3('hidden', 'hidden')]),
  };
}

test('lead resolves to the root without reading anything', async () => {
  const store = jsStore(logs());
  assert.equal(await resolveName(store, 'root', 'lead'), 'root');
  assert.equal(store.calls.read.length, 0);
});

test('a full name resolves by reading only the catalogs along its path', async () => {
  for (const batch of [false, true]) {
    const store = jsStore(logs(), { batch });
    assert.equal(await resolveName(store, 'root', 'reviewer/checker/deep'), 'deep');
    assert.deepEqual(store.calls.read, ['root', 'rev', 'chk']);
    assert.equal(store.calls.readMany.length, 0);
  }
  const store = jsStore(logs());
  assert.equal(await resolveName(store, 'root', 'reviewer'), 'rev');
  assert.deepEqual(store.calls.read, ['root']);
  assert.equal(await resolveName(await memory(logs()), 'root', 'reviewer/checker-2'), 'chk2');
  // Resolution is relative to the given root.
  assert.equal(await resolveName(jsStore(logs()), 'rev', 'checker/deep'), 'deep');
});

test('a path ending at an external entry resolves; one through it does not', async () => {
  assert.equal(await resolveName(jsStore(logs()), 'root', 'runner'), 'ext');
  const store = jsStore(logs());
  await rejects(resolveName(store, 'root', 'runner/hidden'), 'UNKNOWN_AGENT');
  assert.equal(store.calls.read[0], 'root');
  assert.ok(!store.calls.read.includes('ext'), 'an external entry is never read, not even by the hint');
});

test('a missing segment is UNKNOWN_AGENT naming the reference', async () => {
  const store = jsStore(logs());
  const e = await rejects(resolveName(store, 'root', 'reviewer/nobody/deep'), 'UNKNOWN_AGENT', '"reviewer/nobody/deep"');
  // The path's catalogs, then (only for a mistake) the tree's listing for the hint.
  assert.deepEqual(store.calls.read.slice(0, 3), ['root', 'rev', 'root']);
  await rejects(resolveName(jsStore(logs()), 'root', 'nobody'), 'UNKNOWN_AGENT');
  await rejects(resolveName(jsStore(logs()), 'missing-root', 'reviewer'), 'UNKNOWN_AGENT');
  // Names under an unnamed historical child are not reachable by path.
  await rejects(resolveName(jsStore(logs()), 'root', 'kid'), 'UNKNOWN_AGENT');
  assert.ok(e.message.length < 300);
});

test('anything else is returned unchanged as a Session id, without reading', async () => {
  const store = jsStore(logs());
  for (const id of ['0b0e7c1e-8c0a-4f7e-9d8b-2f4a6c1d3e5f', 'lead/reviewer', 'Reviewer', 'a//b', '', 'x y', 'rev']) {
    const expected = id === 'rev' ? 'deep-not-this' : id;
    if (id === 'rev') continue; // 'rev' is a valid name: it would be looked up as a path
    assert.equal(await resolveName(store, 'root', id), expected);
  }
  assert.equal(store.calls.read.length, 0);
  // Grants no authority: a Session id that is in no tree comes back as is.
  assert.equal(await resolveName(store, 'root', 'SESSION-OF-SOMEONE-ELSE'), 'SESSION-OF-SOMEONE-ELSE');
});

test('store failures along the path reject; abort rejects with CANCELLED', async () => {
  const boom = new Error('down');
  const e = await rejects(resolveName({ read() { throw boom; } }, 'root', 'reviewer'), 'PERSISTENCE_UNAVAILABLE');
  assert.equal(e.cause, boom);
  const failing = jsStore(logs());
  const read = failing.read;
  failing.read = (id, o) => (id === 'rev' ? Promise.reject(boom) : read(id, o));
  await rejects(resolveName(failing, 'root', 'reviewer/checker'), 'PERSISTENCE_UNAVAILABLE');
  // A catalog event that does not read at all fails the read; one entry that does not decode names nobody.
  await rejects(resolveName({ read: () => [{ seq: 'zero', type: 'subagent/catalog', payload: {} }] }, 'root', 'x'), 'CORRUPT_CATALOG');
  await rejects(resolveName(jsStore({ root: log([{ type: 'subagent/catalog', payload: { name: 'x' } }]) }), 'root', 'x'), 'UNKNOWN_AGENT');

  const reason = new Error('stop');
  const pre = await rejects(resolveName(jsStore(logs()), 'root', 'lead', { signal: AbortSignal.abort(reason) }), 'CANCELLED');
  assert.equal(pre.cause, reason);
  const controller = new AbortController();
  const pending = resolveName({ read: never }, 'root', 'reviewer', { signal: controller.signal });
  setTimeout(() => controller.abort(reason), 5);
  assert.equal((await rejects(pending, 'CANCELLED')).cause, reason);
});

test('resolveName validates its arguments', async () => {
  const store = jsStore(logs());
  await rejects(resolveName(store, 'root', 42), 'INVALID_ARGUMENT');
  await rejects(resolveName(store, 'root', undefined), 'INVALID_ARGUMENT');
  await rejects(resolveName(store, '', 'lead'), 'INVALID_ARGUMENT');
  await rejects(resolveName(store, null, 'lead'), 'INVALID_ARGUMENT');
  await rejects(resolveName(null, 'root', 'lead'), 'INVALID_ARGUMENT');
  await rejects(resolveName(store, 'root', 'lead', 5), 'INVALID_ARGUMENT');
  await rejects(resolveName(store, 'root', 'lead', { signal: {} }), 'INVALID_ARGUMENT', 'signal');
});

test('one mistake, one answer: UNKNOWN_AGENT with the closest full names as a hint (issue 41)', async () => {
  for (const batch of [false, true]) {
    const store = jsStore(logs(), { batch });
    const e = await rejects(resolveName(store, 'root', 'reviwer'), 'UNKNOWN_AGENT');
    assert.equal(e.message, 'no agent named "reviwer" exists in this tree; did you mean `reviewer`?');
    // A leaf named right under the wrong creator: the full names that end with it.
    const leaf = await rejects(resolveName(jsStore(logs(), { batch }), 'root', 'checker'), 'UNKNOWN_AGENT');
    assert.equal(leaf.message, 'no agent named "checker" exists in this tree; did you mean `reviewer/checker`?');
    const far = await rejects(resolveName(jsStore(logs(), { batch }), 'root', 'zzzzzzzz'), 'UNKNOWN_AGENT');
    assert.equal(far.message, 'no agent named "zzzzzzzz" exists in this tree', 'nothing close: no hint');
  }
});

test("a member's Session id shaped like a name resolves to it; a text that is neither is unknown", async () => {
  const store = jsStore(logs());
  assert.equal(await resolveName(store, 'root', 'chk'), 'chk', 'no child is named chk: it is a Session id of the tree');
  assert.equal(await resolveName(jsStore(logs()), 'root', 'root'), 'root', "the root's own Session id");
  assert.equal(await resolveName(jsStore(logs()), 'root', 'oldkid'), 'oldkid', 'below an unnamed creator: by id only');
  await rejects(resolveName(jsStore(logs()), 'root', 'o2'), 'UNKNOWN_AGENT');
});
