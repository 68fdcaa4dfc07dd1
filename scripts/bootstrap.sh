#!/usr/bin/env bash
# Installs what the build and tests need, idempotently: a fresh machine needs nothing else.
# Every step checks first, so a second run takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p; s/^wasm-bindgen = "=\([0-9.]*\)"/\1/p' Cargo.toml | head -1)
: "${WASM_BINDGEN_VERSION:?could not read the wasm-bindgen version pin from Cargo.toml}"

log() { printf '[bootstrap] %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The pinned nightly the package's wasm is built with (Cargo.toml,
# [package.metadata.pkg]): its rust-src for -Zbuild-std, its wasm32 std.
PKG_TOOLCHAIN=$(sed -n '/^\[package.metadata.pkg\]/,/^\[/s/^toolchain = "\(.*\)"/\1/p' Cargo.toml)
: "${PKG_TOOLCHAIN:?could not read [package.metadata.pkg] toolchain from Cargo.toml}"
if ! rustup toolchain list | grep -q "^$PKG_TOOLCHAIN-"; then
  log "installing the $PKG_TOOLCHAIN toolchain for the package build (seconds)"
  rustup toolchain install "$PKG_TOOLCHAIN" --profile minimal --component rust-src --target wasm32-unknown-unknown
fi
if ! rustup component list --toolchain "$PKG_TOOLCHAIN" --installed | grep -q '^rust-src'; then
  rustup component add rust-src --toolchain "$PKG_TOOLCHAIN"
fi
if ! rustup target list --toolchain "$PKG_TOOLCHAIN" --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown --toolchain "$PKG_TOOLCHAIN"
fi

# (wasm-opt comes from npm `binaryen`, pinned in pkg-tests' lockfile: Debian's
# binaryen 108 corrupts the externref table rustc now emits.)
need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing ${need_apt[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes, once)"
  # Without --locked: the CLI's lockfile names crate versions the registry no longer serves.
  cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --force
fi

for dir in pkg-tests; do
  if [ -f "$dir/package-lock.json" ] && { [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; }; then
    log "installing npm packages in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
log "ready"
