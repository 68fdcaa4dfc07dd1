#!/usr/bin/env bash
# Builds pkg/: the `subagent-tree` npm package (ES module, .wasm, JS glue,
# .d.ts, per-runtime entries) and its `subagent-tree/lite` entry (the same
# core built without the `runtime` feature: a second, small wasm), then
# prints the sizes raw and gzipped and enforces size-budget.json.
#   cargo (pinned nightly, release, wasm32) -> wasm-bindgen --target web
#   -> wasm-opt -Oz -> short shared names -> minified JS -> entries
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

CRATE=subagent_tree
OUT=pkg
# The shipped wasm is built by the pinned nightly (Cargo.toml,
# [package.metadata.pkg]; scripts/bootstrap.sh installs it) with the standard
# library rebuilt for size: panics abort at once with no message or location
# (none is ever shown: a panic already aborted the instance), and std's
# size-optimised code paths. core, alloc and std themselves keep opt-level 3,
# as the prebuilt std has it: built at our "z" they made listing from a
# MemoryStore ~25 % and projectCatalog ~10 % slower, for 0.2-0.8 KB gzip.
# Its own target dir, so the stable builds of the tests keep theirs.
PKG_TOOLCHAIN=$(sed -n '/^\[package.metadata.pkg\]/,/^\[/s/^toolchain = "\(.*\)"/\1/p' Cargo.toml)
export CARGO_TARGET_DIR=target/pkg
export RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none"
BUILD_STD=(-Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size
  --config profile.release.package.core.opt-level=3 --config profile.release.package.alloc.opt-level=3
  --config profile.release.package.std.opt-level=3)
WASM_IN=$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/$CRATE.wasm

rm -rf "$OUT"
mkdir -p "$OUT"

# Float formatting (core's flt2dec, ~20 KB) must stay out of the wasm: numbers
# are formatted by hand (integers) or by JS. The check reads the symbol names
# cargo's output still carries (wasm-opt strips them).
no_float_formatting() {
  if grep -aq 'flt2dec' "$1"; then
    echo "build-pkg: $2 contains float formatting (core::num::flt2dec); format numbers with JS String(n) or by hand" >&2
    return 1
  fi
}

# The full package, then the lite one (same target dir: cargo keeps both
# feature sets' artifacts, so each rebuild is incremental).
cargo "+$PKG_TOOLCHAIN" build --release --lib --target wasm32-unknown-unknown "${BUILD_STD[@]}"
no_float_formatting "$WASM_IN" "the full wasm" || FLOAT_FULL=1
wasm-bindgen --target web --out-dir "$OUT" --out-name "$CRATE" "$WASM_IN"
cargo "+$PKG_TOOLCHAIN" build --release --lib --target wasm32-unknown-unknown --no-default-features "${BUILD_STD[@]}"
no_float_formatting "$WASM_IN" "the lite wasm"
wasm-bindgen --target web --out-dir "$OUT" --out-name "${CRATE}_lite" "$WASM_IN"

# The glue's own init functions return the raw wasm exports (memory,
# allocator, every export): whoever imports the glue file by path would get
# them. Its exports are replaced by wrappers that return nothing.
for glue in "$OUT/$CRATE.js" "$OUT/${CRATE}_lite.js"; do
  grep -q '^export { initSync, __wbg_init as default };$' "$glue" \
    || { echo "build-pkg: the glue's export line changed in $glue; update the init wrappers" >&2; exit 1; }
  sed -i 's/^export { initSync, __wbg_init as default };$/function initSyncQuiet(module) { initSync(module); }\
async function initQuiet(module_or_path) { await __wbg_init(module_or_path); }\
export { initSyncQuiet as initSync, initQuiet as default };/' "$glue"
done

# The glue's classes keep each object's wasm address in a public `__wbg_ptr`
# that every method trusts; they check their receiver by a private brand
# instead (a forged object is a TypeError, never a wasm call).
for glue in "$OUT/$CRATE.js" "$OUT/${CRATE}_lite.js"; do node scripts/brand-classes.mjs "$glue"; done

