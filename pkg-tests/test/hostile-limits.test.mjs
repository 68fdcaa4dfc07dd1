// Issue 14, items 1, 5 and 6 from JS: the documented limits (LIMIT_EXCEEDED
// naming the limit) with the attack sizes of the issue, strings checked before
// they are copied into wasm, no root wedged by a refused call, allocation
// bounded, well-formed ids only, and children's directories confined to the
// root's. Each test ends with a normal call proving the module still works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, listDescendants, decodeCatalogPayload } from 'subagent-tree';
import { rejects, throws } from './helpers.mjs';

/** A host that answers every turn with the text it got, and records the turns. */
function echoHost() {
  const turns = [];
  return {
    turns,
    async runTurn(turn) {
      turns.push({ name: turn.name, cwd: turn.cwd, text: turn.inputText.join('\n').slice(0, 100) });
      return { stopReason: 'completed', messages: [`done ${turn.name}`] };
    },
  };
}

function setup(options = {}) {
  const host = options.host ?? echoHost();
  let n = 0;
  const newId = (kind) => `${kind === 'session' ? '5e55' : '3e55'}0000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`;
  const runtime = new SubagentRuntime({ store: new MemoryStore(), maxDepth: 3, newId, ...options, host });
  return { runtime, host };
}

/** The root still takes a prompt and its turn runs (nothing wedged it). */
async function rootStillWorks(runtime, host, root) {
  const before = host.turns.length;
  await runtime.prompt(root, root.sessionId, 'still there?');
  for (let i = 0; i < 200 && host.turns.length === before; i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(host.turns.length > before, 'the root ran a turn after the refusal');
  const kid = await runtime.startActivation({ provider: 'spawn', parent: root, label: 'ok', prompt: 'p', delivery: 'caller' });
  assert.equal((await kid.result).stopReason, 'completed');
}

test("a 540 MB (UTF-8) prompt of '€' is refused with LIMIT_EXCEEDED before it is copied; the root keeps working", async () => {
  const { runtime, host } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const euro = '€'.repeat(1.8e8); // a legal JS string: 180 M code units, 540 MB as UTF-8
  const e = await rejects(runtime.prompt(root, root.sessionId, euro), 'LIMIT_EXCEEDED', 'messageBytes');
  assert.match(e.message, /180000000 characters, over the limit messageBytes \(1048576 bytes\)/);
  // Each entry point content comes through, inside blocks too.
  await rejects(runtime.prompt(root, root.sessionId, [{ type: 'text', text: euro }]), 'LIMIT_EXCEEDED', 'content[0].text');
  await rejects(runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: euro }), 'LIMIT_EXCEEDED', 'promptBytes');
  await rejects(runtime.startActivation({ provider: 'spawn', parent: root, label: euro, prompt: 'p' }), 'LIMIT_EXCEEDED');
  await rejects(runtime.sendMessage(root, '5e550000-0000-4000-8000-000000000099', euro), 'LIMIT_EXCEEDED', 'messageBytes');
  await rootStillWorks(runtime, host, root);
});

test('thirteen 256 Mi-character prompts are each refused without growing the heap', async () => {
  const { runtime, host } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const big = 'x'.repeat(256 * 2 ** 20);
  const heap = () => process.memoryUsage().arrayBuffers; // the wasm memory is an ArrayBuffer
  const start = heap();
  for (let i = 0; i < 13; i++) {
    await rejects(runtime.prompt(root, root.sessionId, big), 'LIMIT_EXCEEDED', 'messageBytes');
  }
  assert.ok(heap() - start < 64 * 2 ** 20, `the heap grew by ${heap() - start} bytes`);
  await rootStillWorks(runtime, host, root);
});

