// subagent-tree/testing in Node: scripted hosts (tools by name, waiting for a
// steered message, interrupts, failures, stop reasons, unscripted turns),
// record and replay with drift errors, determinism (byte-identical logs),
// settle and snapshotTree golden text, exportTree/importTree between stores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { FileStore } from 'subagent-tree/file-store';
import {
  TestingError, testingErrorCodes, scriptedHost, recordingHost, replayHost, parseCassette, settle, snapshotTree, CASSETTE_VERSION,
  exportTree, importTree, treeLogText, virtualClock, seededIds,
} from 'subagent-tree/testing';

/** The release scenario: lead delegates, reviewer waits for writer's message, checker works until interrupted. */
const releaseScript = (onChecker, { interrupted = true } = {}) => ({
  lead: [
    {
      expectInput: 'Ship the release.',
      steps: [
        { call: 'spawn_agent', input: { name: 'reviewer', description: 'Review the patch', prompt: 'Review the patch.' }, expectError: false },
        { call: 'spawn_agent', input: { name: 'writer', description: 'Write the notes', prompt: 'Write the release notes.' } },
      ],
      reply: 'delegated',
    },
    'lead heard one',
    'lead heard both',
  ],
  reviewer: [
    {
      steps: [{ call: 'spawn_agent', input: { name: 'checker', description: 'Check links', prompt: 'Check every link.' } }, { waitForMessage: 'notes are ready' }],
      reply: 'review done after the notes',
    },
    { expectInput: interrupted ? /reviewer\/checker was stopped/ : /reviewer\/checker finished/, reply: 'reviewer saw checker stop' },
  ],
  writer: [{ steps: [{ call: 'send_message', input: { agent: 'reviewer', message: 'the notes are ready' }, expectError: false }], reply: 'notes written', usage: { inputTokens: 5, outputTokens: 2 } }],
  'reviewer/checker': [interrupted ? (turn) => (onChecker(), scriptedStepAbort(turn)) : 'links checked'],
});

async function scriptedStepAbort(turn) {
  await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
  return { stopReason: 'aborted', messages: ['checker stopped'] };
}

/** Runs the release scenario over `host`; the test interrupts the checker once it works. */
async function runRelease(makeHost, { seed = 'release', store = new MemoryStore(), interrupt = true, maxDepth = 2, defaultCwd } = {}) {
  let working;
  const checkerWorking = new Promise((resolve) => (working = resolve));
  const host = makeHost(() => working());
  const runtime = new SubagentRuntime({ store, host, maxDepth, defaultCwd, now: virtualClock().now, newId: seededIds(seed) });
  host.attach?.(runtime);
  const lead = await runtime.openRoot();
  await runtime.prompt(lead, 'lead', 'Ship the release.');
  // A replay plays the checker's recorded (aborted) turn: no interrupt is needed.
  if (interrupt) {
    await checkerWorking;
    assert.equal(runtime.interrupt('reviewer/checker', { kind: 'user', root: lead }).signalled, true);
  }
  return { host, runtime, store, lead };
}

const GOLDEN = `lead [root] completed "lead heard both"
  reviewer (Review the patch) [continuable, inactive] completed "reviewer saw checker stop"
    reviewer/checker (Check links) [continuable, inactive] aborted ""
  writer (Write the notes) [continuable, inactive] completed "notes written"
`;

test('a scripted host plays a three-level tree: tools by name, a wait for a steered message, an interrupt; settle and a golden snapshot', async () => {
  const seen = [];
  const { host, runtime, store, lead } = await runRelease((onChecker) => scriptedHost(releaseScript(onChecker), { onTurn: (t) => seen.push(`${t.name}#${t.turn}`) }));
  await settle(runtime, lead, { hosts: [host] });
  assert.equal(await snapshotTree(runtime, store, lead), GOLDEN);
  assert.deepEqual(host.failures, []);
  assert.deepEqual(seen.filter((s) => s.startsWith('reviewer')).sort(), ['reviewer#1', 'reviewer#2', 'reviewer/checker#1']);
  // The writer's message reached the reviewer inside its first turn (steered), not as a new turn.
  const reviewerLog = (await exportTree(store, lead.sessionId)).sessions.find((s) => s.events.some((e) => e.payload?.name === 'reviewer' && e.type === 'session/start'));
  const inputs = reviewerLog.events.filter((e) => e.type === 'message/input').map((e) => e.payload.content[0].text);
  assert.ok(inputs.some((t) => t.includes('the notes are ready')), inputs.join(' | '));
});

