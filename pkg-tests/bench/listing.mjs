// Benchmarks of the built package (`make bench` runs this after `cargo bench`).
//
// 1. Listing the same 11,110-member tree as the native benchmark (fan-out 10,
//    depth 4: 10 + 100 + 1,000 + 10,000) through a plain JS store whose every
//    call takes 1 ms (setTimeout), with and without `readMany`, counting the
//    store round trips; the same listing with no latency (bridge + core cost)
//    and from the package's own MemoryStore.
// 2. Catalog projection of the same 100,000 events (v0-v3 mix) through
//    `projectCatalog` vs a plain-JS fold written here with the same strict
//    checks, reported as a ratio.
//
// Environment: BENCH_SLOW_RUNS (default 3) timed runs of the slow 1 ms listing
// without readMany (about 12-15 s each); BENCH_RUNS (default 11) for the rest.

import { loadPackage } from './load.mjs';
import { record } from './results.mjs';

const { lib, from } = await loadPackage();
const { MemoryStore, listDescendants, projectCatalog } = lib;

const SLOW_RUNS = Number(process.env.BENCH_SLOW_RUNS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 11);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const group = (x) => Math.round(x).toLocaleString('en-US');

async function bench(label, op, ops, warmup, runs, fn) {
  for (let i = 0; i < warmup; i++) await fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const ms = median(times);
  const nsPerOp = (ms * 1e6) / ops;
  console.log(
    `${label.padEnd(66)} ${nsPerOp.toFixed(1).padStart(12)} ns/${op.padEnd(8)} ${group(1e9 / nsPerOp).padStart(14)} ${op}s/s` +
      `   (median of ${runs}: ${ms.toFixed(3)} ms/run, min ${Math.min(...times).toFixed(3)}, max ${Math.max(...times).toFixed(3)})`,
  );
  return ms;
}

// ---------------------------------------------------------------------------
// The tree: every member continuable, named agent-1..agent-10 among siblings,
// each with its own session (a session/start event), as in benches/core.rs.

function buildLogs() {
  const logs = new Map();
  const start = () => ({ seq: 0, type: 'session/start', payload: { inheritedEventCount: 0 } });
  logs.set('root', [start()]);
  let level = ['root'];
  let members = 0;
  for (let depth = 1; depth <= 4; depth++) {
    const next = [];
    for (const parent of level) {
      const log = logs.get(parent);
      for (let i = 0; i < 10; i++) {
        const id = `${parent}.${i}`;
        log.push({
          seq: log.length,
          type: 'subagent/catalog',
          payload: {
            version: 3,
            childId: id,
            childCreatedAt: 1_700_000_000_000 + members,
            mode: 'continuable',
            label: 'task',
            name: `agent-${i + 1}`,
          },
        });
        logs.set(id, [start()]);
        next.push(id);
        members++;
      }
    }
    level = next;
  }
  return { logs, members };
}

/** A plain JS store over `logs`; every call waits `latencyMs` (0: answers at once). */
function jsStore(logs, { latencyMs, batch }) {
  const stats = { read: 0, readMany: 0 };
  const wait = () => (latencyMs > 0 ? new Promise((r) => setTimeout(r, latencyMs)) : null);
  const select = (id, types, fromSeq = 0) => {
    const log = logs.get(id);
    if (!log) return null;
    return log.filter((e) => e.seq >= fromSeq && (!types || types.includes(e.type)));
  };
  const store = {
    stats,
    async append(sessionId, events) {
      const log = logs.get(sessionId) ?? [];
      log.push(...events);
      logs.set(sessionId, log);
    },
    async read(sessionId, { types, fromSeq, signal } = {}) {
      stats.read++;
      await wait();
      signal?.throwIfAborted();
      return select(sessionId, types, fromSeq);
    },
  };
  if (batch) {
    store.readMany = async (sessionIds, { types, signal } = {}) => {
      stats.readMany++;
      await wait();
      signal?.throwIfAborted();
      return sessionIds.map((id) => select(id, types));
    };
  }
  return store;
}

