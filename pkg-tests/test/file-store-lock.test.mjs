// FileStore's lock across processes (issue 55): with a `.lock` naming a dead
// process, three processes opening the directory at once give exactly one
// owner, round after round, and the lock names that owner; a damaged log is
// repaired to its valid prefix with the rest kept aside and reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const OPENER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'open-file-store.mjs');
const ROUNDS = 100;

/** A pid that no live process has: a process that ran and exited. */
async function deadPid() {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid;
}

/** Starts a process that opens `dir`; resolves its first stdout line, and gives a way to let it go. */
function opener(dir) {
  const child = spawn(process.execPath, [OPENER, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const said = new Promise((resolve) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.trim());
    });
  });
  return { said, release: () => (child.stdin.end(), exited) };
}

test(`a stale lock taken over by three processes at once: exactly one owner, ${ROUNDS} rounds`, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'file-store-lock-'));
  const lock = path.join(dir, '.lock');
  const dead = await deadPid();
  const counts = { rounds: 0, twoOwners: 0 };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      writeFileSync(lock, JSON.stringify({ pid: dead, host: os.hostname(), token: `stale-${round}` }));
      const openers = [opener(dir), opener(dir), opener(dir)];
      try {
        const said = await Promise.all(openers.map((o) => o.said));
        const owners = said.filter((s) => s.startsWith('owner '));
        counts.rounds++;
        if (owners.length !== 1) counts.twoOwners++;
        assert.equal(owners.length, 1, `round ${round}: ${said.join(', ')}`);
        assert.ok(said.filter((s) => !s.startsWith('owner ')).every((s) => s === 'refused PERSISTENCE_UNAVAILABLE'), said.join(', '));
        assert.equal(JSON.parse(readFileSync(lock, 'utf8')).pid, Number(owners[0].slice('owner '.length)), 'the lock names the owner');
      } finally {
        await Promise.all(openers.map((o) => o.release()));
      }
    }
    // Nothing is left behind but the last owner's released lock.
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('.lock')), []);
  } finally {
    console.log(`rounds ${counts.rounds}, rounds with more than one owner ${counts.twoOwners}`);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged log (two writers interleaved) is refused with the repair path; repair keeps every record that fits and moves the file aside', async () => {
  const { FileStore, fileNameFor } = await import('subagent-tree/file-store');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'file-store-repair-'));
  try {
    let store = await FileStore.open(dir);
    for (let seq = 0; seq < 3; seq++) await store.append('s', [{ seq, type: 'note', payload: { n: seq } }]);
    await store.close();
    // A second writer that believed it owned the directory appended its own seq 1 and 2.
    const file = path.join(dir, fileNameFor('s'));
    const good = readFileSync(file);
    const foreign = ['{"seq":1,"type":"other","payload":null,"commit":true}', '{"seq":2,"type":"other","payload":null,"commit":true}'].join('\n');
    writeFileSync(file, Buffer.concat([good, Buffer.from(`${foreign}\n`)]));
    store = await FileStore.open(dir);
    await assert.rejects(store.read('s'), (e) => e.code === 'PERSISTENCE_UNAVAILABLE' && /damaged at byte \d+ \(a record out of order \(expected seq 3\)\).*store\.repair\("s"\) keeps the 3 events/.test(e.message));
    const report = await store.repair('s');
    const [one, two] = foreign.split('\n');
    assert.deepEqual({ ...report, backup: undefined }, {
      sessionId: 's',
      file,
      repaired: true,
      keptEvents: 3,
      droppedBytes: Buffer.byteLength(foreign) + 1,
      reason: 'a record out of order (expected seq 3)',
      // Each foreign line, dropped: neither fits the log's order.
      damaged: [
        { offset: good.length, bytes: Buffer.byteLength(one) + 1, reason: 'a record out of order (expected seq 3)' },
        { offset: good.length + Buffer.byteLength(one) + 1, bytes: Buffer.byteLength(two) + 1, reason: 'a record out of order (expected seq 3)' },
      ],
      backup: undefined,
    });
    assert.match(report.backup, /\.damaged-\d+$/);
    assert.deepEqual(readFileSync(report.backup), Buffer.concat([good, Buffer.from(`${foreign}\n`)]), 'the damaged bytes are kept aside');
    assert.deepEqual((await store.read('s')).map((e) => e.payload.n), [0, 1, 2]);
    await store.append('s', [{ seq: 3, type: 'note', payload: { n: 3 } }]);
    assert.equal(await store.length('s'), 4);
    assert.equal(store.diagnostics.at(-1).reason, 'repaired: a record out of order (expected seq 3)');
    assert.deepEqual(await store.repair('s'), { sessionId: 's', file, repaired: false, keptEvents: 4, droppedBytes: 0 });
    await assert.rejects(store.repair(''), (e) => e.code === 'INVALID_ARGUMENT');
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
