#!/usr/bin/env bash
# `make bench`: the native benchmarks (cargo bench), then the built package in
# Node (listing, catalog, runtime, cost in history, the worker's event stream, cold start in Node,
# headless Chromium and workerd), then one table of every issue-15 row next
# to its goal, from this run's figures.
#   BENCH_NATIVE=0  skip cargo bench (the table then has no native column)
#   BENCH_PKG=dir   benchmark another built package directory (default pkg/)
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_PKG="${BENCH_PKG:-pkg}"
if [[ ! -f "$BENCH_PKG/package.json" ]]; then
  echo "bench-pkg: $BENCH_PKG/ is not built; run 'make pkg' first" >&2
  exit 1
fi
if [ ! -d pkg-tests/node_modules/playwright-core ] || [ ! -d pkg-tests/node_modules/miniflare ]; then
  (cd pkg-tests && npm ci --no-audit --no-fund --loglevel=error)
fi
mkdir -p target/bench
export BENCH_RESULTS=target/bench/results.jsonl
export BENCH_NATIVE_OUT=target/bench/native.txt
: > "$BENCH_RESULTS"
if [[ "${BENCH_NATIVE:-1}" != 0 ]]; then
  cargo bench 2>&1 | tee "$BENCH_NATIVE_OUT"
else
  : > "$BENCH_NATIVE_OUT"
fi
node pkg-tests/bench/listing.mjs "$@"
node --expose-gc pkg-tests/bench/runtime.mjs
node --expose-gc pkg-tests/bench/history.mjs
node --expose-gc pkg-tests/bench/usage.mjs
node --expose-gc pkg-tests/bench/budgets.mjs
node --expose-gc pkg-tests/bench/otel.mjs
node --expose-gc pkg-tests/bench/deltas.mjs
echo "== idle event readers: one journal, N cursors (each count in a fresh process)"
for n in 1 10 100; do node --expose-gc pkg-tests/bench/readers.mjs "$n"; done
node pkg-tests/bench/sse.mjs
node pkg-tests/bench/element.mjs
node pkg-tests/bench/coldstart.mjs
echo
BENCH_NATIVE="$BENCH_NATIVE_OUT" node pkg-tests/bench/summary.mjs
