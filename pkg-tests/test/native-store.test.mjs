// The package's own MemoryStore used natively by the runtime and the listing
// functions (issue 15), and everything that must still go through JS: a
// subclass or an instance whose store methods were replaced. Forged, copied,
// proxied and freed stores give coded errors, never a trap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, listDescendants, resolveName } from 'subagent-tree';
import { c3, ids, log, rejects, throws } from './helpers.mjs';

const METHODS = ['append', 'read', 'readMany', 'flush'];
const echo = { runTurn: (turn) => ({ messages: [`${turn.name}: ${turn.inputText ?? ''}`] }) };

/**
 * Counts reads of the store's methods without changing them: each is an own
 * getter answering the package's own method. The JS path reads a method on
 * every call; the native path reads each once, when it recognises the store.
 */
function watched(store = new MemoryStore()) {
  const reads = Object.fromEntries(METHODS.map((m) => [m, 0]));
  for (const m of METHODS) {
    Object.defineProperty(store, m, { get: () => (reads[m]++, MemoryStore.prototype[m]), configurable: true });
  }
  return { store, reads, total: () => METHODS.reduce((n, m) => n + reads[m], 0) };
}

/** A plain JS store over a MemoryStore: always the JS path, as before issue 15. */
function viaJs(inner) {
  return {
    append: (id, events) => inner.append(id, events),
    read: (id, options) => inner.read(id, options),
    readMany: (ids, options) => inner.readMany(ids, options),
    flush: (id) => inner.flush(id),
  };
}

/** Spawns `reviewer` then `reviewer/checker` under a root and lets the tree settle. */
async function tree(store) {
  const runtime = new SubagentRuntime({ store, host: echo, maxDepth: 3 });
  const root = await runtime.openRoot({ sessionId: 'root' });
  const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'Review', prompt: 'p', name: 'reviewer' });
  const b = await runtime.startActivation({ provider: 'spawn', parent: a.agent, label: 'Check', prompt: 'p', name: 'checker' });
  await b.result;
  await runtime.waitForQuiescence(root);
  return { runtime, root, a, b };
}

test('native: the runtime and listDescendants use the package MemoryStore without calling its JS methods', async () => {
  const { store, reads, total } = watched();
  const { runtime, root, a, b } = await tree(store);
  const recognised = total();
  assert.ok(recognised <= METHODS.length, `each method read at most once, when the store was recognised: ${JSON.stringify(reads)}`);
  await runtime.sendMessage(root, b.childId, 'one more thing');
  await runtime.waitForQuiescence(root);
  const rows = await runtime.listDescendants('root');
  assert.deepEqual(rows.map((r) => [r.path, r.depth]), [['reviewer', 1], ['reviewer/checker', 2]]);
  const listed = await listDescendants(store, 'root');
  assert.deepEqual(listed.map((r) => r.path), ['reviewer', 'reviewer/checker']);
  assert.equal(await resolveName(store, 'root', 'reviewer/checker'), b.childId);
  assert.equal(total() - recognised, 2 * METHODS.length, 'listDescendants and resolveName each recognised it once; the runtime read no method');
  // Events written natively are visible from JS, and the reverse.
  const events = await MemoryStore.prototype.read.call(store, a.childId);
  assert.ok(events.some((e) => e.type === 'subagent/catalog'), 'the catalog the runtime wrote natively');
  const seq = (await MemoryStore.prototype.read.call(store, 'root')).length;
  await MemoryStore.prototype.append.call(store, 'root', log([c3('from-js', 'outsider')], seq));
  // (a child without a log of its own: a diagnostic row)
  const after = ids(await runtime.listDescendants('root'));
  assert.equal(after.length, 3);
  assert.ok(after[2].startsWith('from-js'), after[2]);
  assert.deepEqual(ids(await listDescendants(store, 'root')), after);
});

test('native: the same rows and logs as through a JS wrapper of the same store class', async () => {
  const native = new MemoryStore();
  const inner = new MemoryStore();
  const run = async (store) => {
    let n = 0;
    const runtime = new SubagentRuntime({ store, host: echo, maxDepth: 3, now: () => 1_000, newId: () => `id-${++n}` });
    const root = await runtime.openRoot({ sessionId: 'root' });
    const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'Review', prompt: 'p', name: 'reviewer' });
    await a.result;
    await runtime.waitForQuiescence(root);
    return runtime.listDescendants('root');
  };
  assert.deepEqual(await run(native), await run(viaJs(inner)));
  for (const id of ['root', 'id-1']) assert.deepEqual(await native.read(id), await inner.read(id));
});

