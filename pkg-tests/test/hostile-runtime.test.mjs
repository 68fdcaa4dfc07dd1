// Issue 7 parts 3 and 4 from JS: hostile input across every export of the
// live runtime (wrong types, 10 MB strings, throwing getters, Proxies, hosts,
// providers and stores whose Promises never settle, malformed runs, garbage
// outcomes, throwing listeners), and the authority attacks. Every case gets a
// clear coded SubagentError (or an error stop result), never a trap, and each
// test ends with a normal call proving the module still works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, SubagentError, Agent } from 'subagent-tree';
import { assertCoded, rejects, throws, never } from './helpers.mjs';

// ---- fixtures --------------------------------------------------------------------

const TEN_MB = 'x'.repeat(10_000_000);
const ONE_MB = 'y'.repeat(1_000_000); // under the bridge's 1 MiB string cap: reaches the core

function throwingProxy() {
  const boom = () => {
    throw new Error('trap');
  };
  return new Proxy({}, { get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom });
}
function revoked() {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}
function throwingGetters(keys) {
  const o = {};
  for (const key of keys) {
    Object.defineProperty(o, key, { get() { throw new Error(`getter ${key}`); }, enumerable: true });
  }
  return o;
}
function cyclic() {
  const o = { type: 'text' };
  o.self = o;
  return o;
}

const GETTER_KEYS = ['sessionId', 'cwd', 'signal', 'delivery', 'kind', 'agent', 'root', 'provider', 'label', 'parent', 'prompt', 'name', 'then'];

/** Values of every wrong shape, made fresh per use. */
const HOSTILE = {
  undefined: () => undefined,
  null: () => null,
  true: () => true,
  zero: () => 0,
  NaN: () => NaN,
  bigint: () => 10n ** 30n,
  symbol: () => Symbol('s'),
  function: () => () => 'x',
  'empty object': () => ({}),
  'null-prototype object': () => Object.create(null),
  array: () => ['a', 1],
  'String object': () => new String('reviewer'),
  Date: () => new Date(0),
  Map: () => new Map([['a', 1]]),
  'throwing proxy': throwingProxy,
  'revoked proxy': revoked,
  'throwing getters': () => throwingGetters(GETTER_KEYS),
  '10 MB string': () => TEN_MB,
  '1 MB string': () => ONE_MB,
  cyclic,
};

/** Turns complete at once, except those of held names (until aborted). */
function scriptedHost() {
  const held = new Set();
  const turns = [];
  return {
    turns,
    hold(name) {
      held.add(name);
    },
    runTurn(turn) {
      turns.push({ name: turn.name, input: turn.inputText, sources: turn.input.map((m) => m.source) });
      if (!held.has(turn.name)) return { stopReason: 'completed', messages: [`done by ${turn.name}`] };
      return new Promise((resolve) => turn.signal.addEventListener('abort', () => resolve({ stopReason: 'aborted' }), { once: true }));
    },
  };
}

let runtimes = 0;
function setup(options = {}) {
  const store = options.store ?? new MemoryStore();
  const host = options.host ?? scriptedHost();
  // Session ids look like UUIDs (so tools read them as ids, never as names), unique per runtime.
  const prefix = (++runtimes).toString(16).padStart(4, '0');
  let n = 0;
  const newId = (kind) => `${kind === 'session' ? '5e55' : '3e55'}${prefix}-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`;
  const runtime = new SubagentRuntime({ maxDepth: 2, capacity: 10_000, newId, ...options, store, host });
  return { runtime, host, store };
}

/** The normal call that ends each test: a fresh child runs and completes. */
async function stillWorks(runtime, root, name = `fine-${Math.random().toString(36).slice(2, 8)}`) {
  const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'fine', prompt: 'p', name });
  const result = await within(a.result, `${name} result`);
  assert.equal(result.stopReason, 'completed');
  assert.deepEqual(result.output, [{ type: 'text', text: `done by ${a.name}` }]);
}

/** Fails (instead of hanging the suite) when `promise` does not settle in time. */
function within(promise, label, ms = 5_000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Calls `fn`; a sync method may throw, an async one must return a Promise and never throw. */
async function outcome(label, fn, { async }) {
  let value;
  try {
    value = fn();
  } catch (error) {
    assert.ok(!async, `${label}: an async method threw synchronously: ${error}`);
    return { error };
  }
  if (async) {
    assert.ok(value instanceof Promise, `${label}: returns a Promise`);
    try {
      return { value: await within(value, label) };
    } catch (error) {
      return { error };
    }
  }
  return { value };
}

function assertSafe(label, result, codes) {
  if ('error' in result) {
    assert.ok(result.error instanceof SubagentError, `${label}: not a SubagentError: ${result.error?.stack ?? result.error}`);
    assert.ok(codes.includes(result.error.code), `${label}: code ${result.error.code} (${result.error.message})`);
    assertCoded(result.error, result.error.code); // one short sentence (< 500 chars)
  }
}

const tick = () => new Promise((r) => setImmediate(r));

// ---- every export, every argument position ------------------------------------------

test('the constructor: hostile options give a coded error, valid ones a working runtime', async () => {
  const store = new MemoryStore();
  const host = scriptedHost();
  const valid = { store, host };
  const keys = ['store', 'host', 'maxDepth', 'capacity', 'defaultCwd', 'builtinProviders', 'now', 'newId'];
  for (const [label, make] of Object.entries(HOSTILE)) {
    assertSafe(`new SubagentRuntime(${label})`, await outcome(label, () => new SubagentRuntime(make()), { async: false }), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'PERSISTENCE_UNAVAILABLE']);
    for (const key of keys) {
      const name = `new SubagentRuntime({${key}: ${label}})`;
      const r = await outcome(name, () => new SubagentRuntime({ ...valid, [key]: make() }), { async: false });
      assertSafe(name, r, ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'PERSISTENCE_UNAVAILABLE']);
    }
    const getters = throwingGetters(keys);
    assertSafe('throwing option getters', await outcome('getters', () => new SubagentRuntime(getters), { async: false }), ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED']);
  }
  throws(() => new SubagentRuntime({ store: throwingGetters(['append', 'read', 'readMany', 'flush']), host }), 'PERSISTENCE_UNAVAILABLE');
  throws(() => new SubagentRuntime({ store, host: throwingGetters(['runTurn', 'release']) }), 'INVALID_ARGUMENT');
  throws(() => new SubagentRuntime({ store, host, maxDepth: 1.5 }), 'INVALID_ARGUMENT');
  throws(() => new SubagentRuntime({ store, host, capacity: -1 }), 'INVALID_ARGUMENT');
  throws(() => new SubagentRuntime({ store, host, capacity: 2 ** 40 }), 'INVALID_ARGUMENT');
  const { runtime } = setup();
  await stillWorks(runtime, await runtime.openRoot({ sessionId: 'root' }));
});

