// DurableObjectStore in real workerd (miniflare), over both Durable Object
// storage backends (SQLite and key-value): the store contract, atomic
// appends, batched reads (<= 128 keys per get), typed reads through the
// index, listing a wide tree, and persistence across a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Miniflare } from 'miniflare';
import { workerModules } from './edge-helpers.mjs';

const WORKER = `
import { listDescendants, resolveName, SubagentError } from 'subagent-tree';
import { DurableObjectStore } from 'subagent-tree/durable-object-store';

const cat = (seq, childId, name) => ({ seq, type: 'subagent/catalog', payload: { version: 3, childId, childCreatedAt: 1, mode: 'continuable', label: 'L', name } });
const note = (seq, text = 'x') => ({ seq, type: 'message/user', payload: { text } });
const code = async (p) => { try { await p; return 'ok'; } catch (e) { return (e instanceof SubagentError ? '' : 'NOT-SUBAGENT:') + e.code; } };

/** Counts storage calls; can fail the n-th put (inside transactions too). */
function counting(storage) {
  const stats = { gets: [], puts: 0, failPutAt: 0 };
  const wrap = (s) => ({
    get: (k) => { if (Array.isArray(k)) stats.gets.push(k.length); return s.get(k); },
    put: (e) => { stats.puts++; if (stats.failPutAt && stats.puts === stats.failPutAt) throw new Error('disk full'); return s.put(e); },
    list: (o) => s.list(o),
    sync: s.sync ? () => s.sync() : undefined,
  });
  const api = wrap(storage);
  api.transaction = (fn) => storage.transaction((txn) => fn(wrap(txn)));
  return { storage: api, stats };
}

const scenarios = {
  async contract(state) {
    const store = new DurableObjectStore(state);
    const out = {};
    out.missing = await store.read('nope', {});
    out.lengthMissing = await store.length('nope');
    await store.append('empty', []);
    out.empty = await store.read('empty', {});
    await store.append('s', [note(0, 'a'), cat(1, 'c1', 'one'), note(2, 'b')]);
    await store.append('s', [cat(3, 'c2', 'two')]);
    out.all = await store.read('s', {});
    out.typed = (await store.read('s', { types: ['subagent/catalog'] })).map((e) => e.seq);
    out.typedOther = (await store.read('s', { types: ['message/user'] })).map((e) => e.seq);
    out.from = (await store.read('s', { fromSeq: 2 })).map((e) => e.seq);
    out.typedFrom = (await store.read('s', { types: ['subagent/catalog'], fromSeq: 2 })).map((e) => e.seq);
    out.conflictLow = await code(store.append('s', [note(2)]));
    out.conflictHigh = await code(store.append('s', [note(9)]));
    out.gap = await code(store.append('s', [note(4), note(6)]));
    out.afterConflicts = await store.length('s');
    out.badEvents = await code(store.append('s', 'nope'));
    out.badEvent = await code(store.append('s', [{ seq: 4 }]));
    out.badId = await code(store.read('', {}));
    // Lone surrogates would alias one key: refused everywhere; a surrogate pair is fine.
    out.loneAppend = await code(store.append('v-\\uD800', [note(0)]));
    out.loneRead = await code(store.read('v-\\uDC00', {}));
    await store.append('v-\\uD83D\\uDE00', [note(0)]);
    out.pairLength = await store.length('v-\\uD83D\\uDE00');
    out.cancelled = await code(store.read('s', { signal: AbortSignal.abort() }));
    out.many = await store.readMany(['s', 'nope', 'empty'], { types: ['subagent/catalog'] });
    out.flush = await store.flush('s');
    // Concurrent appends to one log: the queue keeps order; the loser of a race conflicts.
    const racing = await Promise.all([1, 2, 3, 4, 5].map((i) => code(store.append('race', [note(i - 1, String(i))]))));
    out.racing = racing;
    out.raced = (await store.read('race', {})).map((e) => e.payload.text);
    out.dup = await Promise.all([code(store.append('dup', [note(0, 'a')])), code(store.append('dup', [note(0, 'b')]))]);
    out.odd = await (async () => { const id = 'a:b/c%d e:0000'; await store.append(id, [note(0)]); return [(await store.read(id, {})).length, await store.read('a', {})]; })();
    out.ids = (await store.sessionIds()).sort();
    out.prefixed = await (async () => { const other = new DurableObjectStore(state.storage, { prefix: 'other/' }); return [await other.read('s', {}), await other.sessionIds()]; })();
    return out;
  },
  async batching(state) {
    const { storage, stats } = counting(state.storage);
    const store = new DurableObjectStore(storage);
    const big = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? cat(i, 'k' + i, 'n' + i) : note(i)));
    await store.append('big', big);
    const putsForBig = stats.puts;
    const back = await store.read('big', {});
    const typed = await store.read('big', { types: ['subagent/catalog', 'session/start'] });
    const ids = Array.from({ length: 200 }, (_, i) => 's' + i);
    for (const id of ids) await store.append(id, [cat(0, id + '-c', 'c'), note(1)]);
    stats.gets.length = 0;
    const many = await store.readMany([...ids, 'missing', 'big'], { types: ['subagent/catalog', 'session/start'] });
    const gets = [...stats.gets];
    // A failing put inside the transaction leaves nothing behind.
    stats.failPutAt = stats.puts + 2;
    const failed = await code(store.append('big', Array.from({ length: 200 }, (_, i) => note(300 + i))));
    stats.failPutAt = 0;
    return {
      putsForBig, backLength: back.length, backOrdered: back.every((e, i) => e.seq === i), typed: typed.length,
      gets, manyLengths: many.map((m) => (m === null ? null : m.length)),
      failed, lengthAfterFailure: await store.length('big'), readAfterFailure: (await store.read('big', {})).length,
      appendAfterFailure: await code(store.append('big', [note(300)])),
    };
  },
  async listing(state) {
    const { storage, stats } = counting(state.storage);
    const store = new DurableObjectStore(storage);
    const root = 'root';
    await store.append(root, Array.from({ length: 150 }, (_, i) => cat(i, 'c' + i, 'child-' + i)));
    for (let i = 0; i < 150; i++) await store.append('c' + i, i < 2 ? [cat(0, 'g' + i, 'grand')] : []);
    await store.append('g0', []);
    stats.gets.length = 0;
    const rows = await listDescendants(store, root);
    const gets = [...stats.gets];
    const resolved = await resolveName(store, root, 'child-1/grand');
    return { rows: rows.length, diagnostics: rows.filter((r) => r.kind === 'diagnostic').map((r) => r.id + ':' + r.reason), paths: rows.slice(0, 3).map((r) => r.path), gets, resolved };
  },
  async write(state) {
    const store = new DurableObjectStore(state);
    await store.append('kept', [cat(0, 'x', 'kept-child'), note(1, 'persisted')]);
    await store.flush('kept');
    return { ok: true };
  },
  async reread(state) {
    const store = new DurableObjectStore(state);
    return { events: await store.read('kept', {}), length: await store.length('kept') };
  },
};

export class StoreDO {
  constructor(state) { this.state = state; }
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    try { return Response.json(await scenarios[name](this.state)); }
    catch (e) { return Response.json({ failure: String(e && e.stack || e) }, { status: 500 }); }
  }
}
export class SqlStoreDO extends StoreDO {}
export class KvStoreDO extends StoreDO {}
export default {
  fetch(request, env) {
    const url = new URL(request.url);
    const ns = url.searchParams.get('backend') === 'kv' ? env.KV_STORE : env.SQL_STORE;
    return ns.get(ns.idFromName(url.searchParams.get('object') ?? 'one')).fetch(request);
  },
};
`;

