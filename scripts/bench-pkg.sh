#!/usr/bin/env bash
# Benchmarks of the built package in Node (run by `make bench` after `cargo bench`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f pkg/package.json ]]; then
  echo "bench-pkg: pkg/ is not built; run 'make pkg' first" >&2
  exit 1
fi
node pkg-tests/bench/listing.mjs "$@"
node --expose-gc pkg-tests/bench/runtime.mjs
