// Issue 14, item 3 from JS: authority only from handles. The package's own
// files (the handle snippet, the glue) are imported by path, the way page code
// can import them by URL, and nothing there mints, looks up or replaces a
// handle or the dispatcher; intrinsics patched after load capture nothing;
// `init()` returns nothing raw. Each attack is followed by a normal call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import * as pkg from 'subagent-tree';
import { SubagentRuntime, MemoryStore, Agent, init, initSync } from 'subagent-tree';

const require = createRequire(import.meta.url);
const PKG_DIR = path.dirname(require.resolve('subagent-tree/package.json'));
const SNIPPET_DIR = path.join(PKG_DIR, 'snippets', readdirSync(path.join(PKG_DIR, 'snippets'))[0], 'src/wasm/js');
const RUNTIME_SNIPPET = pathToFileURL(path.join(SNIPPET_DIR, 'runtime.js')).href;
const GLUE = pathToFileURL(path.join(PKG_DIR, 'subagent_tree.js')).href;

function setup(host) {
  const turns = [];
  const runtime = new SubagentRuntime({
    store: new MemoryStore(),
    maxDepth: 2,
    host: host ?? {
      async runTurn(turn) {
        turns.push(turn);
        return { stopReason: 'completed', messages: ['ok'] };
      },
    },
  });
  return { runtime, turns };
}

async function works(runtime, root) {
  const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'l', prompt: 'p', delivery: 'caller' });
  assert.equal((await a.result).stopReason, 'completed');
  assert.ok(a.agent === undefined || a.agent instanceof Agent);
}

test('the handle snippet, imported by path, mints, looks up and replaces nothing', async () => {
  const snippet = await import(RUNTIME_SNIPPET);
  const { runtime } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const forgedCaps = [undefined, null, {}, Object.create(null), root, snippet];
  for (const cap of forgedCaps) {
    // Runtime ids and incarnations are small integers: a guess would be easy, so the capability is what guards.
    assert.throws(() => snippet.makeAgent(cap, 1, 'root', 1, 'lead', 'root', undefined, 0), TypeError);
    assert.throws(() => snippet.agentKey(cap, root), TypeError);
    assert.throws(() => snippet.makeDisposer(cap, 'unregister', 1, 1), TypeError);
    assert.throws(() => snippet.makeTools(cap, 1, root, [{ name: 'spawn_agent' }]), TypeError);
    assert.throws(() => snippet.makeTurn(cap, 1, {}, root, 1, 1), TypeError);
    assert.throws(() => snippet.makeActivation(cap, 1, 'c', 1, 'n', undefined, Promise.resolve(), Promise.resolve(), root), TypeError);
  }
  // The dispatcher was installed while the module was instantiated: a second install gets nothing and changes nothing.
  let captured = 0;
  assert.equal(snippet.installDispatcher(() => captured++), undefined);
  await works(runtime, root);
  assert.equal(captured, 0, 'the planted dispatcher was never called');
  // The class is frozen: nothing planted on it sees a handle.
  assert.throws(() => {
    'use strict';
    Agent.prototype.toJSON = function steal() {
      return this;
    };
  }, TypeError);
  assert.ok(Object.isFrozen(Agent.prototype) && Object.isFrozen(root));
});

test('WeakMap, Array and Object.prototype patched after load capture no handle', async () => {
  const { runtime, turns } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const seen = [];
  const saved = {
    get: WeakMap.prototype.get,
    set: WeakMap.prototype.set,
    map: Array.prototype.map,
    freeze: Object.freeze,
    defineProperty: Object.defineProperty,
    catch: Promise.prototype.catch,
  };
  const grab = (v) => {
    if (v instanceof Agent) seen.push(v);
  };
  WeakMap.prototype.get = function (k) {
    grab(k);
    return saved.get.call(this, k);
  };
  WeakMap.prototype.set = function (k, v) {
    grab(k);
    return saved.set.call(this, k, v);
  };
  Array.prototype.map = function (f, t) {
    for (const x of this) grab(x);
    return saved.map.call(this, f, t);
  };
  Object.freeze = (o) => {
    grab(o);
    return saved.freeze(o);
  };
  const setters = ['agent', 'parent', 'root', 'value'];
  for (const key of setters) {
    Object.defineProperty(Object.prototype, key, {
      configurable: true,
      set(v) {
        grab(v);
        saved.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
    });
  }
  const provider = {
    name: 'ext',
    capabilities: {},
    inheritsParentContext: false,
    start(request) {
      assert.ok(request.parent instanceof Agent, 'the provider still gets its parent handle');
      return { id: `run-${Math.random()}`, result: { stopReason: 'completed', output: [] }, dispose() {} };
    },
  };
  try {
    // The traps work: a plain assignment or a patched WeakMap would hand them the handle.
    const probe = {};
    probe.agent = root;
    new WeakMap().set(root, 1);
    assert.equal(seen.length, 2);
    seen.length = 0;
    runtime.registerProvider(provider);
    const local = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'l', prompt: 'p', delivery: 'caller' });
    await local.result;
    assert.ok(local.agent instanceof Agent);
    const external = await runtime.startActivation({ provider: 'ext', parent: root, label: 'l', prompt: 'p' });
    await external.result;
    const tools = runtime.toolsFor(root);
    assert.ok(tools.length > 0);
    await tools.find((t) => t.name === 'list_agents').call({});
    assert.ok(turns.length > 0 && turns.every((t) => t.agent instanceof Agent));
  } finally {
    WeakMap.prototype.get = saved.get;
    WeakMap.prototype.set = saved.set;
    Array.prototype.map = saved.map;
    Object.freeze = saved.freeze;
    for (const key of setters) delete Object.prototype[key];
  }
  assert.deepEqual(seen, [], 'no patched intrinsic or Object.prototype setter saw a handle');
  await works(runtime, root);
});

