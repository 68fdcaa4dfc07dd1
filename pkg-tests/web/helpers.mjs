// Shared set-up of the browser tests: the demo site (www/ + pkg/, assembled
// by scripts/demo.sh) plus the fixture pages under /test/, served on a free
// port of 127.0.0.1, and Debian's Chromium driven headless by playwright-core.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { startServer } from '../../www/serve.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCREENSHOTS = path.join(ROOT, 'pkg-tests/test-results/screenshots');

/** Whether the package has the live runtime (the demo page needs it). */
export function hasRuntime() {
  try {
    return readFileSync(path.join(ROOT, 'pkg/subagent_tree.d.ts'), 'utf8').includes('SubagentRuntime');
  } catch {
    return false;
  }
}

export async function startSite() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'subagent-tree-site-'));
  execFileSync('bash', [path.join(ROOT, 'scripts/demo.sh'), '--assemble-only', dir], { cwd: ROOT, stdio: 'inherit' });
  cpSync(path.join(ROOT, 'pkg-tests/web/fixtures'), path.join(dir, 'test'), { recursive: true });
  const site = await startServer({ root: dir, port: 0 });
  return {
    url: site.url,
    async close() {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The site and a browser context for a test file: started in `before`,
 * closed in `after`. Read `env.site` and `env.context` inside tests.
 */
export function browserSuite() {
  const env = { site: null, browser: null, context: null };
  before(async () => {
    env.site = await startSite();
    env.browser = await launch();
    env.context = await env.browser.newContext();
  });
  after(async () => {
    await env.browser?.close();
    await env.site?.close();
  });
  return env;
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * A new page that records page errors, console errors and dialogs; `check()`
 * throws if any happened (call it at the end of a test).
 */
export async function watchedPage(context) {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog (${d.type()}): ${d.message()}`);
    void d.dismiss();
  });
  page.problems = problems;
  page.check = () => {
    if (problems.length) throw new Error(`the page reported:\n${problems.join('\n')}`);
  };
  return page;
}

export async function openFixture(context, url) {
  const page = await watchedPage(context);
  await page.goto(`${url}test/index.html`);
  await page.waitForFunction(() => window.fixtureReady === true);
  return page;
}

export async function screenshot(page, name, target, options = {}) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await (target ?? page).screenshot({ ...options, path: file });
  return file;
}
