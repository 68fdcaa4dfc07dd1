# Every target installs what it needs first (scripts/bootstrap.sh is idempotent).
SHELL := /bin/bash
export CARGO_TERM_COLOR := never

.PHONY: setup pkg docs demo demo-cli test test-rust test-wasm test-pkg lint bench sim fuzz clean

setup:
	@bash scripts/bootstrap.sh

pkg: setup
	@bash scripts/build-pkg.sh

# The API reference from the package's .d.ts (typedoc) into docs/api/ (gitignored).
docs: pkg
	@bash scripts/docs.sh

demo: pkg
	@bash scripts/demo.sh

demo-cli: pkg
	@node www/demo-cli.mjs

lint: setup
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --lib --target wasm32-unknown-unknown -- -D warnings
	cargo clippy --lib --target wasm32-unknown-unknown --no-default-features -- -D warnings
	@! grep -rln 'wasm_bindgen\|js_sys' src --include=*.rs | grep -v '^src/wasm/' \
	  || { echo "wasm-bindgen/js-sys used outside src/wasm/"; exit 1; }
	@node scripts/module-cycles.mjs src

test-rust: setup
	cargo test

test-wasm: setup
	@bash scripts/test-wasm.sh

test-pkg: pkg
	@bash pkg-tests/run.sh

test: lint test-rust test-wasm test-pkg
	@echo "make test: all suites passed"

# Native and package benchmarks, then every issue-15 row next to its goal (scripts/bench-pkg.sh).
bench: pkg
	@bash scripts/bench-pkg.sh

sim: setup
	@bash scripts/sim.sh

fuzz: setup
	@bash scripts/fuzz.sh

clean:
	cargo clean
	rm -rf pkg docs/api pkg-tests/node_modules pkg-tests/test-results
