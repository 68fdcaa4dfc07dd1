// Budgets in the browser (issue 46): a budgeted tree over IndexedDB stops
// when its budget is spent, refuses input with BUDGET_EXHAUSTED, shows each
// member's budget in listing rows, and after a reload (a new module instance
// and runtime over the store) is still spent until setBudget raises it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture } from './helpers.mjs';

const env = browserSuite();

test('a budget over IndexedDB: enforced, listed, and still spent after a reload until raised', async () => {
  const page = await openFixture(env.context, env.site.url);
  const session = (work) =>
    page.evaluate(async (work) => {
      const { SubagentRuntime, IndexedDBStore } = window.lib;
      const store = await IndexedDBStore.open('budget-test');
      const budgets = [];
      const host = {
        async runTurn(turn) {
          budgets.push([turn.name, turn.budget ?? null]);
          if (turn.name === 'lead' && turn.first) {
            await turn.tools.find((t) => t.name === 'spawn_agent').call({ name: 'writer', description: 'Write', prompt: 'Write it.', budget: { turns: 1 } });
          }
          return { messages: [`${turn.name} done`], usage: { inputTokens: 40, outputTokens: 10 } };
        },
      };
      const runtime = new SubagentRuntime({ store, host });
      const lead = await runtime.openRoot({ sessionId: 'root', budget: work === 'first' ? { tokens: 120 } : undefined });
      const out = { budgets };
      if (work === 'first') {
        await runtime.prompt(lead, 'lead', 'Write the notes.');
        await runtime.waitForQuiescence(lead);
      }
      if (work === 'raise') out.raised = await runtime.setBudget(lead, 'lead', { tokens: 1000 });
      try {
        await runtime.prompt(lead, 'lead', 'Once more.');
        await runtime.waitForQuiescence(lead);
        out.prompt = 'accepted';
      } catch (e) {
        out.prompt = `${e.code}: ${e.message}`;
      }
      out.rows = (await runtime.listDescendants('root')).map((r) => [r.path, r.budget ?? null]);
      await runtime.closeRoot(lead);
      store.close();
      return out;
    }, work);
  await page.evaluate(() => window.lib.IndexedDBStore.deleteDatabase('budget-test'));
  const first = await session('first');
  // lead's first turn (60 of 120 reserved), the writer's one turn, then lead's turn on its notice.
  assert.deepEqual(first.budgets, [
    ['lead', { tokens: 60 }],
    ['writer', { tokens: 30, turns: 1 }],
    ['lead', { tokens: 10 }],
  ]);
  assert.equal(first.prompt, 'BUDGET_EXHAUSTED: "lead" takes no message: the budget of "lead" (tokens 120) is spent');
  assert.deepEqual(first.rows, [['writer', { set: { turns: 1 }, remaining: { turns: 0 } }]]);
  await page.reload();
  await page.waitForFunction(() => window.fixtureReady === true);
  const reloaded = await session('again');
  assert.equal(reloaded.prompt, first.prompt, 'spent across the reload');
  assert.deepEqual(reloaded.budgets, []);
  const raised = await session('raise');
  assert.deepEqual(raised.raised, { set: { tokens: 1000 }, remaining: { tokens: 850 } });
  assert.equal(raised.prompt, 'accepted');
  assert.deepEqual(raised.budgets, [['lead', { tokens: 425 }]]);
  page.check();
});
