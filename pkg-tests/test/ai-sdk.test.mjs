// subagent-tree/ai-sdk against the real AI SDK (`ai`, a dev dependency) and
// its own mock model (`ai/test`): the tree's tools in generateText and
// streamText (spawn_agent, then send_message by full name), and aiSdkHost
// running a three-level tree with history, deltas, usage, steering and an
// abort mid-stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, streamText, stepCountIs } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';
import { aiSdkTools, aiSdkHost } from 'subagent-tree/ai-sdk';
import { threeLevelTree, THREE_LEVELS } from './ai-sdk-tree.mjs';

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const finish = (unified) => ({ unified, raw: undefined });
let ids = 0;
const call = (toolName, input) => ({ type: 'tool-call', toolCallId: `call-${++ids}`, toolName, input: JSON.stringify(input) });
const generated = (content, reason = 'stop') => ({ content, finishReason: finish(reason), usage: usage(10, 5), warnings: [] });
/** A streamed model answer: text in two deltas, or tool calls. */
function streamed({ text, calls = [] }, u = usage(10, 5)) {
  const parts = [{ type: 'stream-start', warnings: [] }];
  if (text) {
    const half = Math.ceil(text.length / 2);
    parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: text.slice(0, half) }, { type: 'text-delta', id: 't', delta: text.slice(half) }, { type: 'text-end', id: 't' });
  }
  parts.push(...calls);
  parts.push({ type: 'finish', finishReason: finish(calls.length ? 'tool-calls' : 'stop'), usage: u });
  return { stream: convertArrayToReadableStream(parts) };
}
/** The text of a model call's messages of `role`. */
const said = (prompt, role) =>
  prompt
    .filter((m) => m.role === role)
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join('')))
    .join('\n');

async function treeWithChild() {
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host: scriptedHost({ reviewer: [{ reply: 'on it' }, { reply: 'noted' }] }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  return { store, runtime, lead };
}

test('generateText: the mock model calls spawn_agent, then send_message by full name, through aiSdkTools', async () => {
  const { store, runtime, lead } = await treeWithChild();
  const answers = [
    generated([call('spawn_agent', { name: 'reviewer', description: 'Review', prompt: 'Review the patch.' })], 'tool-calls'),
    generated([call('send_message', { agent: 'reviewer', message: 'Check the tests too.' })], 'tool-calls'),
    generated([{ type: 'text', text: 'Delegated.' }]),
  ];
  const model = new MockLanguageModelV4({ doGenerate: async () => answers.shift() });
  const result = await generateText({ model, tools: aiSdkTools(runtime.toolsFor(lead)), prompt: 'Get the patch reviewed.', stopWhen: stepCountIs(5) });
  assert.equal(result.text, 'Delegated.');
  const results = result.steps.flatMap((s) => s.toolResults.map((r) => r.output));
  assert.match(results[0], /^Started agent reviewer \(Session id /);
  assert.equal(results[1], 'Message delivered to reviewer.');
  await runtime.waitForQuiescence(lead);
  const rows = await runtime.listDescendants('root');
  assert.deepEqual(rows.map((r) => r.path), ['reviewer']);
  const heard = (await store.read(rows[0].id)).filter((e) => e.type === 'message/input').map((e) => e.payload.content[0].text);
  assert.deepEqual(heard, ['Review the patch.', 'Check the tests too.']);
  // The model saw the tree's own words, a refusal included.
  const refusal = await generateText({
    model: new MockLanguageModelV4({ doGenerate: async () => (ids % 2 ? generated([{ type: 'text', text: 'ok' }]) : generated([call('send_message', { agent: 'nobody', message: 'x' })], 'tool-calls')) }),
    tools: aiSdkTools(runtime.toolsFor(lead)),
    prompt: 'x',
    stopWhen: stepCountIs(3),
  });
  assert.match(refusal.steps[0].toolResults[0].output, /no agent named "nobody"/);
});

test('streamText: the same through a streamed model; an aborted call starts no child', async () => {
  const { runtime, lead } = await treeWithChild();
  const answers = [
    streamed({ calls: [call('spawn_agent', { name: 'reviewer', description: 'Review', prompt: 'Review it.' })] }),
    streamed({ calls: [call('send_message', { agent: 'reviewer', message: 'And the docs.' })] }),
    streamed({ text: 'All sent.' }),
  ];
  const model = new MockLanguageModelV4({ doStream: async () => answers.shift() });
  const result = streamText({ model, tools: aiSdkTools(runtime.toolsFor(lead)), prompt: 'Review.', stopWhen: stepCountIs(5) });
  assert.equal(await result.text, 'All sent.');
  await runtime.waitForQuiescence(lead);
  assert.deepEqual((await runtime.listDescendants('root')).map((r) => r.path), ['reviewer']);
  const controller = new AbortController();
  controller.abort();
  const [spawn] = Object.values(aiSdkTools(runtime.toolsFor(lead, { only: ['spawn_agent'] })));
  const out = await spawn.execute({ name: 'ghost', description: 'x', prompt: 'x' }, { toolCallId: 'c', messages: [], abortSignal: controller.signal });
  assert.equal(out, 'spawn_agent was not run: the call was aborted.');
  assert.deepEqual((await runtime.listDescendants('root')).map((r) => r.path), ['reviewer'], 'no child started');
});

/** One mock model for every member: it tells them apart by their identity context. */
function treeModel({ hold } = {}) {
  const calls = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      const system = said(options.prompt, 'system');
      const name = /You are agent ([\w/-]+)/.exec(system)?.[1] ?? '?';
      const toolResults = options.prompt.filter((m) => m.role === 'tool').length;
      calls.push({ name, prompt: options.prompt, tools: (options.tools ?? []).map((t) => t.name), maxOutputTokens: options.maxOutputTokens });
      if (hold && name === hold) {
        // A stream that sends one delta, then waits until the call is aborted.
        return {
          stream: new ReadableStream({
            start(c) {
              c.enqueue({ type: 'stream-start', warnings: [] });
              c.enqueue({ type: 'text-start', id: 't' });
              c.enqueue({ type: 'text-delta', id: 't', delta: 'thinking about it' });
              options.abortSignal?.addEventListener('abort', () => c.error(options.abortSignal.reason ?? new Error('aborted')), { once: true });
            },
          }),
        };
      }
      if (name === 'lead' && toolResults === 0 && said(options.prompt, 'user').includes('Ship')) {
        return streamed({ calls: [call('spawn_agent', { name: 'reviewer', description: 'Review', prompt: 'Review the release.' })] });
      }
      if (name === 'reviewer' && toolResults === 0) {
        return streamed({ calls: [call('spawn_agent', { name: 'checker', description: 'Check', prompt: 'Run the checks.' })] });
      }
      return streamed({ text: `${name} done` }, usage(100, 20));
    },
  });
  return { model, calls };
}

