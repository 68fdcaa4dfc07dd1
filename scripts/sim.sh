#!/usr/bin/env bash
# `make sim`: the deterministic simulation (src/sim) over SIM_SEEDS seeds
# (default 10,000) from SIM_FROM (default 0), optimized (the bench profile).
# Prints seeds, runtimes, operations and faults injected by kind, and the wall
# time; the first SIM_DETERMINISM seeds (default 100) run twice and must
# match. On a broken invariant it prints the one command that replays the
# failing seed, and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

SIM_SEEDS=${SIM_SEEDS:-10000}
SIM_FROM=${SIM_FROM:-0}
SIM_DETERMINISM=${SIM_DETERMINISM:-100}

echo "[sim] building the simulation (bench profile)"
cargo build --profile bench --example sim -q
start=$(date +%s)
cargo run --profile bench --example sim -q -- \
  --seeds "$SIM_SEEDS" --from "$SIM_FROM" --determinism "$SIM_DETERMINISM"
echo "[sim] wall time $(( $(date +%s) - start ))s"
