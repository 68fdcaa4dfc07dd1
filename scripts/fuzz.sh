#!/usr/bin/env bash
# `make fuzz`: runs every property-based fuzz target in tests/fuzz.rs for a
# fixed time budget each (FUZZ_SECONDS, default 20), optimized, one process
# per target so a crash in one cannot hide the others. Prints per target the
# executions run and the findings (0 when clean); exits non-zero on any finding.
# A finding's minimal input is printed and its seed persisted to
# tests/fuzz.proptest-regressions, which every later run (and `cargo test`)
# replays first. FUZZ_TARGETS="name_grammar projection" narrows the run.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
# Optimized but quick to build: the bench profile (opt-level 3, thin LTO).
PROFILE=${FUZZ_PROFILE:-bench}
export FUZZ_SECONDS PROPTEST_CASES=${PROPTEST_CASES:-4096} RUST_BACKTRACE=0

all_targets=$(sed -n 's/^fn fuzz_\([a-z0-9_]*\)() {$/\1/p' tests/fuzz.rs)
targets=${FUZZ_TARGETS:-$all_targets}

echo "[fuzz] building tests/fuzz.rs ($PROFILE profile)"
cargo test --profile "$PROFILE" --test fuzz --no-run -q

log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
total_findings=0
summary=()
for target in $targets; do
  log="$log_dir/$target.log"
  echo "[fuzz] $target: ${FUZZ_SECONDS}s"
  if cargo test --profile "$PROFILE" --test fuzz -q -- --exact "fuzz_$target" --nocapture >"$log" 2>&1; then
    status=clean
  else
    status=FAILED
  fi
  line=$(grep -E "^fuzz $target: [0-9]+ executions" "$log" | tail -1 || true)
  executions=$(sed -n 's/^fuzz [a-z0-9_]*: \([0-9]*\) executions.*/\1/p' <<<"$line")
  findings=$(sed -n 's/.* executions, \([0-9]*\) findings.*/\1/p' <<<"$line")
  if [ "$status" = FAILED ]; then
    # A crash (stack overflow, abort) prints no summary line: still a finding.
    findings=${findings:-1}
    [ "$findings" -gt 0 ] || findings=1
    echo "----- $target output -----"
    grep -v '^\s*$' "$log" | tail -40
    echo "--------------------------"
  fi
  total_findings=$((total_findings + findings))
  summary+=("$(printf '%-32s %12s executions  %s findings' "$target" "${executions:-?}" "$findings")")
done

echo
echo "[fuzz] summary (${FUZZ_SECONDS}s per target)"
printf '  %s\n' "${summary[@]}"
if [ "$total_findings" -gt 0 ]; then
  echo "[fuzz] $total_findings finding(s); seeds are in tests/fuzz.proptest-regressions"
  exit 1
fi
echo "[fuzz] clean"
