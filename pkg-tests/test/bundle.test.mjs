// The package bundles without a single warning in esbuild (the bundler inside
// wrangler, Vite and tsup), for each runtime's export condition. The package
// sits outside node_modules and is linked in, as `npm install ../pkg` does:
// esbuild hides warnings about code inside node_modules, and this is how the
// `Duplicate key "./snippets/.../runtime.js"` warning reached wrangler users.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './docs.mjs';

const dir = path.join(ROOT, 'pkg-tests', `.bundle-${process.pid}`);

before(() => {
  const installed = path.join(ROOT, 'pkg-tests', 'node_modules', 'subagent-tree');
  assert.ok(existsSync(path.join(installed, 'package.json')), 'run through pkg-tests/run.sh (it installs the packed package)');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  cpSync(installed, path.join(dir, 'subagent-tree'), { recursive: true });
  symlinkSync(path.join(dir, 'subagent-tree'), path.join(dir, 'node_modules', 'subagent-tree'), 'dir');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const cases = {
  browser: {
    code: `import { SubagentRuntime, MemoryStore, listDescendants, init } from 'subagent-tree';
import 'subagent-tree/element';
import { IndexedDBStore, TreeLock } from 'subagent-tree/indexeddb';
console.log(SubagentRuntime, MemoryStore, listDescendants, init, IndexedDBStore, TreeLock);`,
    options: { platform: 'browser' },
  },
  workerd: {
    code: `import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { DurableObjectStore } from 'subagent-tree/durable-object-store';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { replayHost, settle } from 'subagent-tree/testing';
export default { fetch: () => new Response(String([SubagentRuntime, MemoryStore, DurableObjectStore, OpenAIHost, replayHost, settle].length)) };`,
    // What wrangler does: the workerd condition, the .wasm kept as a module of its own.
    options: { platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'], loader: { '.wasm': 'copy' } },
  },
  node: {
    code: `import { SubagentRuntime, errorCodes } from 'subagent-tree';
import { FileStore } from 'subagent-tree/file-store';
console.log(SubagentRuntime, errorCodes, FileStore);`,
    options: { platform: 'node' },
  },

  // The adapter entry imports the AI SDK (left to the app's bundle here); the core entries never do.
  'ai-sdk': {
    code: `import { aiSdkTools, aiSdkHost } from 'subagent-tree/ai-sdk';
console.log(aiSdkTools, aiSdkHost);`,
    options: { platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'], external: ['ai'] },
  },
  // So does the MCP entry, which imports the MCP SDK.
  mcp: {
    code: `import { mcpServer, TREE_URI } from 'subagent-tree/mcp';
console.log(mcpServer, TREE_URI);`,
    options: { platform: 'node', external: ['@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'] },
  },
  // And the ACP entry, which imports the ACP SDK's unstable entry.
  acp: {
    code: `import { acpAgent, META_KEY } from 'subagent-tree/acp';
console.log(acpAgent, META_KEY);`,
    options: { platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'], external: ['@agentclientprotocol/sdk', '@agentclientprotocol/sdk/*'] },
  },
  'openai-agents': {
    code: `import { openAIAgentsTools, openAIAgentsHost } from 'subagent-tree/openai-agents';
console.log(openAIAgentsTools, openAIAgentsHost);`,
    options: { platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'], external: ['@openai/agents'] },
  },
  // The tracing entry imports nothing of OpenTelemetry: it takes the app's tracer.
  otel: {
    code: `import { instrument } from 'subagent-tree/otel';
console.log(instrument);`,
    options: { platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'] },
  },
};

const ADAPTERS = { 'ai-sdk': 'ai', mcp: '@modelcontextprotocol/sdk', acp: '@agentclientprotocol/sdk', 'openai-agents': '@openai/agents', otel: '@opentelemetry/api' };

for (const [name, { code, options }] of Object.entries(cases)) {
  test(`esbuild bundles the ${name} entry without warnings`, async () => {
    const entry = path.join(dir, `${name}-app.mjs`);
    writeFileSync(entry, code);
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      target: 'es2022',
      outdir: path.join(dir, `out-${name}`),
      metafile: true,
      logLevel: 'silent',
      ...options,
    });
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings.map((w) => `${w.id}: ${w.text} (${w.location?.file}:${w.location?.line})`), []);
    const inputs = Object.keys(result.metafile.inputs);
    // The bundle really is of the linked package, outside any node_modules.
    // (The adapter entry is plain JS over the runtime the app passes it: it loads no wasm.)
    assert.equal(inputs.some((f) => /(^|\/)subagent-tree\/subagent_tree\.js$/.test(f)), !ADAPTERS[name], inputs.join('\n'));
    assert.deepEqual(inputs.filter((f) => f.includes('node_modules')), []);
    const imported = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
    // Each adapter's library is imported by that adapter's entry alone.
    for (const [adapter, library] of Object.entries(ADAPTERS)) {
      if (adapter === 'otel') continue; // imports no library at all (the tracer is the app's)
      assert.equal(imported.some((i) => i === library || i.startsWith(`${library}/`)), name === adapter, `${name} imports: ${imported.join(', ')}`);
    }
    assert.ok(!imported.some((i) => i.startsWith('@opentelemetry/')), `${name} imports OpenTelemetry: ${imported.join(', ')}`);
  });
}
