#!/usr/bin/env bash
# Runs the wasm-bindgen-test suites (tests/wasm_*.rs) in Node, then in
# headless Chromium through Debian's chromedriver. No `-q`: the runner
# rejects `--quiet`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-120}

suites=()
for f in tests/wasm_*.rs; do suites+=(--test "$(basename "$f" .rs)"); done

echo "== wasm tests in Node"
# ES-module mode: the bridge imports its JS snippets as ES modules.
WASM_BINDGEN_USE_NODE_EXPERIMENTAL=1 cargo test --target wasm32-unknown-unknown "${suites[@]}"

echo "== wasm tests in headless Chromium"
WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver} \
  cargo test --target wasm32-unknown-unknown "${suites[@]}"
