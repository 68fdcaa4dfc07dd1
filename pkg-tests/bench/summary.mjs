// The summary `make bench` ends with: every row of issue 15's table next to
// its goal, from the figures this run's benchmarks recorded ($BENCH_RESULTS,
// JSON lines) and the native `cargo bench` output ($BENCH_NATIVE, text), plus
// the package's gzip sizes against size-budget.json. Prints; judges nothing
// (size is enforced by `make pkg`, timings are not tests).
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { packageDir } from './load.mjs';

const figures = new Map();
if (process.env.BENCH_RESULTS && existsSync(process.env.BENCH_RESULTS)) {
  for (const line of readFileSync(process.env.BENCH_RESULTS, 'utf8').split('\n')) {
    if (line.trim()) {
      const { key, value } = JSON.parse(line);
      figures.set(key, value);
    }
  }
}
const native = process.env.BENCH_NATIVE && existsSync(process.env.BENCH_NATIVE) ? readFileSync(process.env.BENCH_NATIVE, 'utf8') : '';
/** A number from the native output: the line starting with `label`, the value before `unit`. */
const nativeFigure = (label, re) => {
  const line = native.split('\n').find((l) => l.startsWith(label));
  const m = line && line.match(re);
  return m ? Number(m[1].replace(/,/g, '')) : undefined;
};
const nativeProjectMs = nativeFigure('catalog: project 100,000 catalog events', /\(median of \d+: ([\d.]+) ms\/run/);
const nativeSpawnUs = nativeFigure('spawn: 1,000 children, sequential, default names', /ms\/run\s+([\d.]+) µs\/child/);
const nativeMessageUs = nativeFigure('message: lead -> idle child worker', /to run_turn: median ([\d.]+) µs/);

const { dir } = packageDir();
const gz = (files) => files.reduce((n, f) => n + gzipSync(readFileSync(join(dir, f)), { level: 9 }).length, 0);
const budget = JSON.parse(readFileSync(new URL('../../size-budget.json', import.meta.url), 'utf8'));

const f = (x, d = 1) => (x === undefined ? 'n/a' : x.toFixed(d));
const ratio = (a, b) => (a === undefined || b === undefined ? undefined : a / b);
const get = (k) => figures.get(k);
const rows = [];
const row = (what, pkg, ref, r, goal, met) => rows.push([what, pkg, ref, r === undefined ? '' : `${f(r, 2)}x`, goal, met === undefined ? '' : met ? 'met' : 'NOT met']);

for (const [name, files] of [['full', ['subagent_tree_bg.wasm', 'subagent_tree.js']], ['lite', ['subagent_tree_lite_bg.wasm', 'subagent_tree_lite.js']]]) {
  // The figure `make pkg` enforced (GNU gzip -9, in sizes.txt), else zlib's (a few hundred bytes apart).
  const built = existsSync(join(dir, 'sizes.txt'))
    ? readFileSync(join(dir, 'sizes.txt'), 'utf8').match(new RegExp(`^size budget ${name}\\s+wasm\\+glue\\s+(\\d+) B`, 'm'))
    : null;
  const bytes = built ? Number(built[1]) : gz(files);
  const { gzipBytes, goalGzipBytes } = budget[name];
  row(`wasm + glue gzip (${name})`, `${f(bytes / 1000)} KB`, `budget ${f(gzipBytes / 1000)} KB`, undefined, `<= ${f(goalGzipBytes / 1000, 0)} KB`, bytes <= goalGzipBytes);
  // What a browser page loads in all for the entry (scripts/page-size.mjs, in sizes.txt).
  const page = existsSync(join(dir, 'sizes.txt'))
    ? readFileSync(join(dir, 'sizes.txt'), 'utf8').match(new RegExp(`^page ${name}\\s+(\\d+) B gzip\\s+\\((\\d+) files`, 'm'))
    : null;
  if (page) row(`page download gzip (${name}: entry, glue, JS helpers, wasm)`, `${f(Number(page[1]) / 1000)} KB`, `${page[2]} files`, undefined, 'reported', undefined);
}
{
  const r = ratio(get('catalog.wasm'), get('catalog.js'));
  row('projectCatalog, 100,000 events', `${f(get('catalog.wasm'))} ms`, `plain-JS fold ${f(get('catalog.js'))} ms; native ${f(nativeProjectMs)} ms`, r, '<= 4x plain JS', r === undefined ? undefined : r <= 4);
}
{
  const ms = get('deltas.maxBlockMs');
  row('1,000 deltas/s, 100 members, lagging events() reader: longest block', `${f(ms)} ms`, `heap growth ${f(get('deltas.heapGrowthKB'), 0)} KB`, undefined, '< 50 ms, memory flat', ms === undefined ? undefined : ms < 50);
  const first = get('element.firstDelta.medianMs');
  row('<subagent-tree>: first delta to its live line on screen (Chromium)', `${f(first)} ms`, `p90 ${f(get('element.firstDelta.p90Ms'))} ms`, undefined, '<= 16 ms median', first === undefined ? undefined : first <= 16);
}
{
  const r = ratio(get('usage.tree.usage'), get('usage.tree.list'));
  row('runtime.usage, 1,111-member cold tree', `${f(get('usage.tree.usage'), 2)} ms`, `listDescendants ${f(get('usage.tree.list'), 2)} ms`, r, '<= 2x listing', r === undefined ? undefined : r <= 2);
  const m = ratio(get('usage.message.usage'), get('usage.message.plain'));
  row('a message with usage recorded', `${f(get('usage.message.usage'))} µs`, `without ${f(get('usage.message.plain'))} µs`, m, '<= 1.1x', m === undefined ? undefined : m <= 1.1);
  const b = ratio(get('budget.message.budgeted'), get('budget.message.plain'));
  row('a message under a budget (gated, reserved, counted)', `${f(get('budget.message.budgeted'))} µs`, `unbudgeted ${f(get('budget.message.plain'))} µs`, b, '<= 1.1x', b === undefined ? undefined : b <= 1.1);
  const t = ratio(get('otel.message.noTracer'), get('otel.message.plain'));
  row('a message, otel instrument() without a tracer', `${f(get('otel.message.noTracer'))} µs`, `uninstrumented ${f(get('otel.message.plain'))} µs; with a tracer ${f(get('otel.message.tracer'))} µs`, t, '<= 1.05x (nothing measurable)', t === undefined ? undefined : t <= 1.05);
  const o = ratio(get('budget.open.budgeted'), get('budget.open.plain'));
  row('openRoot of a budgeted 1,111-member cold tree', `${f(get('budget.open.budgeted'), 2)} ms`, `unbudgeted ${f(get('budget.open.plain'), 2)} ms`, o, 'measured', undefined);
}
{
  const r = ratio(get('listing.0ms.readMany'), get('listing.js.0ms.readMany'));
  row('listDescendants 11,110, 0 ms store, readMany', `${f(get('listing.0ms.readMany'))} ms`, `plain-JS level-by-level ${f(get('listing.js.0ms.readMany'))} ms`, r, '<= 3x plain JS', r === undefined ? undefined : r <= 3);
  const r2 = ratio(get('listing.0ms.read'), get('listing.js.0ms.read'));
  row('same, 0 ms store, read only', `${f(get('listing.0ms.read'))} ms`, `plain-JS level-by-level ${f(get('listing.js.0ms.read'))} ms`, r2, '<= 3x plain JS', r2 === undefined ? undefined : r2 <= 3);
}
for (const [k, label] of [['readMany', 'with readMany'], ['read', 'read only']]) {
  const ms = get(`listing.1ms.${k}`);
  row(`listDescendants 11,110, 1 ms store, ${label}`, `${f(ms)} ms`, k === 'readMany' ? `plain-JS ${f(get('listing.js.1ms.readMany'))} ms` : '', undefined, '< 1,000 ms', ms === undefined ? undefined : ms < 1000);
}
{
  const r = ratio(get('spawn.bridge.us'), nativeSpawnUs);
  row('spawn through the bridge (1,000, default names)', `${f(get('spawn.bridge.us'))} µs`, `native ${f(nativeSpawnUs)} µs`, r, '<= 4x native', r === undefined ? undefined : r <= 4);
  const r2 = ratio(get('message.bridge.us'), nativeMessageUs);
  row('message lead -> idle child, to runTurn', `${f(get('message.bridge.us'))} µs`, `native ${f(nativeMessageUs)} µs`, r2, '<= 4x native', r2 === undefined ? undefined : r2 <= 4);
}
for (const what of ['message', 'spawn']) {
  const first = get(`history.${what}.first`);
  const last = get(`history.${what}.last`);
  const a = get(`history.${what}.${first}`);
  const b = get(`history.${what}.${last}`);
  const mid = get(`history.${what}.1000`);
  const r = ratio(b, a);
  const mem = what === 'spawn' ? `; wasm ${f(get(`history.spawn.${first}.wasmBytes`) / 2 ** 20, 2)} -> ${f(get(`history.spawn.${last}.wasmBytes`) / 2 ** 20, 2)} MiB` : '';
  row(
    `${what} ${last?.toLocaleString('en-US')} vs ${first} (${what === 'message' ? 'member settles between' : 'spawn/dispose under one root'})`,
    `${f(b)} µs (1,000th: ${f(mid)} µs)${mem}`,
    `${first}th: ${f(a)} µs`,
    r,
    '<= 1.5x',
    r === undefined ? undefined : r <= 1.5,
  );
}
for (const env of ['node', 'chromium', 'workerd']) {
  const full = get(`cold.${env}.full`);
  const lite = get(`cold.${env}.lite`);
  if (full !== undefined || lite !== undefined) row(`cold start, ${env}: import to first listing`, `full ${f(full)} ms, lite ${f(lite)} ms`, env === 'workerd' ? `workerd start to a first answer ${f(get('cold.workerd.baseline'))} ms (compiles the .wasm; not included)` : '', undefined, 'reported', undefined);
}

const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...[['what', 'package', 'reference', 'ratio', 'goal', ''], ...rows].map((r) => r[i].length)));
const line = (r) => r.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log('== issue 15: every row next to its goal (this run)');
console.log(line(['what', 'package', 'reference', 'ratio', 'goal', '']));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
