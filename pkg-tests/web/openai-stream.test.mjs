// OpenAIHost streams in the browser (issue 47): a same-origin mock answers
// with Server-Sent Events (CRLF line ends, a keep-alive comment), and the
// page's runtime sees each text delta as a subagent/delta event in order,
// the answer as their concatenation and the usage of the last chunk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture } from './helpers.mjs';

const env = browserSuite();

test('OpenAIHost in Chromium: streamed deltas in order, the output their concatenation, usage from the last chunk', async () => {
  const requests = [];
  const chunk = (delta, finish_reason = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason }] })}\r\n\r\n`;
  await env.context.route('**/v1/chat/completions', async (route) => {
    requests.push(JSON.parse(route.request().postData()));
    const body = [
      ': keep-alive\r\n\r\n',
      chunk({ role: 'assistant', content: '' }),
      ...['Deltas ', 'arrive ', 'in ', 'order.'].map((content) => chunk({ content })),
      chunk({}, 'stop'),
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 4 } })}\r\n\r\n`,
      'data: [DONE]\r\n\r\n',
    ].join('');
    await route.fulfill({ status: 200, contentType: 'text/event-stream', body });
  });
  const page = await openFixture(env.context, env.site.url);
  const seen = await page.evaluate(async () => {
    const { SubagentRuntime, MemoryStore } = window.lib;
    const { OpenAIHost } = await import('../pkg/edge/openai-host.js');
    const store = new MemoryStore();
    const host = new OpenAIHost({ baseUrl: `${location.origin}/v1`, model: 'mock-1', store, retries: 0 });
    const runtime = new SubagentRuntime({ store, host });
    const parts = [];
    runtime.on('subagent/delta', (e) => parts.push(e.part.text));
    const lead = await runtime.openRoot({ sessionId: 'root' });
    const answer = await (await runtime.ask(lead, 'lead', 'go')).answer;
    return { parts, output: answer.output, usage: answer.usage, stop: answer.stopReason };
  });
  assert.deepEqual(seen, {
    parts: ['Deltas ', 'arrive ', 'in ', 'order.'],
    output: [{ type: 'text', text: 'Deltas arrive in order.' }],
    usage: { inputTokens: 12, outputTokens: 4 },
    stop: 'completed',
  });
  assert.equal(requests[0].stream, true);
  page.check();
});
