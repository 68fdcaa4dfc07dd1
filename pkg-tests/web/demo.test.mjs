// The demo page (www/) end to end in headless Chromium: the scripted opening,
// the tree with full names, spawning with a name (and a duplicate / invalid
// one), messaging by name, interrupting, keyboard navigation, reloading the
// same tree from IndexedDB (cold) and resuming a cold member, a second tab
// that follows read-only and takes over when the driving tab closes, and
// hostile text that stays text. Screenshots go to pkg-tests/test-results/screenshots/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hasRuntime, launch, screenshot, startSite, watchedPage } from './helpers.mjs';

const skip = hasRuntime() ? false : 'the package has no SubagentRuntime yet';
const QUERY = '?db=demo-e2e&think=150';

let site, browser, context, page, second;
before(async () => {
  if (skip) return;
  site = await startSite();
  browser = await launch();
  context = await browser.newContext({ viewport: { width: 1200, height: 760 } });
});
after(async () => {
  await browser?.close();
  await site?.close();
});

/** Visible tree rows of a page: [{ id, name, label, activity, level, ... }]. */
const rows = (p) =>
  p.evaluate(() =>
    [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')]
      .filter((li) => li.checkVisibility())
      .map((li) => ({
        id: li.dataset.sessionId,
        name: li.querySelector(':scope > .row > .name').textContent,
        label: li.querySelector(':scope > .row > .label')?.textContent,
        activity: li.querySelector(':scope > .row > .badge.activity')?.textContent,
        level: Number(li.getAttribute('aria-level')),
        selected: li.getAttribute('aria-selected'),
        focused: li.getRootNode().activeElement === li,
      })),
  );
const names = async (p) => (await rows(p)).map((r) => r.name);

async function waitFor(p, fn, arg, timeout = 20_000) {
  await p.waitForFunction(fn, arg, { timeout, polling: 50 });
}

/** Waits until the tree shows exactly these names (in order) and none is running. */
async function waitForSettledTree(p, expected) {
  await waitFor(
    p,
    (expected) => {
      const items = [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')].filter((li) => li.checkVisibility());
      const got = items.map((li) => li.querySelector(':scope > .row > .name').textContent);
      const busy = items.some((li) => li.querySelector(':scope > .row > .badge.activity')?.textContent === 'running');
      return JSON.stringify(got) === JSON.stringify(expected) && !busy;
    },
    expected,
  );
}

const item = (p, name) => p.locator(`subagent-tree [role="treeitem"][data-name="${name}"] > .row`);

async function select(p, name) {
  await item(p, name).click();
  await waitFor(p, (name) => document.getElementById('selected-name').textContent === name, name);
}

const transcript = (p) =>
  p.evaluate(() =>
    [...document.querySelectorAll('#transcript > li.entry')].map((li) => ({
      kind: li.dataset.kind,
      stop: li.dataset.stopReason,
      meta: li.querySelector('.meta').textContent,
      body: li.querySelector('.body').textContent,
    })),
  );

/** Polls the transcript (from Node: the page's CSP rightly forbids evaluating strings) until `predicate(entries)`. */
async function waitForTranscript(p, predicate, timeout = 20_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const entries = await transcript(p);
    if (predicate(entries)) return entries;
    if (Date.now() > deadline) throw new Error(`transcript never matched ${predicate}:\n${JSON.stringify(entries, null, 1)}`);
    await p.waitForTimeout(50);
  }
}

async function result(p) {
  await waitFor(p, () => document.getElementById('result').textContent.trim() !== '');
  const r = await p.evaluate(() => {
    const out = document.getElementById('result');
    return { kind: out.className.includes('error') ? 'error' : 'ok', code: out.querySelector('.code')?.textContent, text: out.textContent };
  });
  return r;
}

const clearResult = (p) =>
  p.evaluate(() => {
    document.getElementById('result').textContent = '';
  });

async function spawn(p, name, label) {
  await clearResult(p);
  await p.fill('#spawn-name', name);
  await p.fill('#spawn-label', label);
  await p.click('#spawn-form button[type="submit"]');
  return result(p);
}

async function message(p, to, text, { long = false } = {}) {
  await clearResult(p);
  await p.fill('#message-to', to);
  await p.fill('#message-text', text);
  if (long) await p.check('#message-long');
  await p.click('#message-form button[type="submit"]');
  return result(p);
}

const OPENING_TREE = ['lead', 'reviewer', 'reviewer/checker', 'writer'];

describe('demo page', { skip }, () => {
  test('loads and plays the opening: lead spawns named children that spawn their own, message by name, and settle', async () => {
    page = await watchedPage(context);
    await page.goto(site.url + QUERY);
    await waitFor(page, () => document.body.dataset.ready === 'true');
    assert.equal(await page.locator('#role').textContent(), 'this tab drives the tree');
    await waitForSettledTree(page, OPENING_TREE);
    const r = await rows(page);
    assert.deepEqual(r.map((x) => [x.name, x.level, x.activity ?? null]), [
      ['lead', 1, 'inactive'], // the root row shows its own turns: lead ran the opening,
      ['reviewer', 2, 'inactive'],
      ['reviewer/checker', 3, 'inactive'],
      ['writer', 2, 'inactive'],
    ]);
    assert.equal(r[1].label, 'Review the 1.0 change');
    // lead's transcript: the user's prompt, then both settlement notices, then its wrap-up.
    await waitForTranscript(page, (entries) => entries.some((e) => e.body.includes('the 1.0 release is ready')));
    const t = await transcript(page);
    assert.equal(t[0].kind, 'user');
    assert.ok(t.some((e) => e.kind === 'subagent-settled' && e.meta.includes('reviewer settled')));
    assert.ok(t.some((e) => e.kind === 'subagent-settled' && e.meta.includes('writer settled')));
    // writer got reviewer's message by name, framed as an agent message.
    await select(page, 'writer');
    await waitForTranscript(page, (entries) => entries.some((e) => e.kind === 'turn'));
    const w = await transcript(page);
    assert.ok(w.some((e) => e.body.includes('such as reviewer/checker')), JSON.stringify(w));
    await select(page, 'lead');
    await screenshot(page, 'demo-tree');
    page.check();
  });

  test('spawns a child with a name under the selected member; duplicate and invalid names show the library error', async () => {
    await select(page, 'reviewer'); // settled: cold, so it is resumed to start the child
    let r = await spawn(page, 'auditor', 'Audit the dependencies');
    assert.deepEqual([r.kind, r.text], ['ok', 'Started reviewer/auditor under reviewer.']);
    await waitFor(page, () =>
      [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')].some((li) => li.dataset.name === 'reviewer/auditor'),
    );
    r = await spawn(page, 'auditor', 'Audit again');
    assert.equal(r.kind, 'error');
    assert.equal(r.code, 'DUPLICATE_NAME');
    assert.match(r.text, /agent name "auditor" is already taken among the children of "reviewer"/);
    await screenshot(page, 'demo-duplicate-name');
    r = await spawn(page, 'Bad Name', 'Nope');
    assert.equal(r.code, 'INVALID_NAME');
    assert.match(r.text, /"Bad Name"/);
    await waitForSettledTree(page, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer']);
    page.check();
  });

  test('sends a message to a member by full name; an unknown name is refused', async () => {
    let r = await message(page, 'reviewer/checker', 'Please rerun the flaky test.');
    assert.deepEqual([r.kind, r.text], ['ok', 'Delivered to reviewer/checker.']);
    await select(page, 'reviewer/checker');
    await waitForTranscript(page, (entries) => entries.some((e) => e.kind === 'turn' && e.body.includes('Done: "Please rerun the flaky test."')));
    const t = await transcript(page);
    assert.ok(t.some((e) => e.kind === 'user' && e.body === 'Please rerun the flaky test.'));
    r = await message(page, 'reviewer/nobody', 'Hello?');
    assert.equal(r.code, 'UNKNOWN_AGENT');
    await screenshot(page, 'demo-message');
    page.check();
  });

  test('interrupts a running member', async () => {
    await select(page, 'writer');
    const r = await message(page, 'writer', 'Rewrite every section from scratch.', { long: true });
    assert.equal(r.kind, 'ok');
    await waitFor(page, () => {
      const li = document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="writer"]');
      return li.querySelector(':scope > .row > .badge.activity')?.textContent === 'running';
    });
    await clearResult(page);
    await page.click('#interrupt');
    assert.deepEqual(await result(page), { kind: 'ok', code: undefined, text: 'Interrupted writer: its turn was stopped.' });
    await waitForTranscript(page, (entries) => entries.some((e) => e.kind === 'turn' && e.stop === 'aborted'));
    // After the stopped turn the badge no longer says running and Interrupt is no longer offered.
    await waitFor(page, () => {
      const li = document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="writer"]');
      return li.querySelector(':scope > .row > .badge.activity')?.textContent === 'inactive' && document.querySelector('#interrupt').disabled;
    });
    await screenshot(page, 'demo-interrupt');
    page.check();
  });

  test('keyboard navigation moves through the tree and Enter selects', async () => {
    await page.locator('subagent-tree [data-name="lead"]').focus();
    const focused = async () => (await rows(page)).find((x) => x.focused)?.name;
    assert.equal(await focused(), 'lead');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'reviewer/checker');
    await page.keyboard.press('End');
    assert.equal(await focused(), 'writer');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowLeft'); // reviewer: collapse
    assert.deepEqual(await names(page), ['lead', 'reviewer', 'writer']);
    await page.keyboard.press('ArrowRight'); // expand again
    await page.keyboard.press('ArrowRight'); // first child
    await page.keyboard.press('Enter');
    await waitFor(page, () => document.getElementById('selected-name').textContent === 'reviewer/checker');
    assert.equal((await rows(page)).find((x) => x.selected === 'true').name, 'reviewer/checker');
    page.check();
  });

  test('reload brings back the same tree with the same names from IndexedDB (cold); a message resumes a cold member', async () => {
    const before = (await rows(page)).map((x) => [x.id, x.name]);
    await page.reload();
    await waitFor(page, () => document.body.dataset.ready === 'true');
    await waitForSettledTree(page, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer']);
    const after = await rows(page);
    assert.deepEqual(after.map((x) => [x.id, x.name]), before, 'same Session ids, same full names');
    assert.ok(after.slice(1).every((x) => x.activity === 'inactive'), 'every member is cold after a reload');
    await screenshot(page, 'demo-reloaded');
    // The interrupted writer is cold now; a message resumes it from its log.
    await select(page, 'writer');
    const r = await message(page, 'writer', 'Just fix the typos, please.');
    assert.equal(r.kind, 'ok');
    await waitForTranscript(page, (entries) => entries.some((e) => e.kind === 'turn' && e.body.includes('Done: "Just fix the typos, please."')));
    const t = await transcript(page);
    assert.ok(t.some((e) => e.kind === 'turn' && e.stop === 'aborted'), 'the transcript from before the reload is kept');
    await waitForSettledTree(page, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer']);
    page.check();
  });

  test('a second tab follows read-only and stays current', async () => {
    second = await watchedPage(context);
    await second.goto(site.url + QUERY);
    await waitFor(second, () => document.body.dataset.ready === 'true');
    assert.equal(await second.locator('#role').textContent(), 'read-only (another tab drives this tree)');
    assert.equal(await second.evaluate(() => document.getElementById('controls').disabled), true);
    assert.equal(await second.locator('#spawn-form button').isDisabled(), true);
    assert.equal(await second.locator('#message-text').isDisabled(), true);
    await waitForSettledTree(second, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer']);
    assert.deepEqual(await names(second), await names(page));
    // The driving tab spawns; the follower sees the new member without driving anything.
    await select(page, 'lead');
    const r = await spawn(page, 'tester', 'Try the release build');
    assert.equal(r.kind, 'ok');
    await waitForSettledTree(second, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer', 'tester']);
    await select(second, 'tester');
    await waitForTranscript(second, (entries) => entries.some((e) => e.kind === 'turn'));
    await screenshot(second, 'demo-follower');
    page.check();
    second.check();
  });

  test('hostile labels and messages stay text: nothing executes, no element is created', async () => {
    await select(page, 'lead');
    const hostile = '<img src=x onerror=alert(1)>';
    let r = await spawn(page, 'mallory', hostile);
    assert.equal(r.kind, 'ok');
    r = await message(page, 'mallory', '<img src=y onerror=alert(2)><script>alert(3)</script>');
    assert.equal(r.kind, 'ok');
    await select(page, 'mallory');
    await waitForTranscript(page, (entries) => entries.some((e) => e.kind === 'turn' && e.body.includes('<script>alert(3)</script>')));
    for (const p of [page, second]) {
      await waitFor(p, () =>
        [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')].some((li) => li.dataset.name === 'mallory'),
      );
      const label = await p.evaluate(() =>
        document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="mallory"] > .row > .label').textContent,
      );
      assert.equal(label, hostile);
      await p.waitForTimeout(300);
      const injected = await p.evaluate(() => ({
        light: document.querySelectorAll('img, script:not([type="module"])').length,
        shadow: document.querySelector('subagent-tree').shadowRoot.querySelectorAll('img, script').length,
      }));
      assert.deepEqual(injected, { light: 0, shadow: 0 });
    }
    await screenshot(page, 'demo-hostile');
    page.check(); // no dialog, no page error
    second.check();
  });

  test('when the driving tab closes, the follower takes over the same tree', async () => {
    await waitForSettledTree(second, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer', 'tester', 'mallory']);
    await page.close();
    await waitFor(second, () => document.getElementById('role').textContent === 'this tab drives the tree');
    assert.equal(await second.evaluate(() => document.getElementById('controls').disabled), false);
    const r = await message(second, 'tester', 'Ship it.');
    assert.equal(r.kind, 'ok');
    await select(second, 'tester');
    await waitForTranscript(second, (entries) => entries.some((e) => e.kind === 'turn' && e.body.includes('Ship it.')));
    second.check();
  });
});
