// The demo page following a tree of the example edge worker (issue 56): in
// headless Chromium, `?worker=<url>&tree=<id>` feeds <subagent-tree> from the
// worker's listing and an EventSource of its Server-Sent Events (no relay); the
// worker runs in workerd through miniflare. Members spawned over HTTP appear
// live, a running turn shows as running, and after the worker restarts the
// page's EventSource resumes by itself and the view stays current.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exampleWorker } from '../test/edge-helpers.mjs';
import { hasRuntime, launch, startSite } from './helpers.mjs';

const skip = hasRuntime() ? false : 'the package has no SubagentRuntime yet';

let site, browser, example, persist;
before(async () => {
  if (skip) return;
  site = await startSite();
  browser = await launch();
  example = await exampleWorker();
  persist = await mkdtemp(path.join(os.tmpdir(), 'demo-worker-'));
});
after(async () => {
  await browser?.close();
  await site?.close();
  await example?.cleanup();
  if (persist) await rm(persist, { recursive: true, force: true });
});

/** The tree's visible rows in the page: `name:activity`. */
const shown = (page) =>
  page.evaluate(() =>
    [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')]
      .filter((li) => li.checkVisibility())
      .map((li) => `${li.querySelector(':scope > .row > .name').textContent}:${li.querySelector(':scope > .row .badge.activity')?.textContent ?? ''}`),
  );

test('the demo follows a worker\'s tree over Server-Sent Events, live and across a restart of the worker', { skip }, async () => {
  const origin = new URL(site.url).origin;
  const bindings = { CORS_ORIGIN: origin };
  let mf = example.start(persist, bindings);
  try {
    const base = (await mf.ready).toString();
    const post = async (url, body) => {
      const res = await fetch(new URL(url, base), { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
      assert.ok(res.status < 300, `${url}: ${res.status} ${await res.clone().text()}`);
      return res.json();
    };
    const tree = (await post('/trees')).id;
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => process.env.DEBUG_DEMO && console.log('console', m.text()));
    page.on('response', (r) => process.env.DEBUG_DEMO && r.status() >= 400 && console.log('response', r.status(), r.url()));
    await page.goto(new URL(`?worker=${encodeURIComponent(base)}&tree=${tree}`, site.url).href);
    await page.waitForFunction(() => document.body.dataset.stream === 'open', null, { timeout: 20_000 });
    assert.match(await page.textContent('#role'), /following a worker's tree/);
    // Spawned over HTTP; the page hears it on its stream (it reads nothing else).
    await post(`/trees/${tree}/spawn`, { name: 'reviewer', label: 'Review', prompt: 'Review the patch [hold]' });
    await post(`/trees/${tree}/spawn`, { parent: 'reviewer', name: 'checker', label: 'Check', prompt: 'Check the tests' });
    const waitFor = (expected) =>
      page.waitForFunction(
        (expected) => {
          const items = [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')].filter((li) => li.checkVisibility());
          const got = items.map((li) => `${li.querySelector(':scope > .row > .name').textContent}:${li.querySelector(':scope > .row .badge.activity')?.textContent ?? ''}`);
          return expected.every((e) => got.includes(e));
        },
        expected,
        { timeout: 20_000, polling: 50 },
      );
    await waitFor(['reviewer:running', 'reviewer/checker:settled']);
    // The worker restarts (every object with it): the page's EventSource reconnects with its
    // Last-Event-ID and what happened meanwhile reaches the view.
    await mf.dispose();
    mf = example.start(persist, bindings, { host: '127.0.0.1', port: Number(new URL(base).port) });
    assert.equal((await mf.ready).toString(), base, 'the same address');
    await post(`/trees/${tree}/spawn`, { name: 'writer', label: 'Write', prompt: 'Draft the notes' });
    await waitFor(['writer:settled']);
    await page.waitForFunction(() => document.body.dataset.stream === 'open');
    const rows = await shown(page);
    assert.ok(rows.includes('reviewer/checker:settled') && rows.some((r) => r.startsWith('reviewer:')), rows.join(' '));
    assert.deepEqual(errors, []);
  } finally {
    await mf.dispose();
  }
});