console.log(`subagent-tree package benchmarks (node ${process.version}, ${from})`);
console.log('tree: 11,110 members (fan-out 10, depth 4: 10 + 100 + 1,000 + 10,000), each with its own session\n');

const { logs, members } = buildLogs();
if (members !== 11_110) throw new Error(`tree has ${members} members`);

async function listOnce(store) {
  const rows = await listDescendants(store, 'root');
  if (rows.length !== members) throw new Error(`listed ${rows.length} rows, expected ${members}`);
  return rows;
}

// Sanity: the rows look as the contract says.
{
  const rows = await listOnce(jsStore(logs, { latencyMs: 0, batch: true }));
  const last = rows[rows.length - 1];
  if (rows[0].kind !== 'child' || rows[0].depth !== 1 || rows[0].path !== 'agent-1' || !rows[0].hasChildren)
    throw new Error(`unexpected first row ${JSON.stringify(rows[0])}`);
  if (last.depth !== 4 || last.path !== 'agent-10/agent-10/agent-10/agent-10' || last.hasChildren)
    throw new Error(`unexpected last row ${JSON.stringify(last)}`);
}

const listings = [
  { label: 'JS store, 1 ms per call, with readMany', latencyMs: 1, batch: true, warmup: 1, runs: RUNS },
  { label: 'JS store, 1 ms per call, without readMany', latencyMs: 1, batch: false, warmup: 0, runs: SLOW_RUNS },
  { label: 'JS store, no latency, with readMany', latencyMs: 0, batch: true, warmup: 2, runs: RUNS },
  { label: 'JS store, no latency, without readMany', latencyMs: 0, batch: false, warmup: 2, runs: RUNS },
];
for (const { label, latencyMs, batch, warmup, runs } of listings) {
  const store = jsStore(logs, { latencyMs, batch });
  const ms = await bench(`listing 11,110 members: ${label}`, 'member', members, warmup, runs, async () => {
    await listOnce(store);
  });
  record(`listing.${latencyMs}ms.${batch ? 'readMany' : 'read'}`, ms);
  const calls = warmup + runs;
  const trips = (store.stats.read + store.stats.readMany) / calls;
  console.log(
    `${''.padEnd(66)} ${trips} store round trips per listing (${store.stats.read / calls} read, ${store.stats.readMany / calls} readMany)`,
  );
}
// The plain-JS reference: level by level (one readMany, or concurrent reads,
// per level), catalog payloads checked for shape, rows in pre-order with paths.
async function jsList(store, root) {
  const kids = new Map();
  let level = [root];
  const types = ['subagent/catalog'];
  while (level.length > 0) {
    const logsRead = store.readMany
      ? await store.readMany(level, { types })
      : await Promise.all(level.map((id) => store.read(id, { types })));
    const next = [];
    level.forEach((parent, i) => {
      const entries = [];
      for (const e of logsRead[i] ?? []) {
        const p = e.payload;
        if (e.type !== 'subagent/catalog' || typeof p?.childId !== 'string') throw new Error('bad catalog entry');
        entries.push({ id: p.childId, mode: p.mode, label: p.label, name: p.name });
        next.push(p.childId);
      }
      kids.set(parent, entries);
    });
    level = next;
  }
  const rows = [];
  const walk = (parent, depth, prefix) => {
    for (const c of kids.get(parent) ?? []) {
      const path = prefix === '' ? c.name : `${prefix}/${c.name}`;
      const children = kids.get(c.id) ?? [];
      rows.push({ kind: 'child', id: c.id, parentId: parent, depth, mode: c.mode, label: c.label, name: c.name, path, hasChildren: children.length > 0 });
      walk(c.id, depth + 1, path);
    }
  };
  walk(root, 1, '');
  return rows;
}
for (const { label, latencyMs, batch, warmup, runs } of listings.filter((l) => l.batch || l.latencyMs === 0)) {
  const store = jsStore(logs, { latencyMs, batch });
  const ms = await bench(`listing 11,110 members, plain-JS level-by-level: ${label}`, 'member', members, warmup, runs, async () => {
    const rows = await jsList(store, 'root');
    if (rows.length !== members) throw new Error(`plain-JS listing gave ${rows.length} rows`);
  });
  record(`listing.js.${latencyMs}ms.${batch ? 'readMany' : 'read'}`, ms);
}
{
  const store = new MemoryStore();
  for (const [id, events] of logs) await store.append(id, events);
  const ms = await bench('listing 11,110 members: the package MemoryStore (no latency)', 'member', members, 2, RUNS, async () => {
    await listOnce(store);
  });
  record('listing.memoryStore', ms);
}
console.log();