test('every method and argument position: a coded error or an answer, never a trap or a hang', async () => {
  const { runtime, host } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  host.hold('held');
  const held = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'held', prompt: 'p', name: 'held' });
  const provider = { name: 'ext', capabilities: {}, inheritsParentContext: false, start: () => ({ id: `run-${Math.random()}`, result: { stopReason: 'completed' }, dispose() {} }) };
  const base = { provider: 'spawn', parent: root, label: 'x', prompt: 'p', delivery: 'caller' };
  const tool = runtime.toolsFor(root).find((t) => t.name === 'send_message');
  const target = held.childId;
  const A = { async: true };
  const S = { async: false };
  const ARG = ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED'];
  const HANDLE = ['UNAUTHORIZED', 'INVALID_ARGUMENT', 'LIMIT_EXCEEDED'];
  const START = ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'INVALID_NAME', 'DEPTH_EXCEEDED', 'NO_PROVIDER', 'UNAUTHORIZED', 'UNSUPPORTED_CAPABILITY', 'DUPLICATE_CHILD', 'DUPLICATE_NAME'];
  const SEND = ['INVALID_ARGUMENT', 'LIMIT_EXCEEDED', 'UNAUTHORIZED', 'NOT_RESUMABLE'];
  let unique = 0;
  for (const [label, make] of Object.entries(HOSTILE)) {
    const calls = [
      ['openRoot(h)', () => runtime.openRoot(make()), A, ARG],
      ['openRoot({sessionId: h})', () => runtime.openRoot({ sessionId: make() }), A, [...ARG, 'DUPLICATE_CHILD']],
      ['openRoot({cwd: h})', () => runtime.openRoot({ sessionId: `cwd-${++unique}`, cwd: make() }), A, ARG],
      ['closeRoot(h)', () => runtime.closeRoot(make()), A, HANDLE],
      ['startActivation(h)', () => runtime.startActivation(make()), A, ARG],
      ...['provider', 'label', 'parent', 'prompt', 'delivery', 'maxDepth', 'signal', 'name', 'childId', 'cwd', 'agentPreset', 'agentOptions', 'outputSchema'].map((key) => [
        `startActivation({${key}: h})`,
        () => runtime.startActivation({ ...base, name: `n${++unique}`, [key]: make() }),
        A,
        START,
      ]),
      ['sendMessage(h, id, text)', () => runtime.sendMessage(make(), target, 'x'), A, HANDLE],
      ['sendMessage(root, h, text)', () => runtime.sendMessage(root, make(), 'x'), A, SEND],
      ['sendMessage(root, id, h)', () => runtime.sendMessage(root, target, make()), A, SEND],
      ['sendMessage(root, id, text, h)', () => runtime.sendMessage(root, target, 'x', make()), A, SEND],
      ['sendMessage(root, id, text, {signal: h})', () => runtime.sendMessage(root, target, 'x', { signal: make() }), A, SEND],
      ['prompt(h, id, text)', () => runtime.prompt(make(), 'root', 'x'), A, HANDLE],
      ['prompt(root, h, text)', () => runtime.prompt(root, make(), 'x'), A, SEND],
      ['prompt(root, id, h)', () => runtime.prompt(root, target, make()), A, SEND],
      ['prompt(root, id, text, h)', () => runtime.prompt(root, target, 'x', make()), A, SEND],
      ['prompt(root, id, text, {delivery: h})', () => runtime.prompt(root, target, 'x', { delivery: make() }), A, SEND],
      ['interrupt(h, user)', () => runtime.interrupt(make(), { kind: 'user' }), S, ARG],
      ['interrupt(id, h)', () => runtime.interrupt('nobody', make()), S, ARG],
      ['interrupt(id, {kind: h})', () => runtime.interrupt('nobody', { kind: make() }), S, ARG],
      ['interrupt(id, {kind: ancestor, agent: h})', () => runtime.interrupt('nobody', { kind: 'ancestor', agent: make() }), S, HANDLE],
      ['namesOf(h)', () => runtime.namesOf(make()), S, HANDLE],
      ['rootOf(h)', () => runtime.rootOf(make()), S, HANDLE],
      ['isResident(h, id)', () => runtime.isResident(make(), 'root'), S, HANDLE],
      ['isResident(root, h)', () => runtime.isResident(root, make()), S, ARG],
      ['reopen(h, id)', () => runtime.reopen(make(), 'lead'), A, HANDLE],
      ['reopen(root, h)', () => runtime.reopen(root, make()), A, [...ARG, 'UNKNOWN_AGENT', 'UNAUTHORIZED']],
      ['ask(root, h, text)', () => runtime.ask(root, make(), 'x'), A, [...ARG, 'UNKNOWN_AGENT', 'UNAUTHORIZED', 'NOT_RESUMABLE']],
      ['waitForQuiescence(h)', () => runtime.waitForQuiescence(make()), A, HANDLE],
      ['toolsFor(h)', () => runtime.toolsFor(make()), S, HANDLE],
      ['resolveName(h, text)', () => runtime.resolveName(make(), 'lead'), A, HANDLE],
      ['resolveName(root, h)', () => runtime.resolveName(root, make()), A, [...ARG, 'UNKNOWN_AGENT']],
      ['resolveName(root, text, h)', () => runtime.resolveName(root, 'lead', make()), A, ARG],
      ['listDescendants(h)', () => runtime.listDescendants(make()), A, ARG],
      ['listDescendants(root, h)', () => runtime.listDescendants('root', make()), A, ARG],
      ['drainDescendants(h)', () => runtime.drainDescendants(make()), A, HANDLE],
      ['drainDescendants([h])', () => runtime.drainDescendants([make()]), A, HANDLE],
      ['waitForTreeWork(h)', () => runtime.waitForTreeWork(make()), A, HANDLE],
      ['registerProvider(h)', () => runtime.registerProvider(make()), S, [...ARG, 'UNSUPPORTED_CAPABILITY']],
      ...['name', 'capabilities', 'inheritsParentContext', 'agentRouteDefaults', 'prepareContinuable', 'start'].map((key) => [
        `registerProvider({${key}: h})`,
        () => runtime.registerProvider({ ...provider, name: `p${++unique}`, [key]: make() }),
        S,
        [...ARG, 'UNSUPPORTED_CAPABILITY'],
      ]),
      ['getProvider(h)', () => runtime.getProvider(make()), S, []],
      ['on(h, fn)', () => runtime.on(make(), () => {}), S, ARG],
      ['on(type, h)', () => runtime.on('subagent/start', make()), S, ARG],
      ['on(type, fn, h)', () => runtime.on('subagent/start', () => {}, make()), S, ARG],
      ['flush(h)', () => runtime.flush(make()), A, ARG],
      ['addFlushListener(h)', () => runtime.addFlushListener(make()), S, ARG],
      ['tool.call(h)', () => tool.call(make()), A, []],
      ['tool.call({agent: h})', () => tool.call({ agent: make(), message: 'x' }), A, []],
      // Bad options too: Tool.call never rejects (the README's contract).
      ['tool.call(input, h)', () => tool.call({ agent: 'held', message: 'x' }, make()), A, []],
    ];
    for (const [name, fn, kind, codes] of calls) {
      const call = `${name} with h = ${label}`;
      const r = await outcome(call, fn, kind);
      assertSafe(call, r, codes);
      // A tool never fails: refusals are results the model can read, and short.
      if (name.startsWith('tool.call')) {
        assert.ok('value' in r, `${call}: a tool call resolved`);
        assert.equal(typeof r.value.isError, 'boolean', call);
        assert.ok(r.value.content.length < 1_000, `${call}: ${r.value.content.length} chars`);
      }
      if (name === 'getProvider(h)') assert.equal(r.value, undefined, call);
    }
  }
  // Disposers, handles and activations: idempotent and quiet.
  const off = runtime.on('subagent/start', () => {});
  off();
  off();
  assert.deepEqual(root.toJSON(), { sessionId: 'root', name: 'lead' });
  assert.throws(() => new Agent(), TypeError);
  await stillWorks(runtime, root);
  await runtime.drainDescendants([root]);
});

