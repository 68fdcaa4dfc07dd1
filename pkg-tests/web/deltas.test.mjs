// Live output in the browser (issue 45): a turn's parts reach a page's
// subagent/delta listener in order, as the turn runs (before its end event).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture } from './helpers.mjs';

const env = browserSuite();

test('a page hears a turn stream its parts before the turn ends', async () => {
  const page = await openFixture(env.context, env.site.url);
  const seen = await page.evaluate(async () => {
    const { SubagentRuntime, MemoryStore } = window.lib;
    const host = {
      async runTurn(turn) {
        for (const text of ['Wri', 'ting', '…']) {
          turn.emit({ type: 'text-delta', text });
          await new Promise((r) => setTimeout(r, 5));
        }
        return { messages: ['Writing…'] };
      },
    };
    const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
    const seen = [];
    runtime.on('subagent/delta', (e) => seen.push(`${e.name}:${e.part.text}`));
    runtime.on('subagent/turn', (e) => seen.push(`${e.name}:${e.phase}`));
    const stream = runtime.events({ types: ['subagent/delta'] });
    const lead = await runtime.openRoot();
    await (await runtime.ask(lead, 'lead', 'go')).answer;
    // Read after the turn: the parts it streamed meanwhile, coalesced.
    const { value } = await stream.next();
    await stream.return();
    return [...seen, `stream:${value.event.part.text}`, JSON.stringify(await stream.next())];
  });
  assert.deepEqual(seen, ['lead:start', 'lead:Wri', 'lead:ting', 'lead:…', 'lead:end', 'stream:Writing…', '{"done":true}']);
  page.check();
});