# wasm-bindgen writes one `import * as importN` and one import-object key per
# shim-free ("direct") import of a snippet module, so two direct imports of
# one snippet give bundlers a `Duplicate key "./snippets/..."` warning. Keep at
# most one per snippet (give the others `catch`, as src/wasm/handles.rs does).
dups=$(for glue in "$OUT/$CRATE.js" "$OUT/${CRATE}_lite.js"; do
  sed -n 's/^ *"\(\.\/snippets\/[^"]*\)": import[0-9]*,$/\1/p' "$glue" | sort | uniq -d
done)
if [ -n "$dups" ]; then
  echo "build-pkg: more than one direct wasm import of: $dups" >&2
  echo "build-pkg: bundlers would warn 'Duplicate key'; add \`catch\` to all but one of that module's imports" >&2
  exit 1
fi

# Public types: no loader internals, no DOM or esnext.disposable lib needed;
# the hand-written type modules (src/wasm/js/types/) beside them, linked in.
mkdir -p "$OUT/types"
cp src/wasm/js/types/*.d.ts "$OUT/types/"
node scripts/public-types.mjs "$OUT/$CRATE.d.ts" types/core.d.ts types/runtime.d.ts
node scripts/public-types.mjs "$OUT/${CRATE}_lite.d.ts" types/core.d.ts
for name in "$CRATE" "${CRATE}_lite"; do
  rm -f "$OUT/${name}_bg.wasm.d.ts"   # the wasm's raw exports: internals only
done

# wasm-opt: Debian's binaryen 108 corrupts wasm-bindgen's externref table
# export (rustc emits reference types by default; the module then fails to
# instantiate), so a system wasm-opt older than 116 is not used: the npm
# `binaryen` (pinned in pkg-tests' lockfile) is, installed here if missing.
WASM_OPT=""
if command -v wasm-opt >/dev/null; then
  v=$(wasm-opt --version | sed -n 's/^wasm-opt version \([0-9]*\).*/\1/p')
  if [ -n "$v" ] && [ "$v" -ge 116 ]; then WASM_OPT=wasm-opt; fi
fi
if [ -z "$WASM_OPT" ]; then
  if [ ! -x pkg-tests/node_modules/.bin/wasm-opt ]; then
    (cd pkg-tests && npm ci --no-audit --no-fund --loglevel=error)
  fi
  WASM_OPT=pkg-tests/node_modules/.bin/wasm-opt
fi
# --converge repeats the passes while they still shrink the module (-0.7 KB
# gzip). --low-memory-unused lets constant additions fold into load/store
# offsets (-1.3 KB): rustc links the stack first (data from 1 MiB up), so the
# low 1 KiB is only reached by a stack already 1 MiB deep, never by a wrapped
# pointer sum. The producers and target-features sections are dropped after
# it (wasm-bindgen needed the latter; nothing reads them at run time).
# The wasm features rustc emits, for every wasm-opt run.
WASM_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --enable-reference-types --enable-multivalue)
for name in "$CRATE" "${CRATE}_lite"; do
  "$WASM_OPT" -Oz --low-memory-unused --converge --strip-producers --strip-target-features "${WASM_FEATURES[@]}" \
    "$OUT/${name}_bg.wasm" -o "$OUT/${name}_bg.wasm.opt"
  mv "$OUT/${name}_bg.wasm.opt" "$OUT/${name}_bg.wasm"
done