test('10 MB strings: refused at the bridge with a short LIMIT_EXCEEDED, content only within its configured limit', async () => {
  const { runtime, host } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  host.hold('reader');
  const reader = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'r', prompt: 'p', name: 'reader' });
  for (const [call, promise] of [
    ['openRoot', runtime.openRoot({ sessionId: TEN_MB })],
    ['startActivation name', runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name: TEN_MB })],
    ['startActivation provider', runtime.startActivation({ provider: TEN_MB, parent: root, label: 'x', prompt: 'p' })],
    ['sendMessage target', runtime.sendMessage(root, TEN_MB, 'x')],
    ['resolveName', runtime.resolveName(root, TEN_MB)],
    ['listDescendants', runtime.listDescendants(TEN_MB)],
    ['startActivation prompt', runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: TEN_MB })],
    ['sendMessage content', runtime.sendMessage(root, reader.childId, TEN_MB)],
  ]) {
    const e = await rejects(promise, 'LIMIT_EXCEEDED');
    assert.ok(e.message.length < 150, `${call}: ${e.message}`);
  }
  throws(() => runtime.on(TEN_MB, () => {}), 'LIMIT_EXCEEDED');
  throws(() => runtime.interrupt(TEN_MB, { kind: 'user' }), 'LIMIT_EXCEEDED');
  await stillWorks(runtime, root);
  await runtime.drainDescendants([root]);
  // Content is data within its limit: with promptBytes/messageBytes raised to 16 MiB, a 10 MB prompt and
  // message are accepted and delivered whole.
  const roomy = setup({ limits: { promptBytes: 16 << 20, messageBytes: 16 << 20 } });
  const root2 = await roomy.runtime.openRoot({ sessionId: 'root' });
  roomy.host.hold('reader');
  const reader2 = await roomy.runtime.startActivation({ provider: 'spawn', parent: root2, label: 'r', prompt: 'p', name: 'reader' });
  await roomy.runtime.sendMessage(root2, reader2.childId, TEN_MB);
  const big = await roomy.runtime.startActivation({ provider: 'spawn', parent: root2, label: 'big', prompt: TEN_MB, name: 'big' });
  assert.equal((await big.result).stopReason, 'completed');
  assert.equal(roomy.host.turns.find((t) => t.name === 'big').input[0].length, 10_000_000);
  await stillWorks(roomy.runtime, root2);
  await roomy.runtime.drainDescendants([root2]);
});

test('values under the 1 MiB cap are quoted in errors with a bound, never echoed whole', async () => {
  const { runtime } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const spec = { provider: 'spawn', parent: root, label: 'x', prompt: 'p' };
  // Regression: these messages used to carry the whole megabyte.
  const cases = [
    [() => runtime.startActivation({ ...spec, provider: ONE_MB }), 'NO_PROVIDER'],
    [() => runtime.startActivation({ ...spec, delivery: ONE_MB }), 'INVALID_ARGUMENT'],
    [() => runtime.startActivation({ ...spec, name: ONE_MB }), 'INVALID_NAME'],
    [() => runtime.prompt(root, 'root', 'x', { delivery: ONE_MB }), 'INVALID_ARGUMENT'],
    [() => runtime.on(ONE_MB, () => {}), 'INVALID_ARGUMENT'],
    [() => runtime.registerProvider({ name: ONE_MB, capabilities: {}, inheritsParentContext: false, start() {} }), 'INVALID_ARGUMENT'],
  ];
  for (const [call, code] of cases) {
    const e = await rejects(call, code);
    assert.ok(e.message.length < 300, `${code}: ${e.message.length} chars`);
    assert.match(e.message, /… \(1000000 (bytes|characters)\)/);
  }
  // A 1 MB childId is over the id limit (256 bytes), refused briefly; an id at the limit is an id like any other.
  const long = await rejects(runtime.startActivation({ ...spec, childId: ONE_MB }), 'LIMIT_EXCEEDED', 'idBytes');
  assert.ok(long.message.length < 300, long.message);
  const atLimit = 'i'.repeat(256);
  const first = await runtime.startActivation({ ...spec, childId: atLimit, delivery: 'caller' });
  assert.equal(first.childId, atLimit);
  const dup = await rejects(runtime.startActivation({ ...spec, childId: atLimit }), 'DUPLICATE_CHILD');
  assert.ok(dup.message.length < 300, dup.message);
  await stillWorks(runtime, root);
});

