// subagent-tree/openai-agents against the real OpenAI Agents SDK
// (`@openai/agents`, a dev dependency) with a fake `Model` of the SDK's
// interface: an Agent with openAIAgentsTools, run through run(), spawns a
// child and messages it by full name; openAIAgentsHost runs each member's
// turn (identity, history, usage) and an interrupt aborts a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, run, setTracingDisabled, Usage } from '@openai/agents';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';
import { openAIAgentsHost, openAIAgentsTools } from 'subagent-tree/openai-agents';

setTracingDisabled(true); // no trace export to the network

/** A model of the SDK's `Model` interface answering from `respond(request)`; records requests. */
class FakeModel {
  constructor(respond) {
    this.respond = respond;
    this.requests = [];
  }
  async getResponse(request) {
    this.requests.push(request);
    return this.respond(request);
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('this fake model does not stream');
  }
}

let ids = 0;
const usage = (input = 10, output = 5) => new Usage({ requests: 1, inputTokens: input, outputTokens: output, totalTokens: input + output });
const call = (name, args) => ({ usage: usage(), output: [{ type: 'function_call', callId: `call-${++ids}`, name, arguments: JSON.stringify(args), status: 'completed' }] });
const say = (text, u = usage()) => ({ usage: u, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }] });
/** The tool results the run has handed the model so far. */
const results = (request) => (Array.isArray(request.input) ? request.input : []).filter((i) => i.type === 'function_call_result').map((i) => i.output?.text ?? i.output);

