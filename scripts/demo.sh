#!/usr/bin/env bash
# make demo: the Web client. Assembles www/ (the page) and pkg/ (the package,
# built by `make pkg` first) into one folder and serves it on 127.0.0.1 at
# $PORT (default 8080) with www/serve.mjs.
#   scripts/demo.sh                       assemble into target/demo-site and serve
#   scripts/demo.sh --assemble-only DIR   assemble into DIR and exit (tests)
set -euo pipefail
cd "$(dirname "$0")/.."

assemble() {
  local out=$1
  [ -f pkg/web.js ] && [ -d pkg/web ] || { echo "demo: pkg/ is missing or stale; run make pkg" >&2; exit 1; }
  rm -rf "$out"
  mkdir -p "$out"
  # The page: everything in www/ except the Node-side scripts.
  find www -maxdepth 1 -type f ! -name '*.mjs' -exec cp {} "$out/" \;
  cp -r pkg "$out/pkg"
}

if [ "${1:-}" = "--assemble-only" ]; then
  assemble "${2:?usage: demo.sh --assemble-only DIR}"
  exit 0
fi

SITE=target/demo-site
assemble "$SITE"
PORT=${PORT:-8080}
echo "demo: open http://127.0.0.1:$PORT/ (a second tab on the same URL follows read-only)"
exec node www/serve.mjs "$SITE" --host 127.0.0.1 --port "$PORT"
