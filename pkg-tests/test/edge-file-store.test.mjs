// FileStore (Node): one append-only JSON-lines log per session; the store
// contract, torn tails after a crash ignored and reported, damage refused,
// reopen, serialized concurrent appends, a writer killed mid-append, and a
// live runtime restarted over the same directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, readFile, appendFile, writeFile, readdir } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { SubagentRuntime, SubagentError, listDescendants } from 'subagent-tree';
import { FileStore, fileNameFor } from 'subagent-tree/file-store';
import { until } from './edge-helpers.mjs';

const cat = (seq, childId, name) => ({ seq, type: 'subagent/catalog', payload: { version: 3, childId, childCreatedAt: 1, mode: 'continuable', label: 'L', name } });
const note = (seq, text = 'x') => ({ seq, type: 'message/user', payload: { text } });

async function tempDir(t) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'file-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function code(promise) {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof SubagentError, `not a SubagentError: ${e}`);
    return e.code;
  }
}

test('the store contract over files', async (t) => {
  const dir = await tempDir(t);
  const store = await FileStore.open(dir);
  assert.equal(await store.read('s', {}), null);
  assert.equal(await store.length('s'), null);
  await store.append('empty', []);
  assert.deepEqual(await store.read('empty', {}), []);
  await store.append('s', [note(0, 'a'), cat(1, 'c1', 'one'), note(2, 'b\nwith newline')]);
  await store.append('s', [cat(3, 'c2', 'two')]);
  const all = await store.read('s', {});
  assert.deepEqual(all.map((e) => e.seq), [0, 1, 2, 3]);
  assert.deepEqual(all[1], cat(1, 'c1', 'one'));
  assert.equal(all[2].payload.text, 'b\nwith newline');
  assert.deepEqual((await store.read('s', { types: ['subagent/catalog'] })).map((e) => e.seq), [1, 3]);
  assert.deepEqual((await store.read('s', { types: ['message/user'] })).map((e) => e.seq), [0, 2]);
  assert.deepEqual((await store.read('s', { fromSeq: 2 })).map((e) => e.seq), [2, 3]);
  assert.deepEqual((await store.read('s', { types: ['subagent/catalog'], fromSeq: 2 })).map((e) => e.seq), [3]);
  // Reads are copies.
  (await store.read('s', { types: ['subagent/catalog'] }))[0].payload.name = 'mutated';
  assert.equal((await store.read('s', { types: ['subagent/catalog'] }))[0].payload.name, 'one');
  assert.equal(await code(store.append('s', [note(2)])), 'APPEND_CONFLICT');
  assert.equal(await code(store.append('s', [note(5)])), 'APPEND_CONFLICT');
  assert.equal(await code(store.append('s', [note(4), note(6)])), 'APPEND_CONFLICT');
  assert.equal(await code(store.append('s', 'x')), 'INVALID_ARGUMENT');
  assert.equal(await code(store.append('s', [{ seq: 4 }])), 'INVALID_ARGUMENT');
  assert.equal(await code(store.read('', {})), 'INVALID_ARGUMENT');
  assert.equal(await code(store.read('s', { signal: AbortSignal.abort() })), 'CANCELLED');
  assert.equal(await store.length('s'), 4);
  const many = await store.readMany(['s', 'nope', 'empty'], { types: ['subagent/catalog'] });
  assert.deepEqual(many.map((m) => m && m.map((e) => e.seq)), [[1, 3], null, []]);
  assert.equal(await store.flush('s'), true);
  // Any id is a safe file name; long ids are hashed and still listed.
  const odd = ['../../etc/passwd', 'ünï/cødé:*?', 'x'.repeat(300)];
  for (const id of odd) await store.append(id, [note(0, id)]);
  for (const id of odd) assert.equal((await store.read(id, {}))[0].payload.text, id);
  assert.equal(fileNameFor('x'.repeat(300)).startsWith('h-'), true);
  assert.deepEqual(await store.sessionIds(), ['empty', 's', ...odd].sort());
  const files = (await readdir(dir)).filter((f) => f !== '.lock'); // the owner's lock file
  assert.ok(files.every((f) => /^([0-9a-f]+|h-[0-9a-f]{64})\.jsonl$/.test(f)), files.join());
  // The log is JSON lines: a header, then one event per line.
  const lines = (await readFile(path.join(dir, fileNameFor('s')), 'utf8')).split('\n');
  assert.deepEqual(JSON.parse(lines[0]), { subagentTree: 2, sessionId: 's' });
  assert.deepEqual(JSON.parse(lines[2]), cat(1, 'c1', 'one'));
  assert.deepEqual(JSON.parse(lines[3]), { ...note(2, 'b\nwith newline'), commit: true }, 'the last record of a batch carries its commit mark');
  assert.equal(lines.at(-1), '');
  // Reopen: lengths and contents rebuilt from the files.
  const again = await FileStore.open(dir, { fsync: 'append' });
  assert.equal(await again.length('s'), 4);
  await again.append('s', [note(4)]);
  assert.equal((await again.read('s', {})).length, 5);
  assert.deepEqual(again.diagnostics, []);
  await assert.rejects(FileStore.open(dir, { fsync: 'never' }), (e) => e.code === 'INVALID_ARGUMENT');
});

