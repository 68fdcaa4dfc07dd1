// Benchmarks of usage (issue 44): `make bench` runs this after the runtime
// benchmarks.
//
// 1. A 1,111-member cold tree (fan-out 10, depth 3) in the package's
//    MemoryStore, each member with three recorded turns that carry usage:
//    `runtime.usage(root)` of a fresh runtime against `listDescendants` of the
//    same store (goal: at most 2x).
// 2. What recording usage adds to a message: `ask` of an idle root until its
//    answer, the host reporting usage or not (goal: at most +10 %).
//
// Medians of BENCH_RUNS (default 11) timed runs after warm-up.
import { loadPackage } from './load.mjs';
import { record } from './results.mjs';
import { RUNS, median, time } from './timing.mjs';
import { writeColdTree } from './trees.mjs';

const { lib } = await loadPackage();
const { SubagentRuntime, MemoryStore, listDescendants } = lib;

// ---- 1. a cold tree's totals vs its listing --------------------------------------
const store = new MemoryStore();
const members = await writeColdTree(store, { output: 'done '.repeat(40), inputTokens: (t) => 1000 + t });
const listMs = await time(RUNS, () => listDescendants(store, 'root'));
const usageMs = await time(RUNS, async () => {
  const runtime = new SubagentRuntime({ store, host: { runTurn: () => ({}) }, recovery: 'off' });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const totals = await runtime.usage(lead);
  if (totals.subtree.turns !== members * 3) throw new Error(`counted ${totals.subtree.turns} turns`);
});
const openMs = await time(RUNS, async () => {
  const runtime = new SubagentRuntime({ store, host: { runTurn: () => ({}) }, recovery: 'off' });
  await runtime.openRoot({ sessionId: 'root' });
});
const liveListMs = await time(RUNS, async () => {
  const runtime = new SubagentRuntime({ store, host: { runTurn: () => ({}) }, recovery: 'off' });
  await runtime.openRoot({ sessionId: 'root' });
  await runtime.listDescendants('root');
});
console.log(`usage: ${members}-member cold tree, 3 turns each: listDescendants ${listMs.toFixed(2)} ms; runtime.usage ${usageMs.toFixed(2)} ms (opening the root alone ${openMs.toFixed(2)} ms); runtime.listDescendants with usage ${liveListMs.toFixed(2)} ms`);
record('usage.tree.list', listMs);
record('usage.tree.usage', usageMs - openMs);
record('usage.tree.liveList', liveListMs - openMs);

// ---- 2. what recording usage adds to a message --------------------------------------
async function perMessage(withUsage) {
  const outcome = withUsage ? { messages: ['ok'], usage: { inputTokens: 1234, outputTokens: 56, cacheReadTokens: 1000 } } : { messages: ['ok'] };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: () => outcome } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const n = 200;
  const ms = await time(RUNS, async () => {
    for (let i = 0; i < n; i++) await (await runtime.ask(lead, 'lead', 'go')).answer;
  });
  return (ms * 1000) / n;
}
// Alternated, five of each, medians: a single pair varies by +-30 % run to run.
const plain = [];
const spent = [];
for (let i = 0; i < 5; i++) {
  plain.push(await perMessage(false));
  spent.push(await perMessage(true));
}
const plainUs = median(plain);
const usageUs = median(spent);
console.log(`usage: a message to an idle root until its answer: ${plainUs.toFixed(1)} µs without usage, ${usageUs.toFixed(1)} µs with (${((usageUs / plainUs - 1) * 100).toFixed(1)} %)`);
record('usage.message.plain', plainUs);
record('usage.message.usage', usageUs);
