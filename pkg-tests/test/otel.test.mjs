// subagent-tree/otel against the real OpenTelemetry SDK (`@opentelemetry/sdk-trace-base`
// with an in-memory exporter): a three-level tree gives exactly the expected span tree
// (names, kinds, parents, attributes, usage, an ERROR turn), all in one trace; nothing
// is emitted without a tracer, or once instrumentation is removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { FileStore } from 'subagent-tree/file-store';
import { scriptedHost } from 'subagent-tree/testing';
import { instrument } from 'subagent-tree/otel';

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('subagent-tree-test') };
}

const spawn = (name, prompt) => ({ call: 'spawn_agent', input: { name, description: `Task of ${name}`, prompt } });
const SCRIPT = {
  lead: [
    { steps: [spawn('reviewer', 'Review the release.')], reply: 'Started reviewer.', usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 40 } },
    { steps: [{ call: 'list_agents', input: {} }], reply: 'The release is reviewed.', usage: { inputTokens: 150, outputTokens: 10 } },
  ],
  reviewer: [
    { steps: [spawn('checker', 'Run the checks.')], reply: 'Checking.', usage: { inputTokens: 60, outputTokens: 8 } },
    { reply: 'Reviewed: the checks failed.', usage: { inputTokens: 70, outputTokens: 9 } },
  ],
  'reviewer/checker': [{ fail: 'the test runner crashed' }],
};

/** The finished spans as an indented text tree (children in start order), and the spans by name. */
function spanTree(spans) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const parentOf = (s) => s.parentSpanContext?.spanId ?? s.parentSpanId;
  const children = (id) => spans.filter((s) => parentOf(s) === id).sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]));
  const lines = [];
  const walk = (s, depth) => {
    lines.push(`${'  '.repeat(depth)}${s.name}${s.status.code === 2 ? ' [ERROR]' : ''}`);
    for (const c of children(s.spanContext().spanId)) walk(c, depth + 1);
  };
  for (const root of spans.filter((s) => !byId.has(parentOf(s)))) walk(root, 0);
  return lines.join('\n');
}

test('a three-level tree gives the expected GenAI span tree, in one trace', async () => {
  const { exporter, tracer } = tracing();
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost(SCRIPT), maxDepth: 2 });
  const off = instrument(runtime, { tracer });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'Ship the release.');
  await runtime.waitForQuiescence(lead);
  const spans = exporter.getFinishedSpans();
  const text = spanTree(spans);
  console.log(text);
  assert.equal(
    text,
    [
      'create_agent lead',
      '  invoke_agent lead',
      '    execute_tool spawn_agent',
      '      create_agent reviewer',
      '        invoke_agent reviewer',
      '          execute_tool spawn_agent',
      '            create_agent reviewer/checker',
      '              invoke_agent reviewer/checker [ERROR]',
      '        invoke_agent reviewer',
      '  invoke_agent lead',
      '    execute_tool list_agents',
    ].join('\n'),
  );
  assert.equal(new Set(spans.map((s) => s.spanContext().traceId)).size, 1, 'one trace for the whole tree');
  assert.ok(spans.every((s) => s.kind === 0), 'INTERNAL spans');
  const named = (name) => spans.filter((s) => s.name === name);
  const [reviewerCreated] = named('create_agent reviewer');
  const reviewerId = reviewerCreated.attributes['gen_ai.agent.id'];
  assert.deepEqual(reviewerCreated.attributes, {
    'gen_ai.operation.name': 'create_agent',
    'gen_ai.agent.name': 'reviewer',
    'gen_ai.agent.id': reviewerId,
    'gen_ai.conversation.id': 'root',
    'subagent_tree.provider': 'spawn',
    'subagent_tree.mode': 'continuable',
  });
  const [leadFirst] = named('invoke_agent lead');
  assert.deepEqual(leadFirst.attributes, {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'lead',
    'gen_ai.agent.id': 'root',
    'gen_ai.conversation.id': 'root',
    'gen_ai.usage.input_tokens': 100,
    'gen_ai.usage.output_tokens': 20,
    'gen_ai.usage.cache_read.input_tokens': 40,
    'gen_ai.response.finish_reasons': ['completed'],
  });
  const [leadSpawn, reviewerSpawn] = named('execute_tool spawn_agent');
  assert.deepEqual(leadSpawn.attributes, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'spawn_agent',
    'gen_ai.tool.call.id': leadSpawn.attributes['gen_ai.tool.call.id'],
    'gen_ai.tool.type': 'function',
    'subagent_tree.child.id': reviewerId,
    'subagent_tree.child.name': 'reviewer',
  });
  assert.match(leadSpawn.attributes['gen_ai.tool.call.id'], /^\d+$/);
  assert.equal(reviewerSpawn.attributes['subagent_tree.child.name'], 'reviewer/checker');
  assert.ok(!('gen_ai.tool.call.arguments' in leadSpawn.attributes), 'no content without recordContent');
  const [failed] = named('invoke_agent reviewer/checker');
  assert.deepEqual([failed.status.code, failed.attributes['gen_ai.response.finish_reasons'], failed.attributes['error.type']], [2, ['error'], 'turn_failed']);
  // Removed: nothing more is emitted.
  off();
  const before = exporter.getFinishedSpans().length;
  await runtime.prompt(lead, 'lead', 'Once more.').catch(() => {});
  await runtime.waitForQuiescence(lead);
  assert.equal(exporter.getFinishedSpans().length, before);
});

