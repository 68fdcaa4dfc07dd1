// Benchmarks of the live runtime through the bridge (issue 3): `make bench`
// runs this after the listing benchmark, as `node --expose-gc`.
//
// 1. Store writes per spawn, counted per session by a JS store wrapper.
// 2. Spawn of 1,000 children of one root: sequential (default and explicit
//    names), concurrent, children that each run one turn and settle, and
//    children whose turns wait (waitForInterrupt) while the others spawn.
// 3. Message delivery latency: `sendMessage` to an idle member until the JS
//    host's `runTurn` is called (and until the send resolves).
// 4. JS heap (and wasm linear memory) per resident member, turns held open.
// 5. A 10,000-member cold restart: the tree built through the bridge (fan-outs
//    10/9/10/10, depth 4), drained, then a fresh runtime over the same store:
//    open the root and list; resume one depth-4 member by a message (by
//    Session id, and by full name through the send_message tool).
//
// The host is a JS object whose turns complete at once, or (held) wait until
// aborted. Every figure is a median of timed runs after warm-up; setup is
// outside the timing. BENCH_RUNS (default 9) sets the number of timed runs.

import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { jsArrayStore, loadPackage } from './load.mjs';
import { record } from './results.mjs';

const { lib, from, wasmMemory } = await loadPackage();
const { SubagentRuntime, MemoryStore, listDescendants } = lib;

const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const gc = typeof globalThis.gc === 'function' ? globalThis.gc : null;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.round((s.length - 1) * p)];
};
const group = (x) => Math.round(x).toLocaleString('en-US');
const fmt = (x, d = 3) => x.toFixed(d);
const macrotask = () => new Promise((r) => setImmediate(r));

/** Times `run(await setup())`: `warmup` untimed, then `runs` timed; prints the median. */
async function bench(label, op, ops, { warmup = 1, runs = RUNS, setup, run, teardown }) {
  // Between runs, a macrotask after a collection: the glue frees a dropped
  // runtime (and its wasm state) from a FinalizationRegistry callback, which
  // never runs while the loop only awaits promises. Without it every run's
  // runtime stayed allocated and later rows ran in a heap of 40 dead trees
  // (1,000 concurrent spawns: ~1.4 s instead of ~0.15 s).
  const settle = async (out) => {
    await teardown?.(out);
    gc?.();
    await macrotask();
  };
  for (let i = 0; i < warmup; i++) {
    const s = await setup();
    await settle(await run(s));
  }
  const times = [];
  for (let i = 0; i < runs; i++) {
    const s = await setup();
    const t0 = performance.now();
    const out = await run(s);
    times.push(performance.now() - t0);
    await settle(out);
  }
  const ms = median(times);
  const usPerOp = (ms * 1e3) / ops;
  console.log(
    `${label.padEnd(72)} ${fmt(ms).padStart(10)} ms/run ${fmt(usPerOp, 2).padStart(10)} µs/${op.padEnd(7)} ${group(1e6 / usPerOp).padStart(10)}/s` +
      `   (median of ${runs}; min ${fmt(Math.min(...times))}, max ${fmt(Math.max(...times))} ms)`,
  );
  return ms;
}

// ---------------------------------------------------------------------------
// The host and helpers.

const NEVER = new Promise(() => {});

/** Turns of held names (or of every child with `holdChildren`) wait until their gate opens or they are aborted. */
function benchHost({ holdChildren = false } = {}) {
  const gates = new Map();
  const started = new Map(); // name -> time of the latest runTurn call
  let turns = 0;
  return {
    started,
    get turns() {
      return turns;
    },
    hold(name) {
      let open;
      const gate = new Promise((r) => (open = r));
      gates.set(name, { gate, open });
    },
    open(name) {
      gates.get(name)?.open();
      gates.delete(name);
    },
    runTurn(turn) {
      const now = performance.now();
      turns++;
      const name = turn.name;
      const gate = gates.get(name)?.gate ?? (holdChildren && turn.parentName !== undefined ? NEVER : null);
      if (gate === null) {
        started.set(name, now);
        return { stopReason: 'completed', messages: ['done'] };
      }
      const signal = turn.signal;
      return new Promise((resolve) => {
        signal.addEventListener('abort', () => resolve({ stopReason: 'aborted' }), { once: true });
        gate.then(() => resolve({ stopReason: 'completed', messages: ['done'] }));
      });
    },
  };
}

