// Benchmarks of budgets (issue 46): `make bench` runs this after usage.
//
// 1. What a budget adds to a message: `ask` of an idle root until its
//    answer, the host reporting usage, with the root budgeted (each turn
//    gated, reserved and counted) or not (goal: at most +10 %).
// 2. What opening a budgeted root costs: a 1,111-member cold tree (fan-out
//    10, depth 3) whose root's log holds a budget, against the same open
//    without one (the ledger reads the tree's spent in one listing).
//
// Medians of BENCH_RUNS (default 11) timed runs after warm-up.
import { loadPackage } from './load.mjs';
import { record } from './results.mjs';
import { RUNS, median, time } from './timing.mjs';
import { writeColdTree } from './trees.mjs';

const { lib } = await loadPackage();
const { SubagentRuntime, MemoryStore } = lib;

// ---- 1. what a budget adds to a message ---------------------------------------------
const outcome = { messages: ['ok'], usage: { inputTokens: 1234, outputTokens: 56 } };
async function perMessage(budget) {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: () => outcome } });
  const lead = await runtime.openRoot({ sessionId: 'root', budget });
  const n = 200;
  const ms = await time(RUNS, async () => {
    for (let i = 0; i < n; i++) {
      const answer = await (await runtime.ask(lead, 'lead', 'go')).answer;
      if (answer.stopReason !== 'completed') throw new Error(`stopped: ${answer.stopReason}`);
    }
  });
  return (ms * 1000) / n;
}
// Alternated, five of each, medians: a single pair varies by +-30 % run to run.
const plain = [];
const budgeted = [];
const room = { tokens: Number.MAX_SAFE_INTEGER, turns: Number.MAX_SAFE_INTEGER, cost: Number.MAX_SAFE_INTEGER };
for (let i = 0; i < 5; i++) {
  plain.push(await perMessage(undefined));
  budgeted.push(await perMessage(room));
}
const plainUs = median(plain);
const budgetUs = median(budgeted);
console.log(`budgets: a message to an idle root until its answer: ${plainUs.toFixed(1)} µs unbudgeted, ${budgetUs.toFixed(1)} µs budgeted (${((budgetUs / plainUs - 1) * 100).toFixed(1)} %)`);
record('budget.message.plain', plainUs);
record('budget.message.budgeted', budgetUs);

// ---- 2. opening a budgeted root of a cold tree ------------------------------------
async function buildTree(budget) {
  const store = new MemoryStore();
  const rootEvents = budget ? [{ type: 'subagent/budget', payload: { sessionId: 'root', budget } }] : [];
  return { store, members: await writeColdTree(store, { rootEvents }) };
}
const open = (store) => async () => {
  const runtime = new SubagentRuntime({ store, host: { runTurn: () => ({}) }, recovery: 'off' });
  await runtime.openRoot({ sessionId: 'root' });
};
const { store: plainTree, members } = await buildTree(undefined);
const { store: budgetTree } = await buildTree({ tokens: 10_000_000 });
const openPlainMs = await time(RUNS, open(plainTree));
const openBudgetMs = await time(RUNS, open(budgetTree));
console.log(`budgets: opening the root of a ${members}-member cold tree: ${openPlainMs.toFixed(2)} ms unbudgeted, ${openBudgetMs.toFixed(2)} ms with a budget (its spent read in one listing)`);
record('budget.open.plain', openPlainMs);
record('budget.open.budgeted', openBudgetMs);