test('a message accepted while a member\'s turn runs is an event on that turn', async () => {
  const { exporter, tracer } = tracing();
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({ lead: [{ steps: [{ waitForMessage: 'go on' }], reply: 'Went on.' }] }) });
  instrument(runtime, { tracer });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  let running;
  const started = new Promise((resolve) => (running = resolve));
  runtime.on('subagent/turn', (e) => e.phase === 'start' && running());
  const accepted = [];
  runtime.on('subagent/message', (e) => accepted.push(e.messageId));
  await runtime.prompt(lead, 'lead', 'Start.');
  await started;
  await runtime.prompt(lead, 'lead', 'Please go on.');
  const messageId = accepted[1];
  assert.equal(typeof messageId, 'string');
  await runtime.waitForQuiescence(lead);
  const [turn] = exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent lead');
  // The message that woke lead is on the turn too (it took it in), then the one accepted while it ran.
  assert.deepEqual(
    turn.events.map((e) => [e.name, e.attributes]),
    [accepted[0], messageId].map((id) => ['subagent_tree.message', { 'subagent_tree.message.kind': 'user', 'subagent_tree.message.id': id, 'gen_ai.agent.name': 'lead' }]),
  );
});

test('a message from another member names its sender on the receiving turn', async () => {
  const { exporter, tracer } = tracing();
  const host = scriptedHost({
    lead: [{ steps: [spawn('helper', 'Say hello to lead.'), { waitForMessage: 'hello from helper' }], reply: 'Heard it.' }, 'Noted.'],
    helper: [{ steps: [{ call: 'send_message', input: { agent: 'lead', message: 'hello from helper' } }], reply: 'Said it.' }],
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  instrument(runtime, { tracer });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'Start.');
  await runtime.waitForQuiescence(lead);
  const [first] = exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent lead');
  const relayed = first.events.find((e) => e.attributes['subagent_tree.message.kind'] === 'agent-message');
  assert.equal(relayed?.attributes['subagent_tree.message.from'], 'helper', JSON.stringify(first.events.map((e) => e.attributes)));
});

test('recordContent: tool arguments and results, and message text; a refused call is an ERROR span', async () => {
  const { exporter, tracer } = tracing();
  const host = scriptedHost({
    lead: [{ steps: [spawn('helper', 'Say hello to lead.'), { call: 'send_message', input: { agent: 'nobody', message: 'hi' } }, { waitForMessage: 'hello from helper' }], reply: 'Heard it.' }, 'Noted.'],
    helper: [{ steps: [{ call: 'send_message', input: { agent: 'lead', message: 'hello from helper' } }], reply: 'Said it.' }],
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  instrument(runtime, { tracer, recordContent: true });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'Start.');
  await runtime.waitForQuiescence(lead);
  const spans = exporter.getFinishedSpans();
  const [spawned] = spans.filter((s) => s.name === 'execute_tool spawn_agent');
  assert.deepEqual(JSON.parse(spawned.attributes['gen_ai.tool.call.arguments']), { name: 'helper', description: 'Task of helper', prompt: 'Say hello to lead.' });
  assert.match(spawned.attributes['gen_ai.tool.call.result'], /^Started agent helper/);
  const refused = spans.find((s) => s.name === 'execute_tool send_message' && s.status.code === 2);
  assert.ok(refused, 'the refused send_message is an ERROR span');
  assert.equal(refused.attributes['error.type'], 'tool_error');
  assert.match(refused.attributes['gen_ai.tool.call.result'], /nobody/);
  assert.match(refused.status.message, /nobody/, 'with content, the status is the refusal\'s text');
  assert.equal(spans.find((s) => s.name === 'create_agent helper').attributes['gen_ai.agent.description'], 'Task of helper');
  const [first] = spans.filter((s) => s.name === 'invoke_agent lead');
  const relayed = first.events.find((e) => e.attributes['subagent_tree.message.kind'] === 'agent-message');
  assert.match(relayed.attributes['subagent_tree.message.content'], /hello from helper/);
});

// Issue 66, point 4: with recordContent off, nothing a model or user wrote leaves in an attribute,
// event or status: labels, names the model asked for and was refused, messages, outputs, arguments.
test('without recordContent no model- or user-written text is in any span; a refusal\'s status is its code', async () => {
  const { exporter, tracer } = tracing();
  const secrets = ['SECRET-LABEL', 'SECRET-PROMPT', 'secret-agent-typo', 'SECRET-MESSAGE', 'SECRET-REPLY', 'SECRET-DIAGNOSTIC', '/secret/outside'];
  const host = scriptedHost({
    lead: [
      {
        steps: [
          { call: 'spawn_agent', input: { name: 'helper', description: 'SECRET-LABEL', prompt: 'SECRET-PROMPT' } },
          { call: 'send_message', input: { agent: 'secret-agent-typo', message: 'SECRET-MESSAGE' } },
          { call: 'spawn_agent', input: { name: 'Bad Name SECRET-LABEL', description: 'x', prompt: 'y' } },
          { call: 'spawn_agent', input: { name: 'outside', description: 'x', prompt: 'y', cwd: '/secret/outside' } },
        ],
        reply: 'SECRET-REPLY',
      },
    ],
    helper: [{ fail: 'SECRET-DIAGNOSTIC' }],
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host, defaultCwd: '/work' });
  instrument(runtime, { tracer });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'lead', 'SECRET-MESSAGE from the user');
  await runtime.waitForQuiescence(lead);
  const spans = exporter.getFinishedSpans();
  const everything = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.status, s.events.map((e) => [e.name, e.attributes])]));
  for (const secret of secrets) assert.ok(!everything.includes(secret), `${secret} is in a span: ${everything}`);
  const refusals = spans.filter((s) => s.status.code === 2 && s.name.startsWith('execute_tool'));
  assert.deepEqual(
    refusals.map((s) => [s.name, s.status.message]),
    [
      ['execute_tool send_message', 'UNKNOWN_AGENT: the tool call was refused'],
      ['execute_tool spawn_agent', 'INVALID_NAME: the tool call was refused'],
      ['execute_tool spawn_agent', 'UNAUTHORIZED: the tool call was refused'],
    ],
  );
  // The committed names are identities: they stay.
  assert.ok(spans.some((s) => s.name === 'create_agent helper' && s.attributes['gen_ai.agent.name'] === 'helper'));
  assert.equal(spans.find((s) => s.name === 'invoke_agent helper').status.message, 'the turn failed');
});