let runtimes = 0;
function runtime(store, host, options = {}) {
  const prefix = `b${++runtimes}`;
  let n = 0;
  return new SubagentRuntime({ store, host, newId: (kind) => `${prefix}-${kind[0]}${++n}`, ...options });
}

const spec = (parent, name) => ({ provider: 'spawn', parent, label: 'bench task', prompt: 'please do it', name });

/** A JS store over the package MemoryStore that counts appends per session. */
function countingStore(inner = new MemoryStore()) {
  let appends = new Map();
  return {
    take() {
      const out = appends;
      appends = new Map();
      return out;
    },
    append(id, events) {
      const entry = appends.get(id) ?? { calls: 0, events: 0, types: [] };
      entry.calls++;
      entry.events += events.length;
      entry.types.push(...events.map((e) => e.type));
      appends.set(id, entry);
      return inner.append(id, events);
    },
    read: (id, options) => inner.read(id, options),
    readMany: (ids, options) => inner.readMany(ids, options),
  };
}

function heap() {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

// A child process measuring memory (section 4) does only that.
if (process.argv[2] === '--memory-child') {
  const out = await residentMemory(Number(process.argv[3]), process.argv[4]);
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

console.log(`subagent-tree runtime benchmarks through the bridge (node ${process.version}, ${from})`);
console.log(`heap figures ${gc ? 'after forced GC (--expose-gc)' : 'WITHOUT forced GC (run with --expose-gc for stable figures)'}\n`);

// ---------------------------------------------------------------------------
// 1. Store writes per spawn.

{
  console.log('== store writes per spawn (JS store wrapper, appends counted per session)');
  const store = countingStore();
  const rt = runtime(store, benchHost({ holdChildren: true }), { capacity: 200 });
  const root = await rt.openRoot({ sessionId: 'root' });
  store.take();
  const SPAWNS = 100;
  let first;
  for (let i = 0; i < SPAWNS; i++) {
    const a = await rt.startActivation(spec(root, `w-${i}`));
    const writes = store.take();
    // The child's first turn may already have recorded its start (a write of its own, not the spawn's).
    const turn = writes.get(a.childId)?.types.at(-1) === 'turn/start' ? 1 : 0;
    const written = writes.get(a.childId);
    const child = written && { calls: written.calls - turn, events: written.events - turn, types: written.types.slice(0, written.types.length - turn) };
    const parent = writes.get('root');
    const others = [...writes.keys()].filter((k) => k !== 'root' && k !== a.childId);
    if (child?.calls !== 1 || parent?.calls !== 1 || parent.types.join() !== 'subagent/catalog' || others.length !== 0) {
      throw new Error(`unexpected writes for spawn ${i}: ${JSON.stringify([...writes])}`);
    }
    first ??= { child, parent };
  }
  const { child, parent } = first;
  console.log(
    `${'writes: spawn through the bridge'.padEnd(72)} ${child.calls + parent.calls} appends per spawn: child log ${child.calls} (${child.events} events: ${child.types.join(', ')}), ` +
      `parent ${parent.calls} (${parent.types.join(', ')}); other sessions 0 (checked on each of ${SPAWNS} spawns)`,
  );
  await rt.drainDescendants([root]);
  console.log();
}

// ---------------------------------------------------------------------------
// 2. Spawn of 1,000 children.

{
  console.log('== spawn 1,000 children of one root through the bridge (capacity 2,000; package MemoryStore)');
  const N = 1_000;
  const setupHeld = async () => {
    const rt = runtime(new MemoryStore(), benchHost({ holdChildren: true }), { capacity: 2 * N });
    return { rt, root: await rt.openRoot({ sessionId: 'root' }) };
  };
  const drain = async ({ rt, root }) => rt.drainDescendants([root]);
  const spawnMs = await bench('spawn: 1,000 children, sequential, default names (agent-N)', 'child', N, {
    setup: setupHeld,
    async run(s) {
      for (let i = 0; i < N; i++) await s.rt.startActivation(spec(s.root));
      return s;
    },
    teardown: drain,
  });
  record('spawn.bridge.us', (spawnMs * 1e3) / N);
  await bench('spawn: 1,000 children, sequential, explicit names', 'child', N, {
    setup: setupHeld,
    async run(s) {
      for (let i = 0; i < N; i++) await s.rt.startActivation(spec(s.root, `worker-${i}`));
      return s;
    },
    teardown: drain,
  });
  await bench('spawn: 1,000 children, all started concurrently, default names', 'child', N, {
    setup: setupHeld,
    async run(s) {
      const all = await Promise.all(Array.from({ length: N }, () => s.rt.startActivation(spec(s.root))));
      if (new Set(all.map((a) => a.name)).size !== N) throw new Error('names are not distinct');
      return s;
    },
    teardown: drain,
  });
  // Each child's turn blocks in `turn.waitForInterrupt()` until the rest of
  // the tree is quiet too: every change while others spawn wakes every waiter
  // (was 49 s for 1,000, each woken waiter scanning every member).
  await bench('spawn: 1,000 children whose turns wait (waitForInterrupt) until the tree is quiet', 'child', N, {
    async setup() {
      const host = {
        async runTurn(turn) {
          if (turn.name === 'lead') return { messages: ['ok'] };
          const end = await turn.waitForInterrupt();
          return { stopReason: end === 'aborted' ? 'aborted' : 'completed' };
        },
      };
      const rt = runtime(new MemoryStore(), host, { capacity: 2 * N });
      return { rt, root: await rt.openRoot({ sessionId: 'root' }) };
    },
    async run(s) {
      for (let i = 0; i < N; i++) await s.rt.startActivation(spec(s.root));
      await s.rt.waitForQuiescence(s.root);
      return s;
    },
    teardown: drain,
  });
  await bench('spawn: 1,000 children that each run a turn and settle (root notified)', 'child', N, {
    async setup() {
      const host = benchHost();
      const rt = runtime(new MemoryStore(), host, { capacity: 2 * N });
      return { rt, host, root: await rt.openRoot({ sessionId: 'root' }) };
    },
    async run(s) {
      for (let i = 0; i < N; i++) await s.rt.startActivation(spec(s.root));
      while (await s.rt.waitForTreeWork(s.root)) await macrotask();
      // Every child's turn, and the root's on the notices (one root turn may take several).
      if (s.host.turns <= N) throw new Error(`only ${s.host.turns} turns ran`);
      return s;
    },
  });
  console.log();
}

// ---------------------------------------------------------------------------
// 3. Message delivery latency.

{
  console.log('== message delivery latency through the bridge: sendMessage to an idle member until host.runTurn is called');
  const host = benchHost();
  const rt = runtime(new MemoryStore(), host, { maxDepth: 2 });
  const root = await rt.openRoot({ sessionId: 'root' });
  host.hold('worker');
  host.hold('worker/keeper');
  const worker = await rt.startActivation(spec(root, 'worker'));
  const keeper = await rt.startActivation(spec(worker.agent, 'keeper'));
  host.open('worker');
  await macrotask();
  const measure = async (sender, targetId, targetName, samples) => {
    const toTurn = [];
    const toAccept = [];
    for (let i = 0; i < samples; i++) {
      const before = host.turns;
      const t0 = performance.now();
      await rt.sendMessage(sender, targetId, 'ping');
      toAccept.push(performance.now() - t0);
      await macrotask();
      if (host.turns !== before + 1) throw new Error(`expected one new turn, got ${host.turns - before}`);
      toTurn.push(host.started.get(targetName) - t0);
    }
    return { toTurn, toAccept };
  };
  const report = (label, { toTurn, toAccept }) =>
    console.log(
      `${label.padEnd(72)} to runTurn: median ${fmt(median(toTurn) * 1e3, 1)} µs, p90 ${fmt(pct(toTurn, 0.9) * 1e3, 1)}, p99 ${fmt(pct(toTurn, 0.99) * 1e3, 1)}, ` +
        `min ${fmt(Math.min(...toTurn) * 1e3, 1)} | send resolved: median ${fmt(median(toAccept) * 1e3, 1)} µs  (${toTurn.length} samples)`,
    );
  await measure(root, worker.childId, 'worker', 200);
  const lead = await measure(root, worker.childId, 'worker', 2_000);
  report('message: lead -> idle child worker', lead);
  record('message.bridge.us', median(lead.toTurn) * 1e3);
  report('message: worker/keeper (running) -> idle root lead', await measure(keeper.agent, 'root', 'lead', 2_000));
  await rt.drainDescendants([root]);
  console.log();
}

// ---------------------------------------------------------------------------
// 4. Memory per resident member: each measurement in a fresh `node --expose-gc`
//    process, since wasm linear memory only grows (a previous case's peak would hide it).

async function residentMemory(n, kind) {
  const store = kind === 'js' ? jsArrayStore() : new MemoryStore();
  const rt = runtime(store, benchHost({ holdChildren: true }), { capacity: n + 1 });
  const root = await rt.openRoot({ sessionId: 'root' });
  await rt.startActivation(spec(root, 'warm-up')); // first-call allocations out of the figure
  await macrotask();
  const heap0 = heap();
  const wasm0 = wasmMemory();
  const held = [];
  for (let i = 0; i < n; i++) held.push(await rt.startActivation(spec(root, `worker-${i}`)));
  await macrotask();
  const heap1 = heap();
  const wasm1 = wasmMemory();
  return { heapPer: (heap1 - heap0) / n, wasmPer: (wasm1 - wasm0) / n, wasmTotal: wasm1, held: held.length };
}

function memoryInChild(n, kind) {
  const args = ['--expose-gc', fileURLToPath(import.meta.url), '--memory-child', String(n), kind];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 }));
}


