// Images in the browser (issue 69, point 3): an image block in a prompt is kept in IndexedDB with
// its message, reaches the host beside the text, and is still there after a reload (a new
// runtime over the same store); a host that takes text only gets it refused, nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture } from './helpers.mjs';

const env = browserSuite();
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

test('an image through IndexedDB: kept with its message, given to the host, there after a reload', async () => {
  const page = await openFixture(env.context, env.site.url);
  const session = (work, pixel) =>
    page.evaluate(
      async ({ work, pixel }) => {
        const { SubagentRuntime, IndexedDBStore } = window.lib;
        const store = await IndexedDBStore.open('images-test');
        const seen = [];
        const host = {
          inputModalities: work === 'text-only' ? ['text'] : ['text', 'image'],
          runTurn(turn) {
            seen.push(turn.input.flatMap((m) => m.content.filter((b) => b.type === 'image').map((b) => [b.mimeType, b.data.length])));
            return { messages: ['seen'] };
          },
        };
        const runtime = new SubagentRuntime({ store, host });
        const lead = await runtime.openRoot({ sessionId: 'root' });
        const out = { seen };
        const prompt = [{ type: 'text', text: 'What is this?' }, { type: 'image', data: pixel, mimeType: 'image/png' }];
        if (work === 'first') await (await runtime.ask(lead, 'lead', prompt)).answer;
        if (work === 'text-only') out.refused = await runtime.prompt(lead, 'lead', prompt).then(() => 'accepted', (e) => e.code);
        out.logged = ((await store.read('root', {})) ?? []).filter((e) => e.type === 'message/input').map((e) => e.payload.content.map((b) => b.type));
        await runtime.closeRoot(lead);
        store.close();
        return out;
      },
      { work, pixel },
    );
  await page.evaluate(() => window.lib.IndexedDBStore.deleteDatabase('images-test'));
  const first = await session('first', PIXEL);
  assert.deepEqual(first.seen, [[['image/png', PIXEL.length]]], 'the host got the image');
  assert.deepEqual(first.logged, [['text', 'image']]);
  // A reload: a new runtime over the same IndexedDB store reads the image back; a text-only host refuses another.
  const second = await session('text-only', PIXEL);
  assert.equal(second.refused, 'UNSUPPORTED_CAPABILITY');
  assert.deepEqual(second.logged, [['text', 'image']], 'kept after the reload; the refusal wrote nothing');
  await page.evaluate(() => window.lib.IndexedDBStore.deleteDatabase('images-test'));
});
