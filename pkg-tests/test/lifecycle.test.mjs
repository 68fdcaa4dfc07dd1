// The lifecycle as a JS host sees it: settlement child-first, interrupt
// receipts, reopen holds, ask, quiescence, provider events, and crash recovery
// for real (a Node process killed with SIGKILL mid-turn over FileStore).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { FileStore } from 'subagent-tree/file-store';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Resolves once `check()` holds, polling the event loop (a test helper, not a wait in the library). */
async function until(check) {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  assert.ok(check(), 'the condition never held');
}

/** A host that records every turn; turns of `held` names wait until released or aborted. */
function recordingHost() {
  const turns = [];
  const gates = new Map();
  return {
    turns,
    hold(name) {
      let open;
      gates.set(name, new Promise((resolve) => (open = resolve)));
      return () => {
        gates.delete(name);
        open();
      };
    },
    async runTurn(turn) {
      turns.push({ name: turn.name, input: turn.input.map((m) => m.text), guidance: turn.guidance });
      const gate = gates.get(turn.name);
      if (gate) {
        const aborted = new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
        await Promise.race([gate, aborted]);
        if (turn.signal.aborted) return { stopReason: 'aborted' };
      }
      return { messages: [`done by ${turn.name}`] };
    },
  };
}

test('interrupt returns a receipt; a member with nothing parked settles as aborted and its creator is told', async () => {
  const host = recordingHost();
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2 });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  host.hold('worker');
  const worker = await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'worker', label: 'w', prompt: 'work' });
  // (Interrupted before its host saw the turn, the input would stay pending, parked.)
  await until(() => host.turns.some((t) => t.name === 'worker'));
  const receipt = runtime.interrupt('worker', { kind: 'user', root: lead });
  assert.deepEqual(receipt, { signalled: true });
  assert.ok(Object.isFrozen(receipt));
  assert.deepEqual(runtime.interrupt(worker.childId, { kind: 'user' }), { signalled: false }, 'already signalled');
  assert.equal((await worker.result).stopReason, 'aborted');
  await runtime.waitForQuiescence(lead);
  assert.ok(host.turns.some((t) => t.name === 'lead' && t.input[0].startsWith('Subagent worker was stopped before it finished.')));
  assert.equal(runtime.isResident(lead, worker.childId), false);
  assert.deepEqual(runtime.interrupt('worker', { kind: 'user', root: lead }), { signalled: false }, 'a cold member: a no-op');
  assert.throws(() => runtime.interrupt('lead', { kind: 'user' }), (e) => e.code === 'INVALID_ARGUMENT');
});

test('reopen holds a cold member resident without a turn; spawning under it and releasing it', async () => {
  const host = recordingHost();
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2 });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'reviewer', label: 'r', prompt: 'review' });
  await runtime.waitForQuiescence(lead);
  const before = host.turns.length;
  const held = await runtime.reopen(lead, 'reviewer');
  assert.ok(held.agent.live && held.agent.name === 'reviewer');
  assert.equal(host.turns.length, before, 'no turn ran');
  // A refused spawn costs nothing: no model turn, no write.
  await assert.rejects(runtime.startActivation({ provider: 'spawn', parent: held.agent, name: 'Bad Name', label: 'x', prompt: 'y' }), (e) => e.code === 'INVALID_NAME');
  const checker = await runtime.startActivation({ provider: 'spawn', parent: held.agent, name: 'checker', label: 'c', prompt: 'check' });
  assert.equal(checker.name, 'reviewer/checker');
  held.release();
  held.release(); // idempotent
  await runtime.waitForQuiescence(lead);
  assert.equal(runtime.isResident(lead, held.agent.sessionId), false, 'released and done: settled');
  assert.ok(host.turns.some((t) => t.name === 'reviewer' && t.input[0].startsWith('Subagent reviewer/checker finished.')));
  await assert.rejects(runtime.reopen(lead, 'reviewer/nobody'), (e) => e.code === 'UNKNOWN_AGENT');
  const root = await runtime.reopen(lead, 'lead');
  assert.equal(root.agent.sessionId, lead.sessionId);
  assert.equal(runtime.namesOf(root.agent).self, 'lead');
  root.release();
});

