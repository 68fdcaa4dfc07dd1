// <subagent-tree> in headless Chromium, over stores written directly (no runtime needed):
// names, labels, modes, depth, diagnostics, lazy expansion with re-based names,
// keyboard navigation and selection, live events, and hostile text.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, hasRuntime, launch, openFixture, screenshot, startSite } from './helpers.mjs';

let site, browser, context;
before(async () => {
  site = await startSite();
  browser = await launch();
  context = await browser.newContext({ viewport: { width: 900, height: 600 } });
});
after(async () => {
  await browser?.close();
  await site?.close();
});

const TREE = {
  id: 'root-1',
  children: [
    {
      id: 's-reviewer',
      name: 'reviewer',
      label: 'Review the diff',
      children: [
        { id: 's-checker', name: 'checker', label: 'Run the checks', mode: 'one-shot' },
        { id: 's-linter', name: 'linter', label: 'Lint', children: [{ id: 's-deep', name: 'deep', label: 'Deeper' }] },
      ],
    },
    { id: 's-writer', name: 'writer', label: 'Draft the notes' },
    { id: 's-runner', name: 'runner', label: 'External build', mode: 'external' },
    // A historical child without a name (payload v0): its full name is its Session id, and so are its children's.
    {
      id: 's-old',
      payload: { version: 0, childId: 's-old', childCreatedAt: 1, mode: 'continuable', label: 'Old task' },
      children: [{ id: 's-old-kid', name: 'kid', label: 'Under an unnamed creator' }],
    },
    { id: 's-missing', name: 'ghost', label: 'Never written', missing: true },
    { id: 's-unknown', payload: { version: 1, childId: 's-unknown', childCreatedAt: 2, mode: 'unknown' } },
  ],
};

/** Mounts an element over a fresh MemoryStore seeded with `tree`; resolves the visible items. */
async function mount(page, tree, props = {}) {
  return page.evaluate(
    async ({ tree, props }) => {
      document.body.replaceChildren();
      const store = window.counting(new window.lib.MemoryStore());
      await window.seed(store, tree);
      store.stats.read = store.stats.readMany = 0;
      store.stats.ids.length = 0;
      const el = document.createElement('subagent-tree');
      Object.assign(el, props);
      el.store = store;
      el.rootId = tree.id;
      document.body.append(el);
      window.el = el;
      window.store = store;
      window.selects = [];
      el.addEventListener('select', (e) => window.selects.push(e.detail));
      await el.ready;
      return window.items(el);
    },
    { tree, props },
  );
}

const visible = (page) => page.evaluate(() => window.items(window.el));