test('an unscripted turn fails loudly: settle throws UNSCRIPTED_TURN naming the member and the turn number', async () => {
  const host = scriptedHost({ lead: [{ steps: [{ call: 'spawn_agent', input: { name: 'helper', description: 'Help', prompt: 'help' } }], reply: 'ok' }] });
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host, maxDepth: 1, now: virtualClock().now, newId: seededIds(1) });
  const lead = await runtime.openRoot();
  await runtime.prompt(lead, 'lead', 'go');
  const error = await settle(runtime, lead, { hosts: [host] }).then(() => null, (e) => e);
  assert.ok(error instanceof TestingError, String(error));
  assert.equal(error.code, 'UNSCRIPTED_TURN');
  assert.match(error.message, /^helper turn 1 is not scripted \(the script has 0 turn\(s\) for "helper"\); its input: "help/);
  // The runtime recorded the failed turn as an error with the message as its diagnostic.
  assert.match(await snapshotTree(runtime, store, lead), /helper \(Help\) \[continuable, inactive\] error/);
  // The lead's second turn (helper's notice) is unscripted too: the host lists it after the first.
  assert.equal(host.failures.length, 2);
  assert.match(host.failures[1].message, /^lead turn 2 is not scripted \(the script has 1 turn\(s\) for "lead"\); its input: "Subagent helper/);
});

test('scripted failures, stop reasons, mismatched input and refused tools', async () => {
  const host = scriptedHost({
    lead: [
      { steps: [{ call: 'spawn_agent', input: { name: 'a', description: 'A', prompt: 'a' } }, { call: 'spawn_agent', input: { name: 'a', description: 'A again', prompt: 'a' }, expectError: true }], reply: 'ok' },
      () => ({ messages: ['lead done'] }),
    ],
    a: [{ fail: 'the model is down' }, { reply: 'cut', stopReason: 'max-tokens' }],
  });
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host, maxDepth: 1, now: virtualClock().now, newId: seededIds(2) });
  const lead = await runtime.openRoot();
  await runtime.prompt(lead, 'lead', 'go');
  await settle(runtime, lead, { hosts: [host] });
  assert.match(await snapshotTree(runtime, store, lead), /^ {2}a \(A\) \[continuable, inactive\] error ""$/m);
  const { answer } = await runtime.ask(lead, 'a', 'again');
  assert.equal((await answer).stopReason, 'max-tokens');
  await settle(runtime, lead, { hosts: [host] }).then(() => assert.fail('lead turn 3 is unscripted'), (e) => assert.equal(e.code, 'UNSCRIPTED_TURN'));

  const mismatch = scriptedHost({ lead: [{ expectInput: 'hello', reply: 'x' }, { steps: [{ call: 'no_such_tool' }] }] });
  const rt2 = new SubagentRuntime({ store: new MemoryStore(), host: mismatch, now: virtualClock().now, newId: seededIds(3) });
  const lead2 = await rt2.openRoot();
  await rt2.prompt(lead2, 'lead', 'goodbye');
  await settle(rt2, lead2).then(() => mismatch.check()).then(() => assert.fail('mismatch'), (e) => {
    assert.equal(e.code, 'SCRIPT_MISMATCH');
    assert.equal(e.message, 'lead turn 1 expected input matching "hello", got "goodbye"');
  });
  await rt2.prompt(lead2, 'lead', 'next');
  await settle(rt2, lead2);
  assert.match(mismatch.failures[1].message, /^lead turn 2 step 0: no tool named "no_such_tool"; this member has spawn_agent, fork_agent, send_message, /);

  for (const bad of [null, { lead: 'reply' }, { lead: [{ steps: [{ call: 'x', say: 'y' }] }] }, { lead: [{ reply: 3 }] }, { lead: [42] }]) {
    assert.throws(() => scriptedHost(bad), (e) => e instanceof TestingError && e.code === 'INVALID_SCRIPT');
  }
  assert.ok(testingErrorCodes.includes('REPLAY_DRIFT'));
});