# Short names for what the wasm and its glue share: wasm-bindgen's import names
# carry a 16-digit hash each, and every import and export name is written in
# both files (-1.6 KB gzip in the lite wasm, -2.0 KB in the full one, and the
# glue's copies; one more -Oz after the renaming takes 0.4 KB more off the
# full wasm). wasm-opt renames them in the wasm and prints the map that
# scripts/minify-names.mjs applies to the glue. Then the glue is minified
# (esbuild, keeping function and class names for stack traces and
# `MemoryStore.name`): its doc comments and long local names were a third of
# its gzip size. Deno's `@ts-self-types` directive is put back on top.
# Each minified file gets a source map beside it (`X.js.map`, the unminified
# text inside as `X.unminified.js`), so an uncaught error reads as the source
# it came from in devtools and `node --enable-source-maps`; maps are not in
# the size budget (nothing downloads them unless asked).
ESBUILD=pkg-tests/node_modules/.bin/esbuild
[ -x "$ESBUILD" ] || (cd pkg-tests && npm ci --no-audit --no-fund --loglevel=error)
# minify_js FILE [BANNER]: minifies FILE in place, with FILE.map.
minify_js() {
  local file=$1 dir base src
  dir=$(dirname "$file")
  base=$(basename "$file" .js)
  src="$dir/$base.unminified.js"
  mv "$file" "$src"
  "$ESBUILD" "$src" --minify --keep-names --format=esm --legal-comments=none --log-level=warning \
    --sourcemap --sources-content=true --outfile="$file" ${2:+"--banner:js=$2"}
  rm "$src"
}
for name in "$CRATE" "${CRATE}_lite"; do
  "$WASM_OPT" --minify-imports-and-exports-and-modules -Oz "${WASM_FEATURES[@]}" \
    "$OUT/${name}_bg.wasm" -o "$OUT/${name}_bg.wasm.min" > "$OUT/$name.names.json"
  mv "$OUT/${name}_bg.wasm.min" "$OUT/${name}_bg.wasm"
  node scripts/minify-names.mjs "$OUT/${name}_bg.wasm" "$OUT/$name.js" "$OUT/$name.names.json"
  rm "$OUT/$name.names.json"
  directive=$(head -1 "$OUT/$name.js")
  [[ "$directive" == '/* @ts-self-types='* ]] || { echo "build-pkg: $name.js no longer starts with @ts-self-types" >&2; exit 1; }
  minify_js "$OUT/$name.js" "$directive"
  [[ "$(head -1 "$OUT/$name.js")" == "$directive" ]] || { echo "build-pkg: $name.js lost its @ts-self-types line" >&2; exit 1; }
done

# The JS helpers wasm-bindgen copied next to the glue (snippets/) are
# minified the same way: every page that loads a wasm loads them too
# (error.js 1.4 -> 0.7 KB gzip, json.js 2.6 -> 1.1, runtime.js 2.4 -> 1.3).
for js in $(find "$OUT/snippets" -name '*.js'); do
  minify_js "$js"
done

# The SubagentError class lives in the snippet wasm-bindgen copied; every
# entry re-exports that very module so `instanceof` matches what the bridge throws.
snippet=$(cd "$OUT" && ls snippets/*/src/wasm/js/error.js 2>/dev/null | head -1)
[ -n "$snippet" ] || { echo "build-pkg: the error.js snippet was not emitted" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
description=$(sed -n 's/^description = "\(.*\)"/\1/p' Cargo.toml | head -1)
for entry in node.js web.js workerd.js; do
  sed -e "s#__SNIPPET__#./$snippet#" -e "s#__RUNTIME_SNIPPET__#./$(dirname "$snippet")/runtime.js#" \
    -e "s#__STORE_SNIPPET__#./$(dirname "$snippet")/store.js#" "src/wasm/js/$entry" > "$OUT/$entry"
done
for entry in node.js web.js workerd.js; do
  sed -e "s#__SNIPPET__#./$snippet#" "src/wasm/js/lite/$entry" > "$OUT/lite-$entry"
done
cp src/wasm/js/lite/lite.d.ts "$OUT/lite.d.ts"
cp src/wasm/js/lite/exports.js "$OUT/lite-exports.js"
cp src/wasm/js/index.d.ts "$OUT/index.d.ts"
# <subagent-tree> element, IndexedDB store, TreeLock (browser): the store imports
# the SubagentError class from the snippet, never the entry (no wasm for a reader page).
mkdir -p "$OUT/web"
for f in src/wasm/js/web/*; do sed -e "s#__SNIPPET__#../$snippet#" "$f" > "$OUT/web/${f##*/}"; done
# Durable Object store + OpenAI-compatible model host (edge/), file store (node/):
# they import the SubagentError class straight from the snippet (no wasm needed).
for dir in edge node ai-sdk mcp acp openai-agents otel; do
  mkdir -p "$OUT/$dir"
  for f in src/wasm/js/$dir/*; do sed -e "s#__SNIPPET__#../$snippet#" -e "s#__VERSION__#$version#" "$f" > "$OUT/$dir/${f##*/}"; done
  if [ -f "$OUT/$dir/stdio.js" ]; then chmod +x "$OUT/$dir/stdio.js"; fi  # the package's bins (subagent-tree-mcp, subagent-tree-acp)
