// <subagent-tree> shows the tree as it is (issue 51): a running row's live line from
// its turn's `subagent/delta` parts, rendered at most once per animation frame; and
// each way a turn stops (completed, interrupted, error, budget spent, max tokens,
// refused) in its own text and colour, with an accessible label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, hasRuntime, openFixture, screenshot } from './helpers.mjs';

const env = browserSuite();
const skip = hasRuntime() ? false : 'no SubagentRuntime in pkg/ yet';

test('a running row shows its live last line from its deltas, once per frame, then its final output', { skip }, async () => {
  const page = await openFixture(env.context, env.site.url);
  await page.evaluate(async () => {
    const { SubagentRuntime, MemoryStore } = window.lib;
    window.turns = {};
    const host = {
      async runTurn(turn) {
        if (turn.name !== 'streamer') return { messages: [`${turn.name} done`] };
        // The page streams through window.turns.streamer.emit and ends it with finish().
        let finish;
        const done = new Promise((resolve) => (finish = resolve));
        window.turns.streamer = { emit: (text) => turn.emit({ type: 'text-delta', text }), finish };
        return { messages: [await done] };
      },
    };
    const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
    const lead = await runtime.openRoot({});
    const el = await window.showTree({ runtime, root: lead }, '600px');
    Object.assign(window, { runtime, lead, el });
    const a = await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'streamer', label: 'Stream a report', prompt: 'go' });
    window.streamerId = a.childId;
    a.result.catch(() => {});
  });
  await page.waitForFunction(() => window.turns.streamer && window.el.nodeInfo(window.streamerId)?.state === 'running');
  const liveText = () => page.evaluate(() => window.el.shadowRoot.querySelector('[data-name="streamer"] > .row > .output.live')?.textContent ?? null);
  assert.equal(await liveText(), null, 'nothing streamed yet');
  // 200 parts in one task: one render, at the next frame, showing the last line's end.
  const burst = await page.evaluate(async () => {
    const root = window.el.shadowRoot;
    const records = [];
    const observer = new MutationObserver((list) => {
      for (const r of list) {
        const target = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        if (target?.closest?.('.output.live') || [...r.addedNodes].some((n) => n.classList?.contains('output'))) records.push(r.type);
      }
    });
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    const s = window.turns.streamer;
    s.emit('# Report\n');
    for (let i = 1; i < 200; i++) s.emit(`tok${i} `);
    const before = root.querySelector('[data-name="streamer"] > .row > .output.live')?.textContent ?? null;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    observer.takeRecords();
    observer.disconnect();
    return { before, records: records.length, info: window.el.nodeInfo(window.streamerId).live };
  });
  assert.equal(burst.before, null, 'not rendered inside the task that streamed');
  assert.ok(burst.records >= 1 && burst.records <= 2, `one render for 200 parts: ${burst.records} mutation records`);
  assert.ok(burst.info.startsWith('…') && burst.info.endsWith('tok198 tok199'), burst.info);
  assert.equal(Array.from(burst.info).length, 160);
  assert.equal(await liveText(), burst.info);
  // Parts spread over frames: never more than one render in a frame.
  const spread = await page.evaluate(async () => {
    const root = window.el.shadowRoot;
    let frame = 0;
    let running = true;
    const tick = () => {
      frame += 1;
      if (running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    const perFrame = new Map();
    const observer = new MutationObserver((list) => {
      if (list.some((r) => r.target.parentElement?.closest?.('.output.live') || r.target.closest?.('.output.live'))) perFrame.set(frame, (perFrame.get(frame) ?? 0) + 1);
    });
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    window.turns.streamer.emit('\nsecond line:');
    for (let i = 0; i < 30; i++) {
      window.turns.streamer.emit(` w${i}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    running = false;
    observer.disconnect();
    return { frames: [...perFrame.values()], last: window.el.nodeInfo(window.streamerId).live };
  });
  assert.ok(spread.frames.length >= 2, `rendered over several frames: ${spread.frames}`);
  assert.ok(spread.frames.every((n) => n === 1), `at most one render per frame: ${spread.frames}`);
  assert.ok(spread.last.startsWith('second line: w0') && spread.last.endsWith(" w29"), spread.last);
  // Longer than the row: its end, the newest text, is what shows (the start is clipped).
  const geometry = () =>
    page.evaluate(() => {
      const out = window.el.shadowRoot.querySelector('[data-name="streamer"] > .row > .output.live');
      const [box, text] = [out.getBoundingClientRect(), out.firstChild.getBoundingClientRect()];
      return { wider: text.width > box.width, left: Math.round(text.left - box.left), right: Math.round(box.right - text.right) };
    });
  let g = await geometry();
  assert.ok(g.wider && g.right === 0 && g.left < 0, JSON.stringify(g));
  await screenshot(page, 'element-streaming', page.locator('subagent-tree'));
  // A short line starts where the row's text starts.
  await page.evaluate(() => window.turns.streamer.emit('\nshort'));
  await page.waitForFunction(() => window.el.nodeInfo(window.streamerId).live === 'short');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  g = await geometry();
  assert.ok(!g.wider && g.left === 0 && g.right > 0, JSON.stringify(g));
  // The turn ends: its final output replaces the live line.
  await page.evaluate(() => window.turns.streamer.finish('The report is done.'));
  await page.waitForFunction(() => window.el.nodeInfo(window.streamerId).state === 'settled');
  assert.equal(await liveText(), null);
  assert.deepEqual(
    await page.evaluate(() => {
      const n = window.el.nodeInfo(window.streamerId);
      return [n.live ?? null, n.output, window.el.shadowRoot.querySelector('[data-name="streamer"] > .row > .output').textContent];
    }),
    [null, 'The report is done.', 'The report is done.'],
  );
  page.check();
  await page.close();
});

test('each stop reason differs in text and colour and has an accessible label; an interrupted member is not shown as completed', { skip }, async () => {
  const page = await openFixture(env.context, env.site.url);
  await page.evaluate(async () => {
    const { SubagentRuntime, MemoryStore } = window.lib;
    let open;
    window.gate = new Promise((resolve) => (open = resolve));
    window.openGate = open;
    const host = {
      async runTurn(turn) {
        switch (turn.name) {
          case 'broken':
            return { stopReason: 'error', diagnostic: 'the model failed' };
          case 'capped':
            return { stopReason: 'max-tokens', messages: ['cut off mid'] };
          case 'refuser':
            return { stopReason: 'refusal', messages: ['I will not do that.'] };
          case 'stopped':
            await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
            return { stopReason: 'aborted' };
          case 'spent':
            await window.gate;
            return { messages: ['spent it'], usage: { inputTokens: 5, outputTokens: 5 } };
          default:
            return { messages: [`${turn.name} done`] };
        }
      },
    };
    const runtime = new SubagentRuntime({ store: new MemoryStore(), host, capacity: 8 });
    const lead = await runtime.openRoot({});
    const el = await window.showTree({ runtime, root: lead }, '640px');
    Object.assign(window, { runtime, lead, el });
    for (const name of ['done', 'stopped', 'broken', 'spent', 'capped', 'refuser']) {
      const a = await runtime.startActivation({ provider: 'spawn', parent: lead, name, label: `Task of ${name}`, prompt: 'go', ...(name === 'spent' ? { budget: { turns: 1 } } : {}) });
      a.result.catch(() => {});
    }
  });
  const until = (fn, arg) => page.waitForFunction(fn, arg, { timeout: 10_000, polling: 20 });
  await until(() => ['stopped', 'spent'].every((n) => window.items(window.el).find((r) => r.name === n)?.activity === 'running'));
  // spent's one turn is all its budget allows: a message waits, and its turn ends budget-exhausted.
  await page.evaluate(async () => {
    await window.runtime.prompt(window.lead, 'spent', 'and this too');
    window.openGate();
    await window.runtime.interrupt('stopped', { kind: 'user', root: window.lead });
  });
  await until(() => window.el.shadowRoot.querySelectorAll('[role="treeitem"]:not([data-name="lead"]) .badge.stop').length === 5);
  const badges = await page.evaluate(() =>
    [...window.el.shadowRoot.querySelectorAll('[role="treeitem"]')].flatMap((li) => {
      const stop = li.querySelector(':scope > .row .badge.stop');
      const state = li.querySelector(':scope > .row .badge.activity');
      if (li.dataset.name === 'lead' || (!stop && li.dataset.name !== 'broken')) return [];
      const style = stop && getComputedStyle(stop);
      return [{ name: li.dataset.name, state: state?.textContent, stop: stop?.textContent ?? null, reason: stop?.dataset.stopReason ?? null, label: stop?.getAttribute('aria-label') ?? null, role: stop?.getAttribute('role') ?? null, part: stop?.getAttribute('part') ?? null, colour: style ? `${style.color}/${style.backgroundColor}` : null }];
    }),
  );
  const byName = Object.fromEntries(badges.map((b) => [b.name, b]));
  assert.deepEqual(
    Object.fromEntries(badges.map((b) => [b.name, [b.state, b.stop, b.reason, b.part]])),
    {
      done: ['settled', 'completed', 'completed', 'badge stop completed'],
      stopped: ['settled', 'interrupted', 'aborted', 'badge stop aborted'],
      broken: ['error', null, null, null], // its state badge already says error
      spent: ['settled', 'budget spent', 'budget-exhausted', 'badge stop budget-exhausted'],
      capped: ['settled', 'max tokens', 'max-tokens', 'badge stop max-tokens'],
      refuser: ['settled', 'refused', 'refusal', 'badge stop refusal'],
    },
  );
  const stops = badges.filter((b) => b.stop);
  assert.equal(new Set(stops.map((b) => b.colour)).size, stops.length, `each reason its own colour: ${stops.map((b) => b.colour)}`);
  assert.ok(stops.every((b) => b.role === 'img' && b.label.startsWith('last turn ')), JSON.stringify(stops));
  assert.equal(byName.stopped.label, 'last turn interrupted (aborted)');
  // The row's accessible name carries the label (a screen reader hears how it stopped).
  assert.equal(await page.getByRole('treeitem', { name: /last turn interrupted \(aborted\)/ }).count(), 1);
  assert.equal(await page.getByRole('treeitem', { name: /last turn stopped: a budget is exhausted/ }).count(), 1);
  await screenshot(page, 'element-stop-reasons', page.locator('subagent-tree'));
  page.check();
  await page.close();
});

test('after a reload, and in a page that only reads the store, each row shows its last output, stop reason and state from the logs', { skip }, async () => {
  const page = await openFixture(env.context, env.site.url);
  /** Each row as shown: [state badge, stop badge, output line]. */
  const view = () =>
    page.evaluate((tag) => {
      const out = {};
      for (const li of document.querySelector(tag).shadowRoot.querySelectorAll('[role="treeitem"]')) {
        const row = li.querySelector(':scope > .row');
        out[li.dataset.name] = [
          row.querySelector('.badge.activity')?.textContent ?? null,
          row.querySelector('.badge.stop')?.dataset.stopReason ?? null,
          row.querySelector(':scope > .output')?.textContent ?? null,
        ];
      }
      return out;
    }, 'subagent-tree');
  await page.evaluate(() => window.lib.IndexedDBStore.deleteDatabase('reload-test'));
  await page.evaluate(async () => {
    const { SubagentRuntime, IndexedDBStore } = window.lib;
    const store = await IndexedDBStore.open('reload-test');
    let release;
    window.slowGate = new Promise((resolve) => (release = resolve));
    window.releaseSlow = release;
    const host = {
      async runTurn(turn) {
        if (turn.name === 'broken') return { stopReason: 'error', diagnostic: 'the model failed' };
        if (turn.name === 'stopper') {
          await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
          return { stopReason: 'aborted' };
        }
        if (turn.name === 'slow') {
          await window.slowGate;
          return { messages: ['Slow work finished.'] };
        }
        if (turn.name === 'capped') return { stopReason: 'max-tokens', messages: ['Half a sent'] };
        return { messages: [`${turn.name}: notes drafted.`] };
      },
    };
    const runtime = new SubagentRuntime({ store, host, capacity: 8 });
    const lead = await runtime.openRoot({ sessionId: 'reload-root' });
    for (const name of ['writer', 'stopper', 'broken', 'capped', 'slow']) {
      const a = await runtime.startActivation({ provider: 'spawn', parent: lead, name, label: `Task of ${name}`, prompt: 'go' });
      a.result.catch(() => {});
    }
    await runtime.interrupt('stopper', { kind: 'user', root: lead });
    Object.assign(window, { runtime, lead, store });
    // A follower over the same store, as a page that only reads it would be.
    const follower = await window.showTree({ store, rootId: 'reload-root' });
  });
  // The follower sees slow's open turn as running, and the others as their logs say.
  await page.waitForFunction(() => window.items(document.querySelector('subagent-tree')).find((r) => r.name === 'stopper')?.activity === 'settled');
  let seen = await view();
  assert.deepEqual(seen.slow, ['running', null, null], 'an open turn in the log is a running member');
  assert.deepEqual(seen.writer, ['settled', 'completed', 'writer: notes drafted.']);
  // When slow's turn ends in the driving runtime, the follower shows it (the store tells of the append).
  await page.evaluate(() => window.releaseSlow());
  await page.waitForFunction(() => window.items(document.querySelector('subagent-tree')).find((r) => r.name === 'slow')?.activity === 'settled');
  await page.evaluate(async () => {
    await window.runtime.waitForQuiescence(window.lead);
    await window.runtime.closeRoot(window.lead);
    window.store.close();
  });
  const expected = {
    writer: ['settled', 'completed', 'writer: notes drafted.'],
    stopper: ['settled', 'aborted', null],
    broken: ['error', null, null],
    capped: ['settled', 'max-tokens', 'Half a sent'],
    slow: ['settled', 'completed', 'Slow work finished.'],
  };
  const children = (v) => Object.fromEntries(Object.entries(v).filter(([name]) => name !== 'lead'));
  // Reload: a page that only reads the store.
  await page.reload();
  await page.waitForFunction(() => window.fixtureReady === true);
  await page.evaluate(async () => {
    const store = await window.lib.IndexedDBStore.open('reload-test');
    const el = await window.showTree({ store, rootId: 'reload-root' });
    window.readerStore = store;
  });
  seen = await view();
  assert.deepEqual(children(seen), expected);
  assert.deepEqual(seen.lead.slice(0, 2), ['idle', 'completed'], 'the root: it takes messages; its last turn completed');
  assert.match(seen.lead[2], /^lead: notes drafted\.$/);
  await screenshot(page, 'element-reloaded-reader', page.locator('subagent-tree'));
  // Reload again: a new runtime over the store shows the same (nothing resident but the root).
  await page.evaluate(async () => {
    window.readerStore.close();
    const { SubagentRuntime, IndexedDBStore } = window.lib;
    const store = await IndexedDBStore.open('reload-test');
    const runtime = new SubagentRuntime({ store, host: { runTurn: async () => ({ messages: ['again'] }) } });
    const lead = await runtime.openRoot({ sessionId: 'reload-root' });
    const el = await window.showTree({ runtime, root: lead });
    window.nodeInfos = window.items(el).map((r) => el.nodeInfo(r.id));
  });
  const again = await view();
  assert.deepEqual(children(again), expected);
  assert.deepEqual(again.lead, seen.lead);
  const infos = await page.evaluate(() => Object.fromEntries(window.nodeInfos.map((n) => [n.name, [n.state, n.stopReason ?? null]])));
  assert.deepEqual(infos.stopper, ['settled', 'aborted']);
  await screenshot(page, 'element-reloaded-runtime', page.locator('subagent-tree'));
  page.check();
  await page.close();
});

test('each row shows its tokens (own and subtree) and a bar where a budget applies, kept current by turn events', { skip }, async () => {
  const page = await openFixture(env.context, env.site.url);
  await page.evaluate(async () => {
    const { SubagentRuntime, MemoryStore } = window.lib;
    const spend = { lead: [300, 100], reviewer: [120, 30], checker: [40, 10] };
    const host = {
      async runTurn(turn) {
        const [inputTokens, outputTokens] = spend[turn.name.split('/').pop()];
        if (turn.name === 'reviewer' && turn.first) {
          await turn.tools.find((t) => t.name === 'spawn_agent').call({ name: 'checker', description: 'Check', prompt: 'check it', budget: { tokens: 400 } });
        }
        return { messages: [`${turn.name} done`], usage: { inputTokens, outputTokens } };
      },
    };
    const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2 });
    const lead = await runtime.openRoot({ budget: { tokens: 5000 } });
    const el = await window.showTree({ runtime, root: lead }, '640px');
    Object.assign(window, { runtime, lead, el });
    const a = await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'reviewer', label: 'Review', prompt: 'go', budget: { tokens: 2000 } });
    await a.result;
    await runtime.waitForQuiescence(lead);
  });
  /** What the element shows and what a fresh listing says, per full name. */
  const compare = () =>
    page.evaluate(async () => {
      const tree = await window.runtime.listTree(window.lead.sessionId);
      const listed = { lead: tree.root, ...Object.fromEntries(tree.rows.map((r) => [r.path, r])) };
      const out = {};
      for (const li of window.el.shadowRoot.querySelectorAll('[role="treeitem"]')) {
        const row = li.querySelector(':scope > .row');
        const meter = row.querySelector('.budget');
        const info = window.el.nodeInfo(li.dataset.sessionId);
        const l = listed[li.dataset.name];
        const tokens = (u) => u.inputTokens + u.outputTokens;
        out[li.dataset.name] = {
          shown: row.querySelector('.usage')?.textContent ?? null,
          tokens: info.tokens,
          listed: { own: tokens(l.usage.own), subtree: tokens(l.usage.subtree), complete: l.usage.complete },
          meter: meter && { now: Number(meter.getAttribute('aria-valuenow')), max: Number(meter.getAttribute('aria-valuemax')), label: meter.getAttribute('aria-label'), role: meter.getAttribute('role'), width: meter.firstChild.style.inlineSize },
          budget: info.budget ?? null,
          listedBudget: l.budget ?? null,
        };
      }
      return out;
    });
  let rows = await compare();
  for (const [name, r] of Object.entries(rows)) {
    assert.deepEqual(r.tokens, r.listed, `${name}: the element's tokens are the listing's`);
    assert.deepEqual(r.budget, r.listedBudget, `${name}: its budget is the listing's`);
  }
  // lead: its own turns (the first, and the one on reviewer's notice) and its subtree's.
  // lead: its turn on reviewer's notice; reviewer: its first turn and the one on checker's notice.
  assert.deepEqual(rows.lead.tokens, { own: 400, subtree: 750, complete: true });
  assert.deepEqual(rows.reviewer.tokens, { own: 300, subtree: 350, complete: true });
  assert.equal(rows.lead.shown, '400 · 750 tok');
  assert.equal(rows['reviewer/checker'].shown, '50 tok', 'a leaf shows one figure');
  assert.deepEqual(rows.lead.meter, { now: 750, max: 5000, label: 'budget: tokens 4,250 of 5,000 left', role: 'meter', width: '15%' });
  // checker was spawned while the element watched: its budget came with its start event.
  assert.deepEqual([rows['reviewer/checker'].meter.max, rows['reviewer/checker'].meter.now], [400, 50]);
  // One more turn, followed from its event (no listing): the numbers move along the chain.
  const listings = await page.evaluate(async () => {
    let count = 0;
    const list = window.runtime.listTree;
    window.runtime.listTree = (...args) => (count++, list.apply(window.runtime, args));
    await window.runtime.prompt(window.lead, 'reviewer/checker', 'once more');
    await window.runtime.waitForQuiescence(window.lead);
    window.runtime.listTree = list;
    return count;
  });
  assert.equal(listings, 0);
  rows = await compare();
  for (const [name, r] of Object.entries(rows)) {
    assert.deepEqual(r.tokens, r.listed, `${name}, after a live turn: the element's tokens are the listing's`);
    assert.deepEqual(r.budget?.remaining.tokens, r.listedBudget?.remaining.tokens, `${name}, after a live turn: its budget left is the listing's`);
  }
  assert.equal(rows['reviewer/checker'].tokens.own, 100);
  await screenshot(page, 'element-usage-budget', page.locator('subagent-tree'));
  page.check();
  await page.close();
});