{
  console.log('== memory per resident member through the bridge (turns held open by the JS host; each in a fresh process)');
  for (const [n, kind, label] of [
    [1_000, 'memory', 'package MemoryStore'],
    [1_000, 'js', 'plain JS store (logs as JS arrays)'],
    [10_000, 'memory', 'package MemoryStore'],
  ]) {
    const { heapPer, wasmPer, wasmTotal } = memoryInChild(n, kind);
    console.log(
      `${`memory: ${group(n)} resident members, ${label}`.padEnd(72)} JS heap ${group(heapPer)} bytes/member; ` +
        `wasm linear memory +${group(wasmPer)} bytes/member (page-granular; ${fmt(wasmTotal / 2 ** 20, 1)} MiB in all)`,
    );
  }
  console.log(`${''.padEnd(72)} (JS heap: the activation, its result/disposed promises, the Agent handle, the turn object and the host's pending promise;`);
  console.log(`${''.padEnd(72)}  wasm: the core's members and, with MemoryStore, the logs)`);
  console.log();
}

// ---------------------------------------------------------------------------
// 5. A 10,000-member cold restart.

{
  console.log('== 10,000-member cold restart through the bridge (built through the bridge, fan-outs 10/9/10/10, depth 4; package MemoryStore)');
  const store = new MemoryStore();
  const host = benchHost({ holdChildren: true });
  const rt = runtime(store, host, { capacity: 10_000, maxDepth: 4 });
  const root = await rt.openRoot({ sessionId: 'root' });
  const t0 = performance.now();
  let level = [root];
  let deepest;
  for (const fanout of [10, 9, 10, 10]) {
    const next = [];
    for (const parent of level) {
      for (let i = 0; i < fanout; i++) {
        const a = await rt.startActivation(spec(parent));
        next.push(a.agent);
        deepest = a;
      }
    }
    level = next;
  }
  const built = performance.now() - t0;
  await macrotask();
  const t1 = performance.now();
  await rt.drainDescendants([root]);
  const drained = performance.now() - t1;
  await rt.closeRoot(root);
  level = null;
  const deepId = deepest.childId;
  const deepName = deepest.name;
  console.log(
    `${'restart: setup'.padEnd(72)} built 10,000 resident members in ${fmt(built, 1)} ms (${fmt((built * 1e3) / 10_000, 1)} µs/member); drained child-first in ${fmt(drained, 1)} ms`,
  );

  const fresh = () => ({ host: benchHost(), store });
  await bench('restart: fresh runtime, open root + list 10,000 members', 'member', 10_000, {
    setup: fresh,
    async run({ host }) {
      const rt2 = runtime(store, host, { capacity: 10_000, maxDepth: 4 });
      await rt2.openRoot({ sessionId: 'root' });
      const rows = await rt2.listDescendants('root');
      if (rows.length !== 10_000) throw new Error(`listed ${rows.length}`);
    },
  });

  await bench('restart: for comparison, listDescendants(store, root) with no runtime', 'member', 10_000, {
    setup: () => null,
    async run() {
      const rows = await listDescendants(store, 'root');
      if (rows.length !== 10_000) throw new Error(`listed ${rows.length}`);
    },
  });

  // `settled`: the open-time recovery scan (it lists the tree and reads every
  // member's log) has ended before the clock starts, so the row times the
  // resume itself; else the message races that scan, as a first message does.
  const withRoot = async (settled) => {
    const host2 = benchHost();
    const rt2 = runtime(store, host2, { capacity: 10_000, maxDepth: 4 });
    const root = await rt2.openRoot({ sessionId: 'root' });
    if (settled) await rt2.waitForQuiescence(root);
    return { host: host2, rt: rt2, root };
  };
  const resumeRuns = async (label, send, settled = true) => {
    const toTurn = [];
    const toAccept = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const s = await withRoot(settled);
      const t0 = performance.now();
      await send(s);
      const accepted = performance.now() - t0;
      while (!s.host.started.has(deepName)) await macrotask();
      if (i > 0) {
        toTurn.push(s.host.started.get(deepName) - t0);
        toAccept.push(accepted);
      }
      while (await s.rt.waitForTreeWork(s.root)) await macrotask();
    }
    console.log(
      `${label.padEnd(72)} to runTurn: median ${fmt(median(toTurn))} ms (min ${fmt(Math.min(...toTurn))}, max ${fmt(Math.max(...toTurn))}); ` +
        `call resolved: median ${fmt(median(toAccept))} ms  (${toTurn.length} runs)`,
    );
  };
  await resumeRuns(
    `restart: resume ${deepName} (depth 4) by Session id, right after open`,
    ({ rt: rt2, root: r }) => rt2.sendMessage(r, deepId, 'one more thing'),
    false,
  );
  await resumeRuns(`restart: resume ${deepName} (depth 4) by Session id, after open-time recovery`, ({ rt: rt2, root: r }) =>
    rt2.sendMessage(r, deepId, 'one more thing'),
  );
  await resumeRuns('restart: resume it by full name via the send_message tool, after recovery', async ({ rt: rt2, root: r }) => {
    const tool = rt2.toolsFor(r).find((t) => t.name === 'send_message');
    const result = await tool.call({ agent: deepName, message: 'one more thing' });
    if (result.isError) throw new Error(result.content);
  });
  console.log();
}
