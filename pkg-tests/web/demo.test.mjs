// The demo page (www/) end to end in headless Chromium: the scripted opening,
// the tree with full names, spawning with a name (and a duplicate / invalid
// one), messaging by name, interrupting, keyboard navigation, reloading the
// same tree from IndexedDB (cold) and resuming a cold member, a second tab
// that follows read-only and takes over when the driving tab closes, and
// hostile text that stays text; each member's state and last output; the main
// states at 1280, 390 and 360 px with nothing overflowing horizontally.
// Screenshots go to pkg-tests/test-results/screenshots/ (test output, not committed).
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
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
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
        activity: li.querySelector(':scope > .row .badge.activity')?.textContent,
        output: li.querySelector(':scope > .row > .output')?.textContent,
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
      const busy = items.some((li) => li.querySelector(':scope > .row .badge.activity')?.textContent === 'running');
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
  if (long) {
    // A click, not locator.check(): under this page's CSP check() returned without ticking the box.
    if (!(await p.locator('#message-long').isChecked())) await p.click('#message-long');
    assert.equal(await p.locator('#message-long').isChecked(), true);
  }
  await p.click('#message-form button[type="submit"]');
  return result(p);
}

const OPENING_TREE = ['lead', 'reviewer', 'reviewer/checker', 'writer'];

/**
 * What sticks out past the viewport's right edge: the document's scroll width,
 * and every laid-out element (the element's shadow tree included) whose box
 * ends right of it.
 */
const overflow = (p) =>
  p.evaluate(() => {
    const width = window.innerWidth;
    const out = [];
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        const r = el.getBoundingClientRect();
        if ((r.width || r.height) && r.right > width + 0.5) {
          out.push(`${el.localName}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).replace(/ +/g, '.')}` : ''} right=${Math.round(r.right)}`);
        }
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    return { scrollWidth: document.documentElement.scrollWidth, width, out };
  });

/**
 * What looks broken on a narrow screen without overflowing: anything in a
 * panel past the panel's edge, the product name on two lines, a tree label
 * cut to a stub, a text field whose placeholder does not fit.
 */
const layoutProblems = (p) =>
  p.evaluate(() => {
    const problems = [];
    const describe = (el) => `${el.localName}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).replace(/ +/g, '.')}` : ''}`;
    for (const section of document.querySelectorAll('main > section')) {
      const edge = section.getBoundingClientRect().right;
      const walk = (root) => {
        for (const el of root.querySelectorAll('*')) {
          const r = el.getBoundingClientRect();
          if ((r.width || r.height) && r.right > edge + 0.5 && !el.closest?.('.transcript')) problems.push(`${describe(el)} ends past its panel`);
          if (el.shadowRoot) walk(el.shadowRoot);
        }
      };
      walk(section);
    }
    const walker = document.createTreeWalker(document.querySelector('h1'), NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const at = t.data.indexOf('subagent-tree');
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(t, at);
      range.setEnd(t, at + 'subagent-tree'.length);
      if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size !== 1) problems.push('the product name breaks over two lines');
    }
    const tree = document.querySelector('subagent-tree').shadowRoot;
    for (const label of tree.querySelectorAll('.label')) {
      if (!label.checkVisibility()) continue;
      const em = parseFloat(getComputedStyle(label).fontSize);
      if (label.clientWidth < Math.min(label.scrollWidth, 6 * em)) problems.push(`label "${label.textContent}" cut to ${label.clientWidth}px`);
    }
    const ctx = document.createElement('canvas').getContext('2d');
    for (const input of document.querySelectorAll('input[placeholder]')) {
      const cs = getComputedStyle(input);
      ctx.font = `${cs.fontSize} ${cs.fontFamily}`;
      const room = input.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      if (ctx.measureText(input.placeholder).width > room + 0.5) problems.push(`#${input.id}: placeholder "${input.placeholder}" cut off`);
    }
    return problems;
  });