test('throwing getters and Proxies in specs, options, authorities, providers and tool input', async () => {
  const { runtime } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const base = { provider: 'spawn', parent: root, label: 'x', prompt: 'p' };
  for (const key of ['provider', 'label', 'parent', 'prompt', 'delivery', 'maxDepth', 'signal', 'name', 'childId', 'cwd', 'agentPreset', 'agentOptions', 'outputSchema']) {
    const spec = Object.defineProperty({ ...base }, key, { get() { throw new Error(`getter ${key}`); } });
    await rejects(runtime.startActivation(spec), 'INVALID_ARGUMENT', `spec.${key} could not be read`);
    // A Proxy over a valid spec that throws for this one key.
    const proxy = new Proxy({ ...base }, { get(t, k) { if (k === key) throw new Error('trap'); return t[k]; } });
    await rejects(runtime.startActivation(proxy), 'INVALID_ARGUMENT', `spec.${key} could not be read`);
  }
  await rejects(runtime.openRoot(throwingGetters(['sessionId', 'cwd'])), 'INVALID_ARGUMENT', 'options.sessionId could not be read');
  await rejects(runtime.sendMessage(root, 'x', 'hi', throwingGetters(['signal'])), 'INVALID_ARGUMENT', 'options.signal could not be read');
  await rejects(runtime.sendMessage(root, 'x', [throwingProxy()]), 'INVALID_ARGUMENT', 'content[0] could not be read');
  await rejects(runtime.sendMessage(root, 'x', 'hi', { signal: throwingProxy() }), 'INVALID_ARGUMENT');
  await rejects(runtime.prompt(root, 'root', 'hi', throwingGetters(['delivery', 'signal'])), 'INVALID_ARGUMENT', 'options.delivery could not be read');
  throws(() => runtime.interrupt('x', throwingGetters(['kind', 'agent'])), 'INVALID_ARGUMENT', 'authority.kind could not be read');
  throws(() => runtime.interrupt('x', Object.defineProperty({ kind: 'ancestor' }, 'agent', { get() { throw new Error('g'); } })), 'INVALID_ARGUMENT', 'authority.agent could not be read');
  await rejects(runtime.drainDescendants(Object.defineProperty([root], 0, { get() { throw new Error('idx'); } })), 'INVALID_ARGUMENT');
  throws(() => runtime.registerProvider(throwingGetters(['name', 'capabilities'])), 'INVALID_ARGUMENT', 'provider.name could not be read');
  throws(
    () => runtime.registerProvider({ name: 'caps', capabilities: throwingProxy(), inheritsParentContext: false, start() {} }),
    'INVALID_ARGUMENT',
    'provider.capabilities.agentOptions could not be read',
  );
  throws(() => runtime.on('subagent/start', () => {}, throwingProxy()), 'INVALID_ARGUMENT', 'options.root could not be read');
  // Tool input is the model's: problems come back as readable results.
  const send = runtime.toolsFor(root).find((t) => t.name === 'send_message');
  assert.deepEqual(await send.call(throwingProxy()), { content: 'the input could not be read (Error: trap)', isError: true });
  assert.deepEqual(await send.call(throwingGetters(['agent', 'message'])), { content: 'the input.agent could not be read (Error: getter agent)', isError: true });
  const loop = { agent: 'lead' };
  loop.message = loop;
  const cycled = await send.call(loop);
  assert.equal(cycled.isError, true);
  assert.match(cycled.content, /nested more than 128 levels deep \(or is cyclic\)/);
  assert.deepEqual(await send.call({ agent: 'lead', message: 10n }), { content: 'the input.message is a bigint, which is not JSON data', isError: true });
  // Bad options are a tool error too: Tool.call never rejects (README).
  const badOptions = await send.call({ agent: 'lead', message: 'x' }, throwingProxy());
  assert.equal(badOptions.isError, true);
  assert.match(badOptions.content, /could not be read/);
  await stillWorks(runtime, root);
});

// ---- hosts, providers and runs that misbehave ------------------------------------------------