test('aiSdkHost runs a three-level tree: tools, deltas, usage, history, chosen tools and the budget cap', async () => {
  const store = new MemoryStore();
  const { model, calls } = treeModel();
  const runtime = new SubagentRuntime({ store, host: aiSdkHost({ model, store, treeTools: { except: ['task_create', 'task_list', 'task_update'] } }), maxDepth: 2 });
  const parts = [];
  runtime.on('subagent/delta', (e) => parts.push([e.name, e.part.text]));
  const lead = await runtime.openRoot({ sessionId: 'root', budget: { tokens: 100_000 } });
  await (await runtime.ask(lead, 'lead', 'Ship the release.')).answer;
  await runtime.waitForQuiescence(lead);
  assert.deepEqual((await runtime.listDescendants('root')).map((r) => r.path), ['reviewer', 'reviewer/checker']);
  // Each member's text deltas, in order, make its answer.
  const textOf = (who) => parts.filter(([name]) => name === who).map(([, text]) => text).join('');
  assert.equal(textOf('reviewer/checker'), 'reviewer/checker done');
  const total = await runtime.usage(lead);
  assert.equal(total.complete, true);
  assert.ok(total.subtree.inputTokens >= 300, JSON.stringify(total));
  assert.deepEqual(calls[0].tools, ['spawn_agent', 'fork_agent', 'send_message', 'interrupt_agent', 'list_agents']);
  assert.equal(calls[0].maxOutputTokens, 50_000, "the turn's allowance caps maxOutputTokens");
  // A later turn sees its earlier input and output.
  await (await runtime.ask(lead, 'lead', 'What did you do?')).answer;
  const last = calls.filter((c) => c.name === 'lead').at(-1);
  assert.match(said(last.prompt, 'user'), /Ship the release\.[\s\S]*What did you do\?/);
  assert.match(said(last.prompt, 'assistant'), /lead done/);
});