test('ask resolves with the answering turn; waitForQuiescence waits for the root turn too', async () => {
  const host = recordingHost();
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const open = host.hold('lead');
  const { messageId, answer } = await runtime.ask(lead, 'lead', 'plan it');
  assert.equal(typeof messageId, 'string');
  let quiet = false;
  const waiting = runtime.waitForQuiescence(lead).then(() => (quiet = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(quiet, false, 'the root turn is still running');
  assert.equal(await runtime.waitForTreeWork(lead), false, 'member work alone: nothing to join');
  open();
  await waiting;
  assert.deepEqual((await answer).output, [{ type: 'text', text: 'done by lead' }]);
  const aborted = new AbortController();
  const never = host.hold('lead');
  await runtime.prompt(lead, 'lead', 'again');
  const wait = runtime.waitForQuiescence(lead, { signal: aborted.signal });
  aborted.abort();
  await assert.rejects(wait, (e) => e.code === 'CANCELLED');
  never();
  await runtime.waitForQuiescence(lead);
});

test('a tool call made during a turn stops with that turn: an interrupted delegation gives its name back', async () => {
  let handOver;
  const handedOver = new Promise((resolve) => (handOver = resolve));
  const host = {
    async runTurn(turn) {
      if (turn.name !== 'lead') return { messages: ['done'] };
      // The call is not given the turn's signal: the runtime ties it to the turn anyway.
      const call = turn.tools.find((t) => t.name === 'stuck_agent').call({ description: 'stuck', prompt: 'go', name: 'worker' });
      handOver({ call });
      await new Promise((resolve) => turn.signal.addEventListener('abort', resolve, { once: true }));
      return { stopReason: 'aborted' };
    },
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2 });
  let starts = 0;
  runtime.registerProvider({ name: 'stuck', capabilities: {}, inheritsParentContext: false, start: () => { starts++; return new Promise(() => {}); } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  await runtime.prompt(lead, 'root', 'delegate the stuck work');
  const { call } = await handedOver;
  const taken = await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'worker', label: 'w', prompt: 'x' }).then(
    () => null,
    (e) => e.code,
  );
  assert.equal(taken, 'DUPLICATE_NAME', 'the delegation in flight holds its name');
  assert.deepEqual(runtime.interrupt('root', { kind: 'user' }), { signalled: true });
  const result = await call;
  assert.equal(result.isError, true);
  assert.match(result.content, /cancel/i);
  assert.equal(starts, 1, 'the provider was asked once and never answered');
  const again = await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'worker', label: 'w', prompt: 'x' });
  assert.equal(again.name, 'worker', 'the name was given back');
});

test('subagent/provider-added carries the provider object', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: recordingHost(), builtinProviders: false });
  const added = [];
  runtime.on('subagent/provider-added', (p) => added.push(p));
  const provider = { name: 'ext', capabilities: {}, inheritsParentContext: false, start: () => ({ id: 'x', result: { output: [], stopReason: 'completed' }, dispose() {} }) };
  const remove = runtime.registerProvider(provider);
  assert.equal(added[0], provider);
  remove();
});

// ---- crash recovery, for real -------------------------------------------------------

const CHILD = `
import { SubagentRuntime } from 'subagent-tree';
import { FileStore } from 'subagent-tree/file-store';
const store = await FileStore.open(process.argv[2], { fsync: 'append' });
const host = {
  async runTurn(turn) {
    if (turn.name === 'worker') {
      process.stdout.write('turn-started\\n'); // its turn/start is durable: the parent kills us now
      await new Promise(() => {});
    }
    return { messages: ['ok'] };
  },
};
const runtime = new SubagentRuntime({ store, host, maxDepth: 2 });
const lead = await runtime.openRoot({ sessionId: 'root' });
await runtime.startActivation({ provider: 'spawn', parent: lead, name: 'worker', label: 'w', prompt: 'the long job' });
setInterval(() => {}, 1000);
`;

async function crashMidTurn(dir) {
  const script = path.join(here, '..', `.crash-child-${process.pid}.mjs`);
  await writeFile(script, CHILD);
  try {
    const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (d) => String(d).includes('turn-started') && resolve());
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) before its turn started`)));
    });
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal)));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
  } finally {
    await rm(script, { force: true });
  }
}

for (const recovery of ['report', 'rerun']) {
  test(`a process killed mid-turn (SIGKILL) over FileStore: reopening ${recovery}s the lost turn`, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'subagent-crash-'));
    try {
      await crashMidTurn(dir);
      const store = await FileStore.open(dir);
      const host = recordingHost();
      const runtime = new SubagentRuntime({ store, host, maxDepth: 2, recovery });
      const lead = await runtime.openRoot({ sessionId: 'root' });
      await runtime.waitForQuiescence(lead);
      const [row] = await runtime.listDescendants('root');
      assert.equal(row.path, 'worker');
      const events = await store.read(row.id, { types: ['turn/start', 'turn/end'] });
      const ends = events.filter((e) => e.type === 'turn/end');
      assert.equal(ends[0].payload.stopReason, 'error');
      assert.match(ends[0].payload.diagnostic, /host stopped during this turn/);
      const workerTurns = host.turns.filter((t) => t.name === 'worker');
      if (recovery === 'report') {
        assert.deepEqual(ends[0].payload.consumed.length, 1, 'its input is answered by the failure');
        assert.equal(workerTurns.length, 0, 'not run again');
        const notice = host.turns.find((t) => t.name === 'lead');
        assert.match(notice.input[0], /^Subagent worker failed\.[\s\S]*host stopped during this turn/);
      } else {
        assert.deepEqual(ends[0].payload.consumed, [], 'its input stays pending');
        assert.deepEqual(workerTurns.map((t) => t.input), [['the long job']], 'run again at open, with no message');
        assert.equal(ends.at(-1).payload.stopReason, 'completed');
      }
      await runtime.closeRoot(lead);
      await store.close?.();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
