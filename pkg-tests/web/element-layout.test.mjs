// <subagent-tree> at a phone's width and on a desktop: at 360, 390 and 1280 px every
// wrapped piece of a row (a label moved to its own line, a label's later lines, the
// badges, the output) starts under the member's own name, never left of it; labels
// wrap whole (no ellipsis); nothing overflows. And focus() on the host lands in the tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture, screenshot } from './helpers.mjs';

const env = browserSuite();

const LONG = 'Check every migration against the staging snapshot and report each table whose row count changed';
const TREE = {
  id: 'root-layout',
  children: [
    {
      id: 's-reviewer',
      name: 'reviewer',
      label: 'Review the release diff for regressions in the storage layer',
      children: [
        {
          id: 's-checker',
          name: 'checker',
          label: LONG,
          mode: 'one-shot',
          children: [{ id: 's-deep', name: 'a-rather-long-agent-name-here', label: `${LONG}, then again` }],
        },
        { id: 's-linter', name: 'linter', label: 'Lint' },
      ],
    },
    { id: 's-writer', name: 'writer', label: 'Draft the release notes in English and in Chinese' },
    // A member without a name: its id mark comes first, and wrapped lines start under the mark.
    {
      id: 's-old-0123456789abcdef',
      payload: { version: 0, childId: 's-old-0123456789abcdef', childCreatedAt: 1, mode: 'continuable', label: LONG },
    },
  ],
};

/** Every row's geometry: where its name starts, and the left edge of every line box after the toggle. */
const measure = () => {
  // A flex item is one box: its text's line boxes come from a range over its contents.
  const lineRects = (el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return [...range.getClientRects()].filter((r) => r.width > 0);
  };
  return [...window.el.shadowRoot.querySelectorAll('[role="treeitem"]')]
    .filter((li) => li.checkVisibility())
    .map((li) => {
      const row = li.querySelector(':scope > .row');
      const lead = row.querySelector(':scope > .idmark') ?? row.querySelector(':scope > .name');
      const start = lead.getClientRects()[0];
      const name = row.querySelector(':scope > .name').getClientRects()[0];
      const label = row.querySelector(':scope > .label');
      const labelRects = label ? lineRects(label) : [];
      const pieces = [...row.children].filter((c) => !c.classList.contains('toggle'));
      return {
        name: li.dataset.name,
        start: start.left,
        lines: pieces.flatMap((c) => [...c.getClientRects(), ...lineRects(c)].map((r) => ({ cls: c.className, left: r.left }))),
        labelOwnLine: Boolean(label) && labelRects[0].top >= name.bottom - 1,
        labelWrapped: new Set(labelRects.map((r) => Math.round(r.top))).size > 1,
        labelLeft: labelRects[0]?.left,
        labelClipped: Boolean(label) && (label.scrollWidth > label.clientWidth + 1 || getComputedStyle(label).textOverflow === 'ellipsis'),
        toggleRight: row.querySelector(':scope > .toggle').getBoundingClientRect().right,
      };
    });
};

for (const width of [360, 390, 1280]) {
  test(`at ${width} px a wrapped label starts under its own name; labels wrap whole; nothing overflows`, async () => {
    const page = await openFixture(env.context, env.site.url);
    await page.setViewportSize({ width, height: 800 });
    await page.evaluate(async (tree) => {
      document.body.replaceChildren();
      document.body.style.margin = '8px';
      const store = new window.lib.MemoryStore();
      await window.seed(store, tree);
      const el = document.createElement('subagent-tree');
      el.initialDepth = 3;
      el.store = store;
      el.rootId = tree.id;
      document.body.append(el);
      window.el = el;
      await el.ready;
    }, TREE);
    const rows = await page.evaluate(measure);
    assert.equal(rows.length, 7, rows.map((r) => r.name).join(' '));
    for (const row of rows) {
      for (const line of row.lines) assert.ok(line.left >= row.start - 0.5, `${width}px ${row.name}: a ${line.cls} line starts at ${line.left}, left of the name at ${row.start}`);
      if (row.labelOwnLine) assert.ok(Math.abs(row.labelLeft - row.start) <= 0.5, `${width}px ${row.name}: its own-line label starts at ${row.labelLeft}, the name at ${row.start}`);
      assert.ok(row.toggleRight <= row.start, `${width}px ${row.name}: the toggle hangs before the name`);
      assert.equal(row.labelClipped, false, `${width}px ${row.name}: its label is cut`);
    }
    // The cases this is about happen at this width: a label on its own line, and one wrapped over lines.
    if (width < 1280) {
      assert.ok(rows.some((r) => r.labelOwnLine && r.name.split('/').length >= 2), `${width}px: no depth-2 label moved to its own line`);
      assert.ok(rows.some((r) => r.labelWrapped), `${width}px: no label wrapped`);
    }
    // Depth indents: each level starts further right.
    const at = Object.fromEntries(rows.map((r) => [r.name, r.start]));
    assert.ok(at.lead < at.reviewer && at.reviewer < at['reviewer/checker'] && at['reviewer/checker'] < at['reviewer/checker/a-rather-long-agent-name-here']);
    const overflow = await page.evaluate(() => {
      const edge = Math.min(window.el.getBoundingClientRect().right, innerWidth);
      return {
        scroll: document.documentElement.scrollWidth <= innerWidth,
        out: [...window.el.shadowRoot.querySelectorAll('*')]
          .filter((e) => {
            const r = e.getBoundingClientRect();
            return (r.width || r.height) && r.right > edge + 0.5;
          })
          .map((e) => e.className),
      };
    });
    assert.deepEqual(overflow, { scroll: true, out: [] });
    await screenshot(page, `element-layout-${width}`, page.locator('subagent-tree'));
    page.check();
    await page.close();
  });
}

test('focus() on the host moves focus into the tree: to the item Tab reaches (delegatesFocus)', async () => {
  const page = await openFixture(env.context, env.site.url);
  await page.evaluate(async (tree) => {
    document.body.replaceChildren();
    const before = document.createElement('button');
    before.textContent = 'before';
    document.body.append(before);
    const store = new window.lib.MemoryStore();
    await window.seed(store, tree);
    const el = document.createElement('subagent-tree');
    el.store = store;
    el.rootId = tree.id;
    document.body.append(el);
    window.el = el;
    await el.ready;
    before.focus();
  }, TREE);
  const focused = () =>
    page.evaluate(() => ({
      host: document.activeElement === window.el,
      item: window.el.shadowRoot.activeElement?.dataset.name ?? null,
      delegates: window.el.shadowRoot.delegatesFocus,
    }));
  assert.deepEqual(await focused(), { host: false, item: null, delegates: true });
  await page.evaluate(() => window.el.focus());
  assert.deepEqual(await focused(), { host: true, item: 'lead', delegates: true });
  // Move to another item, leave, come back: focus() returns to that item, as Tab does.
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  const item = (await focused()).item;
  assert.equal(item, 'reviewer/checker');
  await page.evaluate(() => document.querySelector('button').focus());
  assert.equal((await focused()).host, false);
  await page.evaluate(() => window.el.focus());
  assert.deepEqual(await focused(), { host: true, item, delegates: true });
  await page.evaluate(() => document.querySelector('button').focus());
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(), { host: true, item, delegates: true });
  page.check();
  await page.close();
});