test('record, then replay without a model: two replays of one cassette write byte-identical logs', async () => {
  let recorder;
  const recorded = await runRelease((onChecker) => (recorder = recordingHost(scriptedHost(releaseScript(onChecker, { interrupted: false })))), { interrupt: false });
  await settle(recorded.runtime, recorded.lead);
  const cassette = recorder.cassette();
  const lines = cassette.trimEnd().split('\n');
  assert.equal(lines[0], '{"format":"subagent-tree/cassette","version":2}');
  const writer = JSON.parse(lines.find((l) => l.startsWith('{"name":"writer"')));
  assert.deepEqual(writer.steps[0].input, { agent: 'reviewer', message: 'the notes are ready' });
  assert.equal(writer.steps[0].result.isError, false);
  assert.deepEqual(writer.outcome, { messages: ['notes written'], usage: { inputTokens: 5, outputTokens: 2 } });
  const reviewer = JSON.parse(lines.find((l) => l.startsWith('{"name":"reviewer","turn":1')));
  assert.deepEqual(reviewer.steps.map((s) => s.call ?? 'steered'), ['spawn_agent', 'steered']);
  assert.match(reviewer.steps[1].steered[0], /the notes are ready/);
  assert.equal(parseCassette(cassette).size, lines.length - 1);

  const logs = [await treeLogText(recorded.store, recorded.lead.sessionId)];
  for (let i = 0; i < 2; i++) {
    const replay = await runRelease(() => replayHost(cassette), { interrupt: false });
    await settle(replay.runtime, replay.lead, { hosts: [replay.host] });
    logs.push(await treeLogText(replay.store, replay.lead.sessionId));
    assert.equal(await snapshotTree(replay.runtime, replay.store, replay.lead), GOLDEN.replace('aborted ""', 'completed "links checked"'));
  }
  assert.ok(logs[0].length > 2000);
  assert.equal(logs[1], logs[2], 'two replays');
  // The recording itself may interleave events of concurrent members differently (the recorder's own
  // awaits shift them by a tick); the same tree results, and every replay of the cassette is the same.
  assert.equal(await snapshotTree(recorded.runtime, recorded.store, recorded.lead), GOLDEN.replace('aborted ""', 'completed "links checked"'));
});