/** Screenshots of the page at 1280 and 390 px (and 360 px), each checked for horizontal overflow. */
async function shots(p, name) {
  const original = p.viewportSize();
  try {
    for (const width of [1280, 390, 360]) {
      await p.setViewportSize({ width, height: 800 });
      await p.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      const o = await overflow(p);
      assert.ok(o.scrollWidth <= o.width, `${name} at ${width} px: the page scrolls sideways (${o.scrollWidth} > ${o.width})`);
      assert.deepEqual(o.out, [], `${name} at ${width} px: elements past the right edge`);
      assert.deepEqual(await layoutProblems(p), [], `${name} at ${width} px`);
      await screenshot(p, `${name}-${width}`, undefined, { fullPage: width < 1280 }); // narrow: the whole page, forms included
    }
  } finally {
    await p.setViewportSize(original);
  }
}

/** The transcript's entry count once it stops changing (it refreshes from the store). */
async function settledCount(p) {
  let last = -1;
  for (let same = 0; same < 4; ) {
    await p.waitForTimeout(150);
    const n = (await transcript(p)).length;
    same = n === last ? same + 1 : 0;
    last = n;
  }
  return last;
}

describe('demo page', { skip }, () => {
  test('loads and plays the opening: lead spawns named children that spawn their own, message by name, and settle', async () => {
    page = await watchedPage(context);
    await page.goto(site.url + QUERY);
    await waitFor(page, () => document.body.dataset.ready === 'true');
    assert.equal(await page.locator('#role').textContent(), 'this tab drives the tree');
    await waitForSettledTree(page, OPENING_TREE);
    await waitFor(page, () => document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="lead"] .badge.activity')?.textContent === 'idle');
    const r = await rows(page);
    assert.deepEqual(r.map((x) => [x.name, x.level, x.activity ?? null]), [
      ['lead', 1, 'idle'], // the root row shows its own turns: lead ran the opening and stays resident,
      ['reviewer', 2, 'settled'], // its children finished and settled
      ['reviewer/checker', 3, 'settled'],
      ['writer', 2, 'settled'],
    ]);
    assert.equal(r[1].label, 'Review the 1.0 change');
    // Each member's last output: lead is selected, so its whole reply (both lines); the others on one line.
    assert.match(r[0].output, /^Noted: Subagent \w+ finished\.\nreviewer and writer have both reported: the 1\.0 release is ready\.$/);
    assert.equal(r[2].output, 'All 128 tests pass.');
    assert.ok(r.slice(1).every((x) => x.output && !x.output.includes('\n')), JSON.stringify(r));
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
    await shots(page, 'demo-tree');
    page.check();
  });

  test('spawns a child with a name under the selected member; duplicate and invalid names show the library error', async () => {
    await select(page, 'reviewer'); // settled: cold, so it is resumed to start the child
    let r = await spawn(page, 'auditor', 'Audit the dependencies');
    assert.deepEqual([r.kind, r.text], ['ok', 'Started reviewer/auditor under reviewer.']);
    await waitFor(page, () =>
      [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')].some((li) => li.dataset.name === 'reviewer/auditor'),
    );
    await waitForSettledTree(page, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer']);
    // What reviewer's and lead's logs hold before the refused spawns.
    const before = {};
    for (const name of ['lead', 'reviewer']) {
      await select(page, name);
      before[name] = await settledCount(page);
    }
    r = await spawn(page, 'auditor', 'Audit again');
    assert.equal(r.kind, 'error');
    assert.equal(r.code, 'DUPLICATE_NAME');
    assert.match(r.text, /agent name "auditor" is already taken among the children of "reviewer"/);
    await shots(page, 'demo-duplicate-name');
    r = await spawn(page, 'Bad Name', 'Nope');
    assert.equal(r.code, 'INVALID_NAME');
    assert.match(r.text, /"Bad Name"/);
    await waitForSettledTree(page, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer']);
    // Refused spawns cost no model turn and write no notice: neither log grew.
    const after = {};
    for (const name of ['reviewer', 'lead']) {
      await select(page, name);
      after[name] = await settledCount(page);
    }
    assert.deepEqual(after, before);
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

  test('interrupts a running member: the page says the turn was stopped; input it had not read is parked', async () => {
    const badge = (name) =>
      page.evaluate((name) => document.querySelector('subagent-tree').shadowRoot.querySelector(`[data-name="${name}"] > .row .badge.activity`)?.textContent, name);
    await select(page, 'writer');
    assert.equal(await badge('writer'), 'settled');
    assert.equal(await page.locator('#interrupt').isDisabled(), true, 'Interrupt is offered only while a turn runs');
    const lastOutput = (await rows(page)).find((x) => x.name === 'writer').output;
    assert.match(lastOutput, /^Draft ready: 1\.0 gives every agent a name\./);
    let r = await message(page, 'writer', 'Rewrite every section from scratch.', { long: true });
    assert.equal(r.kind, 'ok');
    await waitFor(page, () => {
      const li = document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="writer"]');
      return li.querySelector(':scope > .row .badge.activity')?.textContent === 'running' && !document.querySelector('#interrupt').disabled;
    });
    // A second message while the turn runs waits in writer's inbox.
    r = await message(page, 'writer', 'And the changelog.');
    assert.equal(r.kind, 'ok');
    assert.equal(await badge('writer'), 'running');
    // The running turn streams what it does (its row's live line); the tree's budget bar is on lead's row.
    await waitFor(page, () =>
      document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="writer"] > .row > .output.live')?.textContent.startsWith('Working through the long task'),
    );
    const meter = await page.evaluate(() => {
      const m = document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="lead"] > .row .budget');
      return m && [m.getAttribute('aria-valuemax'), Number(m.getAttribute('aria-valuenow')) > 0];
    });
    assert.deepEqual(meter, ['20000', true]);
    for (const field of ['#spawn-name', '#spawn-label']) await page.fill(field, ''); // left over from the refused spawns
    await page.evaluate(() => document.activeElement?.blur());
    await shots(page, 'demo-running'); // www/screenshot.png (README) is the 1280 px one
    await clearResult(page);
    await page.click('#interrupt');
    assert.deepEqual(await result(page), { kind: 'ok', code: undefined, text: 'Interrupted writer: its turn was stopped.' });
    await waitForTranscript(page, (entries) => entries.some((e) => e.kind === 'turn' && e.stop === 'aborted'));
    // After the stopped turn: parked (its unread message waits), not running, and Interrupt is no longer offered.
    await waitFor(page, () => {
      const li = document.querySelector('subagent-tree').shadowRoot.querySelector('[data-name="writer"]');
      return li.querySelector(':scope > .row .badge.activity')?.textContent === 'parked' && document.querySelector('#interrupt').disabled;
    });
    // The stopped turn produced no output, so the row keeps writer's last one (whole: it is selected).
    const w = (await rows(page)).find((x) => x.name === 'writer');
    assert.equal(w.output, lastOutput);
    assert.ok(!(await transcript(page)).some((e) => e.kind === 'turn' && e.body.includes('changelog')), 'the parked message was not answered');
    await shots(page, 'demo-interrupt');
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
    const shown = async () =>
      page.evaluate(() =>
        [...document.querySelector('subagent-tree').shadowRoot.querySelectorAll('[role="treeitem"]')].map((li) => li.querySelector(':scope > .row .badge.stop')?.dataset.stopReason ?? null),
      );
    const beforeRows = await rows(page);
    const before = beforeRows.map((x) => [x.id, x.name]);
    const stopsBefore = await shown();
    await page.reload();
    await waitFor(page, () => document.body.dataset.ready === 'true');
    await waitForSettledTree(page, ['lead', 'reviewer', 'reviewer/checker', 'reviewer/auditor', 'writer']);
    const after = await rows(page);
    assert.deepEqual(after.map((x) => [x.id, x.name]), before, 'same Session ids, same full names');
    // Cold after a reload, and shown as the logs say (not `inactive`): each member's state, last output and stop reason.
    assert.ok(after.slice(1).every((x) => x.activity === 'settled'), `every member is settled after a reload: ${after.map((x) => x.activity)}`);
    const oneLine = (x) => x.output?.replace(/\s+/g, ' '); // the selected row shows its output whole
    assert.deepEqual(after.map(oneLine), beforeRows.map(oneLine), 'the same last outputs');
    assert.deepEqual(await shown(), stopsBefore, 'the same stop reasons');
    assert.equal((await shown())[after.findIndex((x) => x.name === 'writer')], 'aborted', 'the interrupted writer shows as interrupted');
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
    await shots(second, 'demo-follower');
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
    await shots(page, 'demo-hostile');
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