test('a torn last record is ignored, reported, and cut off by the next append', async (t) => {
  const dir = await tempDir(t);
  const first = await FileStore.open(dir);
  await first.append('s', [note(0, 'a'), cat(1, 'k', 'kid'), note(2, 'c')]);
  await first.flush('s');
  const file = path.join(dir, fileNameFor('s'));
  const good = (await readFile(file)).length;
  const torn = '{"seq":3,"type":"message/user","payload":{"te';
  await appendFile(file, torn); // the crash
  const reports = [];
  const store = await FileStore.open(dir, { onCorruptTail: (info) => reports.push(info) });
  const events = await store.read('s', {});
  assert.deepEqual(events.map((e) => e.payload.text ?? e.payload.name), ['a', 'kid', 'c']);
  assert.deepEqual(reports, [{ sessionId: 's', file, offset: good, droppedBytes: Buffer.byteLength(torn), reason: 'an incomplete last line' }]);
  assert.deepEqual(store.diagnostics, reports);
  assert.equal(await store.length('s'), 3);
  // Listing reads the catalog through the same scan.
  assert.equal((await store.read('s', { types: ['subagent/catalog'] })).length, 1);
  await store.append('s', [note(3, 'after the crash')]);
  const reopened = await FileStore.open(dir, { onCorruptTail: () => assert.fail('no torn tail any more') });
  assert.deepEqual((await reopened.read('s', {})).map((e) => e.seq), [0, 1, 2, 3]);
  assert.equal((await reopened.read('s', {}))[3].payload.text, 'after the crash');
  assert.equal(reports.length, 1, 'reported once');

  // A complete but garbled last line (zeros after a power loss) is a torn tail too.
  await appendFile(file, '\0\0\0\0\n');
  const zeros = await FileStore.open(dir);
  assert.equal(await zeros.length('s'), 4);
  assert.equal(zeros.diagnostics[0].reason, 'a line that is not JSON');
  await zeros.append('s', [note(4)]);
  assert.equal((await (await FileStore.open(dir)).read('s', {})).length, 5);

  // A crash while the header was written: the session does not exist yet.
  await writeFile(path.join(dir, fileNameFor('new')), '{"subagentTr');
  const fresh = await FileStore.open(dir);
  assert.equal(await fresh.read('new', {}), null);
  assert.equal(fresh.diagnostics[0].reason, 'an incomplete header');
  await fresh.append('new', [note(0)]);
  assert.deepEqual((await (await FileStore.open(dir)).read('new', {})).map((e) => e.seq), [0]);
});

test('damage before good records is refused, not skipped; listing shows the branch as unavailable', async (t) => {
  const dir = await tempDir(t);
  const store = await FileStore.open(dir);
  await store.append('root', [cat(0, 'a', 'alpha'), cat(1, 'b', 'beta')]);
  await store.append('a', [note(0), note(1), note(2)]);
  await store.append('b', []);
  const file = path.join(dir, fileNameFor('a'));
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines[2] = '{"seq": 1, "type": "message/user", "payl'; // a torn line in the middle
  await writeFile(file, lines.join('\n'));
  const reopened = await FileStore.open(dir);
  assert.equal(await code(reopened.read('a', {})), 'PERSISTENCE_UNAVAILABLE');
  const rows = await listDescendants(reopened, 'root');
  assert.deepEqual(rows.map((r) => (r.kind === 'child' ? r.path : `${r.id}!${r.reason}`)), ['a!unavailable', 'beta']);
  // A file that belongs to another session is refused too.
  await writeFile(path.join(dir, fileNameFor('c')), `${JSON.stringify({ subagentTree: 1, sessionId: 'someone-else' })}\n`);
  assert.equal(await code(reopened.read('c', {})), 'PERSISTENCE_UNAVAILABLE');
  assert.equal(await code(reopened.append('c', [note(0)])), 'PERSISTENCE_UNAVAILABLE');
});

