// Cost flat in history (issue 15): `make bench` runs this as `node --expose-gc`.
//
// 1. Messages to one member that settles between messages: the lead sends
//    `worker` a message, the worker's turn runs at once and it settles (leaves
//    residency), so every message resumes it cold. The time from `sendMessage`
//    to the host's `runTurn` is reported for the first messages, around the
//    1,000th and around the last (BENCH_HISTORY_MESSAGES, default 10,000).
// 2. Spawn/dispose cycles under one root (default names, as the model's tools
//    spawn): the time of `startActivation` at the first spawns, around the
//    1,000th and around the last (BENCH_HISTORY_SPAWNS, default 10,000), with
//    the wasm linear memory and JS heap at each point. The store is a plain JS
//    store (logs as JS arrays), so the wasm memory is the runtime's own.
//
// Each window is the median of BENCH_HISTORY_WINDOW (default 21) consecutive
// operations ending at the named one; the ratio is last window / first window.

import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { jsArrayStore, loadPackage } from './load.mjs';
import { record } from './results.mjs';

const { lib, from, wasmMemory } = await loadPackage();
const { SubagentRuntime, MemoryStore } = lib;

const MESSAGES = Number(process.env.BENCH_HISTORY_MESSAGES ?? 10_000);
const SPAWNS = Number(process.env.BENCH_HISTORY_SPAWNS ?? 10_000);
const WINDOW = Number(process.env.BENCH_HISTORY_WINDOW ?? 21);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const group = (x) => Math.round(x).toLocaleString('en-US');
const macrotask = () => new Promise((r) => setImmediate(r));
const heap = () => {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
};
const mib = (b) => (b / 2 ** 20).toFixed(2);

/** Checkpoints 1, 1,000 and the last (those that fit in `n`), each with a window of ops ending there. */
function checkpoints(n) {
  return [...new Set([WINDOW, 1_000, n].filter((k) => k >= WINDOW && k <= n))];
}

/** A host whose turns complete at once; `turnOf(name)` resolves when that member's next turn starts. */
function instantHost() {
  const waiting = new Map();
  return {
    turnOf(name) {
      return new Promise((resolve) => waiting.set(name, resolve));
    },
    runTurn(turn) {
      const now = performance.now();
      const resolve = waiting.get(turn.name);
      if (resolve) {
        waiting.delete(turn.name);
        resolve(now);
      }
      return { stopReason: 'completed', messages: ['done'] };
    },
  };
}


const spec = (parent, name) => ({ provider: 'spawn', parent, label: 'bench task', prompt: 'please do it', name });
const settle = async (rt, root) => {
  while (await rt.waitForTreeWork(root)) await macrotask();
};

// Each section runs in a fresh process (wasm linear memory only grows).
const section = process.argv[2];
if (!section) {
  console.log(`subagent-tree cost-in-history benchmarks through the bridge (node ${process.version}, ${from})`);
  console.log(`each figure: median of ${WINDOW} consecutive operations ending at the one named; each section in a fresh process\n`);
  for (const s of ['message', 'spawn']) {
    execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), s], { stdio: 'inherit' });
  }
  process.exit(0);
}

if (section === 'message') {
  console.log(`== ${group(MESSAGES)} messages to one member that settles between messages (package MemoryStore; each message resumes it cold)`);
  const host = instantHost();
  let n = 0;
  const rt = new SubagentRuntime({ store: new MemoryStore(), host, newId: (kind) => `h-${kind[0]}${++n}` });
  const root = await rt.openRoot({ sessionId: 'root' });
  const worker = await rt.startActivation(spec(root, 'worker'));
  await settle(rt, root);
  const marks = checkpoints(MESSAGES);
  const times = [];
  const out = [];
  const t00 = performance.now();
  for (let i = 1; i <= MESSAGES; i++) {
    const turn = host.turnOf('worker');
    const t0 = performance.now();
    await rt.sendMessage(root, worker.childId, `message ${i}`);
    times.push((await turn) - t0);
    await settle(rt, root);
    if (marks.includes(i)) {
      const ms = median(times.slice(-WINDOW));
      out.push([i, ms]);
      console.log(
        `${`message ${group(i)} to worker (settled), to runTurn`.padEnd(72)} ${(ms * 1e3).toFixed(1).padStart(10)} µs` +
          `   (wasm memory ${mib(wasmMemory())} MiB; ${((performance.now() - t00) / 1e3).toFixed(1)} s so far)`,
      );
      record(`history.message.${i}`, ms * 1e3);
    }
  }
  const ratio = out.at(-1)[1] / out[0][1];
  console.log(`${''.padEnd(72)} message ${group(out.at(-1)[0])} / message ${out[0][0]} = ${ratio.toFixed(2)}x (goal <= 1.5x)`);
  record('history.message.last', out.at(-1)[0]);
  record('history.message.first', out[0][0]);
  await rt.drainDescendants([root]);
  console.log();
}

if (section === 'spawn') {
  console.log(`== ${group(SPAWNS)} spawn/dispose cycles under one root (default names; plain JS store)`);
  const host = instantHost();
  let n = 0;
  const rt = new SubagentRuntime({ store: jsArrayStore(), host, newId: (kind) => `s-${kind[0]}${++n}` });
  const root = await rt.openRoot({ sessionId: 'root' });
  const marks = checkpoints(SPAWNS);
  const times = [];
  const out = [];
  // The first window's memory is the baseline (after the first allocations).
  let wasm0;
  let heap0;
  for (let i = 1; i <= SPAWNS; i++) {
    const t0 = performance.now();
    const a = await rt.startActivation(spec(root));
    times.push(performance.now() - t0);
    await a.dispose();
    await settle(rt, root);
    if (marks.includes(i)) {
      const ms = median(times.slice(-WINDOW));
      const w = wasmMemory();
      const h = heap();
      wasm0 ??= w;
      heap0 ??= h;
      out.push([i, ms]);
      console.log(
        `${`spawn ${group(i)} under root (${a.name})`.padEnd(72)} ${(ms * 1e3).toFixed(1).padStart(10)} µs` +
          `   (wasm memory ${mib(w)} MiB, +${group((w - wasm0) / Math.max(1, i - WINDOW))} B/cycle since spawn ${WINDOW}; JS heap ${mib(h)} MiB)`,
      );
      record(`history.spawn.${i}`, ms * 1e3);
      record(`history.spawn.${i}.wasmBytes`, w);
    }
  }
  const ratio = out.at(-1)[1] / out[0][1];
  console.log(`${''.padEnd(72)} spawn ${group(out.at(-1)[0])} / spawn ${out[0][0]} = ${ratio.toFixed(2)}x (goal <= 1.5x)`);
  record('history.spawn.last', out.at(-1)[0]);
  record('history.spawn.first', out[0][0]);
  await rt.drainDescendants([root]);
  console.log();
}