test('native: a subclass overriding read is honoured (its read is called)', async () => {
  class Counting extends MemoryStore {
    reads = 0;
    read(id, options) {
      this.reads++;
      return super.read(id, options);
    }
  }
  const store = new Counting();
  assert.ok(store instanceof MemoryStore);
  await tree(store);
  const afterRuntime = store.reads;
  assert.ok(afterRuntime > 0, 'the runtime read through the override');
  await listDescendants(store, 'root');
  assert.ok(store.reads > afterRuntime, 'listDescendants read through the override');
  // An override of readMany alone is honoured too.
  class Batching extends MemoryStore {
    batches = 0;
    readMany(ids, options) {
      this.batches++;
      return super.readMany(ids, options);
    }
  }
  const batching = new Batching();
  await tree(batching);
  batching.batches = 0;
  await listDescendants(batching, 'root');
  assert.ok(batching.batches > 0);
});

test('native: a patched instance method is honoured', async () => {
  const store = new MemoryStore();
  const appended = [];
  store.append = function (id, events) {
    appended.push(id);
    return MemoryStore.prototype.append.call(this, id, events);
  };
  const { b } = await tree(store);
  assert.ok(appended.includes('root') && appended.includes(b.childId), 'every append went through the patch');
  // A method patched after recognition is not seen by that runtime (decided
  // once, like readMany), but a new listing call sees it.
  const plain = new MemoryStore();
  await tree(plain);
  let reads = 0;
  plain.read = (...args) => (reads++, MemoryStore.prototype.read.apply(plain, args));
  plain.readMany = undefined;
  await listDescendants(plain, 'root');
  assert.ok(reads > 0);
});

test('native: forged, copied and proxied stores are refused with INVALID_ARGUMENT, never a crash', async () => {
  const NOT_STORE = "has MemoryStore's methods but is not a MemoryStore";
  // The glue's methods check their receiver by a private brand: a forged
  // object never reaches the wasm, whatever its `__wbg_ptr` says.
  const forged = Object.create(MemoryStore.prototype);
  forged.__wbg_ptr = 12345;
  assert.throws(() => MemoryStore.prototype.read.call(forged, 'root'), TypeError);
  assert.throws(() => MemoryStore.prototype.append.call({ __wbg_ptr: 8 }, 'root', []), TypeError);
  throws(() => new SubagentRuntime({ store: forged, host: echo }), 'INVALID_ARGUMENT', `options.store ${NOT_STORE}`);
  await rejects(listDescendants(forged, 'root'), 'INVALID_ARGUMENT', `store ${NOT_STORE}`);
  await rejects(resolveName(forged, 'root', 'a'), 'INVALID_ARGUMENT');
  // Own methods on a forged object, the rest replaced: still refused.
  const mixed = Object.create(MemoryStore.prototype, { __wbg_ptr: { value: 0x7ffffff0 }, read: { value: async () => null } });
  throws(() => new SubagentRuntime({ store: mixed, host: echo }), 'INVALID_ARGUMENT', NOT_STORE);
  // A copy of a live store's properties, and a Proxy over one (as with Map:
  // the methods accept only the store itself).
  const real = new MemoryStore();
  throws(() => new SubagentRuntime({ store: new Proxy(real, {}), host: echo }), 'INVALID_ARGUMENT', NOT_STORE);
  await rejects(listDescendants(new Proxy(real, {}), 'root'), 'INVALID_ARGUMENT', NOT_STORE);
  throws(() => new SubagentRuntime({ store: { ...Object.fromEntries(METHODS.map((m) => [m, real[m]])) }, host: echo }), 'INVALID_ARGUMENT');
  // ... where an object whose methods call the store works.
  const { runtime: viaObject } = await tree(viaJs(real));
  assert.equal((await viaObject.listDescendants('root')).length, 2);
  assert.equal((await listDescendants(real, 'root')).length, 2);
  // A forged object without any of the glue's methods is taken as a JS store, and one without
  // read and append is refused at construction (issue 66), not at its first read.
  const unset = Object.create(MemoryStore.prototype, Object.fromEntries(METHODS.map((m) => [m, { value: undefined }])));
  throws(() => new SubagentRuntime({ store: unset, host: echo }), 'INVALID_ARGUMENT', 'options.store.read must be a function');
  // A real store given a `__wbg_ptr`: an ordinary property now, so it still works natively.
  const tampered = new MemoryStore();
  tampered.__wbg_ptr = 12345;
  const { runtime: rt } = await tree(tampered);
  assert.deepEqual((await rt.listDescendants('root')).map((r) => r.path), ['reviewer', 'reviewer/checker']);
  assert.deepEqual((await listDescendants(tampered, 'root')).map((r) => r.path), ['reviewer', 'reviewer/checker']);
  // ... and with a method replaced it goes through JS, its own methods safe.
  let reads = 0;
  const ownRead = tampered.read;
  tampered.read = (...args) => (reads++, ownRead.apply(tampered, args));
  assert.equal((await listDescendants(tampered, 'root')).length, 2);
  assert.ok(reads > 0);
  // Throwing getters and Proxies: the JS path and its coded errors, as before.
  const throwing = Object.create(MemoryStore.prototype, { readMany: { get() { throw new Error('trap'); } } });
  throws(() => new SubagentRuntime({ store: throwing, host: echo }), 'INVALID_ARGUMENT', NOT_STORE);
  const boom = () => {
    throw new Error('trap');
  };
  const hostile = new Proxy({}, { get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom });
  throws(() => new SubagentRuntime({ store: hostile, host: echo }), 'PERSISTENCE_UNAVAILABLE');
  // The module is intact.
  const fresh = new MemoryStore();
  await fresh.append('s', log([c3('k', 'kid')]));
  assert.equal((await fresh.read('s')).length, 1);
});

