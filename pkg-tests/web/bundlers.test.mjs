// A page built with a bundler, as a user builds one, loaded in headless
// Chromium: esbuild (which copies no assets: the README's recipe copies the
// two .wasm files, and without them the error says how to serve them) and
// Vite (which emits the .wasm files itself, in a build and in its dev server). Each page runs a tree with the
// full runtime and shows one with <subagent-tree> over a store (the lite
// module, loaded on first use).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { build as viteBuild } from 'vite';
import { startServer } from '../../www/serve.mjs';
import { ROOT, launch, watchedPage } from './helpers.mjs';

const PACKAGE = path.join(ROOT, 'pkg-tests/node_modules/subagent-tree');
// Under pkg-tests, so `subagent-tree` resolves to the installed package as in a user's project.
const APP = path.join(ROOT, 'pkg-tests', `.bundlers-${process.pid}`);

const MAIN = `import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import 'subagent-tree/element';

const store = new MemoryStore();
const runtime = new SubagentRuntime({ store, host: { runTurn: (turn) => ({ messages: [turn.name + ' done'] }) } });
const lead = await runtime.openRoot();
await runtime.startActivation({ parent: lead, name: 'reviewer', label: 'Review', prompt: 'go' });
await runtime.waitForQuiescence(lead);
const names = (el) => [...el.shadowRoot.querySelectorAll('[role="treeitem"]')].map((li) => li.querySelector('.name').textContent);

const live = document.body.appendChild(document.createElement('subagent-tree'));
live.runtime = runtime;
live.root = lead;
await live.ready;
const reader = document.body.appendChild(document.createElement('subagent-tree'));
reader.store = store; // listed with the lite module, loaded on first use
reader.rootId = lead.sessionId;
await reader.ready;
window.result = { live: names(live), reader: names(reader) };
`;
const HTML = '<!doctype html>\n<meta charset="utf-8">\n<title>bundled</title>\n<link rel="icon" href="data:,">\n<script type="module" src="./main.js"></script>\n<body></body>\n';

let browser, context;
const servers = [];
before(async () => {
  rmSync(APP, { recursive: true, force: true });
  mkdirSync(APP, { recursive: true });
  writeFileSync(path.join(APP, 'main.js'), MAIN);
  writeFileSync(path.join(APP, 'index.html'), HTML);
  browser = await launch();
  context = await browser.newContext();
});
after(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  rmSync(APP, { recursive: true, force: true });
});

/** Serves `dir`, opens its page, and resolves what the page computed (or the error it threw). */
async function load(dir) {
  const server = await startServer({ root: dir, port: 0 });
  servers.push(server);
  const page = await watchedPage(context);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.url}index.html`);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 20_000 }).catch(() => {});
  const result = await page.evaluate(() => window.result);
  await page.close();
  return { result, errors };
}

async function esbuildPage(name, { copyWasm }) {
  const out = path.join(APP, name);
  const result = await build({
    entryPoints: [path.join(APP, 'main.js')],
    bundle: true,
    splitting: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    outdir: out,
    logLevel: 'silent',
  });
  assert.deepEqual([...result.errors, ...result.warnings], []);
  copyFileSync(path.join(APP, 'index.html'), path.join(out, 'index.html'));
  // The README's recipe: esbuild copies no assets, so the .wasm files go beside the bundle.
  if (copyWasm) {
    for (const wasm of ['subagent_tree_bg.wasm', 'subagent_tree_lite_bg.wasm']) copyFileSync(path.join(PACKAGE, wasm), path.join(out, wasm));
  }
  return out;
}

const EXPECTED = { live: ['lead', 'reviewer'], reader: ['lead', 'reviewer'] };

test('esbuild: with the two .wasm files copied beside the bundle, the page runs a tree and shows one from a store', async () => {
  const { result, errors } = await load(await esbuildPage('esbuild', { copyWasm: true }));
  assert.deepEqual(errors, []);
  assert.deepEqual(result, EXPECTED);
});

test('esbuild: without them, the page fails with an error that says which file to serve and where', async () => {
  const { result, errors } = await load(await esbuildPage('esbuild-bare', { copyWasm: false }));
  assert.equal(result, undefined);
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(errors[0], /^subagent-tree could not load its WebAssembly module from http:\/\/127\.0\.0\.1:\d+\/subagent_tree_bg\.wasm \(/);
  assert.match(errors[0], /node_modules\/subagent-tree\/subagent_tree_bg\.wasm, and subagent_tree_lite_bg\.wasm/);
  assert.match(errors[0], /"Bundlers" in the README/);
});

test('Vite: a production build with no configuration emits both .wasm files; the page runs a tree and shows one from a store', async () => {
  const out = path.join(APP, 'vite-dist');
  await viteBuild({ root: APP, logLevel: 'silent', configFile: false, build: { outDir: out, emptyOutDir: true } });
  const assets = readdirSync(path.join(out, 'assets'));
  assert.ok(assets.some((f) => /^subagent_tree_bg-.*\.wasm$/.test(f)), assets.join(', '));
  assert.ok(assets.some((f) => /^subagent_tree_lite_bg-.*\.wasm$/.test(f)), assets.join(', '));
  const { result, errors } = await load(out);
  assert.deepEqual(errors, []);
  assert.deepEqual(result, EXPECTED);
});

test('Vite: the dev server, with no configuration, serves a page that runs', async () => {
  const { createServer } = await import('vite');
  const server = await createServer({
    root: APP,
    logLevel: 'silent',
    configFile: false,
    server: { port: 0, host: '127.0.0.1' },
  });
  await server.listen();
  servers.push({ close: () => server.close() });
  const page = await watchedPage(context);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.resolvedUrls.local[0]);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 }).catch(() => {});
  const result = await page.evaluate(() => window.result);
  await page.close();
  assert.deepEqual(errors, []);
  assert.deepEqual(result, EXPECTED);
});