test('drift fails with REPLAY_DRIFT naming the member, the turn and the first difference', async () => {
  let recorder;
  const recorded = await runRelease((onChecker) => (recorder = recordingHost(scriptedHost(releaseScript(onChecker, { interrupted: false })))), { interrupt: false });
  await settle(recorded.runtime, recorded.lead);
  // A changed run: the writer now sends another message, so the reviewer is steered other text than recorded.
  const edited = recorder.cassette().replace('"message":"the notes are ready"', '"message":"the notes are late"');
  const replay = await runRelease(() => replayHost(edited), { interrupt: false });
  await replay.runtime.waitForQuiescence(replay.lead);
  const error = replay.host.failures[0];
  assert.ok(error instanceof TestingError);
  assert.equal(error.code, 'REPLAY_DRIFT');
  assert.match(error.message, /^replay drift at reviewer turn 1: steps\[1\]\.steered\[0\] \(at character \d+\): recorded ".*the notes are ready.*", now ".*the notes are late/);
  // A different seed: ids in tool results differ from the first tool call on.
  const other = await runRelease(() => replayHost(recorder.cassette()), { seed: 'another seed', interrupt: false });
  await settle(other.runtime, other.lead).catch(() => {});
  assert.throws(() => other.host.check(), (e) => e.code === 'REPLAY_DRIFT' && /^replay drift at lead turn 1: steps\[0\]\.result \(spawn_agent\)\.content \(at character \d+\): recorded/.test(e.message));
  // What a turn was offered is in its record: other tools (a smaller maxDepth takes spawning away
  // from the reviewer), another working directory or another output schema is drift.
  const offered = async (options, cassette = recorder.cassette()) => {
    const run = await runRelease(() => replayHost(cassette), { interrupt: false, ...options });
    await settle(run.runtime, run.lead).catch(() => {});
    return assert.throws(() => run.host.check(), (e) => e.code === 'REPLAY_DRIFT' && (errors.push(e.message), true));
  };
  const errors = [];
  await offered({ maxDepth: 1 });
  await offered({ defaultCwd: '/elsewhere' });
  await offered({}, recorder.cassette().replace('"outputSchema":null', '"outputSchema":{"type":"object"}'));
  assert.match(errors[0], /^replay drift at reviewer turn 1: tools\[\d+\] \(at character \d+\): recorded "(spawn_agent|fork_agent)", now /);
  assert.match(errors[1], /^replay drift at lead turn 1: cwd \(at character 1\): recorded "\/.*", now "\/elsewhere"$/);
  assert.equal(errors[2], 'replay drift at lead turn 1: outputSchema: recorded "{\\"type\\":\\"object\\"}", now "null"');
  // A cassette with a turn the run never asks for.
  const extra = `${recorder.cassette()}{"name":"ghost","turn":1,"first":true,"inputText":[],"steps":[],"outcome":null}\n`;
  const short = await runRelease(() => replayHost(extra), { interrupt: false });
  await settle(short.runtime, short.lead).then(() => short.host.check()).then(() => assert.fail('extra turn'), (e) => {
    assert.equal(e.code, 'REPLAY_DRIFT');
    assert.equal(e.message, 'replay drift at ghost turn 1: recorded, but the replay never ran it (1 recorded turn(s) did not run)');
  });
  for (const bad of ['', 'not json\n', '{"format":"other","version":1}\n', `{"format":"subagent-tree/cassette","version":1}\n{"name":"lead"}\n`,
    `{"format":"subagent-tree/cassette","version":1}\n{"name":"lead","turn":1,"inputText":[],"steps":[],"outcome":null}\n{"name":"lead","turn":1,"inputText":[],"steps":[],"outcome":null}\n`, 42]) {
    assert.throws(() => replayHost(bad), (e) => e instanceof TestingError && e.code === 'INVALID_CASSETTE', String(bad));
  }
});

test('virtualClock and seededIds are deterministic', () => {
  const a = seededIds('x');
  const b = seededIds('x');
  const ids = [a('session'), a('message'), a('session')];
  assert.deepEqual(ids, [b('session'), b('message'), b('session')]);
  assert.notEqual(seededIds('y')('session'), ids[0]);
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(new Set(Array.from({ length: 1000 }, a)).size, 1000);
  const clock = virtualClock({ start: 10, tick: 2 });
  assert.deepEqual([clock.now(), clock.now(), clock.advance(100), clock.now(), clock.peek()], [10, 12, 114, 114, 116]);
  assert.throws(() => virtualClock({ tick: -1 }), (e) => e.code === 'INVALID_ARGUMENT');
  assert.throws(() => seededIds({}), (e) => e.code === 'INVALID_ARGUMENT');
});

test('exportTree/importTree move every log of a tree from a MemoryStore into a FileStore; bad bundles are refused whole', async () => {
  const run = await runRelease((onChecker) => scriptedHost(releaseScript(onChecker)));
  await settle(run.runtime, run.lead, { hosts: [run.host] });
  const bundle = await exportTree(run.store, run.lead.sessionId);
  assert.equal(bundle.sessions.length, 4);
  assert.deepEqual(bundle.missing, []);
  const dir = await mkdtemp(path.join(tmpdir(), 'subagent-tree-testing-'));
  try {
    const target = await FileStore.open(dir);
    assert.deepEqual(await importTree(target, JSON.stringify(bundle)), { rootId: run.lead.sessionId, sessions: 4 });
    assert.equal(await treeLogText(target, run.lead.sessionId), await treeLogText(run.store, run.lead.sessionId));
    // The imported tree is live in a runtime over the target store: same snapshot, and a member answers.
    const host = scriptedHost({ 'reviewer/checker': ['checker is back'], reviewer: [], lead: [] });
    const runtime = new SubagentRuntime({ store: target, host, maxDepth: 2, now: virtualClock().now, newId: seededIds('after') });
    const lead = await runtime.openRoot({ sessionId: run.lead.sessionId });
    await settle(runtime, lead);
    assert.equal(await snapshotTree(runtime, target, lead), GOLDEN);
    const { answer } = await runtime.ask(lead, 'reviewer/checker', 'are you there?');
    assert.equal((await answer).output[0].text, 'checker is back');
    // A second import into the same store: refused before anything is written.
    await assert.rejects(importTree(target, bundle), (e) => e.code === 'TARGET_NOT_EMPTY' && e.message.includes('the store already has 4 of the tree'));
    await runtime.closeRoot(lead);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const corrupt = (edit) => {
    const copy = JSON.parse(JSON.stringify(bundle));
    edit(copy);
    return copy;
  };
  const cases = [
    ['not json', 'tree bundle: the text is not JSON'],
    [corrupt((b) => (b.format = 'x')), 'format must be'],
    [corrupt((b) => b.sessions[2].events.splice(1, 1)), 'must have seq 1 (logs count from 0 without gaps)'],
    [corrupt((b) => (b.sessions[1].events[0].type = 7)), 'needs a type'],
    [corrupt((b) => b.sessions.push(b.sessions[1])), 'appears twice'],
    [corrupt((b) => b.sessions.push({ id: 'stranger', events: [] })), 'session "stranger" is not in the tree'],
    [corrupt((b) => b.sessions.reverse()), 'the first session must be the root'],
    [corrupt((b) => (b.sessions = [])), 'sessions must be a non-empty array'],
  ];
  for (const [bad, text] of cases) {
    const target = new MemoryStore();
    await assert.rejects(importTree(target, bad), (e) => e instanceof TestingError && e.code === 'INVALID_BUNDLE' && e.message.includes(text), text);
    for (const s of bundle.sessions) assert.equal(await target.read(s.id, {}), null, `nothing written for: ${text}`);
  }
  // A store that fails mid-import: the descendants went first, the root was never written.
  const writes = [];
  const flaky = {
    read: async () => null,
    append: async (id) => {
      if (writes.length === 2) throw new Error('disk full');
      writes.push(id);
    },
  };
  await assert.rejects(importTree(flaky, bundle), (e) => e.code === 'IMPORT_FAILED' && e.message.includes('after 2 of 4 logs') && e.cause.message === 'disk full');
  assert.ok(!writes.includes(bundle.rootId));
  await assert.rejects(exportTree(new MemoryStore(), 'nobody'), (e) => e.code === 'INVALID_ARGUMENT');
});

/** Records `script` over a fresh runtime (seeded), settles it, and returns the cassette and the recorded tree's log. */
async function record(script, options) {
  const host = recordingHost(scriptedHost(script));
  const out = await runOnce(host, options);
  return { ...out, cassette: host.cassette(), records: host.records };
}

/** One run of `host` from a prompt to the lead, settled; `live` gets the runtime and the lead as soon as they exist. */
async function runOnce(host, { seed = 'interrupts', prompt = 'go', maxDepth = 1, live = {} } = {}) {
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host, maxDepth, now: virtualClock().now, newId: seededIds(seed) });
  const lead = await runtime.openRoot();
  Object.assign(live, { runtime, lead });
  await runtime.prompt(lead, 'lead', prompt);
  const failure = await settle(runtime, lead, { hosts: [host] }).then(() => undefined, (e) => e);
  return { runtime, store, lead, failure, log: await treeLogText(store, lead.sessionId), snapshot: await snapshotTree(runtime, store, lead) };
}

