// Every exported class checks its receiver by a brand page code cannot forge
// (scripts/brand-classes.mjs): a forged, copied or proxied receiver is a
// TypeError before any wasm call, and nothing it does changes any runtime.
// Before, `SubagentRuntime.prototype.isResident.call({ __wbg_ptr: 8 })`
// trapped, the runtime's address reached its trees, and a scan of addresses
// left every later call failing with `memory access out of bounds`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as full from 'subagent-tree';
import * as lite from 'subagent-tree/lite';

const echo = { runTurn: (turn) => ({ messages: [`${turn.name}: ${turn.inputText ?? ''}`] }) };

/** Own methods of a class's prototype (the constructor aside), by name. */
function methodsOf(cls) {
  const proto = cls.prototype;
  return Reflect.ownKeys(proto)
    .filter((k) => k !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, k).value === 'function')
    .map((k) => [k, proto[k]]);
}

/** Receivers that must never reach the wasm: addresses as a scan would try them, copies, Proxies. */
function forgedReceivers(cls, live) {
  const out = [];
  for (let ptr = 0; ptr < 1 << 21; ptr += 4096 + 8) out.push({ __wbg_ptr: ptr });
  for (const ptr of [8, 1 << 20, 0x7ffffff0, -1, 2 ** 32, NaN]) {
    out.push({ __wbg_ptr: ptr });
    out.push(Object.assign(Object.create(cls.prototype), { __wbg_ptr: ptr }));
  }
  out.push(Object.create(cls.prototype), new Proxy(live, {}), { ...live }, Object.create(live));
  return out;
}

/** Calls `fn` on every forged receiver with plausible arguments: each must throw a TypeError synchronously. */
function assertRefused(name, fn, receivers, args) {
  for (const receiver of receivers) {
    let thrown;
    try {
      const result = Reflect.apply(fn, receiver, args);
      // A Promise would mean the call reached the wasm.
      if (result && typeof result.then === 'function') result.then(() => {}, () => {});
    } catch (e) {
      thrown = e;
    }
    assert.ok(thrown instanceof TypeError, `${name} on ${JSON.stringify(receiver) ?? String(receiver)} threw ${thrown}`);
    assert.match(thrown.message, /receiver is not an object this module made/);
  }
}

test('receivers: every SubagentRuntime and MemoryStore method refuses a forged receiver; nothing changes', async () => {
  const store = new full.MemoryStore();
  const runtime = new full.SubagentRuntime({ store, host: echo });
  const root = await runtime.openRoot({ sessionId: 'victim' });
  const child = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'Secret', prompt: 'p', name: 'secret' });
  await runtime.waitForQuiescence(root);
  await runtime.closeRoot(root);
  const before = await store.read('victim');
  const args = ['victim', child.childId, 'injected', {}];
  for (const [cls, live] of [[full.SubagentRuntime, runtime], [full.MemoryStore, store]]) {
    const receivers = forgedReceivers(cls, live);
    for (const [name, fn] of methodsOf(cls)) assertRefused(`${cls.name}.${String(name)}`, fn, receivers, args);
  }
  // The glue's `__wrap` (a way to mint an object for any address) is not reachable.
  for (const cls of [full.SubagentRuntime, full.MemoryStore, lite.MemoryStore]) assert.equal(cls.__wrap, undefined);
  // The victim's tree is as it was: still closed, its log unchanged.
  assert.throws(() => runtime.isResident(root, 'victim'), { code: 'UNAUTHORIZED', message: /is dead/ });
  assert.deepEqual(await store.read('victim'), before);
  // The module answers: the same runtime reopens the root, and a fresh runtime runs a tree.
  const again = await runtime.openRoot({ sessionId: 'victim' });
  assert.deepEqual((await runtime.listDescendants(again.sessionId)).map((r) => r.path), ['secret']);
  const fresh = new full.SubagentRuntime({ store: new full.MemoryStore(), host: echo });
  const r = await fresh.openRoot({ sessionId: 'r' });
  await fresh.startActivation({ provider: 'spawn', parent: r, label: 'L', prompt: 'hi', name: 'a' });
  await fresh.waitForQuiescence(r);
  assert.deepEqual((await fresh.listDescendants('r')).map((row) => row.name), ['a']);
});

