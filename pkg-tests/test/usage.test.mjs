// What a tree spends (issue 44), through the package as users import it:
// usage in each turn/end and subagent/turn event, rolled up by
// runtime.usage and in listing rows, an external run's counted in its
// creator's subtree, activation results with own and subtree totals, the same
// totals after a restart, invalid usage refused by field, list_agents with
// tokens, and OpenAIHost reporting the Usage shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { mockOpenAI, say, toolCall } from './edge-helpers.mjs';

const spend = (inputTokens, outputTokens, extra = {}) => ({ inputTokens, outputTokens, ...extra });

function externalProvider() {
  return {
    name: 'ci',
    capabilities: { agentOptions: false, agentPreset: false, outputSchema: false, depthLimit: false },
    inheritsParentContext: false,
    start: (request) => ({ id: `ci-${request.name}`, result: { stopReason: 'completed', output: [{ type: 'text', text: 'green' }], usage: spend(7, 3, { cost: 12 }) }, dispose() {} }),
  };
}

test('usage is recorded with each turn and rolled up per subtree, the same after a restart', async () => {
  const store = new MemoryStore();
  const script = {
    lead: [
      { steps: [{ call: 'spawn_agent', input: { name: 'reviewer', description: 'Review', prompt: 'Review it.' } }], reply: 'delegated', usage: spend(100, 20) },
      { reply: 'noted', usage: spend(50, 5, { cacheReadTokens: 30 }) },
    ],
    reviewer: [{ steps: [{ call: 'ci_agent', input: { name: 'tests', description: 'Run the tests', prompt: 'run' } }], reply: 'reviewed', usage: spend(40, 8) }, { reply: 'ci noted', usage: spend(4, 1) }],
  };
  const host = scriptedHost(script);
  const runtime = new SubagentRuntime({ store, host, maxDepth: 2 });
  runtime.registerProvider(externalProvider());
  const turns = [];
  runtime.on('subagent/turn', (e) => e.phase === 'end' && turns.push([e.name, e.usage]));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await (await runtime.ask(lead, 'lead', 'Review the patch.')).answer;
  await runtime.waitForQuiescence(lead);
  host.check();
  assert.deepEqual(turns.find(([name]) => name === 'reviewer'), ['reviewer', spend(40, 8)]);
  const all = await runtime.usage(lead);
  assert.deepEqual(all, {
    own: { ...spend(150, 25, { cacheReadTokens: 30 }), turns: 2 },
    subtree: { ...spend(201, 37, { cacheReadTokens: 30, cost: 12 }), turns: 4 },
    complete: true,
  });
  assert.deepEqual(await runtime.usage(lead, 'reviewer'), {
    own: { ...spend(44, 9), turns: 2 },
    subtree: { ...spend(51, 12, { cost: 12 }), turns: 2 },
    complete: true,
  });
  assert.deepEqual((await runtime.usage(lead, 'reviewer/tests')).own, { ...spend(7, 3, { cost: 12 }), turns: 0 });
  const rows = await runtime.listDescendants('root');
  assert.deepEqual(rows.map((r) => [r.path, r.usage.own.inputTokens, r.usage.subtree.inputTokens]), [
    ['reviewer', 44, 51],
    ['reviewer/tests', 7, 7],
  ]);
  // list_agents shows the subtree's tokens to a model.
  const listed = await runtime.toolsFor(lead).find((t) => t.name === 'list_agents').call({ scope: 'descendants' });
  assert.match(listed.content, /- reviewer \(inactive: Review; 63 tokens\)/);
  assert.equal(listed.structured.agents[0].tokens, 63);
  // A new runtime over the same store reports the same totals.
  const again = new SubagentRuntime({ store, host: scriptedHost({}), maxDepth: 2 });
  const lead2 = await again.openRoot({ sessionId: 'root' });
  assert.deepEqual(await again.usage(lead2), all);
  assert.deepEqual((await again.listDescendants('root')).map((r) => r.usage), rows.map((r) => r.usage));
});

test("an activation's result carries its member's own and subtree totals", async () => {
  const host = scriptedHost({ worker: [{ reply: 'done', usage: spend(12, 4) }] });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const lead = await runtime.openRoot();
  const child = await runtime.startActivation({ parent: lead, label: 'Work', prompt: 'work', name: 'worker' });
  const result = await child.result;
  assert.deepEqual(result.usage, spend(12, 4), 'what its last turn reported');
  assert.deepEqual(result.totals, { own: { ...spend(12, 4), turns: 1 }, subtree: { ...spend(12, 4), turns: 1 }, complete: true });
});

test('invalid usage is refused naming the field, and nothing is recorded from it', async () => {
  for (const [usage, field] of [[{ inputTokens: -1, outputTokens: 0 }, 'usage.inputTokens'], [{ inputTokens: 1, outputTokens: 0.5 }, 'usage.outputTokens'], [{ inputTokens: 1, outputTokens: 2, cost: 'free' }, 'usage.cost'], [{ inputTokens: 2 ** 60, outputTokens: 0 }, 'usage.inputTokens']]) {
    const store = new MemoryStore();
    const runtime = new SubagentRuntime({ store, host: { runTurn: () => ({ messages: ['x'], usage }) } });
    const lead = await runtime.openRoot({ sessionId: 'root' });
    const answer = await (await runtime.ask(lead, 'lead', 'go')).answer;
    assert.equal(answer.stopReason, 'error');
    assert.match(answer.diagnostic, new RegExp(`${field.replace('.', '\\.')} must be a non-negative integer`));
    const [end] = await store.read('root', { types: ['turn/end'] });
    assert.equal(end.payload.usage, undefined, 'nothing recorded');
    assert.deepEqual((await runtime.usage(lead)).own, { inputTokens: 0, outputTokens: 0, turns: 1 });
  }
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost({}) });
  const lead = await runtime.openRoot();
  await assert.rejects(runtime.usage(lead, 'nobody'), (e) => e.code === 'UNKNOWN_AGENT');
  await assert.rejects(runtime.usage(lead, '5e550000-0000-4000-8000-000000000099'), (e) => e.code === 'UNAUTHORIZED');
  await assert.rejects(runtime.usage(lead, 7), (e) => e.code === 'INVALID_ARGUMENT');
});

test('OpenAIHost reports usage in the Usage shape, recorded and rolled up', async () => {
  let n = 0;
  const mock = await mockOpenAI((body) => {
    n += 1;
    const usage = { prompt_tokens: 100 * n, completion_tokens: 10 * n, total_tokens: 110 * n, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 3 } };
    const tools = body.messages.filter((m) => m.role === 'tool');
    return body.messages.at(-1).content === 'Count.' && tools.length === 0 ? { ...toolCall('list_agents', {}), usage } : { ...say('counted'), usage };
  });
  try {
    const store = new MemoryStore();
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'mock-1', store, retries: 0 });
    const runtime = new SubagentRuntime({ store, host });
    const lead = await runtime.openRoot({ sessionId: 'root' });
    const answer = await (await runtime.ask(lead, 'lead', 'Count.')).answer;
    const expected = { inputTokens: 300, outputTokens: 30, cacheReadTokens: 80, reasoningTokens: 6 };
    assert.deepEqual(answer.usage, expected, 'two requests summed');
    assert.deepEqual((await runtime.usage(lead)).own, { ...expected, turns: 1 });
  } finally {
    await mock.close();
  }
});
