// Budgets per subtree (issue 46), through the package as users import it:
// openRoot({ budget }), startActivation({ budget }), runtime.setBudget,
// turn.budget, BUDGET_EXHAUSTED refusals, the budget-exhausted stop and its
// notice, rows' budget, spawn_agent's budget and list_agents' remaining,
// validation that writes nothing, and OpenAIHost capping max_tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { scriptedHost } from 'subagent-tree/testing';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { mockOpenAI, say } from './edge-helpers.mjs';

/** A host whose turns report `spend` tokens; a member named in `held` waits for `open(name)`. */
function spendingHost(spend) {
  const seen = [];
  const gates = new Map();
  return {
    seen,
    hold(name) {
      let open;
      const gate = new Promise((resolve) => (open = resolve));
      gates.set(name, { gate, open });
    },
    open(name) {
      gates.get(name)?.open();
      gates.delete(name);
    },
    async runTurn(turn) {
      seen.push({ name: turn.name, budget: turn.budget, input: turn.inputText });
      const held = gates.get(turn.name);
      if (held) await held.gate;
      const [inputTokens, outputTokens] = spend[turn.name] ?? [0, 0];
      return { stopReason: 'completed', text: `done by ${turn.name}`, usage: { inputTokens, outputTokens } };
    },
  };
}

const code = (c) => (e) => e?.code === c;

test('a spent root budget stops turns, refuses input by name, holds across a restart, and setBudget raises it', async () => {
  const store = new MemoryStore();
  const host = spendingHost({ lead: [50, 10] });
  const runtime = new SubagentRuntime({ store, host });
  const lead = await runtime.openRoot({ sessionId: 'root', budget: { tokens: 100 } });
  await (await runtime.ask(lead, 'lead', 'one')).answer;
  await (await runtime.ask(lead, 'lead', 'two')).answer;
  // Each turn was handed half of the unreserved room: 100, then 100 - 60.
  assert.deepEqual(host.seen.map((t) => t.budget), [{ tokens: 50 }, { tokens: 20 }]);
  await assert.rejects(runtime.prompt(lead, 'lead', 'three'), (e) => {
    assert.equal(e.code, 'BUDGET_EXHAUSTED');
    assert.equal(e.message, '"lead" takes no message: the budget of "lead" (tokens 100) is spent');
    return true;
  });
  assert.equal(host.seen.length, 2);
  // Durable: a new runtime over the store refuses too, until the budget is raised.
  const host2 = spendingHost({ lead: [5, 5] });
  const again = new SubagentRuntime({ store, host: host2 });
  const lead2 = await again.openRoot({ sessionId: 'root' });
  await assert.rejects(again.prompt(lead2, 'lead', 'four'), code('BUDGET_EXHAUSTED'));
  assert.deepEqual(await again.setBudget(lead2, 'lead', { tokens: 300 }), { set: { tokens: 300 }, remaining: { tokens: 180 } });
  const answer = await (await again.ask(lead2, 'lead', 'five')).answer;
  assert.equal(answer.stopReason, 'completed');
  assert.deepEqual(host2.seen[0].budget, { tokens: 90 });
  assert.equal(await again.setBudget(lead2, 'lead', null), null, 'cleared');
  await again.prompt(lead2, 'lead', 'six');
  await again.waitForQuiescence(lead2);
  assert.equal(host2.seen.at(-1).budget, undefined, 'no budget applies any more');
});

test('a child budget is clamped and returned; a spent child settles budget-exhausted, its creator told, its input kept', async () => {
  const store = new MemoryStore();
  const host = spendingHost({ reviewer: [100, 20] });
  const runtime = new SubagentRuntime({ store, host });
  const lead = await runtime.openRoot({ sessionId: 'root', budget: { tokens: 1000, spawns: 4 } });
  host.hold('reviewer');
  const reviewer = await runtime.startActivation({ parent: lead, label: 'Review', prompt: 'review it', name: 'reviewer', budget: { tokens: 5000, turns: 1 } });
  assert.deepEqual(reviewer.budget, { tokens: 1000, turns: 1 }, 'clamped to what the root has left');
  const rows = await runtime.listDescendants('root');
  assert.deepEqual(rows[0].budget, { set: { tokens: 1000, turns: 1 }, remaining: { tokens: 1000, turns: 1 } });
  // Accepted while its one turn runs; once it ends the budget is spent.
  await runtime.prompt(lead, 'reviewer', 'and also this');
  host.open('reviewer');
  const result = await reviewer.result;
  assert.equal(result.stopReason, 'budget-exhausted');
  assert.equal(result.diagnostic, 'it takes no further turn: the budget of "reviewer" (turns 1) is spent');
  assert.deepEqual(result.output, [{ type: 'text', text: 'done by reviewer' }], 'its closing message is its last output');
  await runtime.waitForQuiescence(lead);
  const notice = host.seen.find((t) => t.name === 'lead').input.join('\n');
  assert.match(notice, /Subagent reviewer ran out of budget before it finished\./);
  // Its pending input is in its log, and a message to it is refused until the budget is raised.
  const log = await store.read(reviewer.childId);
  const consumed = new Set(log.filter((e) => e.type === 'turn/end').flatMap((e) => e.payload.consumed));
  assert.deepEqual(log.filter((e) => e.type === 'message/input' && !consumed.has(e.payload.messageId)).length, 1);
  await assert.rejects(runtime.prompt(lead, 'reviewer', 'more'), code('BUDGET_EXHAUSTED'));
  const raised = await runtime.setBudget(lead, 'reviewer', { turns: 3 });
  assert.deepEqual(raised, { set: { turns: 3 }, remaining: { turns: 2 } });
  await runtime.waitForQuiescence(lead);
  const ran = host.seen.filter((t) => t.name === 'reviewer');
  assert.equal(ran.length, 2);
  assert.deepEqual(ran[1].input, [ran[1].input[0]]);
  assert.match(ran[1].input[0], /and also this/);
});

