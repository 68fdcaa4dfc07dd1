// Benchmark of the example worker's event stream (issue 56): `make bench`
// runs this after deltas.mjs.
//
// One tree in workerd (miniflare) takes BENCH_SSE_MESSAGES (default 1,000)
// messages of 15,000 characters, each answered by a streamed turn, while 20
// followers read its events and 10 more connect and never read. Reports the
// durable events per second served to the readers (each gets every one), and
// the workerd process's resident memory before and after: what the stalled
// followers could make it hold is bounded by SSE_BUFFER_BYTES each, once the
// sockets between are full (BENCH_SSE_BUFFER=1000000000 shows the unbounded
// case). BENCH_SSE_REPO runs another checkout's worker.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { record } from './results.mjs';

if (process.env.BENCH_SSE_REPO) process.env.EDGE_REPO = process.env.BENCH_SSE_REPO;
const { exampleWorker } = await import('../test/edge-helpers.mjs');
const MESSAGES = Number(process.env.BENCH_SSE_MESSAGES ?? 1000);
const READERS = 20;
const STALLED = 10;

/** Resident memory of the workerd processes, in KiB. */
function workerdRss() {
  try {
    return execFileSync('ps', ['-C', 'workerd', '-o', 'rss='], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .reduce((n, line) => n + Number(line.trim()), 0);
  } catch {
    return NaN;
  }
}

/** Reads a stream, keeping only the last event id it carried. */
function reader(response) {
  const state = { last: 0, bytes: 0 };
  const decoder = new TextDecoder();
  let buffer = '';
  state.done = (async () => {
    for await (const chunk of response.body) {
      state.bytes += chunk.byteLength;
      buffer += decoder.decode(chunk, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const id = /^id: (\d+)$/m.exec(buffer.slice(0, cut))?.[1];
        if (id) state.last = Number(id);
        buffer = buffer.slice(cut + 2);
      }
    }
  })().catch(() => {});
  return state;
}

const example = await exampleWorker();
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-sse-'));
// BENCH_SSE_BUFFER sets SSE_BUFFER_BYTES (a huge one keeps every stalled follower: the unbounded case).
const mf = example.start(dir, process.env.BENCH_SSE_BUFFER ? { SSE_BUFFER_BYTES: process.env.BENCH_SSE_BUFFER } : {});
const base = await mf.ready;
const url = (p) => new URL(p, base);
const tree = (await (await fetch(url('/trees'), { method: 'POST' })).json()).id;
const readers = [];
for (let i = 0; i < READERS; i++) readers.push(reader(await fetch(url(`/trees/${tree}/events`))));
const stalled = [];
for (let i = 0; i < STALLED; i++) stalled.push(await fetch(url(`/trees/${tree}/events`)));
await new Promise((r) => setTimeout(r, 500));
const rss0 = workerdRss();
const t0 = performance.now();
const text = 'x'.repeat(15_000);
for (let i = 0; i < MESSAGES; i++) {
  const res = await fetch(url(`/trees/${tree}/message`), { method: 'POST', body: JSON.stringify({ to: 'lead', message: `${i} ${text}` }) });
  if (res.status !== 202) throw new Error(`message ${i}: ${res.status} ${await res.text()}`);
}
// Until lead is quiet and every reader has the last event.
let last = 0;
for (;;) {
  const listing = await (await fetch(url(`/trees/${tree}`))).json();
  last = listing.events?.lastEventId ?? 0;
  const quiet = listing.rows.length === 0 && (await (await fetch(url(`/trees/${tree}/transcript?agent=lead`))).json()).entries.filter((e) => e.type === 'turn/end').length > 0;
  // A worker without event ids (an earlier one) is done when lead is quiet.
  if (quiet && (listing.events === undefined || readers.every((r) => r.last === last))) break;
  await new Promise((r) => setTimeout(r, 50));
}
const seconds = (performance.now() - t0) / 1000;
await new Promise((r) => setTimeout(r, 500));
const rss1 = workerdRss();
const delivered = readers.reduce((n, r) => n + r.last, 0);
const listing = await (await fetch(url(`/trees/${tree}`))).json();
const mb = (kib) => (kib / 1024).toFixed(1);
console.log(
  `sse: ${MESSAGES} messages of 15,000 characters to one tree, ${READERS} readers and ${STALLED} stalled followers: ` +
    `${last} durable events each, ${delivered} served in ${seconds.toFixed(1)} s (${Math.round(delivered / seconds)} durable events/s, ` +
    `${mb(readers[0].bytes / 1024)} MB per reader); workerd resident ${mb(rss0)} -> ${mb(rss1)} MB; ` +
    `followers still held ${JSON.stringify(listing.events?.followers ?? 'n/a')}`,
);
record('sse.eventsPerSecond', delivered / seconds);
record('sse.rssGrowthMB', (rss1 - rss0) / 1024);
for (const s of stalled) await s.body.cancel().catch(() => {});
await mf.dispose();
await example.cleanup();
await rm(dir, { recursive: true, force: true });
process.exit(0);
