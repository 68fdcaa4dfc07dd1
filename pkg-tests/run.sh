#!/usr/bin/env bash
# Tests the built package (pkg/) the way a user gets it: `npm pack`, unpacked
# into node_modules/subagent-tree, imported by name through its `exports` map.
# Runs the node --test suites (incl. headless Chromium, workerd, esbuild
# bundling, the docs' examples and code blocks under tsc) and a strict tsc
# check of a TypeScript consumer in a DOM and a Node-only configuration.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -f ../pkg/package.json ]; then
  echo "pkg-tests: ../pkg is missing; build it with 'make pkg'" >&2
  exit 1
fi
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/miniflare ] || [ ! -d node_modules/typescript ] \
  || [ ! -d node_modules/esbuild ] || [ ! -d node_modules/vite ] || [ ! -d node_modules/@types/node ] || [ ! -d node_modules/typedoc ] || [ ! -d node_modules/ai ] || [ ! -d node_modules/@modelcontextprotocol/sdk ] || [ ! -d node_modules/@openai/agents ] || [ ! -d node_modules/@opentelemetry/sdk-trace-base ] || [ ! -d node_modules/@opentelemetry/exporter-trace-otlp-http ] || [ ! -d node_modules/@agentclientprotocol/sdk ] || [ ! -d node_modules/@agentclientprotocol/claude-agent-acp ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd ../pkg && npm pack --silent --pack-destination "$tmp" >/dev/null)
rm -rf node_modules/subagent-tree
mkdir -p node_modules/subagent-tree
tar xzf "$tmp"/subagent-tree-*.tgz -C node_modules/subagent-tree --strip-components=1
echo "pkg-tests: installed $(ls "$tmp") into node_modules/subagent-tree"

echo "== node --test"
node --test --test-reporter=spec test/*.test.mjs

node --test --test-reporter=spec web/*.test.mjs  # issue 5: the Web client (<subagent-tree>, IndexedDB store, TreeLock, demo page) in headless Chromium

echo "== tsc --noEmit --strict (types/consumer.ts: DOM config, then Node-only config; types-bare: neither)"
node_modules/.bin/tsc -p types
node_modules/.bin/tsc -p types/tsconfig.node.json
node_modules/.bin/tsc -p types-bare  # issue 42: the README's claim, lib es2022 alone
echo "pkg-tests: all passed"
