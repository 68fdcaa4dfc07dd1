// Issue 68, point 1: agent options. A root's from openRoot, a child's merged over its creator's,
// given to every turn as turn.agentOptions and restored after a restart; spawn_agent's `model`
// sets a child's; OpenAIHost sends them (model, reasoning_effort, max_tokens) and aiSdkHost picks
// the model from its `models`, ending a turn whose model it does not know in error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { aiSdkHost } from 'subagent-tree/ai-sdk';
import { mockOpenAI, say, toolCall, agentOf } from './edge-helpers.mjs';

/** A host that answers every turn and keeps what each saw of its agent options. */
function recordingHost() {
  const seen = [];
  return { seen, runTurn: (turn) => (seen.push([turn.name, turn.agentOptions]), { messages: [`${turn.name} done`] }) };
}

test('a root\'s options from openRoot, a child\'s merged over them, on every turn and after a restart', async () => {
  const store = new MemoryStore();
  const host = recordingHost();
  const runtime = new SubagentRuntime({ store, host, maxDepth: 2 });
  const lead = await runtime.openRoot({ sessionId: 'root', agentOptions: { provider: 'openai', model: 'big', reasoningEffort: 'high' } });
  const reviewer = await runtime.startActivation({ parent: lead, label: 'Review', prompt: 'Review it.', name: 'reviewer', agentOptions: { model: 'small', maxOutputTokens: 400 } });
  await reviewer.result;
  await runtime.prompt(lead, 'lead', 'Go on.');
  await runtime.waitForQuiescence(lead);
  const merged = { provider: 'openai', model: 'small', reasoningEffort: 'high', maxOutputTokens: 400 };
  assert.deepEqual(host.seen.find(([name]) => name === 'reviewer')[1], merged);
  assert.deepEqual(host.seen.find(([name]) => name === 'lead')[1], { provider: 'openai', model: 'big', reasoningEffort: 'high' });
  assert.ok(Object.isFrozen(host.seen[0][1]));
  // Recorded in the child's log before its first turn.
  const log = await store.read(reviewer.childId, {});
  const start = log.findIndex((e) => e.type === 'session/start');
  assert.deepEqual(log[start].payload.agentOptions, merged);
  assert.ok(start < log.findIndex((e) => e.type === 'turn/start'));
  // A restart: a new runtime over the same store; the cold child's turn has the same options.
  const again = recordingHost();
  const runtime2 = new SubagentRuntime({ store, host: again, maxDepth: 2 });
  const lead2 = await runtime2.openRoot({ sessionId: 'root' });
  await (await runtime2.ask(lead2, 'reviewer', 'Once more.')).answer;
  assert.deepEqual(again.seen, [['reviewer', merged]]);
  assert.equal(again.seen[0][1].model, 'small');
});

test('agent options are strict, and a provider without the capability refuses them', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: recordingHost() });
  await assert.rejects(runtime.openRoot({ agentOptions: { modle: 'x' } }), (e) => e.code === 'INVALID_ARGUMENT' && /unknown field "modle"; did you mean model\?/.test(e.message));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await assert.rejects(runtime.startActivation({ parent: lead, label: 'x', prompt: 'p', agentOptions: { maxOutputTokens: 0 } }), (e) => e.code === 'INVALID_ARGUMENT' && /maxOutputTokens must be a whole number/.test(e.message));
  runtime.registerProvider({ name: 'plain', capabilities: { agentOptions: false, agentPreset: false, outputSchema: false, depthLimit: false }, inheritsParentContext: false, start: () => ({ id: 'r1', result: { stopReason: 'completed' }, dispose() {} }) });
  await assert.rejects(runtime.startActivation({ provider: 'plain', parent: lead, label: 'x', prompt: 'p', agentOptions: { model: 'm' } }), (e) => e.code === 'UNSUPPORTED_CAPABILITY');
  assert.deepEqual(await runtime.listDescendants('root'), []);
});