test('hosts returning garbage give error stops with a diagnostic, and the creator is told', async () => {
  let pick = null;
  const garbage = {
    number: [5, /host\.runTurn returned 5; expected an object/],
    string: ['done', /host\.runTurn returned "done"; expected an object/],
    bigint: [10n, /is a bigint, which is not JSON data/],
    symbol: [Symbol('s'), /is a symbol, which is not JSON data/],
    'messages: 5': [{ messages: 5 }, /messages as a number; it must be an array/],
    'stopReason: 7': [{ stopReason: 7 }, /stopReason as a number; it must be a string/],
    'text: 5': [{ text: 5 }, /text as a number; it must be a string/],
    'diagnostic: {}': [{ diagnostic: {} }, /diagnostic as an object; it must be a string/],
    'structured: fn': [{ structured: () => 1 }, /structured is a function, which is not JSON data/],
    proxy: [throwingProxy(), /host\.runTurn failed for agent "g\d+" \(Session "[^"]+"\): Error: trap/],
    cyclic: [cyclic(), /nested more than 128 levels deep/],
    rejection: [Promise.reject(new TypeError('host bug')), /host\.runTurn failed for agent "g\d+" \(Session "[^"]+"\): TypeError: host bug/],
    'thenable that throws': [{ then() { throw new Error('then threw'); } }, /Error: then threw/],
    'synchronous throw': ['__throw__', /host\.runTurn failed for agent "g\d+" \(Session "[^"]+"\): Error: sync/],
  };
  const host = {
    turns: [],
    runTurn(turn) {
      if (turn.name === 'lead') {
        this.turns.push(turn.inputText);
        return {};
      }
      if (pick === null) return { messages: [`done by ${turn.name}`] };
      const [value] = garbage[pick];
      if (value === '__throw__') throw new Error('sync');
      return value;
    },
  };
  const { runtime } = setup({ host });
  const root = await runtime.openRoot({ sessionId: 'root' });
  let n = 0;
  for (const [label, [, diagnostic]] of Object.entries(garbage)) {
    pick = label;
    const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name: `g${++n}` });
    const result = await within(a.result, label);
    assert.equal(result.stopReason, 'error', label);
    assert.deepEqual(result.output, [], label);
    assert.match(result.diagnostic, /^the agent host failed: /, label);
    assert.match(result.diagnostic, diagnostic, label);
    assert.ok(Buffer.byteLength(result.diagnostic) <= 4096, label);
  }
  await within(runtime.waitForTreeWork(root), 'tree work');
  await tick();
  // The creator got one notice per child, naming it and quoting the diagnostic.
  const notices = host.turns.flat();
  assert.equal(notices.length, n);
  assert.match(notices[0], /^Subagent g1 failed\.\nIt left no closing message\.\nDiagnostic: the agent host failed: host\.runTurn returned 5;/);
  // A runTurn that later throws on access or disappears.
  let mode = 'ok';
  const fickle = { get runTurn() { if (mode === 'throw') throw new Error('getter'); if (mode === 'gone') return undefined; return () => ({ messages: ['done by x'] }); } };
  const second = setup({ host: fickle }).runtime;
  const r2 = await second.openRoot({ sessionId: 'root' });
  mode = 'throw';
  const t1 = await second.startActivation({ provider: 'spawn', parent: r2, label: 'x', prompt: 'p', name: 'x' });
  assert.match((await t1.result).diagnostic, /host\.runTurn failed for agent "x" \(Session "[^"]+"\): Error: getter/);
  mode = 'gone';
  const t2 = await second.startActivation({ provider: 'spawn', parent: r2, label: 'x', prompt: 'p', name: 'y' });
  assert.match((await t2.result).diagnostic, /runTurn is not a function \(undefined\)/);
  pick = null;
  await stillWorks(runtime, root);
});

test('providers returning malformed runs, garbage seeds, or resolving twice', async () => {
  const { runtime } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const disposed = [];
  const ext = (name, start) => runtime.registerProvider({ name, capabilities: {}, inheritsParentContext: false, start });
  const malformed = [
    ['no id', { result: {}, dispose() {} }, 'INVALID_ARGUMENT', 'id is undefined, not a non-empty string'],
    ['empty id', { id: '', result: {}, dispose() {} }, 'INVALID_ARGUMENT', 'id is "", not a non-empty string'],
    ['numeric id', { id: 5, result: {}, dispose() {} }, 'INVALID_ARGUMENT', 'id is 5'],
    ['no dispose', { id: 'r-nd', result: {} }, 'INVALID_ARGUMENT', 'it has no dispose() method'],
    ['dispose not a function', { id: 'r-dnf', result: {}, dispose: 5 }, 'INVALID_ARGUMENT', 'it has no dispose() method'],
    ['a number', 5, 'INVALID_ARGUMENT', '5 instead of {id, result, dispose}'],
    ['null', null, 'INVALID_ARGUMENT', 'null instead of {id, result, dispose}'],
    ['a throwing Proxy', throwingProxy(), 'CONTINUATION_UNAVAILABLE', 'Error: trap'],
    ['an id getter that throws', Object.defineProperty({ result: {}, dispose() {} }, 'id', { get() { throw new Error('idg'); } }), 'INVALID_ARGUMENT', 'run.id could not be read'],
    ['the root id', { id: 'root', result: {}, dispose: () => disposed.push('root') }, 'DUPLICATE_CHILD', 'which is empty or already live'],
  ];
  let n = 0;
  for (const [label, run, code, text] of malformed) {
    const name = `m${++n}`;
    ext(name, () => run);
    await rejects(within(runtime.startActivation({ provider: name, parent: root, label: 'x', prompt: 'p', name }), label), code, text);
    // The name was released: a retry under it succeeds.
    const retry = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name, delivery: 'caller' });
    assert.equal(retry.name, name, label);
  }
  assert.deepEqual(disposed, ['root'], 'a run the runtime refused after start fulfilled is disposed');
  // Results that are not results.
  const ends = [];
  runtime.on('subagent/end', (e) => e.name.startsWith('x') && ends.push(e.stopReason));
  const results = [
    ['5', 5, 'INVALID_ARGUMENT', 'resolved with 5; expected {output, stopReason}'],
    ['null', null, 'INVALID_ARGUMENT', 'resolved with null'],
    ['no stopReason', { output: [] }, 'INVALID_ARGUMENT', 'no stopReason string'],
    ['output 5', { stopReason: 'completed', output: 5 }, 'INVALID_ARGUMENT', 'an output that is not content blocks'],
    ['diagnostic 5', { stopReason: 'completed', diagnostic: 5 }, 'INVALID_ARGUMENT', 'a diagnostic that is not a string'],
    ['a rejection', Promise.reject(new Error('run failed')), 'CONTINUATION_UNAVAILABLE', 'Error: run failed'],
  ];
  for (const [label, result, code, text] of results) {
    const name = `x${++n}`;
    ext(name, () => ({ id: `run-${name}`, result, dispose() {} }));
    const a = await runtime.startActivation({ provider: name, parent: root, label: 'x', prompt: 'p', name, delivery: 'caller' });
    await rejects(within(a.result, label), code, text);
  }
  assert.deepEqual(ends, results.map(() => 'error'));
  // A thenable that resolves twice (then rejects): the first answer wins.
  ext('twice', () => ({
    then(ok, bad) {
      ok({ id: 'tw-1', result: { then(ok2) { ok2({ stopReason: 'completed', output: 'first' }); ok2({ stopReason: 'error' }); } }, dispose() {} });
      ok({ id: 'tw-2', result: {}, dispose() {} });
      bad(new Error('late'));
    },
  }));
  const twice = await runtime.startActivation({ provider: 'twice', parent: root, label: 'x', prompt: 'p', delivery: 'caller' });
  assert.equal(twice.childId, 'tw-1');
  const zero = { inputTokens: 0, outputTokens: 0, turns: 0 };
  assert.deepEqual(await twice.result, { stopReason: 'completed', output: [{ type: 'text', text: 'first' }], totals: { own: zero, subtree: zero, complete: true } });
  // A diagnostic is cut to 4096 UTF-8 bytes on a character boundary.
  ext('wordy', () => ({ id: 'wordy-1', result: { stopReason: 'error', diagnostic: 'é'.repeat(5_000) }, dispose() {} }));
  const wordy = await runtime.startActivation({ provider: 'wordy', parent: root, label: 'x', prompt: 'p', delivery: 'caller' });
  const cut = (await wordy.result).diagnostic;
  assert.ok(Buffer.byteLength(cut) <= 4096 && cut.startsWith('éé'), `${Buffer.byteLength(cut)} bytes`);
  // Seeds that are not seeds.
  for (const [label, value, text] of [
    ['seed 5', { seed: 5 }, 'seed must be an array of events'],
    ['a gap', { seed: [{ seq: 1, type: 'x', payload: {} }] }, 'not contiguous from seq 0'],
    ['a number', 5, 'could not be read'],
    ['a seed Proxy', { seed: new Proxy([], { get() { throw new Error('t'); } }) }, 'seed could not be read'],
  ]) {
    const name = `p${++n}`;
    runtime.registerProvider({ name, capabilities: {}, inheritsParentContext: false, prepareContinuable: () => value });
    await rejects(runtime.startActivation({ provider: name, parent: root, label: 'x', prompt: 'p', name }), 'INVALID_ARGUMENT', text);
  }
  await stillWorks(runtime, root);
});

