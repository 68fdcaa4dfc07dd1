// The IndexedDB store and TreeLock in headless Chromium: the store interface
// (verbatim events, contiguous seq, typed and fromSeq reads, null for a
// missing session, readMany in one transaction, APPEND_CONFLICT), its schema,
// listing and resolution over it, and one tab driving a tree.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openFixture, startSite } from './helpers.mjs';

let site, browser, context;
before(async () => {
  site = await startSite();
  browser = await launch();
  context = await browser.newContext();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

describe('IndexedDBStore', () => {
  test('keeps events verbatim with contiguous seq; filters by types and fromSeq; null for a missing session', async () => {
    const page = await openFixture(context, site.url);
    const r = await page.evaluate(async () => {
      const { IndexedDBStore, SubagentError } = window.lib;
      await IndexedDBStore.deleteDatabase('t-basic');
      const store = await IndexedDBStore.open('t-basic');
      const payload = { nested: { list: [1, 'two', null, true], text: 'zoë ✓ <b>' }, n: 1.5 };
      await store.append('s1', [
        { seq: 0, type: 'session/start', payload: { cwd: '/' } },
        { seq: 1, type: 'message/input', payload },
      ]);
      await store.append('s1', [{ seq: 2, type: 'subagent/catalog', payload: { version: 3, childId: 'c', childCreatedAt: 1, mode: 'continuable', label: 'L', name: 'c' } }]);
      await store.append('s1', [{ seq: 3, type: 'message/input', payload: { x: 3 } }]);
      const conflicts = [];
      for (const seq of [0, 3, 5]) {
        try {
          await store.append('s1', [{ seq, type: 'x', payload: null }]);
          conflicts.push('accepted');
        } catch (e) {
          conflicts.push([e instanceof SubagentError, e.name, e.code, e.message]);
        }
      }
      let second = 'accepted';
      try {
        await store.append('s2', [{ seq: 0, type: 'a', payload: 1 }, { seq: 2, type: 'b', payload: 2 }]);
      } catch (e) {
        second = e.code;
      }
      await store.append('empty', []);
      return {
        all: await store.read('s1', {}),
        typed: await store.read('s1', { types: ['subagent/catalog', 'session/start'] }),
        from: await store.read('s1', { fromSeq: 2 }),
        typedFrom: await store.read('s1', { types: ['message/input'], fromSeq: 2 }),
        missing: await store.read('nope', {}),
        empty: await store.read('empty', { types: ['subagent/catalog'] }),
        s2: await store.read('s2', {}),
        conflicts,
        second,
        length: await store.length('s1'),
        ids: await store.sessionIds(),
        flushed: await store.flush('s1'),
        payload,
      };
    });
    assert.deepEqual(r.all.map((e) => [e.seq, e.type]), [
      [0, 'session/start'],
      [1, 'message/input'],
      [2, 'subagent/catalog'],
      [3, 'message/input'],
    ]);
    assert.deepEqual(r.all[1].payload, r.payload);
    assert.deepEqual(Object.keys(r.all[0]).sort(), ['payload', 'seq', 'type']);
    assert.deepEqual(r.typed.map((e) => e.seq), [0, 2]);
    assert.deepEqual(r.from.map((e) => e.seq), [2, 3]);
    assert.deepEqual(r.typedFrom.map((e) => e.seq), [3]);
    assert.equal(r.missing, null);
    assert.deepEqual(r.empty, []);
    assert.equal(r.s2, null, 'a rejected append writes nothing');
    assert.equal(r.second, 'APPEND_CONFLICT');
    assert.equal(r.conflicts.length, 3);
    for (const c of r.conflicts) {
      assert.equal(c[0], true);
      assert.equal(c[1], 'SubagentError');
      assert.equal(c[2], 'APPEND_CONFLICT');
    }
    assert.match(r.conflicts[0][3], /must continue at seq 4, not 0/);
    assert.equal(r.length, 4);
    assert.deepEqual(r.ids, ['empty', 's1']);
    assert.equal(r.flushed, true);
    page.check();
    await page.close();
  });

  test('a batch that fails at its last event writes nothing (one transaction); ids with lone surrogates are refused', async () => {
    const page = await openFixture(context, site.url);
    const r = await page.evaluate(async () => {
      const { IndexedDBStore } = window.lib;
      await IndexedDBStore.deleteDatabase('t-atomic');
      const store = await IndexedDBStore.open('t-atomic');
      const code = (p) => p.then(() => 'ok', (e) => e.code);
      // The last event cannot be stored (a function is not cloneable): the transaction aborts whole.
      const torn = await code(store.append('t', [
        { seq: 0, type: 'session/start', payload: {} },
        { seq: 1, type: 'message/input', payload: { text: 'kept?' } },
        { seq: 2, type: 'message/input', payload: { bad: () => 1 } },
      ]));
      const afterTorn = await store.read('t', {});
      await store.append('t', [{ seq: 0, type: 'session/start', payload: {} }]);
      const lone = [await code(store.append('v-\uD800', [{ seq: 0, type: 'x', payload: null }])), await code(store.read('v-\uDC00', {}))];
      await store.append('v-\uD83D\uDE00', [{ seq: 0, type: 'x', payload: null }]);
      return { torn, afterTorn, length: await store.length('t'), lone, pair: await store.length('v-\uD83D\uDE00'), ids: await store.sessionIds() };
    });
    assert.equal(r.torn, 'INVALID_ARGUMENT');
    assert.equal(r.afterTorn, null, 'nothing of the failed batch landed');
    assert.equal(r.length, 1, 'the log starts again at seq 0');
    assert.deepEqual(r.lone, ['INVALID_ARGUMENT', 'INVALID_ARGUMENT']);
    assert.equal(r.pair, 1);
    assert.deepEqual(r.ids, ['t', 'v-\uD83D\uDE00']);
    page.check();
    await page.close();
  });

  test('concurrent appends: exactly one of two racing at the same seq commits; in-order ones all do', async () => {
    const page = await openFixture(context, site.url);
    const r = await page.evaluate(async () => {
      const { IndexedDBStore } = window.lib;
      await IndexedDBStore.deleteDatabase('t-race');
      const store = await IndexedDBStore.open('t-race');
      const race = await Promise.allSettled([
        store.append('s', [{ seq: 0, type: 'a', payload: 'first' }]),
        store.append('s', [{ seq: 0, type: 'a', payload: 'second' }]),
      ]);
      const chain = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => store.append('t', [{ seq: i, type: 'e', payload: i }])),
      );
      await store.flush('t');
      return {
        race: race.map((x) => x.status === 'fulfilled' ? 'ok' : x.reason.code),
        log: (await store.read('s', {})).map((e) => e.payload),
        chain: chain.filter((x) => x.status === 'fulfilled').length,
        t: (await store.read('t', {})).map((e) => e.payload),
      };
    });
    assert.deepEqual(r.race, ['ok', 'APPEND_CONFLICT']);
    assert.deepEqual(r.log, ['first']);
    assert.equal(r.chain, 20);
    assert.deepEqual(r.t, Array.from({ length: 20 }, (_, i) => i));
    page.check();
    await page.close();
  });

  test('schema: events keyed [sessionId, seq] with a [sessionId, type, seq] index; survives reopening', async () => {
    const page = await openFixture(context, site.url);
    const r = await page.evaluate(async () => {
      const { IndexedDBStore } = window.lib;
      await IndexedDBStore.deleteDatabase('t-schema');
      let store = await IndexedDBStore.open('t-schema');
      await store.append('s', [{ seq: 0, type: 'session/start', payload: {} }]);
      store.close();
      store = await IndexedDBStore.open('t-schema');
      const reread = await store.read('s', {});
      store.close();
      const db = await new Promise((resolve, reject) => {
        const req = indexedDB.open('t-schema');
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
      const tx = db.transaction(['events', 'sessions']);
      const events = tx.objectStore('events');
      const index = events.index('bySessionType');
      const out = {
        stores: [...db.objectStoreNames],
        key: events.keyPath,
        indexes: [...events.indexNames],
        indexKey: index.keyPath,
        sessionsKey: tx.objectStore('sessions').keyPath,
        reread,
      };
      db.close();
      return out;
    });
    assert.deepEqual(r.stores, ['events', 'sessions']);
    assert.deepEqual(r.key, ['sessionId', 'seq']);
    assert.deepEqual(r.indexes, ['bySessionType']);
    assert.deepEqual(r.indexKey, ['sessionId', 'type', 'seq']);
    assert.equal(r.sessionsKey, 'sessionId');
    assert.deepEqual(r.reread, [{ seq: 0, type: 'session/start', payload: {} }]);
    page.check();
    await page.close();
  });

  test('listing and resolution over IndexedDB match MemoryStore, reading each level with one readMany', async () => {
    const page = await openFixture(context, site.url);
    const r = await page.evaluate(async () => {
      const { IndexedDBStore, MemoryStore, listDescendants, resolveName } = window.lib;
      const tree = {
        id: 'root',
        children: [
          { id: 'a', name: 'alpha', children: [{ id: 'a1', name: 'one' }, { id: 'a2', name: 'two', children: [{ id: 'a2x', name: 'x' }] }] },
          { id: 'b', name: 'beta' },
          { id: 'gone', name: 'gone', missing: true },
        ],
      };
      await IndexedDBStore.deleteDatabase('t-list');
      const idb = window.counting(await IndexedDBStore.open('t-list'));
      const mem = new MemoryStore();
      await window.seed(idb, tree, { noise: 50 });
      await window.seed(mem, tree, { noise: 50 });
      idb.stats.read = idb.stats.readMany = 0;
      const rows = await listDescendants(idb, 'root', {});
      const stats = { read: idb.stats.read, readMany: idb.stats.readMany };
      return {
        same: JSON.stringify(rows) === JSON.stringify(await listDescendants(mem, 'root', {})),
        paths: rows.map((x) => x.path ?? `${x.kind}:${x.reason}`),
        stats,
        resolved: await resolveName(idb, 'root', 'alpha/two/x', {}),
        unknown: await resolveName(idb, 'root', 'alpha/nine', {}).catch((e) => e.code),
      };
    });
    assert.equal(r.same, true);
    assert.deepEqual(r.paths, ['alpha', 'alpha/one', 'alpha/two', 'alpha/two/x', 'beta', 'diagnostic:unavailable']);
    assert.deepEqual(r.stats, { read: 1, readMany: 3 }, 'root read, then one readMany per level');
    assert.equal(r.resolved, 'a2x');
    assert.equal(r.unknown, 'UNKNOWN_AGENT');
    page.check();
    await page.close();
  });
});

describe('TreeLock', () => {
  test('one tab leads, a second follows and hears the leader; it takes over when the leader closes', async () => {
    const ctx = await browser.newContext();
    const [one, two] = [await openFixture(ctx, site.url), await openFixture(ctx, site.url)];
    const setup = (page) =>
      page.evaluate(async () => {
        window.heard = [];
        window.roles = [];
        window.lock = new window.lib.TreeLock('tree-xyz');
        window.lock.addEventListener('message', (e) => window.heard.push(e.detail));
        window.lock.addEventListener('rolechange', (e) => window.roles.push(e.detail.role));
        return window.lock.acquire();
      });
    assert.equal(await setup(one), 'leader');
    assert.equal(await setup(two), 'follower');
    await one.evaluate(() => window.lock.post({ type: 'append', sessionId: 's1' }));
    await two.waitForFunction(() => window.heard.length === 1);
    assert.deepEqual(await two.evaluate(() => window.heard), [{ type: 'append', sessionId: 's1' }]);
    assert.deepEqual(await one.evaluate(() => window.heard), [], 'a tab does not hear itself');
    // A third lock on another tree is independent.
    assert.equal(await two.evaluate(() => new window.lib.TreeLock('other-tree').acquire()), 'leader');
    // The leading tab goes away: the follower takes over.
    await one.close();
    await two.waitForFunction(() => window.lock.role === 'leader');
    assert.deepEqual(await two.evaluate(() => window.roles), ['follower', 'leader']);
    two.check();
    await ctx.close();
  });

  test('close() releases the lock to a waiting tab; without takeover a follower stays one', async () => {
    const ctx = await browser.newContext();
    const [one, two] = [await openFixture(ctx, site.url), await openFixture(ctx, site.url)];
    assert.equal(await one.evaluate(() => (window.lock = new window.lib.TreeLock('t2')).acquire()), 'leader');
    assert.equal(await two.evaluate(() => (window.lock = new window.lib.TreeLock('t2', { takeover: false })).acquire()), 'follower');
    const three = await openFixture(ctx, site.url);
    assert.equal(await three.evaluate(() => (window.lock = new window.lib.TreeLock('t2')).acquire()), 'follower');
    await one.evaluate(() => window.lock.close());
    await three.waitForFunction(() => window.lock.role === 'leader');
    assert.equal(await two.evaluate(() => window.lock.role), 'follower');
    assert.equal(await one.evaluate(() => window.lock.role), 'closed');
    await ctx.close();
  });
});
