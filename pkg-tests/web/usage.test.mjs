// What a tree spends, in the browser (issue 44): usage recorded over
// IndexedDB, rolled up by runtime.usage and in listing rows, and the same
// totals after a reload (a new module instance and runtime over the store).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture } from './helpers.mjs';

const env = browserSuite();

test('usage over IndexedDB: rolled up per subtree, the same after a reload', async () => {
  const page = await openFixture(env.context, env.site.url);
  const report = (work) =>
    page.evaluate(async (work) => {
      const { SubagentRuntime, IndexedDBStore } = window.lib;
      const store = await IndexedDBStore.open('usage-test');
      const spend = (name) => ({ lead: { inputTokens: 100, outputTokens: 20 }, writer: { inputTokens: 30, outputTokens: 6 } })[name];
      const host = {
        async runTurn(turn) {
          if (turn.name === 'lead' && turn.first) {
            await turn.tools.find((t) => t.name === 'spawn_agent').call({ name: 'writer', description: 'Write', prompt: 'Write it.' });
          }
          return { messages: [`${turn.name} done`], usage: spend(turn.name) };
        },
      };
      const runtime = new SubagentRuntime({ store, host });
      const lead = await runtime.openRoot({ sessionId: 'root' });
      if (work) {
        await runtime.prompt(lead, 'lead', 'Write the notes.');
        await runtime.waitForQuiescence(lead);
      }
      const out = { usage: await runtime.usage(lead), rows: (await runtime.listDescendants('root')).map((r) => [r.path, r.usage]) };
      await runtime.closeRoot(lead);
      store.close();
      return out;
    }, work);
  await page.evaluate(() => window.lib.IndexedDBStore.deleteDatabase('usage-test'));
  const before = await report(true);
  // lead: its first turn and the one for the writer's notice.
  assert.deepEqual(before.usage, {
    own: { inputTokens: 200, outputTokens: 40, turns: 2 },
    subtree: { inputTokens: 230, outputTokens: 46, turns: 3 },
    complete: true,
  });
  assert.deepEqual(before.rows, [['writer', { own: { inputTokens: 30, outputTokens: 6, turns: 1 }, subtree: { inputTokens: 30, outputTokens: 6, turns: 1 }, complete: true }]]);
  await page.reload();
  await page.waitForFunction(() => window.fixtureReady === true);
  assert.deepEqual(await report(false), before);
  page.check();
});