test('concurrent appends to one log are serialized in call order; a raced seq conflicts', async (t) => {
  const dir = await tempDir(t);
  const store = await FileStore.open(dir);
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => code(store.append('s', [note(i, String(i))]))));
  assert.ok(results.every((r) => r === 'ok'));
  const other = await Promise.all(Array.from({ length: 20 }, (_, i) => code(store.append(`t${i % 4}`, [note(Math.floor(i / 4))]))));
  assert.ok(other.every((r) => r === 'ok'));
  const raced = await Promise.all([code(store.append('s', [note(100, 'x')])), code(store.append('s', [note(100, 'y')]))]);
  assert.deepEqual(raced, ['ok', 'APPEND_CONFLICT']);
  const back = await (await FileStore.open(dir)).read('s', {});
  assert.deepEqual(back.map((e) => e.payload.text), [...Array.from({ length: 100 }, (_, i) => String(i)), 'x']);
  for (let k = 0; k < 4; k++) assert.equal(await store.length(`t${k}`), 5);
});

test('a writer killed mid-append leaves a log that reopens and continues', async (t) => {
  const dir = await tempDir(t);
  const require = createRequire(import.meta.url);
  const storeUrl = new URL(`file://${require.resolve('subagent-tree/file-store')}`).href;
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    const { FileStore } = await import(${JSON.stringify(storeUrl)});
    const store = await FileStore.open(${JSON.stringify(dir)});
    const big = 'y'.repeat(200000);
    for (let i = 0; ; i++) {
      await store.append('s', [{ seq: i, type: 'message/user', payload: { i, big } }]);
      if (i === 3) process.stdout.write('ready\\n');
    }
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  await new Promise((r) => setTimeout(r, 30));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const reports = [];
  const store = await FileStore.open(dir, { onCorruptTail: (i) => reports.push(i) });
  const n = await store.length('s');
  assert.ok(n >= 4, `at least the acknowledged records survive (${n})`);
  const events = await store.read('s', {});
  assert.deepEqual(events.map((e) => e.payload.i), Array.from({ length: n }, (_, i) => i));
  assert.ok(reports.length <= 1);
  await store.append('s', [note(n, 'resumed')]);
  const again = await FileStore.open(dir);
  assert.equal(await again.length('s'), n + 1);
  assert.deepEqual(again.diagnostics, []);
});

test('a live runtime over a FileStore restarts with the same names; a cold member resumes', async (t) => {
  const dir = await tempDir(t);
  const turns = [];
  let open;
  const gate = new Promise((r) => (open = r));
  const host = {
    async runTurn(turn) {
      turns.push(turn.name);
      if (turn.name === 'reviewer' && turn.first) await gate; // keeps reviewer live while its child starts
      return { stopReason: 'completed', messages: [`done by ${turn.name}`] };
    },
  };
  const store = await FileStore.open(dir);
  const rt1 = new SubagentRuntime({ store, host, maxDepth: 3 });
  const root1 = await rt1.openRoot({ sessionId: 'root' });
  const a = await rt1.startActivation({ provider: 'spawn', parent: root1, label: 'Review', prompt: 'p', name: 'reviewer' });
  const b = await rt1.startActivation({ provider: 'spawn', parent: a.agent, label: 'Check', prompt: 'p', name: 'checker' });
  open();
  await b.result;
  await a.result;
  await store.flush('root');
  const store2 = await FileStore.open(dir);
  const rt2 = new SubagentRuntime({ store: store2, host, maxDepth: 3 });
  const root2 = await rt2.openRoot({ sessionId: 'root' });
  assert.deepEqual((await rt2.listDescendants('root', {})).map((r) => r.path), ['reviewer', 'reviewer/checker']);
  assert.deepEqual((await listDescendants(store2, 'root')).map((r) => r.path), ['reviewer', 'reviewer/checker']);
  turns.length = 0;
  await rt2.sendMessage(root2, b.childId, 'one more');
  await until(() => turns.includes('reviewer/checker'), 'the cold member to resume');
  await until(async () => (await store2.read(b.childId, { types: ['turn/end'] })).length === 2, 'its turn to be recorded');
});