/** An `onTurn` that interrupts `who` as its turn starts (the hosts call it with the turn's signal live). */
const interrupting = (who, live) => ({ name }) => name === who && assert.equal(live.runtime.interrupt(who, { kind: 'user', root: live.lead }).signalled, true);

/** The lead starts a worker, hears from it, and stops it with interrupt_agent; the worker works until stopped. */
const interruptScript = () => ({
  lead: [
    {
      steps: [
        { call: 'spawn_agent', input: { name: 'worker', description: 'Work', prompt: 'Work until stopped.' } },
        { waitForMessage: 'working' },
        { call: 'interrupt_agent', input: { agent: 'worker' }, expectError: false },
      ],
      reply: 'stopped the worker',
    },
    { expectInput: /worker was stopped/, reply: 'lead saw the worker stop' },
  ],
  worker: [{ steps: [{ call: 'send_message', input: { agent: 'lead', message: 'working' } }, { waitForAbort: true }] }],
});

const INTERRUPT_GOLDEN = `lead [root] completed "lead saw the worker stop"
  worker (Work) [continuable, inactive] aborted ""
`;

test('an interrupted turn replays faithfully: the cassette records where the signal aborted, and the replayed turn waits for the same interrupt', async () => {
  const rec = await record(interruptScript());
  assert.equal(rec.failure, undefined, rec.failure?.stack);
  assert.equal(rec.snapshot, INTERRUPT_GOLDEN);
  assert.equal(CASSETTE_VERSION, 2);
  const worker = rec.records.find((r) => r.name === 'worker');
  assert.deepEqual(worker.steps.map((s) => s.call ?? Object.keys(s)[0]), ['send_message', 'aborted']);
  assert.deepEqual(worker.steps[1], { aborted: true });
  assert.equal(worker.outcome.stopReason, 'aborted');
  assert.ok(rec.cassette.includes('{"aborted":true}'));

  const replays = [];
  for (let i = 0; i < 2; i++) {
    const replay = await runOnce(replayHost(rec.cassette));
    assert.equal(replay.failure, undefined, replay.failure?.message);
    assert.equal(replay.snapshot, INTERRUPT_GOLDEN);
    replays.push(replay.log);
  }
  assert.equal(replays[0], replays[1], 'two replays write byte-identical logs');

  // The interrupt does not come in the replay (the lead's interrupt_agent call is cut from the
  // cassette): the worker's wait ends when the rest of the tree is quiet, as drift, not a hang.
  const lead1 = JSON.stringify(rec.records.find((r) => r.name === 'lead' && r.turn === 1));
  const cut = JSON.parse(lead1);
  cut.steps = cut.steps.filter((s) => s.call !== 'interrupt_agent');
  const noInterrupt = await runOnce(replayHost(rec.cassette.replace(lead1, JSON.stringify(cut))));
  assert.equal(noInterrupt.failure?.code, 'REPLAY_DRIFT');
  assert.equal(noInterrupt.failure.message, "replay drift at worker turn 1: steps[1]: recorded an interrupt (the turn's signal aborted), but the tree went quiet without it");

  // An interrupt the recording did not have is drift too: record the worker finishing, then stop it
  // as its replayed turn starts.
  const calm = interruptScript();
  calm.lead = [{ steps: [{ call: 'spawn_agent', input: { name: 'worker', description: 'Work', prompt: 'Work until stopped.' } }], reply: 'delegated' }, 'lead heard'];
  calm.worker = ['work done'];
  const calmRec = await record(calm);
  assert.equal(calmRec.failure, undefined, calmRec.failure?.stack);
  const live = {};
  const stopped = await runOnce(replayHost(calmRec.cassette, { onTurn: interrupting('worker', live) }), { live });
  assert.equal(stopped.failure?.code, 'REPLAY_DRIFT', String(stopped.failure));
  assert.equal(stopped.failure.message, 'replay drift at worker turn 1: the turn was interrupted (its signal aborted), but the recorded turn was not');
});

