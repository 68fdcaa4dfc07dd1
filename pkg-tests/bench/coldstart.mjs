// Cold start (issue 15): the time from importing the package to its first
// listing (a 3-member tree in the package's MemoryStore), in Node, headless
// Chromium and workerd; the full entry and `subagent-tree/lite`. Each run is
// a fresh process (Node), a fresh browser context with an empty cache
// (Chromium) or a fresh workerd (miniflare). BENCH_COLD_RUNS (default 5).
//
// Node and Chromium time inside the process (performance.now() before the
// dynamic import, after the listing). workerd freezes its clocks while a
// request runs, so it is timed from Node on a fresh workerd: the first request
// that imports the entry and lists, minus a plain request just before it.
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, extname, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { packageDir, entryFile } from './load.mjs';
import { record } from './results.mjs';

const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 5);
const { dir, from } = packageDir();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const show = (label, xs, key) => {
  console.log(`${label.padEnd(72)} ${median(xs).toFixed(1).padStart(8)} ms   (median of ${xs.length}; min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`);
  record(key, median(xs));
};

// The page/worker body: import, then one listing; resolves the elapsed ms.
const BODY = (url) => `
  const t0 = performance.now();
  const { MemoryStore, listDescendants } = await import(${JSON.stringify(url)});
  const store = new MemoryStore();
  await store.append('root', [{ seq: 0, type: 'subagent/catalog', payload: { version: 3, childId: 'a', childCreatedAt: 1, mode: 'one-shot', name: 'a' } },
    { seq: 1, type: 'subagent/catalog', payload: { version: 3, childId: 'b', childCreatedAt: 1, mode: 'one-shot', name: 'b' } }]);
  await store.append('a', [{ seq: 0, type: 'subagent/catalog', payload: { version: 3, childId: 'c', childCreatedAt: 1, mode: 'one-shot', name: 'c' } }]);
  const rows = await listDescendants(store, 'root');
  if (rows.length !== 3) throw new Error('listed ' + rows.length);
  const ms = performance.now() - t0;`;

console.log(`subagent-tree cold start: import to first listing (${from})\n`);

for (const [key, label] of [['.', 'full'], ['./lite', 'lite']]) {
  const url = pathToFileURL(join(dir, entryFile(dir, key, 'node'))).href;
  const xs = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `${BODY(url)} process.stdout.write(String(ms));`], { encoding: 'utf8' });
    xs.push(Number(out));
  }
  show(`cold start: Node, ${label} entry (fresh process)`, xs, `cold.node.${label}`);
}

// Headless Chromium: the package served from 127.0.0.1 (application/wasm, so streaming compile).
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
let chromium;
try {
  ({ chromium } = await import(pathToFileURL(join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'node_modules', 'playwright-core', 'index.mjs')).href));
} catch {
  chromium = null;
}
if (!chromium || !existsSync(CHROMIUM)) {
  console.log(`cold start: Chromium skipped (${!chromium ? 'playwright-core not installed in pkg-tests' : `no ${CHROMIUM}`})`);
} else {
  const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
  let page = '';
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, 'http://127.0.0.1').pathname;
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    const file = join(dir, normalize(path.slice(1)));
    if (!file.startsWith(dir) || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    for (const [key, label] of [['.', 'full'], ['./lite', 'lite']]) {
      const entry = entryFile(dir, key, 'browser');
      page = `<!doctype html><script type="module">try { ${BODY(`${origin}/${entry}`)} window.__ms = ms; } catch (e) { window.__ms = String(e); }</script>`;
      const xs = [];
      for (let i = 0; i < RUNS; i++) {
        const context = await browser.newContext(); // an empty cache each run
        const tab = await context.newPage();
        await tab.goto(`${origin}/`);
        await tab.waitForFunction(() => window.__ms !== undefined);
        const ms = await tab.evaluate(() => window.__ms);
        await context.close();
        if (typeof ms !== 'number') throw new Error(`Chromium: ${ms}`);
        xs.push(ms);
      }
      show(`cold start: headless Chromium, ${label} entry (fresh context)`, xs, `cold.chromium.${label}`);
    }
  } finally {
    await browser.close();
    server.close();
  }
}

// workerd through miniflare.
let Miniflare;
try {
  ({ Miniflare } = await import(pathToFileURL(join(new URL('.', import.meta.url).pathname, '..', 'node_modules', 'miniflare', 'dist', 'src', 'index.js')).href));
} catch {
  Miniflare = null;
}
if (!Miniflare) {
  console.log('cold start: workerd skipped (miniflare not installed in pkg-tests)');
} else {
  const files = readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.js') || f.endsWith('.wasm'));
  // One worker: `/` answers at once; `/full` and `/lite` import that entry and list.
  const routes = [['.', 'full'], ['./lite', 'lite']]
    .map(([key, label]) => `if (path === '/${label}') { ${BODY(`./${entryFile(dir, key, 'workerd')}`)} return Response.json({ ms }); }`)
    .join('\n');
  const source = `export default { async fetch(request) { const path = new URL(request.url).pathname; ${routes} return new Response('ok'); } };`;
  const modules = [{ type: 'ESModule', path: join(dir, '__bench_worker.mjs'), contents: source }];
  for (const f of files) modules.push({ type: f.endsWith('.wasm') ? 'CompiledWasm' : 'ESModule', path: join(dir, f) });
  const request = async (mf, path) => {
    const t0 = performance.now();
    const res = await mf.dispatchFetch(`http://localhost${path}`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`workerd ${path}: ${res.status} ${text}`);
    return performance.now() - t0;
  };
  // workerd freezes its clocks while a request runs, so each figure is timed
  // from Node on one running workerd: the first request that imports the entry
  // and lists, minus a request that imports nothing, just before it (the
  // request's own cost). workerd compiles the .wasm modules when it starts,
  // so that is in the start-up figure below, not in these.
  const startup = [];
  const net = { full: [], lite: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const label of ['full', 'lite']) {
      const t0 = performance.now();
      const mf = new Miniflare({ modules, modulesRoot: dir, compatibilityDate: '2025-01-01' });
      try {
        await request(mf, '/');
        if (label === 'full') startup.push(performance.now() - t0);
        const plain = await request(mf, '/');
        net[label].push((await request(mf, `/${label}`)) - plain);
      } finally {
        await mf.dispose();
      }
    }
  }
  show('cold start: workerd, start to a first answer (compiles both .wasm)', startup, 'cold.workerd.baseline');
  for (const label of ['full', 'lite']) {
    show(`cold start: workerd, ${label} entry (first import + listing, minus a plain request)`, net[label], `cold.workerd.${label}`);
  }
}