test('appends are atomic: a batch torn at every byte offset of its last record is dropped whole', async (t) => {
  const dir = await tempDir(t);
  const store = await FileStore.open(dir);
  await store.append('s', [note(0, 'kept'), cat(1, 'old', 'old')]);
  // A fork's first batch: the inherited catalog copied in one append.
  await store.append('fork', [cat(0, 'p1', 'one'), cat(1, 'p2', 'two'), { seq: 2, type: 'session/start', payload: { inheritedEventCount: 2 } }]);
  await store.append('s', [cat(2, 'a', 'alpha'), note(3, 'é'.repeat(40)), cat(4, 'b', 'beta')]);
  await store.close();
  const files = { s: path.join(dir, fileNameFor('s')), fork: path.join(dir, fileNameFor('fork')) };
  const whole = { s: await readFile(files.s), fork: await readFile(files.fork) };
  const lastRecord = (buf) => buf.lastIndexOf(10, buf.length - 2) + 1; // the start of the last line
  for (const [id, expected] of [['s', 2], ['fork', 0]]) {
    const buf = whole[id];
    const from = lastRecord(buf);
    assert.ok(buf.length - from > 20);
    for (let cut = from; cut < buf.length; cut++) {
      await writeFile(files[id], buf.subarray(0, cut));
      const reports = [];
      const reopened = await FileStore.open(dir, { onCorruptTail: (i) => reports.push(i) });
      assert.equal(await reopened.length(id), expected, `${id} cut at byte ${cut}: the whole batch is gone`);
      const events = await reopened.read(id, {});
      assert.deepEqual(events.map((e) => e.seq), Array.from({ length: expected }, (_, i) => i));
      assert.equal(reports.length, 1, `${id} cut at ${cut}: reported`);
      assert.equal((await reopened.read(id, { types: ['subagent/catalog'] })).length, id === 's' ? 1 : 0);
      await reopened.close();
    }
    // The next append cuts the torn batch off and continues.
    await writeFile(files[id], buf.subarray(0, buf.length - 3));
    const again = await FileStore.open(dir);
    await again.append(id, [note(expected, 'after')]);
    await again.close();
    const final = await FileStore.open(dir, { onCorruptTail: () => assert.fail('no torn tail any more') });
    assert.equal(await final.length(id), expected + 1);
    await final.close();
  }
  // A version-1 log (each line its own record) is still read, and rewritten as version 2 on its next append.
  const v1 = path.join(dir, fileNameFor('old'));
  await writeFile(v1, `${JSON.stringify({ subagentTree: 1, sessionId: 'old' })}\n${JSON.stringify(note(0, 'a'))}\n${JSON.stringify(note(1, 'b'))}\n`);
  const legacy = await FileStore.open(dir);
  assert.equal(await legacy.length('old'), 2);
  await legacy.append('old', [note(2, 'c'), note(3, 'd')]);
  await legacy.close();
  const text = await readFile(v1, 'utf8');
  assert.equal(JSON.parse(text.split('\n')[0]).subagentTree, 2);
  assert.deepEqual((await (await FileStore.open(dir)).read('old', {})).map((e) => e.payload.text), ['a', 'b', 'c', 'd']);
});

test('ids with lone surrogates are refused, so two of them never alias one file', async (t) => {
  const dir = await tempDir(t);
  const store = await FileStore.open(dir);
  assert.equal(await code(store.append('v-\uD800', [note(0, 'one')])), 'INVALID_ARGUMENT');
  assert.equal(await code(store.append('v-\uDC00', [note(0, 'two')])), 'INVALID_ARGUMENT');
  assert.equal(await code(store.read('v-\uDC00', {})), 'INVALID_ARGUMENT');
  await store.append('v-\uD83D\uDE00', [note(0, 'pair')]);
  assert.deepEqual((await store.read('v-😀', {})).map((e) => e.payload.text), ['pair']);
  assert.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.jsonl')).length, 1);
});