test('aiSdkHost: an interrupt aborts the model call mid-stream and the turn ends aborted', async () => {
  const { model } = treeModel({ hold: 'lead' });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: aiSdkHost({ model }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const first = new Promise((resolve) => {
    const off = runtime.on('subagent/delta', () => {
      off();
      resolve();
    });
  });
  const asked = await runtime.ask(lead, 'lead', 'Think.');
  await first;
  runtime.interrupt(lead.sessionId, { kind: 'user' });
  const answer = await asked.answer;
  assert.equal(answer.stopReason, 'aborted');
  assert.throws(() => aiSdkHost({}), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => aiSdkHost({ model, maxSteps: 0 }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => aiSdkHost({ model, prompt: 'x' }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => aiSdkTools('tools'), { code: 'INVALID_ARGUMENT' });
});

test('aiSdkHost: a message steered in while the model works joins before its next step', async () => {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  let started;
  const first = new Promise((resolve) => (started = resolve));
  const prompts = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      prompts.push(options.prompt);
      if (prompts.length === 1) {
        started();
        await gate;
        return streamed({ calls: [call('list_agents', {})] });
      }
      return streamed({ text: 'Checked both.' });
    },
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: aiSdkHost({ model }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const asked = await runtime.ask(lead, 'lead', 'Check the build.');
  await first;
  await runtime.prompt(lead, 'lead', 'Also check the docs.', { delivery: 'steer' });
  release();
  const answer = await asked.answer;
  assert.equal(answer.stopReason, 'completed');
  assert.equal(prompts.length, 2);
  assert.doesNotMatch(said(prompts[0], 'user'), /Also check the docs/);
  assert.match(said(prompts[1], 'user'), /Also check the docs\./, 'the second step sees the steered message');
  await runtime.waitForQuiescence(lead);
  assert.equal(runtime.isResident(lead, 'root'), true);
});

test('the shared three-level scenario in Node', async () => {
  const out = await threeLevelTree({ SubagentRuntime, MemoryStore });
  assert.deepEqual({ stop: out.stop, paths: out.paths, deltas: out.deltas }, THREE_LEVELS);
  assert.equal(out.turns, 5);
  assert.equal(out.inputTokens, 700, 'seven model calls of 100 input tokens: two steps of lead and of reviewer, one of checker, one for each notice');
});

test("aiSdkHost: the user's own tools join the tree's, and a structured result follows the turn's outputSchema", async () => {
  const { tool, jsonSchema } = await import('ai');
  const seen = [];
  const clock = tool({ description: 'The time', inputSchema: jsonSchema({ type: 'object', properties: {} }), execute: async () => '12:00' });
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      seen.push((options.tools ?? []).map((t) => t.name));
      const system = said(options.prompt, 'system');
      if (system.includes('matches this JSON Schema')) return streamed({ text: '{"ok": true, "checked": 3}' });
      return streamed({ text: 'fine' });
    },
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: aiSdkHost({ model, tools: { clock }, treeTools: { only: ['list_agents'] } }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await (await runtime.ask(lead, 'lead', 'go')).answer;
  assert.deepEqual(seen[0], ['list_agents', 'clock']);
  const child = await runtime.startActivation({
    parent: lead,
    label: 'Check',
    prompt: 'Check it.',
    name: 'checker',
    outputSchema: { type: 'object', properties: { ok: { type: 'boolean' }, checked: { type: 'integer' } }, required: ['ok'] },
  });
  const result = await child.result;
  assert.equal(result.stopReason, 'completed');
  assert.deepEqual(result.structured, { ok: true, checked: 3 });
});

test('aiSdkHost without a store still remembers: a later turn reads the member\'s earlier turns through the turn', async () => {
  const prompts = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      prompts.push(options.prompt);
      return streamed({ text: prompts.length === 1 ? 'Release shipped.' : 'It was the release.' });
    },
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: aiSdkHost({ model }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  assert.equal((await (await runtime.ask(lead, 'lead', 'Ship the release.')).answer).stopReason, 'completed');
  assert.equal((await (await runtime.ask(lead, 'lead', 'What did you ship?')).answer).stopReason, 'completed');
  assert.match(said(prompts[1], 'user'), /Ship the release\.[\s\S]*What did you ship\?/);
  assert.match(said(prompts[1], 'assistant'), /Release shipped\./);
});