test('content blocks, labels, nesting and width are bounded; limits are configurable within their ranges', async () => {
  const { runtime, host } = setup();
  const root = await runtime.openRoot({ sessionId: 'root' });
  const blocks = (n) => Array.from({ length: n }, () => ({ type: 'text', text: 'a' }));
  await rejects(runtime.prompt(root, root.sessionId, blocks(257)), 'LIMIT_EXCEEDED', 'the limit contentBlocks is 256');
  await runtime.prompt(root, root.sessionId, blocks(256));
  await rejects(runtime.startActivation({ provider: 'spawn', parent: root, label: 'l'.repeat(1025), prompt: 'p' }), 'LIMIT_EXCEEDED', 'labelBytes is 1024');
  // A million keys or items: refused by the byte budget before the heap holds them.
  const wide = { type: 'text', text: 'x' };
  for (let i = 0; i < 1_100_000; i++) wide[`k${i}`] = 0;
  await rejects(runtime.prompt(root, root.sessionId, [wide]), 'LIMIT_EXCEEDED', 'messageBytes');
  await rejects(runtime.prompt(root, root.sessionId, new Array(2_000_000).fill({ type: 'text', text: '' })), 'LIMIT_EXCEEDED');
  let deep = { type: 'text', text: 'x' };
  for (let i = 0; i < 100_000; i++) deep = { type: 'nest', inner: deep };
  await rejects(runtime.prompt(root, root.sessionId, [deep]), 'INVALID_ARGUMENT', 'nested more than 128 levels');
  await rootStillWorks(runtime, host, root);

  const small = setup({ limits: { messageBytes: 2048, contentBlocks: 2 } });
  const r2 = await small.runtime.openRoot({ sessionId: 'root' });
  await rejects(small.runtime.prompt(r2, 'root', 'z'.repeat(3000)), 'LIMIT_EXCEEDED', 'messageBytes (2048 bytes)');
  await rejects(small.runtime.prompt(r2, 'root', blocks(3)), 'LIMIT_EXCEEDED', 'contentBlocks is 2');
  await small.runtime.prompt(r2, 'root', 'z'.repeat(1000));
  // A limit set out of its range is a bad option (INVALID_ARGUMENT naming it), not a value over a limit.
  throws(() => setup({ limits: { promptBytes: 64 << 20 } }), 'INVALID_ARGUMENT', 'limits.promptBytes must be from 1024 to 16777216');
  throws(() => setup({ limits: { promptBytes: 1 } }), 'INVALID_ARGUMENT', 'limits.promptBytes must be from 1024 to 16777216, not 1');
  throws(() => setup({ limits: { contentBlocks: 0 } }), 'INVALID_ARGUMENT', 'limits.contentBlocks');
  throws(() => setup({ limits: { labelBytes: 'big' } }), 'INVALID_ARGUMENT');
  // A fixed limit, or a name that is no limit, is a mistake to report, not an option to drop (issue 55).
  throws(() => setup({ limits: { idBytes: 1 << 20 } }), 'INVALID_ARGUMENT', 'options.limits.idBytes is fixed at 256 bytes: it cannot be set');
  throws(() => setup({ limits: { cwdBytes: 1 } }), 'INVALID_ARGUMENT', 'options.limits.cwdBytes is fixed at 4 KiB');
  throws(() => setup({ limits: { promtBytes: 4096 } }), 'INVALID_ARGUMENT', 'options.limits has no limit named "promtBytes"; the limits are labelBytes, promptBytes');
  throws(() => setup({ limits: new Proxy({}, { ownKeys() { throw new Error('no keys'); } }) }), 'INVALID_ARGUMENT', 'options.limits could not be read');
});

test('tree depth: maxDepth is capped at 64 for the runtime and for an activation', async () => {
  throws(() => setup({ maxDepth: 1e6 }), 'LIMIT_EXCEEDED', 'the limit maxDepth is 64');
  throws(() => setup({ maxDepth: 65 }), 'LIMIT_EXCEEDED');
  const { runtime, host } = setup({ maxDepth: 64 });
  const root = await runtime.openRoot({ sessionId: 'root' });
  const provider = {
    name: 'depthy',
    capabilities: { depthLimit: true },
    inheritsParentContext: false,
    start: () => ({ id: `run-${Math.random()}`, result: { stopReason: 'completed', output: [] }, dispose() {} }),
  };
  runtime.registerProvider(provider);
  await rejects(runtime.startActivation({ provider: 'depthy', parent: root, label: 'x', prompt: 'p', maxDepth: 1e6 }), 'LIMIT_EXCEEDED', 'maxDepth');
  const ok = await runtime.startActivation({ provider: 'depthy', parent: root, label: 'x', prompt: 'p', maxDepth: 64 });
  await ok.result;
  await rootStillWorks(runtime, host, root);
});