test('init() and initSync() return nothing raw, from the entry and from the glue imported by path', async () => {
  assert.equal(await init(), undefined);
  assert.equal(initSync(), undefined);
  const glue = await import(GLUE);
  assert.equal(await glue.default(), undefined);
  assert.equal(glue.initSync(), undefined);
  for (const name of Object.keys(pkg)) {
    assert.ok(!name.startsWith('__wbindgen') && name !== 'memory', `the package exports ${name}`);
  }
  // The lite entry and its glue, likewise.
  const lite = await import('subagent-tree/lite');
  assert.equal(await lite.init(), undefined);
  assert.equal(lite.initSync(), undefined);
  const liteGlue = await import(GLUE.replace(/subagent_tree\.js$/, 'subagent_tree_lite.js'));
  assert.equal(await liteGlue.default(), undefined);
  for (const name of Object.keys(lite)) {
    assert.ok(!name.startsWith('__wbindgen') && name !== 'memory', `the lite entry exports ${name}`);
  }
  const { runtime } = setup();
  await works(runtime, await runtime.openRoot({}));
});

test('code that claims the handle module before the package loads leaves the runtime unbuildable (fail closed)', () => {
  const script = `
    const snippet = await import(${JSON.stringify(RUNTIME_SNIPPET)});
    const cap = snippet.installDispatcher(() => 'planted');
    const { SubagentRuntime, MemoryStore } = await import('subagent-tree');
    let code = 'none';
    try {
      new SubagentRuntime({ store: new MemoryStore(), host: { runTurn() {} } });
    } catch (e) {
      code = e.code;
    }
    let minted = 'no';
    try {
      minted = typeof snippet.makeAgent(cap, 1, 'x', 1, 'lead', 'x', undefined, 0);
    } catch {}
    process.stdout.write(JSON.stringify({ gotCap: cap !== undefined, code, minted }));
  `;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: path.dirname(new URL(import.meta.url).pathname), encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  const result = JSON.parse(out.stdout);
  // The attacker got the capability, but no runtime exists for a minted handle to act on.
  assert.equal(result.gotCap, true);
  assert.equal(result.code, 'UNAUTHORIZED');
});

test('no public method turns a Session id or name into a handle; reopen refuses members of another tree', async () => {
  const { runtime } = setup();
  const a = await runtime.openRoot({ sessionId: 'tree-a' });
  const b = await runtime.openRoot({ sessionId: 'tree-b' });
  // A member of tree b, held resident so it is live while tree a's root tries it.
  const child = await runtime.startActivation({ provider: 'spawn', parent: b, label: 'x', prompt: 'p', name: 'bee' });
  await child.result;
  const held = await runtime.reopen(b, 'bee');
  const id = child.childId;
  // Every function on the runtime, called with the id, yields no Agent (or refuses).
  const names = new Set();
  for (let o = runtime; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const k of Object.getOwnPropertyNames(o)) names.add(k);
  }
  assert.ok(!names.has('agent') && !names.has('handle') && !names.has('getAgent'), [...names].join(','));
  for (const k of names) {
    // free() and wasm-bindgen's __destroy_into_raw() end the runtime (they hand out nothing).
    if (k === 'constructor' || k === 'free' || k.startsWith('__') || typeof runtime[k] !== 'function') continue;
    let out;
    try {
      out = await runtime[k](id, id);
    } catch {
      continue;
    }
    const found = [out, out?.agent, ...(Array.isArray(out) ? out : [])].some((v) => v instanceof Agent);
    assert.ok(!found, `${k}(sessionId) returned a handle`);
  }
  for (const target of [id, 'bee']) {
    await assert.rejects(runtime.reopen(a, target), (e) => e.code === 'UNAUTHORIZED' || e.code === 'UNKNOWN_AGENT', target);
  }
  assert.equal(held.agent.sessionId, id, 'the root of its own tree reopens it');
  held.release();
  await works(runtime, a);
});