test('spawn_agent\'s model sets the child\'s, over its creator\'s', async () => {
  const seen = [];
  const scripted = scriptedHost({ lead: [{ steps: [{ call: 'spawn_agent', input: { name: 'fast', description: 'Quick look', prompt: 'Look.', model: 'mini' } }], reply: 'Started.' }, 'Noted.'], fast: ['Looked.'] });
  const host = { runTurn: (turn) => (seen.push([turn.name, turn.agentOptions]), scripted.runTurn(turn)) };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const lead = await runtime.openRoot({ sessionId: 'root', agentOptions: { model: 'big', maxOutputTokens: 900 } });
  await runtime.prompt(lead, 'lead', 'Start.');
  await runtime.waitForQuiescence(lead);
  assert.deepEqual(seen.find(([name]) => name === 'fast')[1], { model: 'mini', maxOutputTokens: 900 });
});

test('OpenAIHost sends each member\'s model, reasoning_effort and max_tokens', async () => {
  const model = await mockOpenAI((body) => (agentOf(body) === 'lead' && body.messages.at(-1).role === 'user' ? toolCall('spawn_agent', { name: 'helper', description: 'Help', prompt: 'Help.', model: 'helper-model' }) : say('ok')));
  try {
    const store = new MemoryStore();
    const host = new OpenAIHost({ baseUrl: model.baseUrl, model: 'default-model', store });
    const runtime = new SubagentRuntime({ store, host });
    const lead = await runtime.openRoot({ sessionId: 'root', agentOptions: { model: 'lead-model', reasoningEffort: 'low', maxOutputTokens: 300 } });
    await runtime.prompt(lead, 'lead', 'Start.');
    await runtime.waitForQuiescence(lead);
    const sent = model.requests.map((r) => [agentOf(r.body), r.body.model, r.body.reasoning_effort, r.body.max_tokens]);
    assert.deepEqual(sent.find(([agent]) => agent === 'lead'), ['lead', 'lead-model', 'low', 300]);
    assert.deepEqual(sent.find(([agent]) => agent === 'helper'), ['helper', 'helper-model', 'low', 300], 'its own model over its creator\'s settings');
    // Without options, the host's own model and no reasoning_effort.
    const plain = new SubagentRuntime({ store: new MemoryStore(), host: new OpenAIHost({ baseUrl: model.baseUrl, model: 'default-model' }) });
    const other = await plain.openRoot({ sessionId: 'other' });
    const before = model.requests.length;
    await plain.prompt(other, 'lead', 'Hi.');
    await plain.waitForQuiescence(other);
    assert.deepEqual([model.requests[before].body.model, 'reasoning_effort' in model.requests[before].body], ['default-model', false]);
  } finally {
    await model.close();
  }
});

test('aiSdkHost picks each member\'s model from models; an unknown one ends the turn in error naming the known', async () => {
  const answer = (text) => ({
    stream: convertArrayToReadableStream([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: text },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: 5, noCache: 5 }, outputTokens: { total: 2, text: 2 } } },
    ]),
  });
  const calls = [];
  const named = (label) => new MockLanguageModelV4({ doStream: async (options) => (calls.push([label, options.maxOutputTokens]), answer(`${label} says hi`)) });
  const host = aiSdkHost({ model: named('default'), models: { small: named('small'), big: named('big') } });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const lead = await runtime.openRoot({ sessionId: 'root', agentOptions: { model: 'big' } });
  const small = await runtime.startActivation({ parent: lead, label: 'x', prompt: 'p', name: 'quick', agentOptions: { model: 'small', maxOutputTokens: 50 } });
  assert.deepEqual((await small.result).output, [{ type: 'text', text: 'small says hi' }]);
  const unknown = await runtime.startActivation({ parent: lead, label: 'x', prompt: 'p', name: 'odd', agentOptions: { model: 'huge' } });
  const failed = await unknown.result;
  assert.equal(failed.stopReason, 'error');
  assert.match(failed.diagnostic, /agentOptions\.model "huge" is not a model this host knows \(it knows "small", "big"\)/);
  await runtime.waitForQuiescence(lead);
  assert.deepEqual(calls.filter(([label]) => label === 'small'), [['small', 50]]);
  assert.ok(calls.some(([label]) => label === 'big'), 'lead ran on big (the notices woke it)');
  assert.ok(!calls.some(([label]) => label === 'default'));
});

