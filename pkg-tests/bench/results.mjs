// Figures a benchmark hands to the summary (pkg-tests/bench/summary.mjs): one
// JSON line per figure appended to $BENCH_RESULTS (set by scripts/bench-pkg.sh);
// nothing is written when it is unset (a benchmark run on its own).
import { appendFileSync } from 'node:fs';

export function record(key, value) {
  const file = process.env.BENCH_RESULTS;
  if (file && Number.isFinite(value)) appendFileSync(file, `${JSON.stringify({ key, value })}\n`);
}
