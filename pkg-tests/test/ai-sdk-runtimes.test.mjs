// subagent-tree/ai-sdk in real workerd (through miniflare) and headless
// Chromium: the shared three-level scenario (ai-sdk-tree.mjs), bundled with
// the AI SDK by esbuild as an app would be (the workerd condition, the .wasm
// kept as a module of its own; for the page, the adapter and the SDK in a
// bundle served same-origin, the runtime the page's own).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { launch, startSite, openFixture } from '../web/helpers.mjs';
import { THREE_LEVELS } from './ai-sdk-tree.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.join(here, '..', `.ai-sdk-${process.pid}`);
before(() => mkdirSync(dir, { recursive: true }));
after(() => rmSync(dir, { recursive: true, force: true }));

async function bundle(name, code, options) {
  const entry = path.join(here, `.${name}-${process.pid}.mjs`);
  writeFileSync(entry, code);
  try {
    const result = await build({ entryPoints: [entry], bundle: true, format: 'esm', target: 'es2022', outdir: path.join(dir, name), logLevel: 'silent', ...options });
    assert.deepEqual(result.errors, []);
  } finally {
    rmSync(entry, { force: true });
  }
  return path.join(dir, name);
}

test('aiSdkHost runs the three-level tree in workerd', async () => {
  const out = await bundle(
    'workerd',
    `import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { threeLevelTree } from './ai-sdk-tree.mjs';
export default {
  async fetch() {
    try {
      return Response.json(await threeLevelTree({ SubagentRuntime, MemoryStore }));
    } catch (e) {
      return new Response(String(e?.stack ?? e), { status: 500 });
    }
  },
};`,
    { platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'], loader: { '.wasm': 'copy' } },
  );
  const modules = readdirSync(out).map((f) => (f.endsWith('.wasm') ? { type: 'CompiledWasm', path: path.join(out, f) } : { type: 'ESModule', path: path.join(out, f) }));
  const mf = new Miniflare({ modules, modulesRoot: out, compatibilityDate: '2025-01-01', compatibilityFlags: ['nodejs_compat'] });
  try {
    const response = await mf.dispatchFetch('http://localhost/');
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const body = JSON.parse(text);
    assert.deepEqual({ stop: body.stop, paths: body.paths, deltas: body.deltas }, THREE_LEVELS);
    assert.equal(body.turns, 5);
  } finally {
    await mf.dispose();
  }
});

test('aiSdkHost runs the three-level tree in Chromium', async () => {
  const out = await bundle('browser', `export { threeLevelTree } from './ai-sdk-tree.mjs';`, { platform: 'browser' });
  const code = readFileSync(path.join(out, readdirSync(out).find((f) => f.endsWith('.js'))), 'utf8');
  const site = await startSite();
  const browser = await launch();
  try {
    const context = await browser.newContext();
    await context.route('**/ai-sdk-tree.js', (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: code }));
    const page = await openFixture(context, site.url);
    const body = await page.evaluate(async () => {
      const { threeLevelTree } = await import('/ai-sdk-tree.js');
      const { SubagentRuntime, MemoryStore } = window.lib;
      return threeLevelTree({ SubagentRuntime, MemoryStore });
    });
    assert.deepEqual({ stop: body.stop, paths: body.paths, deltas: body.deltas }, THREE_LEVELS);
    assert.equal(body.turns, 5);
    page.check();
  } finally {
    await browser.close();
    await site.close();
  }
});