test('never-settling providers, stores and hosts: abort cancels, dispose and drain still finish', async () => {
  const inner = new MemoryStore();
  const hang = { read: false };
  const store = {
    append: (id, events) => inner.append(id, events),
    read: (id, options) => (hang.read ? never() : inner.read(id, options)),
    readMany: (ids, options) => (hang.read ? never() : inner.readMany(ids, options)),
  };
  const { runtime, host } = setup({ store });
  const root = await runtime.openRoot({ sessionId: 'root' });
  const abortSoon = (reason) => {
    const c = new AbortController();
    setTimeout(() => c.abort(reason), 10);
    return c.signal;
  };
  // A provider whose prepareContinuable never settles.
  runtime.registerProvider({ name: 'slow-prep', capabilities: {}, inheritsParentContext: false, prepareContinuable: never });
  const e1 = await rejects(within(runtime.startActivation({ provider: 'slow-prep', parent: root, label: 'x', prompt: 'p', name: 'slow', signal: abortSoon('stop') }), 'prep'), 'CANCELLED');
  assert.equal(e1.cause, 'stop');
  // A provider whose start never settles; one whose run arrives after the abort is disposed.
  let late;
  let lateDisposed = 0;
  runtime.registerProvider({ name: 'slow-start', capabilities: {}, inheritsParentContext: false, start: () => new Promise((r) => (late = r)) });
  await rejects(within(runtime.startActivation({ provider: 'slow-start', parent: root, label: 'x', prompt: 'p', name: 'slow2', signal: abortSoon(new Error('bye')) }), 'start'), 'CANCELLED');
  late({ id: 'late-run', result: never(), dispose: () => lateDisposed++ });
  await tick();
  assert.equal(lateDisposed, 1, 'a run that arrives after the abort is disposed, never leaked');
  // The names were released.
  for (const name of ['slow', 'slow2']) assert.equal((await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name, delivery: 'caller' })).name, name);
  // Reads that never settle: listing, resolution, a cold target, fork's seed read.
  hang.read = true;
  await rejects(within(runtime.listDescendants('root', abortSoon('a')), 'list'), 'CANCELLED');
  await rejects(within(runtime.listDescendants('root', { signal: abortSoon('b') }), 'list'), 'CANCELLED');
  await rejects(within(runtime.resolveName(root, 'slow', abortSoon('c')), 'resolve'), 'CANCELLED');
  await rejects(within(runtime.sendMessage(root, 'cold-member', 'x', { signal: abortSoon('d') }), 'send'), 'CANCELLED');
  await rejects(within(runtime.startActivation({ provider: 'fork', parent: root, label: 'x', prompt: 'p', name: 'forky', signal: abortSoon('e') }), 'fork'), 'CANCELLED');
  // An already-aborted signal refuses at once.
  await rejects(runtime.listDescendants('root', AbortSignal.abort('now')), 'CANCELLED');
  await rejects(runtime.sendMessage(root, 'x', 'y', { signal: AbortSignal.abort('now') }), 'CANCELLED');
  await rejects(runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', signal: AbortSignal.abort('now') }), 'CANCELLED');
  hang.read = false;
  // A host turn that never settles: interrupt keeps the member, dispose and drain end it as aborted.
  host.hold('stuck');
  host.hold('stuck-2');
  const stuck = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name: 'stuck' });
  await within(stuck.dispose(), 'dispose');
  assert.equal((await stuck.result).stopReason, 'aborted');
  const stuck2 = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name: 'stuck-2' });
  runtime.interrupt(stuck2.childId, { kind: 'user' });
  await tick();
  assert.equal(stuck2.agent.live, true);
  assert.deepEqual((await runtime.listDescendants('root')).filter((r) => r.path === 'stuck-2').map((r) => r.activity), ['inactive']);
  await stillWorks(runtime, root);
  await within(runtime.drainDescendants([root]), 'drain');
  assert.equal(stuck2.agent.live, false);
});

test('a store that never answers cannot hold a cancelled start (childId check, the child log write)', async () => {
  // Regression: both waited for the store, ignoring the abort, and kept the name reserved.
  const inner = new MemoryStore();
  const hang = { read: false, append: false };
  const store = {
    append: (id, events) => (hang.append ? never() : inner.append(id, events)),
    read: (id, options) => (hang.read ? never() : inner.read(id, options)),
    readMany: (ids, options) => inner.readMany(ids, options),
  };
  const { runtime } = setup({ store });
  const root = await runtime.openRoot({ sessionId: 'root' });
  const abortSoon = (reason) => {
    const c = new AbortController();
    setTimeout(() => c.abort(reason), 10);
    return c.signal;
  };
  const spec = (name, signal, extra = {}) => ({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name, signal, ...extra });
  hang.read = true;
  const e1 = await rejects(within(runtime.startActivation(spec('checked', abortSoon('stop'), { childId: 'mine' })), 'childId check'), 'CANCELLED');
  assert.equal(e1.cause, 'stop');
  hang.read = false;
  hang.append = true;
  await rejects(within(runtime.startActivation(spec('written', abortSoon('stop'))), 'child log write'), 'CANCELLED');
  hang.append = false;
  // Nothing was published, and both names and the reserved id are free again.
  assert.deepEqual(await runtime.listDescendants('root'), []);
  assert.equal((await runtime.startActivation(spec('checked', undefined, { childId: 'mine', delivery: 'caller' }))).childId, 'mine');
  assert.equal((await runtime.startActivation(spec('written', undefined, { delivery: 'caller' }))).name, 'written');
  await stillWorks(runtime, root);
});