// Issue 68, point 2 (seed 003: "Consumers merge tool/model overrides over these values before
// preflight"; "requires `agentOptions` support"): a provider's route defaults sit under the
// caller's and the tool's overrides; a provider without the capability cannot have them.
test('a provider\'s agentRouteDefaults sit under the caller\'s and the tool\'s overrides', async () => {
  const requests = [];
  const routed = {
    name: 'routed',
    capabilities: { agentOptions: true, agentPreset: false, outputSchema: false, depthLimit: false },
    inheritsParentContext: false,
    agentRouteDefaults: { provider: 'anthropic', model: 'claude-route' },
    start: (request) => (requests.push(request.agentOptions), { id: `run-${requests.length}`, result: { stopReason: 'completed', output: 'ok' }, dispose() {} }),
  };
  const scripted = scriptedHost({ lead: [{ steps: [{ call: 'routed_agent', input: { name: 'via-tool', description: 'x', prompt: 'p', model: 'tool-model' } }], reply: 'Started.' }, 'Noted.'] });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scripted });
  runtime.registerProvider(routed);
  const lead = await runtime.openRoot({ sessionId: 'root', agentOptions: { model: 'lead-model' } });
  await (await runtime.startActivation({ provider: 'routed', parent: lead, label: 'x', prompt: 'p', name: 'plain' })).result;
  await (await runtime.startActivation({ provider: 'routed', parent: lead, label: 'x', prompt: 'p', name: 'chosen', agentOptions: { model: 'caller-model', reasoningEffort: 'low' } })).result;
  await runtime.prompt(lead, 'lead', 'Start.');
  await runtime.waitForQuiescence(lead);
  assert.deepEqual(requests, [
    { provider: 'anthropic', model: 'claude-route' },
    { provider: 'anthropic', model: 'caller-model', reasoningEffort: 'low' },
    { provider: 'anthropic', model: 'tool-model' },
  ]);
  // Without the capability the defaults could never be honoured: refused at registration.
  assert.throws(
    () => runtime.registerProvider({ ...routed, name: 'incapable', capabilities: { ...routed.capabilities, agentOptions: false } }),
    (e) => e.code === 'UNSUPPORTED_CAPABILITY' && /agentRouteDefaults but not the agentOptions capability/.test(e.message),
  );
  assert.throws(() => runtime.registerProvider({ ...routed, name: 'half', agentRouteDefaults: { provider: 'x' } }), (e) => e.code === 'INVALID_ARGUMENT');
});

// Issue 68, point 4 (seed 003: resolveMaxDepth(configured?: number | 'provider-managed') is
// "undefined when the provider owns depth enforcement"): past the tree's depth limit, only a
// provider that manages its depth starts runs, and its tool says so.
test('a provider that declares its depth provider-managed is not held to the tree\'s maxDepth', async () => {
  const runner = (name, depth) => ({
    name,
    depth,
    capabilities: { agentOptions: false, agentPreset: false, outputSchema: false, depthLimit: false },
    inheritsParentContext: false,
    start: () => ({ id: `${name}-${Math.random()}`, result: { stopReason: 'completed', output: 'ran' }, dispose() {} }),
  });
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: async () => (await held, { messages: ['ok'] }) }, maxDepth: 1 });
  runtime.registerProvider(runner('deep', 'provider-managed'));
  runtime.registerProvider(runner('shallow'));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const worker = await runtime.startActivation({ parent: lead, label: 'w', prompt: 'p', name: 'worker' });
  await assert.rejects(runtime.startActivation({ provider: 'shallow', parent: worker.agent, label: 'x', prompt: 'p' }), (e) => e.code === 'DEPTH_EXCEEDED');
  const deep = await runtime.startActivation({ provider: 'deep', parent: worker.agent, label: 'x', prompt: 'p', name: 'deeper' });
  assert.equal(deep.name, 'worker/deeper');
  assert.equal((await deep.result).stopReason, 'completed');
  const tools = runtime.toolsFor(worker.agent).map((t) => t.name);
  assert.ok(tools.includes('deep_agent') && !tools.includes('shallow_agent') && !tools.includes('spawn_agent'), tools.join(', '));
  assert.match(runtime.toolsFor(worker.agent).find((t) => t.name === 'deep_agent').description, /It manages its own depth/);
  assert.throws(() => runtime.registerProvider({ ...runner('odd', 'unlimited') }), (e) => e.code === 'INVALID_ARGUMENT' && /provider.depth must be "provider-managed"/.test(e.message));
  assert.throws(() => runtime.registerProvider({ ...runner('local', 'provider-managed'), prepareContinuable: () => ({}) }), (e) => e.code === 'INVALID_ARGUMENT' && /only a provider of external runs/.test(e.message));
  release();
  await worker.result;
});