test('an interrupt from outside the tree replays when the test interrupts at the same named point (the turn\'s start)', async () => {
  const script = {
    lead: [{ steps: [{ call: 'spawn_agent', input: { name: 'worker', description: 'Work', prompt: 'Work until stopped.' } }], reply: 'delegated' }, { expectInput: /worker was stopped/, reply: 'lead saw the worker stop' }],
    worker: [{ steps: [{ waitForAbort: true }] }],
  };
  const live = {};
  const host = recordingHost(scriptedHost(script, { onTurn: interrupting('worker', live) }));
  const rec = await runOnce(host, { live });
  assert.equal(rec.failure, undefined, rec.failure?.stack);
  assert.equal(rec.snapshot, INTERRUPT_GOLDEN);
  assert.deepEqual(host.records.find((r) => r.name === 'worker').steps, [{ aborted: true }]);
  const logs = [];
  for (let i = 0; i < 2; i++) {
    const at = {};
    const replay = await runOnce(replayHost(host.cassette(), { onTurn: interrupting('worker', at) }), { live: at });
    assert.equal(replay.failure, undefined, replay.failure?.message);
    assert.equal(replay.snapshot, INTERRUPT_GOLDEN);
    logs.push(replay.log);
  }
  assert.equal(logs[0], logs[1]);
  // Without the interrupt, the scripted waitForAbort and the replayed turn both end when the rest of the tree is quiet.
  const scripted = await runOnce(scriptedHost(script));
  assert.equal(scripted.failure?.code, 'SCRIPT_MISMATCH');
  assert.equal(scripted.failure.message, 'worker turn 1 step 0 waits for an interrupt, but the tree went quiet without it');
  const replayed = await runOnce(replayHost(host.cassette()));
  assert.equal(replayed.failure?.code, 'REPLAY_DRIFT');
  assert.equal(replayed.failure.message, "replay drift at worker turn 1: steps[0]: recorded an interrupt (the turn's signal aborted), but the tree went quiet without it");
});

