// The cargo runner of the wasm-bindgen test suites in headless Chromium
// (scripts/test-wasm.sh sets CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER to it).
//
// wasm-bindgen-test-runner builds the suite's page (its glue, snippets and
// run.js) and serves it; in its own headless mode chromedriver loads it, and
// now and then its server never answers one request, so the page never
// finishes loading (wasm-pack#783; about one start in five here). So the
// runner only builds: started interactive with the build kept, it is stopped
// once it names the folder, and the page is served from Node and loaded in
// Debian's Chromium under playwright-core, as pkg-tests/web does. The
// harness writes its report into the page; this prints it and exits with the
// harness's verdict.
//   node scripts/wasm-browser-runner.mjs target/wasm32-unknown-unknown/debug/deps/wasm_x.wasm
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const wasm = process.argv[2];
if (!wasm) throw new Error('usage: node scripts/wasm-browser-runner.mjs <test.wasm> [args]');
const timeoutMs = Number(process.env.WASM_BINDGEN_TEST_TIMEOUT ?? 120) * 1000;
const { chromium } = createRequire(path.join(ROOT, 'pkg-tests', 'package.json'))('playwright-core');

/** Runs the real runner until it has written the page's files; resolves with their folder. */
function build() {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, NO_HEADLESS: '1', WASM_BINDGEN_KEEP_TEST_BUILD: '1', WASM_BINDGEN_USE_BROWSER: '1' };
    const child = spawn('wasm-bindgen-test-runner', [wasm], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let dir;
    const seen = (chunk) => {
      out += chunk;
      dir ??= /Retaining temporary build output folder: (\S+)/.exec(out)?.[1];
      // The server is up once the page is complete: stop it, the folder stays.
      if (dir && /available at http/.test(out)) {
        child.kill('SIGKILL');
        resolve(dir);
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!dir || !/available at http/.test(out)) reject(new Error(`wasm-bindgen-test-runner ended (${code}) before its page was built:\n${out}`));
    });
  });
}

const PAGE = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head>
<body>
<pre id="output">Loading scripts...</pre>
<pre id="console_output"></pre>
<script>
  const is_bench = false;
  for (const method of ['debug', 'log', 'info', 'warn', 'error']) {
    const og = console[method];
    console[method] = function (...args) {
      if (window['on_console_' + method]) window['on_console_' + method](args);
      og.apply(this, args);
    };
  }
  window.__wbg_test_invoke = (f) => f();
</script>
<script src="run.js" type="module"></script>
</body></html>`;

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

/** Serves the page and the folder (an import of `./x` without `.js` gets `x.js`, as the runner's server does). */
function serve(dir) {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
      return;
    }
    let file = path.join(dir, path.normalize(url).replace(/^(\.\.[/\\])+/, ''));
    if (!existsSync(file) && existsSync(`${file}.js`)) file = `${file}.js`;
    if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const dir = await build();
const server = await serve(dir);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
let report = '';
let code = 1;
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  // The harness's last line: `test result: ok. N passed; ...` or `test result: FAILED. ...`.
  const done = await page
    .waitForFunction(() => /test result: (ok|FAILED)/.test(document.getElementById('output')?.textContent ?? ''), null, { timeout: timeoutMs, polling: 200 })
    .then(() => true, () => false);
  report = await page.evaluate(() => `${document.getElementById('output')?.textContent ?? ''}\n${document.getElementById('console_output')?.textContent ?? ''}`.trim());
  if (errors.length) report += `\n${errors.join('\n')}`;
  if (!done) report += `\nno test result within ${timeoutMs / 1000} s`;
  else code = /test result: ok/.test(report) ? 0 : 1;
} finally {
  await browser.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(report);
process.exit(code);