test('an Agent with openAIAgentsTools, run through run(): spawn_agent, then send_message by full name; a refusal reads as the tree\'s text', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({ reviewer: [{ reply: 'on it' }, { reply: 'noted' }] }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const model = new FakeModel((request) => {
    const seen = results(request);
    if (seen.length === 0) return call('spawn_agent', { name: 'reviewer', description: 'Review the patch', prompt: 'Review it.' });
    if (seen.length === 1) return call('send_message', { agent: 'reviewer', message: 'Check the tests too.' });
    if (seen.length === 2) return call('spawn_agent', { name: 'reviewer', description: 'Again', prompt: 'Again.' });
    return say('Delegated.');
  });
  const tools = openAIAgentsTools(runtime.toolsFor(lead));
  assert.deepEqual(tools.map((t) => t.name), runtime.toolsFor(lead).map((t) => t.name));
  const agent = new Agent({ name: 'lead', instructions: 'Delegate.', model, tools });
  const result = await run(agent, 'Get the patch reviewed.');
  assert.equal(result.finalOutput, 'Delegated.');
  const seen = results(model.requests.at(-1));
  assert.match(seen[0], /^Started agent reviewer \(Session id /);
  assert.equal(seen[1], 'Message delivered to reviewer.');
  const direct = await runtime.toolsFor(lead).find((t) => t.name === 'spawn_agent').call({ name: 'reviewer', description: 'Again', prompt: 'Again.' });
  assert.equal(seen[2], direct.content, 'a refusal: the tree\'s own text');
  // The model saw the runtime's schemas as given.
  const sent = model.requests[0].tools.find((t) => t.name === 'spawn_agent');
  assert.deepEqual(sent.parameters, runtime.toolsFor(lead).find((t) => t.name === 'spawn_agent').inputSchema);
  assert.deepEqual((await runtime.listDescendants('root')).map((r) => r.path), ['reviewer']);
  await runtime.waitForQuiescence(lead);
  assert.throws(() => openAIAgentsTools('nope'), (e) => e.code === 'INVALID_ARGUMENT');
});

test('openAIAgentsHost runs each member\'s turn with run(): identity in the instructions, the tree tools joined to the agent\'s own, usage reported', async () => {
  const own = { called: 0 };
  const model = new FakeModel((request) => {
    const who = /You are agent ([\w/-]+)/.exec(request.systemInstructions ?? '')?.[1];
    const seen = results(request);
    if (who === 'lead' && seen.length === 0 && !JSON.stringify(request.input).includes('finished')) {
      return call('spawn_agent', { name: 'reviewer', description: 'Review the release', prompt: 'Review it.' });
    }
    if (who === 'reviewer' && seen.length === 0) return call('clock', {});
    return say(`${who} is done.`, usage(100, 20));
  });
  const { tool } = await import('@openai/agents');
  const clock = tool({ name: 'clock', description: 'The time', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false }, strict: true, execute: async () => (own.called++, '12:00') });
  const agent = new Agent({ name: 'member', instructions: 'Be brief.', model, tools: [clock] });
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host: openAIAgentsHost({ agent, store }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const answer = await (await runtime.ask(lead, 'lead', 'Ship the release.')).answer;
  await runtime.waitForQuiescence(lead);
  assert.equal(answer.stopReason, 'completed');
  assert.deepEqual(answer.usage, { inputTokens: 110, outputTokens: 25 });
  assert.equal(own.called, 1, "the agent's own tool ran in reviewer's turn");
  const tree = await runtime.listTree('root');
  assert.deepEqual(tree.rows.map((r) => [r.path, r.lastTurn]), [['reviewer', { stopReason: 'completed', output: 'reviewer is done.' }]]);
  assert.equal(tree.root.lastTurn.output, 'lead is done.');
  // Instructions: the agent's own, then the member's identity; the tools: the agent's own plus the tree's.
  const first = model.requests[0];
  assert.ok(first.systemInstructions.startsWith('Be brief.\n\n') && /You are agent lead/.test(first.systemInstructions), first.systemInstructions);
  assert.deepEqual(first.tools.map((t) => t.name).slice(0, 2), ['clock', 'spawn_agent']);
  // lead's turn on reviewer's settlement notice carries its earlier turn from the log.
  const later = model.requests.filter((r) => /You are agent lead/.test(r.systemInstructions)).at(-1);
  assert.ok(JSON.stringify(later.input).includes('Ship the release.'), 'history from the store');
  assert.throws(() => openAIAgentsHost({}), (e) => e.code === 'INVALID_ARGUMENT' && /agent/.test(e.message));
});

test('openAIAgentsHost: an interrupt aborts the run in flight (aborted), and the member takes its next message', async () => {
  let started;
  const running = new Promise((resolve) => (started = resolve));
  const model = new FakeModel((request) => {
    const who = /You are agent ([\w/-]+)/.exec(request.systemInstructions ?? '')?.[1];
    if (who === 'worker' && !JSON.stringify(request.input).includes('again')) {
      started();
      return new Promise((_, reject) => request.signal?.addEventListener('abort', () => reject(request.signal.reason), { once: true }));
    }
    return say(`${who} answered.`);
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: openAIAgentsHost({ agent: new Agent({ name: 'm', model }) }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const worker = await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'worker', label: 'Work', prompt: 'work' });
  await running;
  assert.deepEqual(await runtime.interrupt('worker', { kind: 'user', root: lead }), { signalled: true });
  const result = await worker.result;
  assert.equal(result.stopReason, 'aborted');
  await runtime.prompt(lead, 'worker', 'again, please');
  await runtime.waitForQuiescence(lead);
  const [row] = (await runtime.listTree('root')).rows;
  assert.deepEqual(row.lastTurn, { stopReason: 'completed', output: 'worker answered.' });
});

test('openAIAgentsHost without a store still remembers: a later turn reads the member\'s earlier turns through the turn', async () => {
  const model = new FakeModel((request) => say(model.requests.length === 1 ? 'Release shipped.' : 'It was the release.'));
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: openAIAgentsHost({ agent: new Agent({ name: 'm', model }) }) });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await (await runtime.ask(lead, 'lead', 'Ship the release.')).answer;
  await (await runtime.ask(lead, 'lead', 'What did you ship?')).answer;
  const later = JSON.stringify(model.requests[1].input);
  assert.ok(later.includes('Ship the release.') && later.includes('Release shipped.'), later);
});
