// Issue 69, point 3 (images): "Image parts are admitted and persisted … and the child's model must
// accept image input". An image block in a prompt is kept in the log and reaches the model:
// OpenAIHost sends it as an image_url part, aiSdkHost as an image part; a host whose
// inputModalities leave images out gets such input refused at admission, with nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { aiSdkHost } from 'subagent-tree/ai-sdk';
import { mockOpenAI, say } from './edge-helpers.mjs';

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const prompt = [{ type: 'text', text: 'What is in this picture?' }, { type: 'image', data: PIXEL, mimeType: 'image/png' }];

test('OpenAIHost sends an image in the input as an image_url part; the log keeps it', async () => {
  const model = await mockOpenAI(() => say('A single pixel.'));
  try {
    const store = new MemoryStore();
    const runtime = new SubagentRuntime({ store, host: new OpenAIHost({ baseUrl: model.baseUrl, model: 'vision-model', store }) });
    const lead = await runtime.openRoot({ sessionId: 'root' });
    const { answer } = await runtime.ask(lead, 'lead', prompt);
    assert.equal((await answer).stopReason, 'completed');
    const user = model.requests[0].body.messages.at(-1);
    assert.deepEqual(user, { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } }] });
    const logged = (await store.read('root', {})).find((e) => e.type === 'message/input');
    assert.deepEqual(logged.payload.content, prompt);
  } finally {
    await model.close();
  }
});

test('aiSdkHost sends it as an image part', async () => {
  const prompts = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      prompts.push(options.prompt);
      return {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'A pixel.' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: 5, noCache: 5 }, outputTokens: { total: 2, text: 2 } } },
        ]),
      };
    },
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: aiSdkHost({ model }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await (await runtime.ask(lead, 'lead', prompt)).answer;
  const user = prompts[0].findLast((m) => m.role === 'user');
  const image = user.content.find((p) => p.type === 'file' || p.type === 'image');
  assert.ok(image, JSON.stringify(user.content));
  assert.equal(image.mediaType, 'image/png');
});

test('a host that takes text only: an image is refused at admission, nothing written', async () => {
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host: { inputModalities: ['text'], runTurn: () => ({ messages: ['ok'] }) } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await assert.rejects(runtime.prompt(lead, 'lead', prompt), (e) => e.code === 'UNSUPPORTED_CAPABILITY' && /takes text only/.test(e.message));
  await assert.rejects(runtime.startActivation({ parent: lead, label: 'x', prompt, name: 'viewer' }), (e) => e.code === 'UNSUPPORTED_CAPABILITY');
  assert.equal(await store.read('root', {}), null, 'nothing written');
  assert.deepEqual(await runtime.listDescendants('root'), []);
  await runtime.prompt(lead, 'lead', 'Text is fine.');
  assert.throws(() => new SubagentRuntime({ store, host: { inputModalities: ['image'], runTurn() {} } }), (e) => e.code === 'INVALID_ARGUMENT' && /must include "text"/.test(e.message));
  assert.throws(() => new SubagentRuntime({ store, host: { inputModalities: ['audio', 'text'], runTurn() {} } }), (e) => e.code === 'INVALID_ARGUMENT');
});

// Issue 69, point 3 (request identity): "the caller-minted request identity and validated browser
// zone" stay with the prompt: kept on the accepted message (its log too) and shown to the host.
test('prompt and ask keep a requestId and an IANA timeZone on the message; a zone that is none is refused', async () => {
  const store = new MemoryStore();
  const seen = [];
  const runtime = new SubagentRuntime({ store, host: { runTurn: (turn) => (seen.push(turn.input.map((m) => [m.requestId, m.timeZone])), { messages: ['ok'] }) } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await (await runtime.ask(lead, 'lead', 'Hello.', { requestId: 'req-42', timeZone: 'Europe/Paris' })).answer;
  assert.deepEqual(seen[0], [['req-42', 'Europe/Paris']]);
  const logged = (await store.read('root', {})).find((e) => e.type === 'message/input');
  assert.deepEqual([logged.payload.requestId, logged.payload.timeZone], ['req-42', 'Europe/Paris']);
  await assert.rejects(runtime.prompt(lead, 'lead', 'x', { timeZone: 'Mars/Olympus' }), (e) => e.code === 'INVALID_ARGUMENT' && /not an IANA time zone/.test(e.message));
  await assert.rejects(runtime.prompt(lead, 'lead', 'x', { requestId: '' }), (e) => e.code === 'INVALID_ARGUMENT');
  assert.equal((await store.read('root', {})).filter((e) => e.type === 'message/input').length, 1, 'the refusals wrote nothing');
  // After a restart the host still sees them on input read back from the log.
  const again = [];
  const runtime2 = new SubagentRuntime({ store, host: { runTurn: (turn) => (again.push(turn.input.map((m) => m.requestId)), { messages: ['ok'] }) } });
  const lead2 = await runtime2.openRoot({ sessionId: 'root' });
  await (await runtime2.ask(lead2, 'lead', 'Again.', { requestId: 'req-43' })).answer;
  assert.deepEqual(again, [['req-43']]);
});