done
# The test-harness kit (subagent-tree/testing): plain JS over the public API.
mkdir -p "$OUT/testing"
cp src/wasm/js/testing/testing.js src/wasm/js/testing/testing.d.ts "$OUT/testing/"
sed -e "s#__VERSION__#$version#" -e "s#__DESCRIPTION__#$description#" src/wasm/js/package.json > "$OUT/package.json"
rm -f "$OUT/.gitignore"
# The package page and licences (npm shows README.md; the licence is MIT OR Apache-2.0).
cp README.md README.zh-CN.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$OUT/"
# The upgrade guide the READMEs link to, so the links resolve inside the installed package.
mkdir -p "$OUT/docs"
cp docs/upgrading.md docs/upgrading.zh-CN.md "$OUT/docs/"

# Size report (also written to pkg/sizes.txt for CI logs).
size_line() {
  local label=$1 file=$2 raw gz
  raw=$(wc -c < "$file")
  gz=$(gzip -9c "$file" | wc -c)
  printf '%-28s %8d B raw  %8d B gzip  (%s)\n' "$label" "$raw" "$gz" "$file"
}
{
  size_line "wasm (wasm-opt -Oz)" "$OUT/${CRATE}_bg.wasm"
  size_line "JS glue" "$OUT/$CRATE.js"
  size_line "lite wasm (wasm-opt -Oz)" "$OUT/${CRATE}_lite_bg.wasm"
  size_line "lite JS glue" "$OUT/${CRATE}_lite.js"
  size_line "error class snippet" "$OUT/$snippet"
  for entry in node.js web.js workerd.js lite-node.js lite-web.js lite-workerd.js; do size_line "entry $entry" "$OUT/$entry"; done
  # Everything a browser page loads for each entry (the budget counts only wasm + glue).
  node scripts/page-size.mjs "$OUT" web.js full
  node scripts/page-size.mjs "$OUT" lite-web.js lite
} | tee "$OUT/sizes.txt"

# Size budgets (size-budget.json): wasm + JS glue, gzip -9. Deterministic for
# a given toolchain, so this is a check, not a timing. `budget` is enforced;
# `goal` is where the budget is heading.
gz() { cat "$@" | gzip -9c | wc -c; }
budget_fail=0
for part in lite full; do
  if [ "$part" = lite ]; then files=("$OUT/${CRATE}_lite_bg.wasm" "$OUT/${CRATE}_lite.js"); else files=("$OUT/${CRATE}_bg.wasm" "$OUT/$CRATE.js"); fi
  size=$(( $(gz "${files[0]}") + $(gz "${files[1]}") ))
  read -r budget goal < <(node -e 'const b = require("./size-budget.json")[process.argv[1]]; console.log(b.gzipBytes, b.goalGzipBytes)' "$part")
  verdict=ok
  if [ "$size" -gt "$budget" ]; then verdict="OVER BUDGET"; budget_fail=1; fi
  printf 'size budget %-5s wasm+glue %7d B gzip  budget %7d B  goal %7d B  %s\n' "$part" "$size" "$budget" "$goal" "$verdict" | tee -a "$OUT/sizes.txt"
done
[ "$budget_fail" = 0 ] || { echo "build-pkg: over the size budget (size-budget.json)" >&2; exit 1; }
if [ -n "${FLOAT_FULL:-}" ]; then
  echo "build-pkg: the full wasm still carries float formatting (see above)" >&2
  exit 1
fi
echo "build-pkg: $OUT/ ready (subagent-tree $version)"