// Issue 68, point 3 (seed 003: "Spawn alone supports an independent agentPreset; omission and fork
// inherit the parent's active composition. The child preset rules define explicit selection, event
// ordering, and historical restoration."): presets from the runtime's options, chosen by spawn,
// joined by omission, given to turns, shaping options and tools, shown in listings, restored.
test('presets: chosen by spawn, joined by omission, on every turn, in the tool and the listing, after a restart', async () => {
  const presets = {
    reviewer: { description: 'Reads and reviews code', agentOptions: { model: 'review-model' }, tools: { except: ['spawn_agent', 'fork_agent'] } },
    coder: { description: 'Writes code' },
  };
  assert.throws(() => new SubagentRuntime({ store: new MemoryStore(), host: recordingHost(), presets: { x: { tools: { only: ['send_mesage'] } } } }), (e) => e.code === 'INVALID_ARGUMENT' && /names "send_mesage", which is no tool/.test(e.message));
  assert.throws(() => new SubagentRuntime({ store: new MemoryStore(), host: recordingHost(), presets: { x: { descripton: 'typo' } } }), (e) => e.code === 'INVALID_ARGUMENT' && /did you mean description\?/.test(e.message));
  const store = new MemoryStore();
  const seen = [];
  const scripted = scriptedHost({
    lead: [{ steps: [{ call: 'spawn_agent', input: { name: 'critic', description: 'Review', prompt: 'Review it.', preset: 'reviewer' } }], reply: 'Started.' }, 'Noted.'],
    critic: ['Reviewed.', 'Again.'],
  });
  const host = { runTurn: (turn) => (seen.push([turn.name, turn.agentPreset, turn.agentOptions?.model, turn.tools.map((t) => t.name)]), scripted.runTurn(turn)) };
  const runtime = new SubagentRuntime({ store, host, presets, maxDepth: 2 });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  // The model sees the presets it may choose, with what each is for.
  const spawn = runtime.toolsFor(lead).find((t) => t.name === 'spawn_agent');
  assert.deepEqual(spawn.inputSchema.properties.preset.enum, ['coder', 'reviewer']);
  assert.match(spawn.inputSchema.properties.preset.description, /reviewer \(Reads and reviews code\)/);
  await runtime.prompt(lead, 'lead', 'Start.');
  await runtime.waitForQuiescence(lead);
  const critic = seen.find(([name]) => name === 'critic');
  assert.deepEqual(critic.slice(0, 3), ['critic', 'reviewer', 'review-model']);
  assert.ok(!critic[3].includes('spawn_agent') && critic[3].includes('send_message'), critic[3].join(', '));
  const [row] = await runtime.listDescendants('root');
  assert.equal(row.preset, 'reviewer');
  await assert.rejects(runtime.startActivation({ parent: lead, label: 'x', prompt: 'p', agentPreset: 'writer' }), (e) => e.code === 'INVALID_ARGUMENT' && /the presets are coder, reviewer/.test(e.message));
  // A restart: the cold member keeps its preset.
  const again = [];
  const runtime2 = new SubagentRuntime({ store, host: { runTurn: (turn) => (again.push([turn.name, turn.agentPreset, turn.agentOptions?.model]), { messages: ['ok'] }) }, presets, maxDepth: 2 });
  const lead2 = await runtime2.openRoot({ sessionId: 'root' });
  await (await runtime2.ask(lead2, 'critic', 'Once more.')).answer;
  assert.deepEqual(again, [['critic', 'reviewer', 'review-model']]);
});
