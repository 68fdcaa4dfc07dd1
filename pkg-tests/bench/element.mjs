// <subagent-tree> in headless Chromium (issue 51): the latency from a turn's
// first streamed part (`turn.emit` in the host) to the element's live line
// holding it, i.e. the DOM update in the animation-frame callback of the frame
// that paints it. BENCH_ELEMENT_TURNS turns (default 40), each emitting its
// first part at a random moment (not aligned with frames). Goal: median <= 16 ms.
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join, extname, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageDir, entryFile } from './load.mjs';
import { record } from './results.mjs';

const TURNS = Number(process.env.BENCH_ELEMENT_TURNS ?? 40);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const { dir, from } = packageDir();
let chromium;
try {
  ({ chromium } = await import(pathToFileURL(join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'node_modules', 'playwright-core', 'index.mjs')).href));
} catch {
  chromium = null;
}
if (!chromium || !existsSync(CHROMIUM)) {
  console.log(`element: Chromium skipped (${!chromium ? 'playwright-core not installed in pkg-tests' : `no ${CHROMIUM}`})`);
  process.exit(0);
}

const entry = entryFile(dir, '.', 'browser');
const PAGE = `<!doctype html><body><script type="module">
  const { SubagentRuntime, MemoryStore } = await import('/${entry}');
  await import('/web/subagent-tree-element.js');
  let turn = null;
  let finish = null;
  const host = {
    async runTurn(t) {
      if (t.name !== 'streamer') return { messages: ['ok'] };
      turn = t;
      return { messages: [await new Promise((resolve) => (finish = resolve))] };
    },
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const lead = await runtime.openRoot({});
  const el = document.createElement('subagent-tree');
  el.runtime = runtime;
  el.root = lead;
  document.body.append(el);
  await el.ready;
  await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'streamer', label: 'Stream', prompt: 'go' });
  const line = () => el.shadowRoot.querySelector('[data-name="streamer"] > .row > .output.live');
  const until = (ok) => new Promise((resolve) => { const check = () => (ok() ? resolve() : setTimeout(check, 1)); check(); });
  window.measure = async (turns) => {
    const out = [];
    for (let i = 0; i < turns; i++) {
      if (i > 0) await runtime.prompt(lead, 'streamer', 'again');
      await until(() => turn && finish && line() === null);
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      const text = 'part-' + i;
      const seen = new Promise((resolve) => {
        const observer = new MutationObserver(() => {
          if (line()?.textContent === text) { observer.disconnect(); resolve(performance.now()); }
        });
        observer.observe(el.shadowRoot, { subtree: true, childList: true, characterData: true });
      });
      const t0 = performance.now();
      turn.emit({ type: 'text-delta', text });
      out.push((await seen) - t0);
      const done = finish;
      turn = finish = null;
      done('done ' + i);
      await runtime.waitForQuiescence(lead);
    }
    return out;
  };
  window.ready = true;
</script>`;

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const server = http.createServer((req, res) => {
  const path = new URL(req.url, 'http://127.0.0.1').pathname;
  if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  const file = join(dir, normalize(path.slice(1)));
  if (!file.startsWith(dir) || !existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.ready === true || false, null, { timeout: 30_000 });
  const xs = await page.evaluate((n) => window.measure(n), TURNS);
  if (errors.length) throw new Error(errors.join('\n'));
  const sorted = [...xs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const p90 = sorted[Math.floor(sorted.length * 0.9)];
  console.log(`element: first delta to the live line on screen, headless Chromium (${from}): median ${median.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, max ${sorted.at(-1).toFixed(1)} ms (${xs.length} turns)`);
  record('element.firstDelta.medianMs', median);
  record('element.firstDelta.p90Ms', p90);
} finally {
  await browser.close();
  server.close();
}