test('receivers: the lite MemoryStore refuses a forged receiver too', async () => {
  const store = new lite.MemoryStore();
  await store.append('s', [{ seq: 0, type: 'note', payload: { n: 1 } }]);
  const receivers = forgedReceivers(lite.MemoryStore, store);
  for (const [name, fn] of methodsOf(lite.MemoryStore)) assertRefused(`lite MemoryStore.${String(name)}`, fn, receivers, ['s', []]);
  assert.equal((await store.read('s')).length, 1);
  assert.deepEqual(await lite.listDescendants(store, 's'), []);
});

test('receivers: a freed object stays refused as freed, and free() twice is harmless', async () => {
  const runtime = new full.SubagentRuntime({ store: new full.MemoryStore(), host: echo });
  const root = await runtime.openRoot({ sessionId: 'r' });
  runtime.free();
  assert.throws(() => runtime.isResident(root, 'r'), { name: 'TypeError', message: /was freed/ });
  runtime.free();
  runtime[Symbol.dispose]();
  const store = new full.MemoryStore();
  store.free();
  assert.throws(() => store.read('s'), { name: 'TypeError', message: /was freed/ });
  store.free();
});

// Issue 66, point 3: the brand names the class. A runtime is never a store's receiver (nor the
// reverse), free() and [Symbol.dispose]() included: before, SubagentRuntime.prototype.free.call(store)
// freed the store, openRoot on a store trapped the module and MemoryStore's read on a runtime read
// the runtime's memory as a store.
test('receivers: an object of another class is refused by every method, free() and [Symbol.dispose]() included', async () => {
  const store = new full.MemoryStore();
  const runtime = new full.SubagentRuntime({ store, host: echo });
  const liteStore = new lite.MemoryStore();
  const pairs = [
    [full.SubagentRuntime, [store, liteStore]],
    [full.MemoryStore, [runtime, liteStore]],
    [lite.MemoryStore, [store, runtime]],
  ];
  // Own and inherited (the entries' classes may extend the glue's).
  const allMethodsOf = (cls) => {
    const out = [];
    for (let c = cls; c && c !== Function.prototype; c = Object.getPrototypeOf(c)) out.push(...methodsOf(c));
    return out;
  };
  for (const [cls, others] of pairs) {
    const methods = allMethodsOf(cls);
    assert.ok(methods.some(([k]) => k === 'free') && methods.some(([k]) => k === Symbol.dispose), `${cls.name} has free and dispose`);
    for (const [name, fn] of methods) {
      for (const other of others) {
        assert.throws(
          () => {
            const result = Reflect.apply(fn, other, ['s', []]);
            if (result && typeof result.then === 'function') result.then(() => {}, () => {});
          },
          (e) => e instanceof TypeError && /Illegal invocation: the receiver is (a \w+, not a|not an object this module made)/.test(e.message),
          `${cls.name}.${String(name)} on a ${other.constructor.name}`,
        );
      }
    }
  }
  // Nothing was freed or touched: each still works as its own class.
  const root = await runtime.openRoot({ sessionId: 'r' });
  await runtime.startActivation({ provider: 'spawn', parent: root, label: 'L', prompt: 'hi', name: 'a' });
  await runtime.waitForQuiescence(root);
  assert.deepEqual((await runtime.listDescendants('r')).map((row) => row.name), ['a']);
  assert.ok((await store.read('r')).length > 0);
  await liteStore.append('s', [{ seq: 0, type: 'note', payload: {} }]);
  assert.equal((await liteStore.read('s')).length, 1);
  assert.throws(() => full.SubagentRuntime.prototype.free.call(store), { name: 'TypeError', message: 'Illegal invocation: the receiver is a MemoryStore, not a SubagentRuntime' });
});