test('stores and hosts answering oversized data get coded errors, and the root is not wedged', async () => {
  const euro = '€'.repeat(1.8e8);
  // A store whose read answers a 540 MB payload, a 540 MB type, or throws an Error with a 540 MB message.
  const answers = {
    payload: [{ seq: 0, type: 'subagent/catalog', payload: { version: 0, childId: euro, childCreatedAt: 1, mode: 'one-shot' } }],
    type: [{ seq: 0, type: euro, payload: null }],
  };
  for (const [what, events] of Object.entries(answers)) {
    const store = { append: async () => {}, read: async () => events };
    const e = await listDescendants(store, 'root').then(() => null, (x) => x);
    assert.ok(e && ['LIMIT_EXCEEDED', 'CORRUPT_CATALOG'].includes(e.code), `${what}: ${e?.code} ${e?.message}`);
    assert.ok(e.message.length < 400, e.message.length);
  }
  const thrower = { append: async () => {}, read: async () => { throw new Error(euro); } };
  const e = await listDescendants(thrower, 'root').then(() => null, (x) => x);
  assert.equal(e.code, 'PERSISTENCE_UNAVAILABLE');
  assert.ok(e.message.length < 500, e.message.length);
  assert.throws(() => decodeCatalogPayload({ version: 0, childId: euro, childCreatedAt: 1, mode: 'one-shot' }), (x) => x.code === 'LIMIT_EXCEEDED');

  // A host whose turn outcome holds 540 MB: that turn ends with an error, the next one runs.
  let calls = 0;
  const host = {
    turns: [],
    async runTurn(turn) {
      calls++;
      this.turns.push({ name: turn.name });
      return calls === 1 ? { stopReason: 'completed', messages: [euro] } : { stopReason: 'completed', messages: ['fine'] };
    },
  };
  const { runtime } = setup({ host });
  const root = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(root, 'root', 'first');
  await rootStillWorks(runtime, host, root);
});