test('native: a freed MemoryStore gives a coded error, never a trap', async () => {
  const before = new MemoryStore();
  before.free();
  const runtime = new SubagentRuntime({ store: before, host: echo });
  await rejects(runtime.openRoot({ sessionId: 'r' }), 'PERSISTENCE_UNAVAILABLE', 'store.read failed');
  await rejects(listDescendants(before, 'r'), 'PERSISTENCE_UNAVAILABLE');
  // Freed while a runtime uses it natively.
  const during = new MemoryStore();
  const { runtime: rt, root, b } = await tree(during);
  during.free();
  await rejects(rt.sendMessage(root, b.childId, 'still there?'), 'PERSISTENCE_UNAVAILABLE', 'the MemoryStore was freed');
  await rejects(rt.listDescendants('root'), 'PERSISTENCE_UNAVAILABLE', 'the MemoryStore was freed');
  await rejects(rt.flush(root.sessionId), 'PERSISTENCE_UNAVAILABLE', 'the MemoryStore was freed');
  await rejects(listDescendants(during, 'root'), 'PERSISTENCE_UNAVAILABLE');
  // Freed, then given a pointer again: an ordinary property, so still freed.
  const revived = new MemoryStore();
  revived.free();
  revived.__wbg_ptr = 8;
  await rejects(new SubagentRuntime({ store: revived, host: echo }).openRoot({ sessionId: 'r' }), 'PERSISTENCE_UNAVAILABLE');
  await rejects(listDescendants(revived, 'r'), 'PERSISTENCE_UNAVAILABLE');
});

test('native: reads take what any runtime wrote, as the JS path does, and APPEND_CONFLICT is that of the JS path', async () => {
  // An event over the default eventPayloadBytes (a runtime with larger limits wrote it): read on both paths.
  const big = { text: 'x'.repeat(4_500_000) };
  const outcome = async (store, viaStore) => {
    await viaStore.append('root', log([{ type: 'note', payload: big }]));
    const runtime = new SubagentRuntime({ store, host: echo });
    const root = await runtime.openRoot({ sessionId: 'root' });
    return (await runtime.listTree('root')).root.id === root.sessionId;
  };
  const native = new MemoryStore();
  const inner = new MemoryStore();
  assert.equal(await outcome(native, native), true);
  assert.equal(await outcome(viaJs(inner), inner), true);
  // Listing reads it (no runtime: the largest event any runtime could write).
  assert.equal((await listDescendants(native, 'root')).length, 0);
  // A log changed behind the runtime's back: the next append conflicts alike.
  const conflict = async (store, viaStore) => {
    let n = 0;
    const runtime = new SubagentRuntime({ store, host: echo, now: () => 1_000, newId: () => `id-${++n}` });
    const root = await runtime.openRoot({ sessionId: 'c' });
    const seq = (await viaStore.read('c'))?.length ?? 0;
    await viaStore.append('c', log([{ type: 'note', payload: null }], seq));
    let error;
    try {
      await runtime.startActivation({ provider: 'spawn', parent: root, label: 'L', prompt: 'p', name: 'late' });
    } catch (e) {
      error = e;
    }
    return error && [error.code, error.message];
  };
  const a = new MemoryStore();
  const b = new MemoryStore();
  assert.deepEqual(await conflict(a, a), await conflict(viaJs(b), b));
});
