// Runs one page in headless Chromium (Debian's, through playwright-core; no
// download) against the installed package, served from 127.0.0.1, and returns
// what the page left in `window.__result`.
import http from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.join(here, '..', 'node_modules', 'subagent-tree');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
/** A reason to skip when the browser is missing, for `test(name, { skip }, fn)`. */
export const skipWithoutChromium = !existsSync(CHROMIUM) && `no ${CHROMIUM}`;
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.json': 'application/json' };

/**
 * Serves `page(entry)` at `/` (where `entry` is the package's browser entry,
 * from its `exports` map) and the package under `/pkg/`, loads it, and
 * resolves `{ result, consoleErrors, served, entry }`.
 */
export async function runPage(page) {
  const pkgJson = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8'));
  const entry = pkgJson.exports['.'].browser.replace(/^\.\//, '');
  const served = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    served.push(url.pathname);
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(page(entry));
      return;
    }
    const rel = url.pathname.startsWith('/pkg/') ? url.pathname.slice(5) : null;
    const file = rel && path.join(pkgDir, path.normalize(rel));
    if (!file || !file.startsWith(pkgDir) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' }).end(await readFile(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const profile = await mkdtemp(path.join(tmpdir(), 'subagent-tree-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true });
  try {
    const tab = context.pages()[0] ?? (await context.newPage());
    const consoleErrors = [];
    tab.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    tab.on('pageerror', (e) => consoleErrors.push(String(e)));
    await tab.goto(`http://127.0.0.1:${port}/`);
    await tab.waitForFunction(() => window.__result !== undefined, null, { timeout: 30_000 });
    const result = await tab.evaluate(() => window.__result);
    return { result, consoleErrors, served, entry };
  } finally {
    await context.close();
    server.close();
    await rm(profile, { recursive: true, force: true });
  }
}