test('one owner per directory: another live process is refused, a dead one is taken over, a newer FileStore here takes over', async (t) => {
  const dir = await tempDir(t);
  const require = createRequire(import.meta.url);
  const storeUrl = new URL(`file://${require.resolve('subagent-tree/file-store')}`).href;
  const holder = spawn(process.execPath, ['--input-type=module', '-e', `
    const { FileStore } = await import(${JSON.stringify(storeUrl)});
    const store = await FileStore.open(${JSON.stringify(dir)});
    await store.append('s', [{ seq: 0, type: 'message/user', payload: { text: 'child' } }]);
    process.stdout.write('ready\\n');
    setInterval(() => {}, 1000);
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => holder.kill('SIGKILL'));
  await new Promise((resolve) => holder.stdout.once('data', resolve));
  const refused = await FileStore.open(dir).then(() => null, (e) => e);
  assert.equal(refused?.code, 'PERSISTENCE_UNAVAILABLE');
  assert.match(refused.message, new RegExp(`in use by process ${holder.pid}`));
  holder.kill('SIGKILL');
  await new Promise((resolve) => holder.once('exit', resolve));
  // The holder died without releasing: its lock is stale and is taken over.
  const first = await FileStore.open(dir);
  assert.equal(await first.length('s'), 1);
  await first.append('s', [note(1)]);
  // Within this process, a newer FileStore takes over (after the old one's appends); the old one refuses appends.
  const pending = first.append('s', [note(2)]);
  const second = await FileStore.open(dir);
  assert.equal(await code(pending), 'ok');
  assert.equal(await second.length('s'), 3);
  assert.equal(await code(first.append('s', [note(3)])), 'PERSISTENCE_UNAVAILABLE');
  await second.append('s', [note(3)]);
  await second.close();
  assert.equal(await code(second.append('s', [note(4)])), 'PERSISTENCE_UNAVAILABLE');
  assert.ok(!(await readdir(dir)).includes('.lock'), 'close released the lock');
  const third = await FileStore.open(dir);
  assert.equal(await third.length('s'), 4);
  await third.close();
});

test('repair keeps what is whole: a bad line in the middle costs its own record, and a lost catalog entry is named', async (t) => {
  const dir = await tempDir(t);
  const store = await FileStore.open(dir);
  // One append per event, as the runtime writes them: each its own committed batch.
  await store.append('root', [note(0, 'the root began')]);
  const names = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
  for (const [i, name] of names.entries()) {
    await store.append('root', [cat(i + 1, `c${i + 1}`, name)]);
    await store.append(`c${i + 1}`, [note(0)]);
  }
  await store.append('root', [note(6, 'after them')]);
  await store.close();
  const file = path.join(dir, fileNameFor('root'));
  const lines = (await readFile(file, 'utf8')).split('\n');
  // One flipped byte in line 2 (the root's first record), and one in gamma's catalog entry.
  lines[1] = lines[1].replace('"type":', '"type";');
  lines[4] = lines[4].replace('"type":', '"type";');
  const damagedBytes = Buffer.byteLength(lines[1]) + 1 + Buffer.byteLength(lines[4]) + 1;
  await writeFile(file, lines.join('\n'));

  const reopened = await FileStore.open(dir);
  assert.equal(await code(reopened.read('root', {})), 'PERSISTENCE_UNAVAILABLE');
  const report = await reopened.repair('root');
  assert.equal(report.repaired, true);
  assert.equal(report.keptEvents, 5, 'every record that reads: four catalog entries and the last note');
  assert.equal(report.droppedBytes, damagedBytes);
  assert.deepEqual(report.damaged.map((d) => [d.seq, d.reason, d.childId]), [
    [0, 'a line that is not JSON', undefined],
    [3, 'a line that is not JSON', 'c3'],
  ]);
  assert.equal(report.reason, 'a line that is not JSON');
  // The later records keep their seqs; a store/damaged record stands where each lost one was.
  const events = await reopened.read('root', {});
  assert.deepEqual(events.map((e) => [e.seq, e.type]), [
    [0, 'store/damaged'],
    [1, 'subagent/catalog'],
    [2, 'subagent/catalog'],
    [3, 'store/damaged'],
    [4, 'subagent/catalog'],
    [5, 'subagent/catalog'],
    [6, 'message/user'],
  ]);
  // Four of five children are listed, where a repair to the valid prefix listed none.
  const rows = await listDescendants(reopened, 'root');
  assert.deepEqual(rows.map((r) => r.path), ['alpha', 'beta', 'delta', 'epsilon']);
  // Each dropped line is reported, the lost entry with its child; the log takes appends again.
  assert.deepEqual(reopened.diagnostics.filter((d) => d.reason.startsWith('repaired:')).map((d) => d.childId), [undefined, 'c3']);
  await reopened.append('root', [note(7)]);
  assert.equal(await reopened.length('root'), 8);
  // A runtime over the repaired store opens the root and lists it, the placeholder records skipped.
  const runtime = new SubagentRuntime({ store: reopened, host: { runTurn: async () => ({ stopReason: 'completed' }) } });
  const lead = await runtime.openRoot({ sessionId: 'root' });
  assert.deepEqual((await runtime.listDescendants('root', {})).map((r) => r.path), ['alpha', 'beta', 'delta', 'epsilon']);
  await runtime.closeRoot(lead);
  await reopened.close();
});