test('listeners that throw or re-enter: the runtime carries on', async () => {
  const { runtime } = setup();
  const seen = [];
  for (const type of ['subagent/start', 'subagent/end', 'subagent/catalog', 'subagent/provider-added', 'subagent/provider-removed']) {
    runtime.on(type, () => {
      throw new Error(`listener ${type}`);
    });
  }
  runtime.on('subagent/start', new Proxy(() => {}, { apply() { throw new Error('apply'); } }));
  const root = await runtime.openRoot({ sessionId: 'root' });
  // Listeners that call back into the runtime synchronously.
  runtime.on('subagent/start', (e) => {
    seen.push(runtime.namesOf(root).self, runtime.isResident(root, e.id) ? e.name : undefined, runtime.providerNames().length, runtime.toolsFor(root).length);
    runtime.registerProvider({ name: `late-${e.id}`, capabilities: {}, inheritsParentContext: false, start() {} })();
  });
  runtime.on('subagent/catalog', (e) => seen.push(`catalog ${e.entry.name}`));
  const off = runtime.registerProvider({ name: 'e', capabilities: {}, inheritsParentContext: false, start: () => ({ id: 'e1', result: { stopReason: 'completed' }, dispose() {} }) });
  off();
  await stillWorks(runtime, root, 'one');
  assert.deepEqual(seen, ['catalog one', 'lead', 'one', 2, 8]);
  // A throwing flush listener fails flush() but never a settlement.
  runtime.addFlushListener(() => {
    throw new Error('flush throws');
  });
  await rejects(runtime.flush('root'), 'PERSISTENCE_UNAVAILABLE', 'flush throws');
  const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name: 'two' });
  assert.equal((await within(a.result, 'result')).stopReason, 'completed');
  await within(a.dispose(), 'dispose');
  // A host whose release throws: dispose rejects ACTIVATION_TEARDOWN_FAILED, the result is kept.
  const releasing = { runTurn: () => ({ messages: ['kept'] }), release: () => { throw new Error('release failed'); } };
  const other = setup({ host: releasing }).runtime;
  const r2 = await other.openRoot({ sessionId: 'root' });
  const b = await other.startActivation({ provider: 'spawn', parent: r2, label: 'x', prompt: 'p', name: 'b', delivery: 'caller' });
  assert.deepEqual((await b.result).output, [{ type: 'text', text: 'kept' }]);
  await rejects(b.dispose(), 'ACTIVATION_TEARDOWN_FAILED', 'release failed');
  assert.deepEqual((await b.result).output, [{ type: 'text', text: 'kept' }]);
  await stillWorks(runtime, root, 'three');
});

test('an id source and a clock that call back into the runtime', async () => {
  // Regression: newId ran while admission held the runtime's state, so a call
  // back into the runtime from it trapped (RuntimeError: unreachable) and the
  // child silently got a random UUID instead of the host's id.
  let runtime;
  let n = 0;
  const inner = [];
  const reenter = () => {
    try {
      inner.push(runtime.providerNames().length, runtime.interrupt('nobody', { kind: 'user' }).signalled);
      runtime.listDescendants('root').catch(() => {});
    } catch (e) {
      inner.push(`threw ${e?.constructor?.name}: ${e?.message}`);
    }
  };
  runtime = new SubagentRuntime({
    store: new MemoryStore(),
    host: scriptedHost(),
    newId(kind) {
      reenter();
      return `${kind}-${++n}`;
    },
    now() {
      reenter();
      return 1_700_000_000_000;
    },
  });
  const root = await runtime.openRoot({ sessionId: 'root' });
  const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name: 'a' });
  assert.match(a.childId, /^session-\d+$/, 'the host id source minted the child id');
  assert.match(a.messageId, /^message-\d+$/);
  assert.ok(inner.length > 0);
  assert.deepEqual(inner.filter((x) => typeof x === 'string' && x.startsWith('threw')), []);
  await stillWorks(runtime, root);
});

test('a freed runtime: its handles, activations and tools answer UNAUTHORIZED', async () => {
  const { runtime, host } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  host.hold('held');
  const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', name: 'held' });
  const tools = runtime.toolsFor(root);
  runtime.free();
  assert.throws(() => a.agent.live, (e) => e instanceof SubagentError && e.code === 'UNAUTHORIZED' && /was freed/.test(e.message));
  assert.throws(() => a.dispose(), (e) => e.code === 'UNAUTHORIZED');
  assert.throws(() => tools[0].call({}), (e) => e.code === 'UNAUTHORIZED');
  // Another runtime in the same module is unaffected.
  const fresh = setup().runtime;
  await stillWorks(fresh, await fresh.openRoot({ sessionId: 'root' }));
});

// ---- authority attacks (issue 7 part 4) -------------------------------------------------------