test('a recorded steered message that never comes is drift once the rest of the tree is quiet, never a hang', async () => {
  let recorder;
  const recorded = await runRelease((onChecker) => (recorder = recordingHost(scriptedHost(releaseScript(onChecker, { interrupted: false })))), { interrupt: false });
  await settle(recorded.runtime, recorded.lead);
  // The writer's send_message is cut from the cassette: the reviewer's recorded steer cannot arrive.
  const writer = recorder.records.find((r) => r.name === 'writer');
  const silent = recorder.cassette().replace(JSON.stringify(writer), JSON.stringify({ ...writer, steps: [] }));
  const replay = await runOnce(replayHost(silent), { seed: 'release', prompt: 'Ship the release.', maxDepth: 2 });
  assert.equal(replay.failure?.code, 'REPLAY_DRIFT');
  assert.match(replay.failure.message, /^replay drift at reviewer turn 1: steps\[1\]\.steered\[0\]: recorded "Message from agent writer .*", now nothing \(the tree went quiet without it\)$/);
  // The same for a scripted wait: the member, the turn, the step and why.
  const script = releaseScript(() => {}, { interrupted: false });
  script.writer = ['notes written'];
  const scripted = await runOnce(scriptedHost(script), { seed: 'release', prompt: 'Ship the release.', maxDepth: 2 });
  assert.equal(scripted.failure?.code, 'SCRIPT_MISMATCH');
  assert.equal(scripted.failure.message, 'reviewer turn 1 step 1 waits for a message matching "notes are ready", but the tree went quiet without it');
  // Version 1 cassettes still replay; an {aborted} step needs version 2.
  const v1 = recorder.cassette().replace('"version":2', '"version":1');
  const again = await runOnce(replayHost(v1), { seed: 'release', prompt: 'Ship the release.', maxDepth: 2 });
  assert.equal(again.failure, undefined, again.failure?.message);
  assert.throws(() => parseCassette('{"format":"subagent-tree/cassette","version":1}\n{"name":"lead","turn":1,"inputText":[],"steps":[{"aborted":true}],"outcome":null}\n'),
    (e) => e.code === 'INVALID_CASSETTE' && e.message.endsWith('needs steps of {call, input, result}, {steered}'));
});
