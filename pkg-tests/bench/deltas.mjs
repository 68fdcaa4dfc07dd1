// Benchmark of live output (issue 45): `make bench` runs this after usage.mjs.
//
// 100 members each stream 10 parts/s (1,000 deltas/s in all) for
// BENCH_DELTA_SECONDS (default 5) seconds into a runtime with an
// `events()` reader that lags (it reads once a second). Reports the heap
// and wasm memory over time (flat: a lagging reader's deltas coalesce), and
// the longest the event loop was blocked (goal: under 50 ms).
import { performance, monitorEventLoopDelay } from 'node:perf_hooks';
import { loadPackage } from './load.mjs';
import { record } from './results.mjs';

const { lib, wasmMemory } = await loadPackage();
const { SubagentRuntime, MemoryStore } = lib;
const SECONDS = Number(process.env.BENCH_DELTA_SECONDS ?? 5);
const MEMBERS = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let stop = false;
const host = {
  async runTurn(turn) {
    if (turn.name === 'lead') {
      const spawn = turn.tools.find((t) => t.name === 'spawn_agent');
      for (let i = 0; i < MEMBERS - 1; i++) await spawn.call({ description: 'stream', prompt: 'stream' });
    }
    while (!stop && !turn.signal.aborted) {
      turn.emit({ type: 'text-delta', text: 'token ' });
      await sleep(100);
    }
    return { messages: ['done'] };
  },
};
const runtime = new SubagentRuntime({ store: new MemoryStore(), host, capacity: MEMBERS });
const lead = await runtime.openRoot({ sessionId: 'root' });
const stream = runtime.events({ root: 'root' });
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
await runtime.prompt(lead, 'lead', 'go');
const samples = [];
let read = 0;
const t0 = performance.now();
for (let s = 0; s < SECONDS; s++) {
  await sleep(1000);
  // The lagging reader: once a second, it drains what is queued.
  const deadline = performance.now() + 50;
  while (performance.now() < deadline) {
    const next = await Promise.race([stream.next(), sleep(5).then(() => null)]);
    if (next === null) break;
    read += 1;
  }
  globalThis.gc?.();
  samples.push([Math.round(process.memoryUsage().heapUsed / 1024), Math.round((wasmMemory?.() ?? 0) / 1024)]);
}
stop = true;
delay.disable();
await stream.return();
const maxBlockMs = delay.max / 1e6;
console.log(`deltas: ${MEMBERS} members x 10 parts/s for ${SECONDS} s with a lagging events() reader: heap KB per second ${samples.map((s) => s[0]).join(', ')}; wasm KB ${samples.map((s) => s[1]).join(', ')}; items read ${read}; event loop blocked at most ${maxBlockMs.toFixed(1)} ms (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
record('deltas.heapGrowthKB', samples.at(-1)[0] - samples[0][0]);
record('deltas.maxBlockMs', maxBlockMs);
process.exit(0);