// Issue 66, point 4: a message that wakes an idle member (the common case) is on the turn that takes it in.
test('a message to an idle member is an event on the turn it wakes, stamped when it was accepted', async () => {
  const { exporter, tracer } = tracing();
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({ lead: ['First.', 'Second.'] }) });
  instrument(runtime, { tracer });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const accepted = [];
  runtime.on('subagent/message', (e) => accepted.push(e.messageId));
  const before = Date.now();
  await runtime.prompt(lead, 'lead', 'Start.');
  await runtime.waitForQuiescence(lead);
  await runtime.prompt(lead, 'lead', 'Again.');
  await runtime.waitForQuiescence(lead);
  const turns = exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent lead');
  assert.equal(turns.length, 2);
  assert.deepEqual(
    turns.map((t) => t.events.map((e) => e.attributes['subagent_tree.message.id'])),
    [[accepted[0]], [accepted[1]]],
    'each message on the turn that took it in',
  );
  const [seconds, nanos] = turns[0].events[0].time;
  assert.ok(seconds * 1000 + nanos / 1e6 >= before - 1, 'stamped with the time it was accepted');
});

test('after a restart over FileStore, a new runtime\'s turns join the trace of the turns that created the members', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'otel-restart-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // Each run as its own process would: its own store, runtime and tracer provider.
  const run = async (script, work) => {
    const { exporter, tracer } = tracing();
    const store = await FileStore.open(dir);
    const runtime = new SubagentRuntime({ store, host: scriptedHost(script) });
    instrument(runtime, { tracer });
    const lead = await runtime.openRoot({ sessionId: 'root' });
    await work(runtime, lead);
    await runtime.waitForQuiescence(lead);
    await runtime.closeRoot(lead);
    await store.close();
    return exporter.getFinishedSpans();
  };
  const first = await run({ lead: [{ steps: [spawn('reviewer', 'Review it.')], reply: 'Started.' }, 'Done.'], reviewer: ['Reviewed.'] }, (runtime, lead) => runtime.prompt(lead, 'lead', 'Go.'));
  const second = await run({ lead: ['Again.'], reviewer: ['Reviewed again.'] }, async (runtime, lead) => {
    const reviewer = await runtime.resolveName(lead, 'reviewer');
    await runtime.sendMessage(lead, reviewer, 'Once more.');
    await runtime.prompt(lead, 'lead', 'And again.');
  });
  const one = (spans, name) => {
    const found = spans.filter((s) => s.name === name);
    assert.ok(found.length > 0, `${name} in ${spans.map((s) => s.name)}`);
    return found;
  };
  const [leadCreated] = one(first, 'create_agent lead');
  const [reviewerCreated] = one(first, 'create_agent reviewer');
  const traceId = leadCreated.spanContext().traceId;
  assert.equal(new Set(first.map((s) => s.spanContext().traceId)).size, 1);
  // Turns only (lead's answer, reviewer's, lead's again on its notice): no member is created again.
  assert.deepEqual([...new Set(second.map((s) => s.name))].sort(), ['invoke_agent lead', 'invoke_agent reviewer']);
  for (const span of second) assert.equal(span.spanContext().traceId, traceId, `${span.name} joins the first run's trace`);
  const parentOf = (s) => s.parentSpanContext?.spanId ?? s.parentSpanId;
  assert.equal(parentOf(one(second, 'invoke_agent reviewer')[0]), reviewerCreated.spanContext().spanId);
  for (const turn of one(second, 'invoke_agent lead')) assert.equal(parentOf(turn), leadCreated.spanContext().spanId);
});

test('without a tracer nothing is emitted (not even to a global provider); a bad tracer is refused', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({ lead: ['ok'] }) });
  const off = instrument(runtime, {});
  assert.equal(typeof off, 'function');
  const lead = await runtime.openRoot({});
  await runtime.prompt(lead, 'lead', 'hello');
  await runtime.waitForQuiescence(lead);
  off();
  assert.throws(() => instrument(runtime, { tracer: {} }), TypeError);
  assert.throws(() => instrument(null, { tracer: tracing().tracer }), TypeError);
});