test('authority attacks are refused with the right code', async () => {
  const { runtime, host } = setup();
  const OTHER = '0b7e2a4c-1d2f-4e5a-9b8c-000000000001'; // a UUID-like root: a Session id, never a name
  for (const name of ['a', 'a/b', 'c', 'z']) host.hold(name);
  const root = await runtime.openRoot({ sessionId: 'root' });
  const other = await runtime.openRoot({ sessionId: OTHER });
  const a = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'A', prompt: 'p', name: 'a' });
  const b = await runtime.startActivation({ provider: 'spawn', parent: a.agent, label: 'B', prompt: 'p', name: 'b' });
  const c = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'C', prompt: 'p', name: 'c' });
  const z = await runtime.startActivation({ provider: 'spawn', parent: other, label: 'Z', prompt: 'p', name: 'z' });
  const foreign = await setup().runtime.openRoot({ sessionId: 'root' });
  const spec = (parent) => ({ provider: 'spawn', parent, label: 'x', prompt: 'p' });
  const interrupt = (target, agent) => () => runtime.interrupt(target, { kind: 'ancestor', agent });
  const plain = { sessionId: 'root', name: 'lead', rootId: 'root', depth: 0 };

  // Message across trees.
  await rejects(runtime.sendMessage(other, a.childId, 'x'), 'UNAUTHORIZED', 'is not a member of this tree');
  await rejects(runtime.sendMessage(b.agent, OTHER, 'x'), 'UNAUTHORIZED', 'is not a member of this tree');
  await rejects(runtime.sendMessage(b.agent, z.childId, 'x'), 'UNAUTHORIZED', 'is not a member of this tree');
  await rejects(runtime.prompt(root, z.childId, 'x'), 'UNAUTHORIZED');
  // Interrupt by a non-ancestor, by a descendant, by itself, from another tree.
  throws(interrupt(b.childId, c.agent), 'UNAUTHORIZED', 'is not an ancestor');
  throws(interrupt(a.childId, b.agent), 'UNAUTHORIZED', 'is not an ancestor');
  throws(interrupt(b.childId, b.agent), 'UNAUTHORIZED', 'cannot interrupt itself');
  const cross = throws(interrupt(b.childId, other), 'UNAUTHORIZED');
  assert.ok(!cross.message.includes('a/b'), `a cross-tree refusal does not name the target: ${cross.message}`);
  // Forged handles.
  const forged = [
    ['Object.create(Agent.prototype)', Object.create(Agent.prototype)],
    ['a plain object with the same fields', plain],
    ['a prototype-swapped plain object', Object.setPrototypeOf({ ...plain }, Agent.prototype)],
    ['structuredClone(handle)', structuredClone(root)],
    ['JSON round trip', JSON.parse(JSON.stringify(root))],
    ['a Proxy over a live handle', new Proxy(root, {})],
    ['Object.create(handle)', Object.create(root)],
    ["another runtime's handle", foreign],
  ];
  for (const [label, fake] of forged) {
    throws(() => runtime.namesOf(fake), 'UNAUTHORIZED', undefined);
    await rejects(runtime.sendMessage(fake, a.childId, 'x'), 'UNAUTHORIZED');
    await rejects(runtime.startActivation(spec(fake)), 'UNAUTHORIZED');
    throws(interrupt(b.childId, fake), 'UNAUTHORIZED');
    throws(() => runtime.toolsFor(fake), 'UNAUTHORIZED');
    await rejects(runtime.drainDescendants([fake]), 'UNAUTHORIZED');
    assert.ok(label);
  }
  assert.throws(() => new Agent(), TypeError);
  // A Session id or a name used as a handle.
  for (const text of ['root', 'lead', 'a', a.childId]) {
    await rejects(runtime.sendMessage(text, c.childId, 'x'), 'UNAUTHORIZED');
    await rejects(runtime.startActivation(spec(text)), 'UNAUTHORIZED');
    throws(interrupt(b.childId, text), 'UNAUTHORIZED');
    throws(() => runtime.namesOf(text), 'UNAUTHORIZED');
    throws(() => runtime.rootOf(text), 'UNAUTHORIZED');
    throws(() => runtime.toolsFor(text), 'UNAUTHORIZED');
    await rejects(runtime.resolveName(text, 'lead'), 'UNAUTHORIZED');
    await rejects(runtime.closeRoot(text), 'UNAUTHORIZED');
    await rejects(runtime.drainDescendants([text]), 'UNAUTHORIZED');
    await rejects(runtime.waitForTreeWork(text), 'UNAUTHORIZED');
    await rejects(runtime.prompt(text, 'root', 'x'), 'UNAUTHORIZED');
  }
  // A disposed handle is dead, and so are tools taken before the disposal.
  const cTools = runtime.toolsFor(c.agent);
  const cHandle = c.agent;
  await c.dispose();
  assert.equal(cHandle.live, false);
  await rejects(runtime.sendMessage(cHandle, 'root', 'x'), 'UNAUTHORIZED', 'is dead');
  await rejects(runtime.startActivation(spec(cHandle)), 'UNAUTHORIZED');
  throws(interrupt(b.childId, cHandle), 'UNAUTHORIZED');
  throws(() => runtime.toolsFor(cHandle), 'UNAUTHORIZED');
  const deadCall = await cTools.find((t) => t.name === 'list_agents').call({});
  assert.equal(deadCall.isError, true);
  assert.match(deadCall.content, /is dead/);
  // A resumed member has a new handle; the old one stays dead.
  host.turns.length = 0;
  await runtime.sendMessage(root, c.childId, 'wake up');
  const held = await runtime.reopen(root, c.childId);
  const resumed = held.agent;
  assert.ok(resumed instanceof Agent && resumed.live);
  await rejects(runtime.sendMessage(cHandle, 'root', 'x'), 'UNAUTHORIZED');
  assert.equal(runtime.namesOf(resumed).self, 'c');
  held.release();
  // A closed root's handle is dead.
  const closing = await runtime.openRoot({ sessionId: 'closing' });
  await runtime.closeRoot(closing);
  assert.equal(closing.live, false);
  await rejects(runtime.startActivation(spec(closing)), 'UNAUTHORIZED');
  // A child's tools cannot reach outside its tree, by Session id or name.
  const bTools = runtime.toolsFor(b.agent);
  const tool = (name) => bTools.find((t) => t.name === name);
  const outside = [
    [tool('send_message'), { agent: z.childId, message: 'x' }, 'is not a member of this tree'],
    [tool('send_message'), { agent: OTHER, message: 'x' }, 'is not a member of this tree'],
    [tool('send_message'), { agent: 'z', message: 'x' }, 'no agent named "z" exists in this tree'],
    [tool('interrupt_agent'), { agent: z.childId }, 'is not a member of this tree'],
    // A Session id outside the tree is UNAUTHORIZED for every tool (one answer; issue 41).
    [tool('task_create'), { title: 't', owner: z.childId }, 'is not a member of this tree'],
    [tool('task_list'), { owner: 'z' }, 'no agent named "z" exists in this tree'],
  ];
  for (const [t, input, text] of outside) {
    const r = await t.call(input);
    assert.equal(r.isError, true, JSON.stringify(input));
    assert.ok(r.content.includes(text), r.content);
    assert.ok(!r.content.includes('"z" (') && !/\bz\b.*ancestor/.test(r.content), `no other-tree name leaks: ${r.content}`);
  }
  // Resolving a name in another tree finds nothing; a foreign Session id resolves only as text and authorizes nothing.
  await rejects(runtime.resolveName(b.agent, 'z'), 'UNKNOWN_AGENT');
  await rejects(runtime.resolveName(b.agent, 'a/z'), 'UNKNOWN_AGENT');
  assert.equal(await runtime.resolveName(b.agent, z.childId), z.childId);
  await rejects(runtime.sendMessage(b.agent, await runtime.resolveName(b.agent, z.childId), 'x'), 'UNAUTHORIZED');
  // Controls: the real authorities still work.
  runtime.interrupt(b.childId, { kind: 'ancestor', agent: root });
  runtime.interrupt(b.childId, { kind: 'ancestor', agent: a.agent });
  await runtime.sendMessage(b.agent, a.childId, 'cousins and creators are reachable');
  // External runs have no handle.
  // (A run's result settles by the time its dispose does: the SubagentRun contract.)
  runtime.registerProvider({
    name: 'ext',
    capabilities: {},
    inheritsParentContext: false,
    start: () => {
      let settle;
      const result = new Promise((resolve) => (settle = resolve));
      return { id: 'ext-1', result, dispose: () => settle({ output: [], stopReason: 'aborted' }) };
    },
  });
  const e = await runtime.startActivation({ provider: 'ext', parent: root, label: 'x', prompt: 'p', name: 'ext' });
  assert.equal(e.agent, undefined);
  await rejects(runtime.reopen(root, 'ext-1'), 'NOT_CONTINUABLE');
  await rejects(runtime.sendMessage(root, 'ext-1', 'x'), 'NOT_CONTINUABLE');
  await stillWorks(runtime, root);
  await runtime.drainDescendants([root, other]);
});
