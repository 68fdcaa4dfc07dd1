// What the package benchmarks share: BENCH_RUNS (default 11), the median,
// and a timer of one async operation (after a warm-up run, each run after a
// collection and a macrotask turn).
import { performance } from 'node:perf_hooks';

export const RUNS = Number(process.env.BENCH_RUNS ?? 11);
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const macrotask = () => new Promise((r) => setImmediate(r));

/** The median of `runs` timed runs of `fn`, in ms. */
export async function time(runs, fn) {
  await fn();
  const xs = [];
  for (let i = 0; i < runs; i++) {
    globalThis.gc?.();
    await macrotask();
    const t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  return median(xs);
}