describe('<subagent-tree> over a store', () => {
  test('renders full names, labels, modes, depth, disclosure and disabled diagnostic rows', async () => {
    const page = await openFixture(context, site.url);
    const rows = await mount(page, TREE);
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    assert.deepEqual(
      rows.map((r) => [r.name, r.level]),
      [
        ['lead', 1],
        ['reviewer', 2],
        ['reviewer/checker', 3],
        ['reviewer/linter', 3],
        ['writer', 2],
        ['runner', 2],
        ['s-old', 2],
        ['s-old-kid', 3],
        ['s-missing', 2],
        ['s-unknown', 2],
      ],
    );
    assert.equal(byName.reviewer.label, 'Review the diff');
    assert.equal(byName.reviewer.mode, 'continuable');
    assert.equal(byName['reviewer/checker'].mode, 'one-shot');
    assert.equal(byName.runner.mode, 'external');
    assert.equal(byName.lead.expanded, 'true');
    assert.equal(byName.reviewer.expanded, 'true');
    assert.equal(byName['reviewer/linter'].expanded, 'false', 'a deeper branch starts collapsed');
    assert.equal(byName.writer.expanded, null, 'a leaf has no aria-expanded');
    assert.equal(byName['s-missing'].reason, 'unavailable');
    assert.equal(byName['s-missing'].disabled, 'true');
    assert.equal(byName['s-unknown'].reason, 'unsupported');
    assert.equal(byName['s-unknown'].disabled, 'true');
    assert.equal(byName.reviewer.activity, undefined, 'no activity without a live runtime');
    // ARIA structure.
    const aria = await page.evaluate(() => {
      const root = window.el.shadowRoot;
      return {
        tree: root.querySelectorAll('[role="tree"]').length,
        label: root.querySelector('[role="tree"]').getAttribute('aria-label'),
        groups: root.querySelectorAll('[role="treeitem"] > [role="group"]').length,
        tabbable: root.querySelectorAll('[role="treeitem"][tabindex="0"]').length,
      };
    });
    assert.deepEqual(aria, { tree: 1, label: 'Agent tree', groups: 3, tabbable: 1 });
    // A disabled row cannot be selected by click.
    await page.locator('subagent-tree [data-session-id="s-missing"] > .row').click();
    assert.deepEqual(await page.evaluate(() => window.selects), []);
    await page.locator('subagent-tree [data-session-id="s-reviewer"] > .row').click();
    assert.deepEqual(await page.evaluate(() => window.selects), [{ sessionId: 's-reviewer', name: 'reviewer', named: true }]);
    await screenshot(page, 'element-store-tree', page.locator('subagent-tree'));
    page.check();
    await page.close();
  });

  test('reads deep branches only when expanded, re-basing depth and full names', async () => {
    const page = await openFixture(context, site.url);
    const chain = (names) =>
      names.length ? [{ id: `s-${names[0]}`, name: names[0], label: names[0].toUpperCase(), children: chain(names.slice(1)) }] : [];
    const rows = await mount(page, { id: 'root-chain', children: chain(['a', 'b', 'c', 'd', 'e', 'f']) });
    assert.deepEqual(
      rows.map((r) => [r.name, r.level, r.expanded]),
      [
        ['lead', 1, 'true'],
        ['a', 2, 'true'],
        ['a/b', 3, 'false'],
      ],
    );
    const read = await page.evaluate(() => [...window.store.stats.ids]);
    assert.deepEqual(read, ['root-chain', 's-a', 's-b'], 'catalogs below the listed depth are not read');
    // Expanding a/b lists from its own id: its catalog, c's and d's.
    await page.locator('subagent-tree [data-session-id="s-b"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => window.items(window.el).some((r) => r.name === 'a/b/c/d'));
    assert.deepEqual(
      (await visible(page)).map((r) => [r.name, r.level, r.expanded]),
      [
        ['lead', 1, 'true'],
        ['a', 2, 'true'],
        ['a/b', 3, 'true'],
        ['a/b/c', 4, 'true'],
        ['a/b/c/d', 5, 'false'],
      ],
    );
    assert.deepEqual(await page.evaluate(() => window.store.stats.ids.slice(3)), ['s-b', 's-c', 's-d']);
    const info = await page.evaluate(() => window.el.nodeInfo('s-d'));
    assert.equal(info.depth, 4);
    assert.equal(info.hasChildren, true);
    assert.equal(info.loaded, false);
    page.check();
    await page.close();
  });

  test('keyboard: arrows, Home, End, Left/Right disclosure, Enter and Space select', async () => {
    const page = await openFixture(context, site.url);
    await mount(page, TREE);
    const focused = async () => (await visible(page)).find((r) => r.focused)?.name;
    await page.locator('subagent-tree [data-session-id="root-1"]').focus();
    assert.equal(await focused(), 'lead');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'reviewer');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'reviewer/checker');
    await page.keyboard.press('ArrowLeft'); // a leaf: to its parent
    assert.equal(await focused(), 'reviewer');
    await page.keyboard.press('ArrowLeft'); // expanded: collapse
    let rows = await visible(page);
    assert.equal(rows.find((r) => r.name === 'reviewer').expanded, 'false');
    assert.ok(!rows.some((r) => r.name === 'reviewer/checker'));
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'writer', 'Down skips a collapsed branch');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowRight'); // collapsed: expand
    assert.equal((await visible(page)).find((r) => r.name === 'reviewer').expanded, 'true');
    await page.keyboard.press('ArrowRight'); // expanded: first child
    assert.equal(await focused(), 'reviewer/checker');
    await page.keyboard.press('End');
    assert.equal(await focused(), 's-unknown');
    await page.keyboard.press('Enter'); // disabled: no selection
    await page.keyboard.press('Home');
    assert.equal(await focused(), 'lead');
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press(' ');
    assert.deepEqual(await page.evaluate(() => window.selects), [
      { sessionId: 'root-1', name: 'lead', named: true },
      { sessionId: 's-reviewer', name: 'reviewer', named: true },
    ]);
    rows = await visible(page);
    assert.deepEqual(
      rows.filter((r) => r.selected === 'true').map((r) => r.name),
      ['reviewer'],
    );
    assert.equal(rows.filter((r) => r.tabindex === 0).length, 1, 'one roving tab stop');
    await screenshot(page, 'element-keyboard', page.locator('subagent-tree'));
    page.check();
    await page.close();
  });

  test('renders the same tree from the IndexedDB store', async () => {
    const page = await openFixture(context, site.url);
    const rows = await page.evaluate(async (tree) => {
      await window.lib.IndexedDBStore.deleteDatabase('element-idb');
      const store = await window.lib.IndexedDBStore.open('element-idb');
      await window.seed(store, tree);
      const el = document.createElement('subagent-tree');
      el.store = store;
      el.rootId = tree.id;
      document.body.append(el);
      await el.ready;
      return window.items(el).map((r) => [r.name, r.level, r.reason ?? r.mode ?? null]);
    }, TREE);
    assert.equal(rows.length, 10);
    assert.deepEqual(rows.slice(0, 4), [
      ['lead', 1, null],
      ['reviewer', 2, 'continuable'],
      ['reviewer/checker', 3, 'one-shot'],
      ['reviewer/linter', 3, 'continuable'],
    ]);
    page.check();
    await page.close();
  });

  test('follows live events from a runtime without reading again', async () => {
    const page = await openFixture(context, site.url);
    const result = await page.evaluate(async () => {
      // A stand-in with the runtime's listing and event shapes.
      const listeners = new Map();
      let listings = 0;
      const runtime = {
        async listDescendants(id) {
          listings++;
          if (id !== 'root-live') return [];
          return [
            { kind: 'child', id: 's-a', parentId: 'root-live', depth: 1, mode: 'continuable', label: 'A', name: 'alpha', path: 'alpha', hasChildren: false, activity: 'running' },
          ];
        },
        on(type, listener, options) {
          listeners.set(type, { listener, root: options?.root });
          return () => listeners.delete(type);
        },
      };
      const emit = (type, detail) => listeners.get(type)?.listener(detail);
      const el = document.createElement('subagent-tree');
      el.runtime = runtime;
      el.root = { sessionId: 'root-live', name: 'lead' };
      document.body.replaceChildren(el);
      await el.ready;
      const steps = [window.items(el).map((r) => [r.name, r.activity ?? null])];
      emit('subagent/catalog', {
        rootSessionId: 'root-live',
        parentSessionId: 's-a',
        entry: { id: 's-b', createdAt: 5, mode: 'continuable', label: 'B', name: 'beta' },
      });
      emit('subagent/start', { provider: 'spawn', id: 's-b', parentSessionId: 's-a', rootSessionId: 'root-live', name: 'alpha/beta', label: 'B', mode: 'continuable' });
      steps.push(window.items(el).map((r) => [r.name, r.activity ?? null, r.level]));
      emit('subagent/end', { provider: 'spawn', id: 's-a', parentSessionId: 'root-live', rootSessionId: 'root-live', name: 'alpha', label: 'A', mode: 'continuable', stopReason: 'completed' });
      // A duplicate catalog fact and one for an unknown parent change nothing.
      emit('subagent/catalog', { rootSessionId: 'root-live', parentSessionId: 's-a', entry: { id: 's-b', createdAt: 5, mode: 'continuable', label: 'B', name: 'beta' } });
      emit('subagent/catalog', { rootSessionId: 'root-live', parentSessionId: 'nobody', entry: { id: 's-x', createdAt: 6, mode: 'continuable', label: 'X', name: 'x' } });
      steps.push(window.items(el).map((r) => [r.name, r.activity ?? null]));
      const roots = [...listeners.values()].map((l) => l.root);
      el.remove();
      return { steps, listings, roots, after: listeners.size };
    });
    assert.deepEqual(result.steps[0], [
      ['lead', null],
      ['alpha', 'running'],
    ]);
    // A started local member is idle until its first turn starts; an ended one is settled.
    assert.deepEqual(result.steps[1], [
      ['lead', null, 1],
      ['alpha', 'running', 2],
      ['alpha/beta', 'idle', 3],
    ]);
    assert.deepEqual(result.steps[2], [
      ['lead', null],
      ['alpha', 'settled'],
      ['alpha/beta', 'idle'],
    ]);
    assert.equal(result.listings, 1, 'live events never re-list');
    // One listener per followed event type (start, end, turn, catalog, delta), each scoped to the root.
    assert.deepEqual(result.roots, ['root-live', 'root-live', 'root-live', 'root-live', 'root-live'], 'listeners are scoped to the root');
    assert.equal(result.after, 0, 'listeners are removed when the element leaves the page');
    page.check();
    await page.close();
  });

  test('follows a real SubagentRuntime: spawns, activity and settlement appear without listing again', { skip: hasRuntime() ? false : 'no SubagentRuntime in pkg/ yet' }, async () => {
    const page = await openFixture(context, site.url);
    const r = await page.evaluate(async () => {
      const { SubagentRuntime, MemoryStore } = window.lib;
      const gates = new Map(); // sessionId -> release the member's turn
      const host = {
        runTurn(turn) {
          return new Promise((resolve) => gates.set(turn.name, () => resolve({ text: `done ${turn.name}` })));
        },
      };
      const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 3 });
      let listings = 0;
      const spy = {
        listDescendants: (id, options) => {
          listings++;
          return runtime.listDescendants(id, options);
        },
        on: (type, listener, options) => runtime.on(type, listener, options),
      };
      const root = await runtime.openRoot({});
      const el = document.createElement('subagent-tree');
      el.runtime = spy;
      el.root = root;
      document.body.replaceChildren(el);
      await el.ready;
      const snap = () => window.items(el).map((x) => [x.name, x.level, x.activity ?? null]);
      const until = async (fn) => {
        for (let i = 0; i < 200 && !fn(); i++) await new Promise((res) => setTimeout(res, 10));
      };
      const steps = [snap()];
      const a = await runtime.startActivation({ provider: 'spawn', parent: root, name: 'alpha', label: 'A', prompt: 'a', delivery: 'caller' });
      await until(() => gates.has('alpha'));
      const b = await runtime.startActivation({ provider: 'spawn', parent: a.agent, name: 'beta', label: 'B', prompt: 'b', delivery: 'caller' });
      await until(() => gates.has('alpha/beta'));
      steps.push(snap());
      gates.get('alpha/beta')();
      await b.result;
      await until(() => snap().some((x) => x[0] === 'alpha/beta' && x[2] === 'settled'));
      gates.get('alpha')();
      await a.result;
      await until(() => snap().every((x) => x[2] !== 'running'));
      steps.push(snap());
      return { steps, listings };
    });
    assert.deepEqual(r.steps, [
      [['lead', 1, null]],
      [
        ['lead', 1, null],
        ['alpha', 2, 'running'],
        ['alpha/beta', 3, 'running'],
      ],
      [
        ['lead', 1, null],
        ['alpha', 2, 'settled'],
        ['alpha/beta', 3, 'settled'],
      ],
    ]);
    assert.equal(r.listings, 1, 'one listing at load; everything after comes from events');
    page.check();
    await page.close();
  });

  test('interrupt badge: a running member shows running, and not after its turn is interrupted; the root row shows its own turns', { skip: hasRuntime() ? false : 'no SubagentRuntime in pkg/ yet' }, async () => {
    const page = await openFixture(context, site.url);
    await page.evaluate(async () => {
      const { SubagentRuntime, MemoryStore } = window.lib;
      window.seen = new Set(); // names whose turn has started
      const host = {
        // `worker` waits until interrupted; every other turn (lead's notice) ends at once.
        async runTurn(turn) {
          window.seen.add(turn.name);
          if (turn.name !== 'worker') return { messages: [`done by ${turn.name}`] };
          await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
          return { stopReason: 'aborted' };
        },
      };
      const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2 });
      const lead = await runtime.openRoot({});
      const el = document.createElement('subagent-tree');
      el.runtime = runtime;
      el.root = lead;
      document.body.replaceChildren(el);
      await el.ready;
      Object.assign(window, { runtime, lead, el });
      await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'worker', label: 'Long job', prompt: 'work' });
    });
    const badge = (name) => page.evaluate((name) => window.items(window.el).find((x) => x.name === name)?.activity ?? null, name);
    await page.waitForFunction(() => window.seen.has('worker') && window.items(window.el).some((x) => x.name === 'worker' && x.activity === 'running'));
    assert.equal(await badge('worker'), 'running');
    const receipt = await page.evaluate(() => window.runtime.interrupt('worker', { kind: 'user', root: window.lead }));
    assert.deepEqual(receipt, { signalled: true });
    // Interrupted with nothing more to read, worker settles.
    await page.waitForFunction(() => window.items(window.el).some((x) => x.name === 'worker' && x.activity === 'settled'));
    // The worker's stop notice wakes lead for one turn; once it ends the root row shows it idle.
    await page.evaluate(() => window.runtime.waitForQuiescence(window.lead));
    await page.waitForFunction(() => window.items(window.el).some((x) => x.name === 'lead' && x.activity === 'idle'));
    assert.ok(await page.evaluate(() => window.seen.has('lead')), 'lead ran a turn');
    assert.equal(await badge('worker'), 'settled', 'not running after the interrupt');
    page.check();
    await page.close();
  });

  test('per-member state (running, idle, parked, settled, error) and the last output, cut in the row and whole when selected', { skip: hasRuntime() ? false : 'no SubagentRuntime in pkg/ yet' }, async () => {
    const page = await openFixture(context, site.url);
    await page.evaluate(async () => {
      const { SubagentRuntime, MemoryStore } = window.lib;
      window.turns = []; // names, in the order their turns started
      window.LONG = `First line of the report.\n${'and a long tail 🙂 '.repeat(40)}\nlast line.`;
      const host = {
        async runTurn(turn) {
          const n = window.turns.filter((t) => t === turn.name).length;
          window.turns.push(turn.name);
          if (turn.name === 'broken') return { stopReason: 'error', diagnostic: 'the model failed' };
          if (turn.name === 'writer') return { messages: [window.LONG] };
          if ((turn.name === 'parker' || turn.name === 'worker') && n === 0) {
            await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
            return { stopReason: 'aborted' };
          }
          return { messages: [`${turn.name}: done (turn ${n + 1})`] };
        },
      };
      const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2, capacity: 8 });
      const lead = await runtime.openRoot({});
      const el = document.createElement('subagent-tree');
      el.style.width = '420px';
      el.runtime = runtime;
      el.root = lead;
      document.body.replaceChildren(el);
      await el.ready;
      Object.assign(window, { runtime, lead, el });
      for (const name of ['writer', 'broken', 'parker', 'worker']) {
        const a = await runtime.startActivation({ provider: 'spawn', parent: lead, name, label: `Task of ${name}`, prompt: `go ${name}` });
        a.result.catch(() => {});
      }
    });
    const info = (name) => page.evaluate((name) => {
      const row = window.items(window.el).find((x) => x.name === name);
      const n = row && window.el.nodeInfo(row.id);
      const li = window.el.shadowRoot.querySelector(`[data-name="${name}"] > .row`);
      const out = li?.querySelector(':scope > .output');
      return n && { state: n.state ?? null, activity: n.activity ?? null, badge: row.activity ?? null, output: n.output ?? null, shown: out?.textContent ?? null, cut: out ? out.scrollWidth > out.clientWidth : null, lines: out ? Math.round(out.getBoundingClientRect().height / parseFloat(getComputedStyle(out).lineHeight)) : null };
    }, name);
    const until = (fn, arg) => page.waitForFunction(fn, arg, { timeout: 10_000, polling: 20 });
    const stateIs = (name, state) => until(([name, state]) => {
      const row = window.items(window.el).find((x) => x.name === name);
      return row?.activity === state && window.el.nodeInfo(row.id).state === state;
    }, [name, state]);
    // Both long turns run; the others are done: a finished child settles, a failed turn shows error.
    await stateIs('parker', 'running');
    await stateIs('worker', 'running');
    await stateIs('broken', 'error');
    await stateIs('writer', 'settled');
    assert.deepEqual(await info('parker'), { state: 'running', activity: 'running', badge: 'running', output: null, shown: null, cut: null, lines: null });
    // writer's output: kept whole, shown on one line in the row (whitespace folded, cut with an ellipsis)...
    const w = await info('writer');
    assert.equal(w.output, await page.evaluate(() => window.LONG));
    assert.ok(w.shown.startsWith('First line of the report. and a long tail 🙂 and'), w.shown);
    assert.ok(!w.shown.includes('\n') && w.cut && w.lines === 1, JSON.stringify(w));
    // At most 240 characters in the row, cut between code points (no half of an emoji).
    assert.equal(Array.from(w.shown).length, 240);
    assert.ok(w.shown.endsWith('…') && !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(w.shown), w.shown.slice(-10));
    // ... and whole (every line) once the row is selected; another selection cuts it again.
    await page.locator('subagent-tree [data-name="writer"] > .row').click();
    const ws = await info('writer');
    assert.equal(ws.shown, ws.output);
    assert.ok(!ws.cut && ws.lines > 3, JSON.stringify(ws));
    await page.locator('subagent-tree [data-name="broken"] > .row').click();
    assert.equal((await info('writer')).lines, 1);
    assert.equal((await info('broken')).output, null, 'a failed turn with no text shows no output');
    // A message while parker runs, then an interrupt: its unread input is parked (it stays resident).
    await page.evaluate(() => window.runtime.prompt(window.lead, 'parker', 'one more thing', {}));
    let receipt = await page.evaluate(() => window.runtime.interrupt('parker', { kind: 'user', root: window.lead }));
    assert.deepEqual(receipt, { signalled: true });
    await stateIs('parker', 'parked');
    // A fresh element (a reload, a second view) learns idle and parked from the listing alone.
    const relisted = await page.evaluate(async () => {
      const fresh = document.createElement('subagent-tree');
      fresh.runtime = window.runtime;
      fresh.root = window.lead;
      document.body.append(fresh);
      await fresh.ready;
      const rows = await window.runtime.listDescendants(window.lead.sessionId, {});
      const parker = rows.find((r) => r.path === 'parker');
      const shown = fresh.nodeInfo(parker.id).state;
      fresh.remove();
      return { row: [parker.activity, parker.state], shown };
    });
    assert.deepEqual(relisted, { row: ['inactive', 'parked'], shown: 'parked' });
    // worker had nothing more to read: interrupted, it settles.
    receipt = await page.evaluate(() => window.runtime.interrupt('worker', { kind: 'user', root: window.lead }));
    assert.deepEqual(receipt, { signalled: true });
    await stateIs('worker', 'settled');
    // A waking send runs parker again (both messages), then it settles with its new output.
    await page.evaluate(() => window.runtime.prompt(window.lead, 'parker', 'wake up', {}));
    await stateIs('parker', 'settled');
    assert.equal((await info('parker')).output, 'parker: done (turn 2)');
    // The root row: idle after its turns (it stays resident), with its last output.
    await page.evaluate(() => window.runtime.waitForQuiescence(window.lead));
    await stateIs('lead', 'idle');
    assert.match((await info('lead')).output, /^lead: done \(turn \d+\)$/);
    assert.deepEqual(
      await page.evaluate(() => [...window.el.shadowRoot.querySelectorAll('.badge.activity')].map((b) => [b.dataset.state, b.getAttribute('part')])),
      [['idle', 'badge activity idle'], ['settled', 'badge activity settled'], ['error', 'badge activity error'], ['settled', 'badge activity settled'], ['settled', 'badge activity settled']],
    );
    // Every part the element uses is documented in the README's part table (and so are the custom properties it reads).
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('| part | element |'), readme.indexOf('```css', readme.indexOf('| part | element |')));
    const documented = new Set([...table.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]));
    const used = await page.evaluate(() => [...new Set([...window.el.shadowRoot.querySelectorAll('[part]')].flatMap((e) => [...e.part]))]);
    assert.ok(['output', 'activity', 'settled', 'error', 'idle', 'badges'].every((p) => used.includes(p)), used.join(' '));
    assert.deepEqual(used.filter((p) => !documented.has(p)), [], 'undocumented parts');
    const props = await page.evaluate(() => [...new Set(window.el.shadowRoot.querySelector('style').textContent.match(/--subagent-tree-[a-z-]+/g))]);
    assert.ok(props.length >= 10);
    assert.deepEqual(props.filter((p) => !readme.includes(`\`${p}\``)), [], 'undocumented custom properties');
    // The hooks work from the page: a custom property and ::part() selectors as the README shows them.
    const styled = await page.evaluate(() => {
      const style = document.createElement('style');
      style.textContent = `subagent-tree { --subagent-tree-muted: rgb(1, 2, 3); }
        subagent-tree::part(activity settled) { letter-spacing: 3px; }
        subagent-tree::part(badge mode) { display: none; }`;
      document.head.append(style);
      const root = window.el.shadowRoot;
      const out = {
        label: getComputedStyle(root.querySelector('.label')).color,
        settled: getComputedStyle(root.querySelector('.badge.activity.settled')).letterSpacing,
        idle: getComputedStyle(root.querySelector('.badge.activity.idle')).letterSpacing,
        mode: getComputedStyle(root.querySelector('.badge.mode')).display,
      };
      style.remove();
      return out;
    });
    assert.deepEqual(styled, { label: 'rgb(1, 2, 3)', settled: '3px', idle: 'normal', mode: 'none' });
    await screenshot(page, 'element-states', page.locator('subagent-tree'));
    // At 360 px, with its width from the page: nothing in the element ends past its edge or the viewport.
    await page.setViewportSize({ width: 360, height: 640 });
    const fit = await page.evaluate(() => {
      window.el.style.width = '';
      const edge = window.el.getBoundingClientRect().right;
      const out = [...window.el.shadowRoot.querySelectorAll('*')]
        .filter((e) => {
          const r = e.getBoundingClientRect();
          return (r.width || r.height) && r.right > Math.min(edge, innerWidth) + 0.5;
        })
        .map((e) => `${e.className} ${e.textContent.slice(0, 20)}`);
      return { scroll: document.documentElement.scrollWidth <= innerWidth, out, edge };
    });
    assert.deepEqual(fit, { scroll: true, out: [], edge: 352 });
    await screenshot(page, 'element-states-360', page.locator('subagent-tree'));
    page.check();
    await page.close();
  });

  test('hostile labels and ids stay text: nothing executes, no element is created', async () => {
    const page = await openFixture(context, site.url);
    const hostile = '<img src=x onerror=alert(1)>';
    const rows = await mount(page, {
      id: 'root-hostile',
      children: [
        { id: 's-h1', name: 'evil', label: hostile },
        { id: '<img src=y onerror=alert(2)>', payload: { version: 0, childId: '<img src=y onerror=alert(2)>', childCreatedAt: 1, mode: 'continuable', label: '<script>alert(3)</script>' } },
      ],
    });
    assert.equal(rows.find((r) => r.name === 'evil').label, hostile);
    assert.equal(rows[2].name, '<img⟪U+0020⟫src=y⟪U+0020⟫onerror=alert(2)>', 'an id is shown as ASCII, its spaces marked');
    assert.equal(rows[2].label, '<script>alert(3)</script>');
    await page.waitForTimeout(300); // an injected onerror would have fired by now
    const injected = await page.evaluate(() => ({
      light: document.querySelectorAll('img, script:not([type="module"])').length,
      shadow: window.el.shadowRoot.querySelectorAll('img, script').length,
    }));
    assert.deepEqual(injected, { light: 0, shadow: 0 });
    page.check(); // no dialog, no page error
    await page.close();
  });

  test('bidi: "\\u202Edael" never renders as lead; names, ids and labels are isolated; runtime and root are write-only', async () => {
    const page = await openFixture(context, site.url);
    const spoof = '\u202Edael';
    const rows = await mount(page, {
      id: 'root-bidi',
      children: [
        { id: spoof, payload: { version: 0, childId: spoof, childCreatedAt: 1, mode: 'continuable', label: '\u202Eevil label' } },
        { id: 's-rtl', name: 'writer', label: 'שלום world' },
      ],
    });
    const shown = rows.find((r) => r.id === spoof);
    assert.equal(shown.name, '⟪U+202E⟫dael', 'the override is shown, not obeyed');
    assert.equal(shown.label, '⟪U+202E⟫evil label');
    assert.ok(rows.every((r) => !/[\u202A-\u202E\u2066-\u2069]/.test(r.name + (r.label ?? ''))));
    const rendered = await page.evaluate((id) => {
      const li = [...window.el.shadowRoot.querySelectorAll('[role="treeitem"]')].find((x) => x.dataset.sessionId === id);
      const name = li.querySelector('.name');
      const label = li.querySelector('.label');
      // Visual order of the name's letters: with the override obeyed, "d" would sit right of "l".
      const node = name.firstChild;
      const x = (i) => {
        const r = document.createRange();
        r.setStart(node, i);
        r.setEnd(node, i + 1);
        return r.getBoundingClientRect().left;
      };
      const text = node.textContent;
      return {
        tags: [name.tagName, label.tagName],
        bidi: [getComputedStyle(name).unicodeBidi, getComputedStyle(label).unicodeBidi],
        dBeforeL: x(text.indexOf('d')) < x(text.indexOf('l')),
        title: li.querySelector('.row').title,
      };
    }, spoof);
    assert.deepEqual(rendered.tags, ['BDI', 'BDI']);
    assert.deepEqual(rendered.bidi, ['isolate', 'isolate']);
    assert.equal(rendered.dBeforeL, true, 'rendered left to right as "dael", not as "lead"');
    assert.ok(!rendered.title.includes('\u202E') && rendered.title.startsWith('id \u2068'), rendered.title);
    const exposed = await page.evaluate(() => {
      const el = document.createElement('subagent-tree');
      const runtime = { listDescendants: async () => [], on: () => () => {} };
      el.runtime = runtime;
      el.root = { sessionId: 'r', name: 'lead' };
      return { runtime: el.runtime === undefined, root: el.root === undefined, rootId: el.rootId };
    });
    assert.deepEqual(exposed, { runtime: true, root: true, rootId: 'r' }, 'the element gives neither its runtime nor its root handle back');
    page.check();
    await page.close();
  });

  test('an unnamed member shows as a marked id: ids such as "lead", "l\\u0435ad", "lea\\u200Bd" or "reviewer/checker" never pass for names', async () => {
    const page = await openFixture(context, site.url);
    const v0 = (id) => ({ id, payload: { version: 0, childId: id, childCreatedAt: 1, mode: 'continuable', label: 'Historical' } });
    const ids = ['lead', 'l\u0435ad', 'lea\u200Bd', 'reviewer/checker', 'a\u00A0b', 'x\uD83D\uDE00'];
    const rows = await mount(page, {
      id: 'root-ids',
      children: [{ id: 's-rev', name: 'reviewer', children: [{ id: 's-chk', name: 'checker' }] }, ...ids.map(v0)],
    });
    const shown = await page.evaluate(() =>
      [...window.el.shadowRoot.querySelectorAll('[role="treeitem"]')].map((li) => {
        const row = li.querySelector(':scope > .row');
        const name = row.querySelector(':scope > .name');
        const mark = row.querySelector(':scope > .idmark');
        return {
          id: li.dataset.sessionId,
          named: li.dataset.named,
          text: name.textContent,
          parts: name.getAttribute('part'),
          mark: mark ? { text: mark.textContent, part: mark.getAttribute('part'), before: mark.nextElementSibling === name, visible: mark.checkVisibility() } : null,
          font: getComputedStyle(name).fontFamily,
          weight: getComputedStyle(name).fontWeight,
          // What a reader sees on the row before the label: the mark (if any) and the name.
          seen: [...row.children].slice(1, mark ? 3 : 2).map((e) => e.textContent).join(' '),
          title: row.title,
        };
      }),
    );
    const byId = Object.fromEntries(shown.map((r) => [r.id, r]));
    // Names: no mark, the name font.
    for (const id of ['root-ids', 's-rev', 's-chk']) {
      assert.equal(byId[id].mark, null, id);
      assert.equal(byId[id].named, 'true', id);
      assert.equal(byId[id].parts, 'name', id);
    }
    assert.deepEqual([byId['root-ids'].text, byId['s-chk'].text], ['lead', 'reviewer/checker']);
    // Ids: an "id" mark right before the id, monospace, every character outside printable ASCII visible.
    assert.deepEqual(
      ids.map((id) => byId[id].text),
      ['lead', 'l⟪U+0435⟫ad', 'lea⟪U+200B⟫d', 'reviewer/checker', 'a⟪U+00A0⟫b', 'x⟪U+1F600⟫'],
    );
    for (const id of ids) {
      const r = byId[id];
      assert.deepEqual(r.mark, { text: 'id', part: 'id-mark', before: true, visible: true }, id);
      assert.equal(r.named, 'false', id);
      assert.equal(r.parts, 'name id', id);
      assert.match(r.font, /monospace/, id);
      assert.notEqual(r.font, byId['s-chk'].font, id);
      assert.ok(r.title.startsWith('id \u2068') && !/[\u200B\u0435\u00A0]/.test(r.title), r.title);
    }
    // Nothing an id shows equals anything a name shows.
    const seenNames = new Set(['root-ids', 's-rev', 's-chk'].map((id) => byId[id].seen));
    for (const id of ids) assert.ok(!seenNames.has(byId[id].seen), `${byId[id].seen} passes for a name`);
    assert.equal(rows.find((r) => r.id === 'lead').name, 'lead', 'the data itself is unchanged');
    // The API says which is which: nodeInfo and the select event.
    const api = await page.evaluate(() => {
      window.el.select('lead');
      window.el.select('s-chk');
      return { info: [window.el.nodeInfo('lead').named, window.el.nodeInfo('s-chk').named], selects: window.selects };
    });
    assert.deepEqual(api, {
      info: [false, true],
      selects: [{ sessionId: 'lead', name: 'lead', named: false }, { sessionId: 's-chk', name: 'reviewer/checker', named: true }],
    });
    await screenshot(page, 'element-ids', page.locator('subagent-tree'));
    page.check();
    await page.close();
  });

  test('one damaged catalog entry is one corrupt row: the rest of the tree shows, never "The tree could not be read"', async () => {
    const page = await openFixture(context, site.url);
    const result = await page.evaluate(async () => {
      document.body.replaceChildren();
      const inner = new window.lib.MemoryStore();
      await window.seed(inner, {
        id: 'root-d',
        children: [
          { id: 's-a', name: 'alpha', label: 'Fine', children: [{ id: 's-a1', name: 'one', label: 'Below' }] },
          { id: 's-b', name: 'bravo', label: 'Damaged label' },
          { id: 's-c', name: 'charlie', label: 'Damaged id' },
          { id: 's-d', name: 'delta', label: 'Fine too' },
        ],
      });
      // The store answers two catalog events with lone surrogates, as a corrupted disk would.
      const store = {
        append: (id, events) => inner.append(id, events),
        async read(id, options) {
          const events = await inner.read(id, options);
          for (const e of events ?? []) {
            if (e.type !== 'subagent/catalog') continue;
            if (e.payload.childId === 's-b') e.payload.label = 'x\uD800';
            if (e.payload.childId === 's-c') e.payload.childId = 's-\uDC00';
          }
          return events;
        },
      };
      const el = document.createElement('subagent-tree');
      el.store = store;
      el.rootId = 'root-d';
      document.body.append(el);
      window.el = el;
      await el.ready;
      const error = el.shadowRoot.textContent.includes('could not be read');
      const titles = Object.fromEntries(
        [...el.shadowRoot.querySelectorAll('[role="treeitem"]')].map((li) => [li.dataset.sessionId, li.querySelector(':scope > .row').title]),
      );
      return { rows: window.items(el), error, titles };
    });
    assert.equal(result.error, false);
    assert.deepEqual(
      result.rows.map((r) => [r.name, r.level, r.reason ?? r.mode, r.disabled]),
      [
        ['lead', 1, undefined, null],
        ['alpha', 2, 'continuable', null],
        ['alpha/one', 3, 'continuable', null],
        ['s-b', 2, 'corrupt', 'true'],
        ['entry 6', 2, 'corrupt', 'true'],
        ['delta', 2, 'continuable', null],
      ],
    );
    // Why shows in the row's title; the entry whose id does not read aliases no Session.
    assert.match(result.titles['s-b'], /payload\.label is not well-formed Unicode/);
    assert.ok(!('s-\uFFFD' in result.titles) && !('' in result.titles));
    await screenshot(page, 'element-damaged-entry', page.locator('subagent-tree'));
    page.check();
    await page.close();
  });

  test('the runtime methods are captured at load: a page script that patches SubagentRuntime.prototype later never receives the runtime', { skip: hasRuntime() ? false : 'no SubagentRuntime in pkg/ yet' }, async () => {
    const page = await openFixture(context, site.url);
    const result = await page.evaluate(async () => {
      const { SubagentRuntime, MemoryStore } = window.lib;
      const host = { async runTurn() { return { messages: ['done'] }; } };
      const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
      const lead = await runtime.openRoot({});
      await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'writer', label: 'Write', prompt: 'go' }).result;
      // Another script on the page, never given the runtime, patches the prototype.
      const stolen = [];
      const proto = SubagentRuntime.prototype;
      const { listDescendants, on } = proto;
      proto.listDescendants = function (...args) { stolen.push(this); return listDescendants.apply(this, args); };
      proto.on = function (...args) { stolen.push(this); return on.apply(this, args); };
      const el = document.createElement('subagent-tree');
      el.runtime = runtime;
      el.root = lead;
      document.body.replaceChildren(el);
      await el.ready;
      await el.refresh();
      await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'reader', label: 'Read', prompt: 'go' }).result;
      await runtime.waitForQuiescence(lead);
      const names = window.items(el).map((r) => r.name);
      // The page's own runtime-like objects still work through their own methods.
      const fake = document.createElement('subagent-tree');
      let calls = 0;
      fake.runtime = { listDescendants: async () => { calls++; return []; }, on: () => () => {} };
      fake.root = { sessionId: 'r', name: 'lead' };
      document.body.append(fake);
      await fake.ready;
      return { stolen: stolen.length, names, calls };
    });
    assert.deepEqual(result, { stolen: 0, names: ['lead', 'writer', 'reader'], calls: 1 });
    page.check();
    await page.close();
  });
});