// ---------------------------------------------------------------------------
// Catalog projection: 100,000 events, the same v0-v3 mix as benches/core.rs.

const N = 100_000;
function catalogEvent(i) {
  const childId = `child-${String(i).padStart(8, '0')}`;
  const childCreatedAt = 1_700_000_000_000 + i;
  let payload;
  switch (i % 4) {
    case 0: payload = { version: 0, childId, childCreatedAt, mode: 'continuable', label: 'review the diff' }; break;
    case 1: payload = { version: 1, childId, childCreatedAt, mode: 'unknown' }; break;
    case 2: payload = { version: 2, childId, childCreatedAt, mode: 'external', label: 'codex run' }; break;
    default:
      payload = { version: 3, childId, childCreatedAt, mode: 'continuable', label: 'check the tests', name: `agent-${(i % 1000) + 1}` };
  }
  return { seq: i, type: 'subagent/catalog', payload };
}
const events = Array.from({ length: N }, (_, i) => catalogEvent(i));

// The plain-JS fold: the same strict decoding rules as the core (unknown keys,
// versions, modes per version, labels, v3 names), the same output rows.
const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const MODES = [
  new Set(['one-shot', 'continuable']),
  new Set(['one-shot', 'continuable', 'unknown']),
  new Set(['external']),
  new Set(['one-shot', 'continuable', 'external']),
];
const KEYS = new Set(['version', 'childId', 'childCreatedAt', 'mode', 'label']);
function jsDecode(p) {
  if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new Error('catalog payload must be an object');
  const { version, childId, childCreatedAt, mode, label, name } = p;
  if (!Number.isInteger(version) || version < 0 || version > 3) throw new Error('bad version');
  for (const key in p) if (!KEYS.has(key) && !(key === 'name' && version === 3)) throw new Error(`unknown field ${key}`);
  if (typeof childId !== 'string' || childId === '') throw new Error('bad childId');
  if (!Number.isSafeInteger(childCreatedAt) || childCreatedAt < 0) throw new Error('bad childCreatedAt');
  if (!MODES[version].has(mode)) throw new Error('bad mode');
  if (label !== undefined && typeof label !== 'string') throw new Error('bad label');
  if (mode === 'continuable' && label === undefined) throw new Error('continuable needs a label');
  if (version === 3 && (typeof name !== 'string' || !NAME.test(name) || name === 'lead')) throw new Error('bad name');
  const entry = { id: childId, createdAt: childCreatedAt, mode };
  if (label !== undefined) entry.label = label;
  if (version === 3) entry.name = name;
  return entry;
}
function jsProject(evs, inheritedEventCount = 0) {
  const out = [];
  for (const e of evs) if (e.type === 'subagent/catalog' && e.seq >= inheritedEventCount) out.push(jsDecode(e.payload));
  return out;
}

{
  const a = projectCatalog(events, {});
  const b = jsProject(events);
  if (a.length !== N || JSON.stringify(a[3]) !== JSON.stringify(b[3]) || JSON.stringify(a[0]) !== JSON.stringify(b[0]))
    throw new Error(`projections differ: ${JSON.stringify(a[3])} vs ${JSON.stringify(b[3])}`);
}
const wasmMs = await bench('catalog: projectCatalog (wasm), 100,000 events', 'event', N, 3, RUNS, () => {
  projectCatalog(events, {});
});
const jsMs = await bench('catalog: plain-JS strict fold, 100,000 events', 'event', N, 3, RUNS, () => {
  jsProject(events);
});
console.log(`${''.padEnd(66)} projectCatalog / plain-JS fold = ${(wasmMs / jsMs).toFixed(2)}x the time`);
record('catalog.wasm', wasmMs);
record('catalog.js', jsMs);