test('a model sets a budget with spawn_agent, list_agents shows what is left, and a start past spawns is an isError result', async () => {
  const host = scriptedHost({
    lead: [
      {
        steps: [{ call: 'spawn_agent', input: { name: 'reviewer', description: 'Review', prompt: 'Review it.', budget: { tokens: 5000, turns: 4 } } }],
        reply: 'delegated',
        usage: { inputTokens: 10, outputTokens: 0 },
      },
      { reply: 'noted' },
    ],
    reviewer: [{ reply: 'reviewed', usage: { inputTokens: 100, outputTokens: 20 } }],
  });
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const lead = await runtime.openRoot({ budget: { tokens: 1000, spawns: 1 } });
  const tools = () => runtime.toolsFor(lead);
  const spawnSchema = tools().find((t) => t.name === 'spawn_agent').inputSchema;
  assert.deepEqual(Object.keys(spawnSchema.properties.budget.properties), ['tokens', 'turns', 'spawns', 'cost']);
  await (await runtime.ask(lead, 'lead', 'Review the patch.')).answer;
  await runtime.waitForQuiescence(lead);
  host.check();
  const listed = await tools().find((t) => t.name === 'list_agents').call({ scope: 'children' });
  assert.equal(
    listed.content,
    '1 child of lead (running = working now, inactive = idle or finished; neither says whether its task is done):\n- reviewer (inactive: Review; 120 tokens; budget left: tokens 880, turns 3)',
  );
  assert.deepEqual(listed.structured.agents[0].budget, { set: { tokens: 1000, turns: 4 }, remaining: { tokens: 880, turns: 3 } });
  const refused = await tools().find((t) => t.name === 'spawn_agent').call({ description: 'more', prompt: 'more' });
  assert.equal(refused.isError, true);
  assert.equal(refused.content, '"lead" cannot start a child: the budget of "lead" (spawns 1) is spent. Finish with what you have: only the host can raise a budget.');
});

test('zero, negative, NaN, fractional or unknown budgets are INVALID_ARGUMENT and write nothing', async () => {
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host: scriptedHost({}) });
  for (const budget of [{ tokens: 0 }, { turns: -1 }, { cost: NaN }, { spawns: 1.5 }, {}, { dollars: 5 }, 7, NaN, 'lots']) {
    await assert.rejects(runtime.openRoot({ sessionId: 'bad', budget }), (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENT', JSON.stringify(budget));
      assert.match(e.message, /^options\.budget/);
      return true;
    });
  }
  assert.equal(await store.read('bad'), null, 'nothing was written');
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await assert.rejects(runtime.setBudget(lead, 'lead', { tokens: 2 ** 53 }), code('INVALID_ARGUMENT'));
  await assert.rejects(runtime.startActivation({ parent: lead, label: 'x', prompt: 'x', budget: { turns: 0 } }), (e) => {
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.equal(e.message, 'spec.budget.turns must be a positive integer of at most 2^53 - 1, not 0');
    return true;
  });
  assert.deepEqual(await runtime.listDescendants('root'), []);
  assert.equal(((await store.read('root')) ?? []).filter((e) => e.type === 'subagent/budget').length, 0);
});

test("OpenAIHost caps each request's max_tokens to what the turn's allowance leaves", async () => {
  const mock = await mockOpenAI(() => ({ ...say('ok'), usage: { prompt_tokens: 30, completion_tokens: 10, total_tokens: 40 } }));
  try {
    const store = new MemoryStore();
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, apiKey: 'sk-test', model: 'mock-1', store, retries: 0, maxTokens: 4000 });
    const runtime = new SubagentRuntime({ store, host });
    const lead = await runtime.openRoot({ budget: { tokens: 600 } });
    await (await runtime.ask(lead, 'lead', 'one')).answer;
    await (await runtime.ask(lead, 'lead', 'two')).answer;
    // 600 / 2, then (600 - 40) / 2: lower than the configured 4000.
    assert.deepEqual(mock.requests.map((r) => r.body.max_tokens), [300, 280]);
    const unbudgeted = await runtime.openRoot();
    await (await runtime.ask(unbudgeted, 'lead', 'three')).answer;
    assert.equal(mock.requests.at(-1).body.max_tokens, 4000);
  } finally {
    await mock.close();
  }
});