test('ids must be well-formed Unicode: lone surrogates are refused wherever ids enter', async () => {
  const { runtime, host } = setup();
  await rejects(runtime.openRoot({ sessionId: 'v-\uD800' }), 'INVALID_ARGUMENT', 'well-formed');
  await rejects(runtime.openRoot({ sessionId: 'v-\uDC00' }), 'INVALID_ARGUMENT', 'well-formed');
  const root = await runtime.openRoot({ sessionId: 'v-\uD83D\uDE00' }); // a surrogate pair is fine
  assert.equal(root.sessionId, 'v-😀');
  await rejects(runtime.prompt(root, 'x-\uD800', 'hi'), 'INVALID_ARGUMENT', 'well-formed');
  await rejects(runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', childId: 'c-\uDFFF' }), 'INVALID_ARGUMENT', 'well-formed');
  await rejects(runtime.listDescendants('r-\uD800'), 'INVALID_ARGUMENT');
  await rejects(runtime.reopen(root, 'a-\uDC00'), 'INVALID_ARGUMENT', 'well-formed');
  // The embedded store: two ill-formed ids can never alias one log.
  const store = new MemoryStore();
  await rejects(store.append('v-\uD800', []), 'INVALID_ARGUMENT');
  await rejects(store.read('v-\uDC00'), 'INVALID_ARGUMENT');
  // Stored data holding an ill-formed child id is one corrupt row, never read lossily: its id is the
  // empty id (no Session has it), so it cannot alias the log of 'k-\uFFFD' or of any other member.
  const entry = (childId, name) => ({ version: 3, childId, childCreatedAt: 1, mode: 'external', name });
  const bad = { append: async () => {}, read: async () => [
    { seq: 0, type: 'subagent/catalog', payload: entry('k-\uD800', 'k') },
    { seq: 1, type: 'subagent/catalog', payload: entry('k-\uFFFD', 'j') },
  ] };
  const rows = await listDescendants(bad, 'root');
  assert.equal(rows.length, 2);
  assert.deepEqual({ ...rows[0], detail: undefined }, { kind: 'diagnostic', id: '', parentId: 'root', depth: 1, reason: 'corrupt', seq: 0, detail: undefined });
  assert.match(rows[0].detail, /^event 0: damaged in the store: payload\.childId is not well-formed Unicode/);
  assert.equal(rows[1].id, 'k-\uFFFD');
  assert.equal(rows[1].kind, 'child');
  await rootStillWorks(runtime, host, root);
});

test("children's cwd is confined to the root's directory by default; escapes and NUL are refused", async () => {
  const { runtime, host } = setup({ defaultCwd: '/work/app' });
  const root = await runtime.openRoot({ sessionId: 'root' });
  const spawn = (cwd) => runtime.startActivation({ provider: 'spawn', parent: root, label: 'x', prompt: 'p', cwd, delivery: 'caller' });
  for (const escape of ['/', '../../..', '/etc', '..', '/work/application', '/work/app/../etc']) {
    await rejects(spawn(escape), 'UNAUTHORIZED', "outside the root's directory \"/work/app\"");
  }
  await rejects(spawn('src\0/etc'), 'INVALID_ARGUMENT', 'NUL');
  // `..\..\..` would climb on a Windows host (issue 55): a confined child's cwd has no backslash.
  await rejects(spawn('..\\..\\..'), 'INVALID_ARGUMENT', 'backslash');
  await rejects(runtime.openRoot({ sessionId: 'r2', cwd: '/tmp\0x' }), 'INVALID_ARGUMENT', 'NUL');
  await rejects(spawn('d'.repeat(5000)), 'LIMIT_EXCEEDED', 'cwdBytes');
  const inside = await spawn('src/../lib');
  await inside.result;
  assert.equal(host.turns.find((t) => t.cwd === '/work/app/lib')?.cwd, '/work/app/lib');
  // The model's way in: spawn_agent with an escaping cwd is a tool error the model reads.
  const tools = runtime.toolsFor(root);
  const spawnTool = tools.find((t) => t.name === 'spawn_agent');
  const out = await spawnTool.call({ name: 'escaper', description: 'x', prompt: 'p', cwd: '/etc' });
  assert.equal(out.isError, true);
  assert.match(out.content, /outside the root's directory/);
  // Opting out: escapes resolve, NUL is still refused.
  const open = setup({ defaultCwd: '/work/app', confineCwd: false });
  const r3 = await open.runtime.openRoot({ sessionId: 'root' });
  const out3 = await open.runtime.startActivation({ provider: 'spawn', parent: r3, label: 'x', prompt: 'p', cwd: '/etc', delivery: 'caller' });
  await out3.result;
  assert.ok(open.host.turns.some((t) => t.cwd === '/etc'));
  await rejects(open.runtime.startActivation({ provider: 'spawn', parent: r3, label: 'x', prompt: 'p', cwd: '\0' }), 'INVALID_ARGUMENT');
  // A value that is not a boolean is refused, not read as "confine" (issue 42).
  throws(() => setup({ confineCwd: 'no' }), 'INVALID_ARGUMENT', 'options.confineCwd must be a boolean');
  await rootStillWorks(runtime, host, root);
});

test('a tree written under a larger eventPayloadBytes is reopened by a default runtime: reads honour what was durably written (issue 55)', async () => {
  const store = new MemoryStore();
  const big = 'b'.repeat(6 << 20);
  const writer = new SubagentRuntime({ store, host: { runTurn: async () => ({ messages: [big] }) }, limits: { eventPayloadBytes: 8 << 20 } });
  const lead = await writer.openRoot({ sessionId: 'root' });
  const { answer } = await writer.ask(lead, 'lead', 'Write a lot.');
  assert.equal((await answer).stopReason, 'completed');
  await writer.closeRoot(lead);
  // A runtime with the default limits (eventPayloadBytes 4 MiB) opens it, lists it and runs it on.
  const reader = new SubagentRuntime({ store, host: { runTurn: async (turn) => ({ messages: [`first: ${turn.first}`] }) } });
  const again = await reader.openRoot({ sessionId: 'root' });
  const shown = (await reader.listTree('root')).root.lastTurn.output;
  assert.ok(shown.startsWith('bbb') && shown.endsWith('…') && Buffer.byteLength(shown) <= 4096, 'the latest output, cut to 4 KiB for the listing');
  const next = await reader.ask(again, 'lead', 'And now a little.');
  assert.deepEqual((await next.answer).output, [{ type: 'text', text: 'first: false' }]);
});
