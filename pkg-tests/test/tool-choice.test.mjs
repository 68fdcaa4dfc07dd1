// Choosing a member's tools (issue 48, point 2): runtime.toolsFor(agent,
// { only?, except? }), turn.toolsFor(choice) for hosts, and OpenAIHost's
// treeTools option; the chosen tools still work, a name that is no tool is
// INVALID_ARGUMENT naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { mockOpenAI, say, toolCall } from './edge-helpers.mjs';

test('toolsFor narrows the tools by name, the chosen ones still work, and a typo is an error', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: () => ({ messages: ['ok'] }) } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const names = (choice) => runtime.toolsFor(lead, choice).map((t) => t.name);
  assert.equal(names().length, 8);
  assert.deepEqual(names({ only: ['spawn_agent', 'list_agents'] }), ['spawn_agent', 'list_agents']);
  assert.deepEqual(names({ except: ['fork_agent', 'task_create', 'task_list', 'task_update'] }), ['spawn_agent', 'send_message', 'interrupt_agent', 'list_agents']);
  assert.deepEqual(names({ only: ['spawn_agent', 'list_agents'], except: ['list_agents'] }), ['spawn_agent']);
  for (const [choice, message] of [
    [{ only: ['spawn_agnet'] }, /^only names "spawn_agnet", which is not one of the tools: spawn_agent, fork_agent, send_message/],
    [{ except: [7] }, /^options\.except/],
    [{ only: 'spawn_agent' }, /^options\.only must be an array/],
    [5, /^options must be an object/],
  ]) {
    assert.throws(() => runtime.toolsFor(lead, choice), (e) => e.code === 'INVALID_ARGUMENT' && message.test(e.message));
  }
  const [spawn] = runtime.toolsFor(lead, { only: ['spawn_agent'] });
  const started = await spawn.call({ description: 'Review', prompt: 'Review it.', name: 'reviewer' });
  assert.equal(started.isError, false, started.content);
  await runtime.waitForQuiescence(lead);
  assert.deepEqual((await runtime.listDescendants('root')).map((r) => r.path), ['reviewer']);
});

test("a host gets the member's chosen tools from turn.toolsFor; OpenAIHost sends only those (treeTools)", async () => {
  const seen = [];
  const runtime = new SubagentRuntime({
    store: new MemoryStore(),
    host: {
      runTurn(turn) {
        seen.push(turn.toolsFor({ except: ['task_create', 'task_list', 'task_update'] }).map((t) => t.name));
        return { messages: ['ok'] };
      },
    },
  });
  const lead = await runtime.openRoot();
  await (await runtime.ask(lead, 'lead', 'go')).answer;
  assert.deepEqual(seen, [['spawn_agent', 'fork_agent', 'send_message', 'interrupt_agent', 'list_agents']]);

  let calls = 0;
  const mock = await mockOpenAI((body) => (calls++ === 0 ? toolCall('spawn_agent', { name: 'writer', description: 'Write', prompt: 'Write it.' }) : say(`saw ${body.tools?.length ?? 0} tools`)));
  try {
    const store = new MemoryStore();
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', store, retries: 0, treeTools: { only: ['spawn_agent', 'list_agents'] } });
    const tree = new SubagentRuntime({ store, host });
    const root = await tree.openRoot({ sessionId: 'root' });
    await (await tree.ask(root, 'lead', 'Write the docs.')).answer;
    await tree.waitForQuiescence(root);
    assert.deepEqual(mock.requests[0].body.tools.map((t) => t.function.name), ['spawn_agent', 'list_agents']);
    assert.deepEqual((await tree.listDescendants('root')).map((r) => r.path), ['writer'], 'the chosen spawn_agent works');
    assert.throws(() => new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', treeTools: 'all' }), { code: 'INVALID_ARGUMENT' });
  } finally {
    await mock.close();
  }
});
