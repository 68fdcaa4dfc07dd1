// The README's "Testing" example, end to end: record a run of OpenAIHost
// against a local mock chat-completions server (Node), then replay the
// cassette without a model in Node, in headless Chromium and in workerd, and
// compare the logs byte for byte. The workerd tree moves into a Durable
// Object's storage, out as a bundle, and into IndexedDB in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { OpenAIHost } from 'subagent-tree/openai-host';
import * as testing from 'subagent-tree/testing';
import { mockOpenAI, toolCall, say, agentOf, workerModules } from './edge-helpers.mjs';
import { runPage, skipWithoutChromium } from './chromium.mjs';

const PROMPT = 'Write the release notes and have them checked.';

/** One run of the example tree over `host` and `store`; the same source runs in Node, Chromium and workerd. */
async function exampleRun({ SubagentRuntime }, T, { host, store }) {
  const runtime = new SubagentRuntime({ store, host, maxDepth: 1, now: T.virtualClock().now, newId: T.seededIds('release-notes') });
  host.attach?.(runtime);
  const lead = await runtime.openRoot();
  await runtime.prompt(lead, 'lead', 'Write the release notes and have them checked.');
  await T.settle(runtime, lead, { hosts: [host] });
  return { log: await T.treeLogText(store, lead.sessionId), snapshot: await T.snapshotTree(runtime, store, lead), rootId: lead.sessionId };
}

/** The mock model: lead delegates to writer and checker, checker messages writer, everyone reports. */
function model(body) {
  const agent = agentOf(body);
  const tools = body.messages.filter((m) => m.role === 'tool').length;
  const last = body.messages.at(-1);
  if (agent === 'lead' && last.role === 'user' && last.content.startsWith('Write the release notes')) {
    return toolCall('spawn_agent', { name: 'writer', description: 'Write the notes', prompt: 'Write the notes for 0.2.' }, 'call-1');
  }
  if (agent === 'lead' && tools === 1 && last.role === 'tool') return toolCall('spawn_agent', { name: 'checker', description: 'Check the notes', prompt: 'Check the links in the notes.' }, 'call-2');
  if (agent === 'checker' && tools === 0) return toolCall('list_agents', { scope: 'descendants' }, 'call-3');
  if (agent === 'lead') return { ...say(`lead: ${body.messages.filter((m) => m.role === 'user').length} inputs so far`), usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 } };
  return say(`${agent}: done`);
}

test('record OpenAIHost against the mock server, replay in Node, Chromium and workerd: byte-identical logs', { skip: skipWithoutChromium }, async () => {
  const mock = await mockOpenAI(model);
  let cassette;
  let recorded;
  try {
    const store = new MemoryStore();
    const host = testing.recordingHost(new OpenAIHost({ baseUrl: mock.baseUrl, model: 'mock-1', store, retries: 0 }));
    recorded = await exampleRun({ SubagentRuntime }, testing, { host, store });
    cassette = host.cassette();
  } finally {
    await mock.close();
  }
  const records = cassette.trimEnd().split('\n').slice(1).map((l) => JSON.parse(l));
  assert.ok(mock.requests.length >= 6, `${mock.requests.length} model requests`);
  const keys = records.map((r) => `${r.name}#${r.turn}`);
  for (const key of ['lead#1', 'lead#2', 'writer#1', 'checker#1']) assert.ok(keys.includes(key), `${key} in ${keys}`);
  assert.deepEqual(records.find((r) => r.name === 'checker').steps.map((s) => s.call), ['list_agents']);
  const lead1 = records.find((r) => r.name === 'lead' && r.turn === 1);
  assert.deepEqual(lead1.steps.map((s) => s.call), ['spawn_agent', 'spawn_agent']);
  assert.equal(lead1.outcome.stopReason, 'completed');
  assert.deepEqual(lead1.outcome.usage, { inputTokens: 60, outputTokens: 18 });
  assert.match(recorded.snapshot, /^ {2}writer \(Write the notes\) \[continuable, inactive\] completed "writer: done"$/m);

  // Node: the replay needs no model and no network.
  const node = await exampleRun({ SubagentRuntime }, testing, { host: testing.replayHost(cassette), store: new MemoryStore() });
  assert.equal(node.snapshot, recorded.snapshot);

  // workerd: the same replay inside a Durable Object; its tree moves into the object's storage and out as a bundle.
  const WORKER = `
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { DurableObjectStore } from 'subagent-tree/durable-object-store';
import * as T from 'subagent-tree/testing';
${exampleRun.toString()}
export class TreeDO {
  constructor(state) { this.state = state; }
  async fetch(request) {
    try {
      const store = new MemoryStore();
      const out = await exampleRun({ SubagentRuntime }, T, { host: T.replayHost(await request.text()), store });
      // The tree moves into the Durable Object's storage, and leaves it as a bundle.
      const durable = new DurableObjectStore(this.state);
      await T.importTree(durable, await T.exportTree(store, out.rootId));
      return Response.json({ ...out, durable: await T.treeLogText(durable, out.rootId), bundle: await T.exportTree(durable, out.rootId) });
    } catch (e) {
      return Response.json({ failure: String(e && e.stack || e) }, { status: 500 });
    }
  }
}
export default { fetch: (request, env) => env.TREE.get(env.TREE.idFromName('replay')).fetch(request) };
`;
  const mf = new Miniflare({ modules: await workerModules(WORKER), compatibilityDate: '2025-01-01', durableObjects: { TREE: { className: 'TreeDO', useSQLite: true } } });
  let workerd;
  try {
    const res = await mf.dispatchFetch('http://replay/', { method: 'POST', body: cassette });
    workerd = await res.json();
    assert.equal(res.status, 200, workerd.failure);
  } finally {
    await mf.dispose();
  }

  // Chromium: the same replay, and the Durable Object's tree imported into IndexedDB.
  const page = (entry) => `<!doctype html><script type="module">
import * as lib from '/pkg/${entry}';
import * as T from '/pkg/testing/testing.js';
import { IndexedDBStore } from '/pkg/web/indexeddb-store.js';
${exampleRun.toString()}
try {
  const out = await exampleRun(lib, T, { host: T.replayHost(${JSON.stringify(cassette)}), store: new lib.MemoryStore() });
  const target = await IndexedDBStore.open('from-workerd');
  await T.importTree(target, ${JSON.stringify(JSON.stringify(workerd.bundle))});
  const imported = await T.treeLogText(target, ${JSON.stringify(workerd.rootId)});
  const again = await T.importTree(target, ${JSON.stringify(JSON.stringify(workerd.bundle))}).catch((e) => e.code);
  window.__result = { ...out, imported, again };
} catch (e) {
  window.__result = { failure: String(e && e.stack || e) };
}
</script>`;
  const { result: chromium, consoleErrors } = await runPage(page);
  assert.equal(chromium.failure, undefined, chromium.failure);
  assert.deepEqual(consoleErrors, []);

  assert.ok(node.log.length > 3000, `${node.log.length} bytes of log`);
  assert.equal(chromium.log, node.log, 'Chromium and Node replays');
  assert.equal(workerd.log, node.log, 'workerd and Node replays');
  assert.equal(workerd.durable, workerd.log, 'the tree in Durable Object storage');
  assert.equal(chromium.imported, workerd.log, 'the Durable Object tree, imported into IndexedDB');
  assert.equal(chromium.again, 'TARGET_NOT_EMPTY');
  assert.equal(chromium.snapshot, node.snapshot);
  assert.equal(workerd.snapshot, node.snapshot);
});
