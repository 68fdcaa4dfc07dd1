// subagent-tree/testing in headless Chromium, against the real IndexedDB
// store and MemoryStore: a scripted host drives a small tree (a spawn_agent
// tool call, a steered message, replies), settle() and a golden
// snapshotTree(); recordingHost -> two replayHost runs write byte-identical
// logs; an edited cassette fails with REPLAY_DRIFT; a recorded steered
// message that never comes ends as drift when the tree goes quiet.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { hasRuntime, launch, openFixture, startSite } from './helpers.mjs';

const skip = hasRuntime() ? false : 'the package has no SubagentRuntime yet';

let site, browser, context;
before(async () => {
  if (skip) return;
  site = await startSite();
  browser = await launch();
  context = await browser.newContext();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

const GOLDEN = `lead [root] completed "lead: helper reported"
  helper (Help with the notes) [continuable, inactive] completed "helper: notes checked after the hint"
`;

test('the kit in Chromium: scripted tree over IndexedDB, settle, golden snapshot, record -> replay byte-identical, drift errors', { skip }, async () => {
  const page = await openFixture(context, site.url);
  const r = await page.evaluate(async () => {
    const { SubagentRuntime, MemoryStore, IndexedDBStore } = window.lib;
    const T = await import('/pkg/testing/testing.js');
    // lead starts helper and steers it a hint; helper waits for the hint, then reports.
    const script = () => ({
      lead: [
        {
          expectInput: 'Check the notes.',
          steps: [
            { call: 'spawn_agent', input: { name: 'helper', description: 'Help with the notes', prompt: 'Check the notes.' }, expectError: false },
            { call: 'send_message', input: { agent: 'helper', message: 'hint: look at the links' }, expectError: false },
          ],
          reply: 'lead: delegated',
        },
        { expectInput: /helper finished/, reply: 'lead: helper reported' },
      ],
      helper: [{ steps: [{ waitForMessage: 'look at the links' }], reply: 'helper: notes checked after the hint' }],
    });
    const run = async (host, store) => {
      const runtime = new SubagentRuntime({ store, host, now: T.virtualClock().now, newId: T.seededIds('chromium') });
      const lead = await runtime.openRoot();
      await runtime.prompt(lead, 'lead', 'Check the notes.');
      const failure = await T.settle(runtime, lead, { hosts: [host] }).then(() => undefined, (e) => `${e.name} ${e.code}: ${e.message}`);
      return { failure, snapshot: await T.snapshotTree(runtime, store, lead), log: await T.treeLogText(store, lead.sessionId) };
    };
    const idb = async (name) => {
      await IndexedDBStore.deleteDatabase(name);
      return IndexedDBStore.open(name);
    };
    const recorder = T.recordingHost(T.scriptedHost(script()));
    const recorded = await run(recorder, await idb('kit-recorded'));
    const cassette = recorder.cassette();
    const replayIdb = await run(T.replayHost(cassette), await idb('kit-replay'));
    const replayIdb2 = await run(T.replayHost(cassette), await idb('kit-replay-2'));
    const replayMem = await run(T.replayHost(cassette), new MemoryStore());
    // Drift: the lead's steered hint changed since the recording.
    const edited = await run(T.replayHost(cassette.replace('hint: look at the links', 'hint: look at the images')), new MemoryStore());
    // A recorded steer that cannot come (the lead's send_message is cut): drift when the tree is quiet, not a hang.
    const lines = cassette.trimEnd().split('\n');
    const i = lines.findIndex((l) => l.startsWith('{"name":"lead","turn":1,'));
    const lead1 = JSON.parse(lines[i]);
    lines[i] = JSON.stringify({ ...lead1, steps: lead1.steps.filter((s) => s.call !== 'send_message') });
    const silent = await run(T.replayHost(`${lines.join('\n')}\n`), new MemoryStore());
    return { recorded, cassette, replayIdb, replayIdb2, replayMem, edited, silent };
  });
  page.check();
  assert.equal(r.recorded.failure, undefined);
  assert.equal(r.recorded.snapshot, GOLDEN);
  const records = r.cassette.trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(records[0], { format: 'subagent-tree/cassette', version: 2 });
  const helper = records.find((x) => x.name === 'helper');
  assert.equal(helper.steps.length, 1);
  assert.match(helper.steps[0].steered[0], /hint: look at the links/);
  assert.deepEqual(records.find((x) => x.name === 'lead' && x.turn === 1).steps.map((s) => s.call), ['spawn_agent', 'send_message']);

  for (const replay of [r.replayIdb, r.replayIdb2, r.replayMem]) {
    assert.equal(replay.failure, undefined);
    assert.equal(replay.snapshot, GOLDEN);
  }
  assert.ok(r.replayIdb.log.length > 1500, `${r.replayIdb.log.length} bytes of log`);
  assert.equal(r.replayIdb2.log, r.replayIdb.log, 'two replays into IndexedDB');
  assert.equal(r.replayMem.log, r.replayIdb.log, 'IndexedDB and MemoryStore replays');

  assert.equal(r.edited.failure, 'TestingError REPLAY_DRIFT: replay drift at helper turn 1: steps[0].steered[0] (at character 160): recorded ">\\nhint: look at the links\\n</agent-message>", now ">\\nhint: look at the images\\n</agent-message>"');
  assert.match(r.silent.failure, /^TestingError REPLAY_DRIFT: replay drift at helper turn 1: steps\[0\]\.steered\[0\]: recorded "Message from agent lead .*", now nothing \(the tree went quiet without it\)$/);
});
