// A reopened root keeps its conversation in the browser (issue 41): a tab
// runs two turns of `lead` over IndexedDB with OpenAIHost, is reloaded (a
// real restart: new module instance, new runtime), and the root's next
// request carries every earlier user and assistant message. The model is a
// mock chat-completions endpoint served same-origin by the test (the site's
// content security policy allows no other origin).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture } from './helpers.mjs';

const env = browserSuite();

test('after a reload, OpenAIHost over IndexedDB sends the root its whole earlier conversation', async () => {
  const requests = [];
  await env.context.route('**/v1/chat/completions', async (route) => {
    const body = JSON.parse(route.request().postData());
    requests.push(body);
    const message = { role: 'assistant', content: `answer ${requests.length}` };
    await route.fulfill({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({ id: `c${requests.length}`, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }] }),
    });
  });
  const page = await openFixture(env.context, env.site.url);
  // One tab session: open the store and the root, ask `lead` each text, close.
  const run = (texts) =>
    page.evaluate(async (texts) => {
      const { SubagentRuntime, IndexedDBStore } = window.lib;
      const { OpenAIHost } = await import('../pkg/edge/openai-host.js');
      const store = await IndexedDBStore.open('restart-history');
      const host = new OpenAIHost({ baseUrl: `${location.origin}/v1`, model: 'mock-1', store, retries: 0 });
      const runtime = new SubagentRuntime({ store, host });
      const lead = await runtime.openRoot({ sessionId: 'root' });
      const stops = [];
      for (const text of texts) stops.push((await (await runtime.ask(lead, 'lead', text)).answer).stopReason);
      await runtime.closeRoot(lead);
      store.close();
      return stops;
    }, texts);
  await page.evaluate(() => window.lib.IndexedDBStore.deleteDatabase('restart-history'));
  assert.deepEqual(await run(['plan the release', 'write the notes']), ['completed', 'completed']);
  await page.reload();
  await page.waitForFunction(() => window.fixtureReady === true);
  assert.deepEqual(await run(['and tag it']), ['completed']);
  assert.equal(requests.length, 3);
  const chat = requests[2].messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);
  assert.deepEqual(chat, [
    ['user', 'plan the release'],
    ['assistant', 'answer 1'],
    ['user', 'write the notes'],
    ['assistant', 'answer 2'],
    ['user', 'and tag it'],
  ]);
  page.check();
});