const modules = await workerModules(WORKER);

function start(persist) {
  return new Miniflare({
    modules,
    compatibilityDate: '2025-01-01',
    durableObjects: { SQL_STORE: { className: 'SqlStoreDO', useSQLite: true }, KV_STORE: { className: 'KvStoreDO', useSQLite: false } },
    durableObjectsPersist: persist,
  });
}

async function run(mf, scenario, backend, object = scenario) {
  const res = await mf.dispatchFetch(`http://store/${scenario}?backend=${backend}&object=${object}`);
  const body = await res.json();
  assert.equal(res.status, 200, body.failure);
  return body;
}

const cat = (seq, childId, name) => ({ seq, type: 'subagent/catalog', payload: { version: 3, childId, childCreatedAt: 1, mode: 'continuable', label: 'L', name } });

test('DurableObjectStore in workerd, over SQLite and key-value storage', async (t) => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'do-store-'));
  let mf = start(persist);
  try {
    for (const backend of ['sqlite', 'kv']) {
      await t.test(`${backend}: the store contract`, async () => {
        const r = await run(mf, 'contract', backend);
        assert.equal(r.missing, null);
        assert.equal(r.lengthMissing, null);
        assert.deepEqual(r.empty, []);
        assert.deepEqual(r.all.map((e) => e.seq), [0, 1, 2, 3]);
        assert.deepEqual(r.all[1], cat(1, 'c1', 'one'));
        assert.deepEqual(r.typed, [1, 3]);
        assert.deepEqual(r.typedOther, [0, 2]);
        assert.deepEqual(r.from, [2, 3]);
        assert.deepEqual(r.typedFrom, [3]);
        assert.equal(r.conflictLow, 'APPEND_CONFLICT');
        assert.equal(r.conflictHigh, 'APPEND_CONFLICT');
        assert.equal(r.gap, 'APPEND_CONFLICT');
        assert.equal(r.afterConflicts, 4);
        assert.equal(r.badEvents, 'INVALID_ARGUMENT');
        assert.equal(r.badEvent, 'INVALID_ARGUMENT');
        assert.equal(r.badId, 'INVALID_ARGUMENT');
        assert.equal(r.loneAppend, 'INVALID_ARGUMENT');
        assert.equal(r.loneRead, 'INVALID_ARGUMENT');
        assert.equal(r.pairLength, 1);
        assert.equal(r.cancelled, 'CANCELLED');
        assert.deepEqual(r.many.map((m) => m && m.map((e) => e.seq)), [[1, 3], null, []]);
        assert.equal(r.flush, true);
        assert.deepEqual(r.racing, ['ok', 'ok', 'ok', 'ok', 'ok']);
        assert.deepEqual(r.raced, ['1', '2', '3', '4', '5']);
        assert.deepEqual(r.dup.sort(), ['APPEND_CONFLICT', 'ok']);
        assert.deepEqual(r.ids, ['a:b/c%d e:0000', 'dup', 'empty', 'race', 's', 'v-\uD83D\uDE00'].sort());
        assert.deepEqual(r.odd, [1, null]);
        assert.deepEqual(r.prefixed, [null, []]);
      });
      await t.test(`${backend}: atomic appends and batched reads of at most 128 keys`, async () => {
        const r = await run(mf, 'batching', backend);
        assert.equal(r.backLength, 300);
        assert.ok(r.backOrdered);
        assert.equal(r.typed, 100);
        assert.ok(r.putsForBig >= 4, 'a 300-event append spans several puts (one transaction)');
        assert.ok(r.gets.every((n) => n <= 128), `every get has <= 128 keys: ${r.gets}`);
        // 202 length keys (2 gets) + 200 + 100 index keys (3 gets): two rounds, no per-session gets.
        assert.equal(r.gets.length, 5, `gets: ${r.gets}`);
        assert.deepEqual(r.manyLengths, [...Array(200).fill(1), null, 100]);
        assert.equal(r.failed, 'PERSISTENCE_UNAVAILABLE');
        assert.equal(r.lengthAfterFailure, 300);
        assert.equal(r.readAfterFailure, 300);
        assert.equal(r.appendAfterFailure, 'ok');
      });
      await t.test(`${backend}: listing a 150-wide tree through readMany`, async () => {
        const r = await run(mf, 'listing', backend);
        assert.equal(r.rows, 152);
        assert.deepEqual(r.diagnostics, ['g1:unavailable']);
        assert.deepEqual(r.paths, ['child-0', 'child-0/grand', 'child-1']);
        assert.ok(r.gets.every((n) => n <= 128), `gets: ${r.gets}`);
        assert.ok(r.gets.length <= 10, `a level costs a few batched gets, not one per member: ${r.gets}`);
        assert.equal(r.resolved, 'g1');
      });
      await run(mf, 'write', backend);
    }
    await mf.dispose();
    mf = start(persist);
    for (const backend of ['sqlite', 'kv']) {
      const r = await run(mf, 'reread', backend, 'write');
      assert.equal(r.length, 2, `${backend}: the log survived the restart`);
      assert.deepEqual(r.events[0], cat(0, 'x', 'kept-child'));
      assert.equal(r.events[1].payload.text, 'persisted');
    }
  } finally {
    await mf.dispose();
    await rm(persist, { recursive: true, force: true });
  }
});
