// subagent-tree/file-store: a durable session store for Node hosts. One
// append-only JSON-lines file per session in one directory:
//
//   <dir>/<hex of the UTF-8 session id>.jsonl     (ids up to 100 bytes)
//   <dir>/h-<sha256 hex of the id>.jsonl          (longer ids)
//
// Line 1 is a header `{"subagentTree":2,"sessionId":...}`; each further line
// is one event `{"seq","type","payload"}` ending in `\n`, and the last event
// of every append also carries `"commit":true`. Appends are atomic: a batch
// counts only when all its lines are complete, parse, carry the next seqs and
// end with the commit mark, so a crash anywhere in a batch (even in its last
// record) drops the whole batch, never a prefix of it. Those invalid bytes
// after the last committed batch are a torn tail: opening the log ignores and
// reports them (`onCorruptTail`, `diagnostics`); the next append cuts them
// off first. Invalid data followed by a good record is not a torn tail but
// damage: reads reject with PERSISTENCE_UNAVAILABLE. Logs written with header
// version 1 (each line its own record) are read as before and rewritten as
// version 2 (atomically, through a renamed temporary file) on their next append.
//
// Session ids must be well-formed Unicode: a lone surrogate has no UTF-8
// form, so `'v-\uD800'` and `'v-\uDC00'` would otherwise share a file.
//
// Ownership: a directory has one owner. `FileStore.open` takes an exclusive
// lock file (`<dir>/.lock`, holding the owner's pid and host) and refuses a
// directory another live process holds; a lock left by a process that died
// is taken over. Within one process, opening the directory again hands it to
// the new FileStore (after the old one's appends finish): the old one then
// refuses appends. `close()` releases the lock; so does the process exiting.
//
// Durability: an append resolves once its bytes are written to the file (they
// survive the process dying); `flush(sessionId)` fsyncs the file (and the
// directory after a new file) so they survive a power loss. `fsync: 'append'`
// fsyncs every append instead. Appends to one session are serialized.
import { createHash, randomUUID } from 'node:crypto';
import { open, mkdir, readdir, readFile, appendFile, truncate, rename, unlink, writeFile, link } from 'node:fs/promises';
import { unlinkSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SubagentError } from '__SNIPPET__';

export const DEFAULT_CACHED_TYPES = Object.freeze(['subagent/catalog', 'session/start', 'team/task']);
const HEADER_KEY = 'subagentTree';
const VERSION = 2;
const LOCK_FILE = '.lock';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** dir -> the FileStore of this process that owns it. */
const owners = new Map();
/** Lock files this process holds: released when it exits. */
const held = new Map(); // lock path -> token
process.once('exit', () => {
  for (const [file, token] of held) {
    try {
      if (JSON.parse(readFileSync(file, 'utf8')).token === token) unlinkSync(file);
    } catch {
      // Already gone.
    }
  }
});

function storeError(code, message, cause) {
  return cause === undefined ? new SubagentError(code, message) : new SubagentError(code, message, { cause });
}

function quote(id) {
  const text = String(id);
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
}

function checkId(sessionId, what = 'sessionId') {
  if (typeof sessionId !== 'string' || sessionId === '') {
    throw storeError('INVALID_ARGUMENT', `${what} must be a non-empty string`);
  }
  if (LONE_SURROGATE.test(sessionId)) {
    throw storeError('INVALID_ARGUMENT', `${what} ${quote(sessionId)} is not well-formed Unicode (it holds a lone surrogate)`);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e?.code === 'EPERM';
  }
}

/**
 * Creates `file` holding `text` only if it does not exist, atomically: the
 * text goes to a private temporary file first and is then hard-linked into
 * place (`link` fails when the name exists), so no reader ever sees a lock
 * half written. Resolves `true` if created, `false` if the name was taken.
 */
async function createExclusive(file, text) {
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(tmp, text, { flag: 'wx' });
  try {
    await link(tmp, file);
    return true;
  } catch (e) {
    if (e?.code === 'EEXIST') return false;
    if (e?.code !== 'EPERM' && e?.code !== 'ENOTSUP' && e?.code !== 'ENOSYS') throw e;
    // A file system without hard links: an exclusive create (its text lands just after).
    try {
      await writeFile(file, text, { flag: 'wx' });
      return true;
    } catch (e2) {
      if (e2?.code === 'EEXIST') return false;
      throw e2;
    }
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/** Who holds lock `file`: `{ pid, host, token }`, a garbage owner keyed by its bytes, or `null` if there is no file. */
async function ownerOf(file) {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (e?.code === 'ENOENT') return null;
    throw e;
  }
  try {
    const owner = JSON.parse(text);
    if (Number.isSafeInteger(owner?.pid) && typeof owner.token === 'string') return owner;
  } catch {
    // Garbage (an older version's half-written lock, a damaged disk): nobody alive holds it.
  }
  return { pid: null, host: null, token: `garbage-${createHash('sha256').update(text).digest('hex').slice(0, 32)}` };
}

const isLive = (owner) => Number.isSafeInteger(owner.pid) && (owner.host !== os.hostname() || alive(owner.pid));

/**
 * Takes `<dir>/.lock` for this process, or throws PERSISTENCE_UNAVAILABLE
 * when a live process holds it.
 *
 * A lock whose owner died is taken over by exactly one process, however many
 * try at once: to replace the dead owner's token T, a process must first
 * create `.lock.takeover-<T>` exclusively (the same protocol, recursively: a
 * takeover file whose creator died is itself taken over by its own token),
 * check that `.lock` still names T, and only then rename its own lock over
 * it. A process that loses waits for the winner and finds the lock live.
 */
async function takeLock(dir) {
  const file = path.join(dir, LOCK_FILE);
  const token = randomUUID();
  const mine = JSON.stringify({ pid: process.pid, host: os.hostname(), token });
  const fail = (cause) => storeError('PERSISTENCE_UNAVAILABLE', `the lock of ${quote(dir)} could not be taken`, cause);
  const claims = []; // takeover files this attempt created, removed whatever the outcome
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      if (await createExclusive(file, mine).catch((e) => Promise.reject(fail(e)))) {
        held.set(file, token);
        return { file, token };
      }
      const owner = await ownerOf(file).catch((e) => Promise.reject(fail(e)));
      if (owner === null) continue; // released meanwhile: try again
      if (owner.pid === process.pid && held.get(file) === owner.token) return { file, token: owner.token }; // this process holds it (handed over in open)
      if (isLive(owner)) {
        const sameHost = owner.host === os.hostname();
        throw storeError(
          'PERSISTENCE_UNAVAILABLE',
          `the store directory ${quote(dir)} is in use by process ${owner.pid}${sameHost ? '' : ` on ${quote(owner.host)}`}; one FileStore owns a directory`,
        );
      }
      // The owner died: only the holder of its takeover file may replace it.
      const claim = await claimTakeover(`${file}.takeover-${owner.token}`, mine).catch((e) => Promise.reject(fail(e)));
      if (claim === null) {
        await new Promise((r) => setTimeout(r, 5)); // another process replaces it: look again
        continue;
      }
      claims.push(claim);
      if ((await ownerOf(file))?.token !== owner.token) continue; // replaced before we claimed: look again
      const tmp = `${file}.${process.pid}.${token}.tmp`;
      await writeFile(tmp, mine, { flag: 'wx' });
      await rename(tmp, file); // atomic: readers see the dead owner's lock or ours
      held.set(file, token);
      return { file, token };
    }
    throw fail();
  } finally {
    for (const claim of claims) await unlink(claim).catch(() => {});
  }
}

/**
 * Creates takeover file `file` for this process (taking it over in turn if
 * its creator died): resolves its name, or `null` when a live process holds it.
 */
async function claimTakeover(file, mine, depth = 0) {
  if (depth > 16) return null;
  if (await createExclusive(file, mine)) return file;
  const holder = await ownerOf(file);
  if (holder === null || isLive(holder)) return null;
  const next = await claimTakeover(`${file}.${holder.token.slice(0, 8)}`, mine, depth + 1);
  if (next === null) return null;
  try {
    if ((await ownerOf(file))?.token !== holder.token) return null;
    const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(tmp, mine, { flag: 'wx' });
    await rename(tmp, file);
    return file;
  } finally {
    await unlink(next).catch(() => {});
  }
}

function checkSignal(signal) {
  if (signal?.aborted) throw new SubagentError('CANCELLED', 'the read was cancelled', { cause: signal.reason });
}

/** The file name of a session's log: hex of its UTF-8 bytes, or a hash for long ids. */
export function fileNameFor(sessionId) {
  const hex = Buffer.from(sessionId, 'utf8').toString('hex');
  if (hex.length <= 200) return `${hex}.jsonl`;
  return `h-${createHash('sha256').update(sessionId, 'utf8').digest('hex')}.jsonl`;
}

function headerLine(sessionId) {
  return `${JSON.stringify({ [HEADER_KEY]: VERSION, sessionId })}\n`;
}

/**
 * Scans a log's bytes. Returns `{ exists, version, records: [{seq, type, offset, bytes, event}], valid, torn }`
 * where `valid` is the byte length of the committed prefix; throws on damage that is not a torn tail.
 * Version 2: records count by committed batch (the batch's last line carries `commit: true`);
 * version 1: every complete line is its own record.
 */
function scan(buffer, sessionId, file, { salvage = false } = {}) {
  const nl = buffer.indexOf(10);
  if (nl < 0) {
    return { exists: false, version: VERSION, records: [], valid: 0, torn: buffer.length > 0 ? 'an incomplete header' : null };
  }
  let header;
  try {
    header = JSON.parse(buffer.subarray(0, nl).toString('utf8'));
  } catch {
    header = undefined;
  }
  const version = header?.[HEADER_KEY];
  if (header === null || typeof header !== 'object' || (version !== 1 && version !== 2) || header.sessionId !== sessionId) {
    throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(file)} does not belong to session ${quote(sessionId)}`);
  }
  const records = [];
  let pending = []; // records of a batch whose commit line has not been seen
  let offset = nl + 1;
  let bad = null; // first invalid line: { offset, why }
  while (offset < buffer.length) {
    const end = buffer.indexOf(10, offset);
    const complete = end >= 0;
    const stop = complete ? end : buffer.length;
    let event;
    try {
      event = JSON.parse(buffer.subarray(offset, stop).toString('utf8'));
    } catch {
      event = undefined;
    }
    const ok =
      complete &&
      event !== null &&
      typeof event === 'object' &&
      typeof event.type === 'string' &&
      event.seq === records.length + pending.length;
    if (bad !== null) {
      // Anything that looks like a record after a bad line means damage, not a torn tail.
      if (event !== null && typeof event === 'object' && Number.isSafeInteger(event.seq)) {
        if (salvage) return { exists: true, version, records, valid: bad.offset, torn: null, damaged: bad.why };
        throw storeError(
          'PERSISTENCE_UNAVAILABLE',
          `session log ${quote(file)} is damaged at byte ${bad.offset} (${bad.why}) before later records; ` +
            `store.repair(${quote(sessionId)}) keeps the ${records.length} events before it and moves the log aside`,
        );
      }
    } else if (ok) {
      pending.push({ seq: event.seq, type: event.type, offset, bytes: stop + 1 - offset, event });
      if (version === 1 || event.commit === true) {
        for (const r of pending) records.push(r);
        pending = [];
      }
    } else {
      const why = !complete
        ? 'an incomplete last line'
        : event === undefined
          ? 'a line that is not JSON'
          : `a record out of order (expected seq ${records.length + pending.length})`;
      bad = { offset: pending.length > 0 ? pending[0].offset : offset, why: pending.length > 0 ? `a batch torn by ${why}` : why };
    }
    offset = complete ? end + 1 : buffer.length;
  }
  if (bad === null && pending.length > 0) bad = { offset: pending[0].offset, why: 'a batch without its commit mark' };
  const valid = bad === null ? buffer.length : bad.offset;
  return { exists: true, version, records, valid, torn: bad === null ? null : bad.why, damaged: null };
}

/** The event type a repair puts in place of a damaged record (readers skip types they do not know). */
export const DAMAGED_RECORD_TYPE = 'store/damaged';

/**
 * What a damaged log keeps (`repair`): every line after the header that reads
 * as a record and fits the log's order, in place; each line that does not is
 * dropped and reported, and where dropped lines held records (the next good
 * record's seq says how many) a `store/damaged` record takes each one's seq,
 * so the later records keep theirs. A good record fits when its seq is the
 * next one, or at most one past it per dropped line since the last good one
 * (a line whose seq itself was damaged is dropped, not believed). A last
 * batch without its commit mark is a torn tail: dropped and reported.
 * Returns `{ lines: Buffer[], kept, damaged: [{ offset, bytes, reason, seq?, childId? }] }`.
 */
function salvage(buffer, headerEnd, version) {
  const lines = [];
  const damaged = [];
  let expected = 0;
  let droppedSince = [];
  let batch = []; // v2: lines of a batch whose commit mark has not been seen: { bytes, offset, real }
  const placeholder = (seq, why) => ({ bytes: Buffer.from(`${JSON.stringify({ seq, type: DAMAGED_RECORD_TYPE, payload: { reason: why }, commit: true })}\n`), offset: null, real: false });
  let offset = headerEnd;
  while (offset < buffer.length) {
    const end = buffer.indexOf(10, offset);
    const next = end < 0 ? buffer.length : end + 1;
    const bytes = buffer.subarray(offset, next);
    let event;
    try {
      event = JSON.parse(buffer.subarray(offset, end < 0 ? buffer.length : end).toString('utf8'));
    } catch {
      event = undefined;
    }
    const record = end >= 0 && event !== null && typeof event === 'object' && typeof event.type === 'string' && Number.isSafeInteger(event.seq);
    if (record && event.seq >= expected && event.seq <= expected + droppedSince.length) {
      // The dropped lines before it held the seqs it skips: a placeholder takes each, in order.
      for (let seq = expected; seq < event.seq; seq++) {
        const lost = droppedSince[seq - expected];
        lost.seq = seq;
        batch.push(placeholder(seq, lost.reason));
      }
      droppedSince = [];
      batch.push({ bytes, offset, real: true });
      expected = event.seq + 1;
      if (version === 1 || event.commit === true) {
        lines.push(...batch);
        batch = [];
      }
    } else {
      const text = bytes.toString('utf8');
      const reason =
        end < 0 ? 'an incomplete last line' : event === undefined ? 'a line that is not JSON' : record ? `a record out of order (expected seq ${expected})` : 'a line that is not a record';
      const entry = { offset, bytes: bytes.length, reason };
      // A lost catalog entry most often still names its child in the bytes that survived.
      const childId = /subagent\/catalog/.test(text) ? /"childId"\s*:\s*"([^"\\]{1,256})"/.exec(text)?.[1] : undefined;
      if (childId !== undefined) entry.childId = childId;
      damaged.push(entry);
      droppedSince.push(entry);
    }
    offset = next;
  }
  // A last batch without its commit mark was never committed: a torn tail, dropped.
  const torn = batch.filter((b) => b.real);
  if (torn.length > 0) damaged.push({ offset: torn[0].offset, bytes: torn.reduce((n, b) => n + b.bytes.length, 0), reason: 'a batch without its commit mark' });
  for (const entry of damaged) if (entry.seq !== undefined && entry.seq >= expected - batch.length) delete entry.seq; // its placeholder went with the tail
  return { lines: lines.map((b) => b.bytes), kept: lines.filter((b) => b.real).length, damaged };
}

/**
 * A `SessionStore` over a directory of JSON-lines logs. Open with
 * `await FileStore.open(dir, options)`.
 */
export class FileStore {
  #dir;
  #fsync;
  #cached;
  #onCorruptTail;
  #diagnostics = [];
  #sessions = new Map(); // sessionId -> Promise<state>
  #queues = new Map(); // sessionId -> tail of the append queue
  #dirDirty = false;
  #closed = false;

  /** @private use `FileStore.open` */
  constructor(dir, { fsync = 'flush', onCorruptTail, cachedTypes = DEFAULT_CACHED_TYPES } = {}) {
    this.#dir = dir;
    this.#fsync = fsync;
    this.#cached = new Set(cachedTypes);
    this.#onCorruptTail = onCorruptTail;
  }

  /**
   * Opens (creating) the directory `dir`. Options: `fsync` (`'flush'`, the
   * default, or `'append'`), `onCorruptTail(info)`, `cachedTypes` (event
   * types kept in memory for fast typed reads; default the catalog types).
   */
  static async open(dir, options = {}) {
    if (typeof dir !== 'string' || dir === '') throw storeError('INVALID_ARGUMENT', 'FileStore.open needs a directory path');
    const { fsync = 'flush', onCorruptTail, cachedTypes = DEFAULT_CACHED_TYPES } = options ?? {};
    if (fsync !== 'flush' && fsync !== 'append') throw storeError('INVALID_ARGUMENT', `fsync must be 'flush' or 'append', not ${quote(fsync)}`);
    if (onCorruptTail !== undefined && typeof onCorruptTail !== 'function') throw storeError('INVALID_ARGUMENT', 'onCorruptTail must be a function');
    if (!Array.isArray(cachedTypes)) throw storeError('INVALID_ARGUMENT', 'cachedTypes must be an array of strings');
    try {
      await mkdir(dir, { recursive: true });
    } catch (e) {
      throw storeError('PERSISTENCE_UNAVAILABLE', `the store directory ${quote(dir)} could not be created`, e);
    }
    const absolute = path.resolve(dir);
    const previous = owners.get(absolute);
    const store = new FileStore(absolute, { fsync, onCorruptTail, cachedTypes });
    // The newest FileStore of this process owns the directory; the previous one finishes its appends first.
    owners.set(absolute, store);
    if (previous) await previous.#idle();
    else {
      try {
        await takeLock(absolute);
      } catch (e) {
        if (owners.get(absolute) === store) owners.delete(absolute);
        throw e;
      }
    }
    return store;
  }

  /** The store's directory (absolute). */
  get dir() {
    return this.#dir;
  }

  /** Torn tails found so far: `{ sessionId, file, offset, droppedBytes, reason }`, oldest first. */
  get diagnostics() {
    return this.#diagnostics.map((d) => ({ ...d }));
  }

  #file(sessionId) {
    return path.join(this.#dir, fileNameFor(sessionId));
  }

  /** The session's scanned state, loaded once (and again after a failed write). */
  #state(sessionId) {
    let loading = this.#sessions.get(sessionId);
    if (loading === undefined) {
      loading = this.#load(sessionId);
      this.#sessions.set(sessionId, loading);
      loading.catch(() => this.#sessions.delete(sessionId));
    }
    return loading;
  }

  async #load(sessionId) {
    const file = this.#file(sessionId);
    let buffer;
    try {
      buffer = await readFile(file);
    } catch (e) {
      if (e?.code === 'ENOENT') return { file, exists: false, version: VERSION, records: [], valid: 0, size: 0, cache: [] };
      throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(file)} could not be read`, e);
    }
    const scanned = scan(buffer, sessionId, file);
    if (scanned.torn !== null) {
      const info = {
        sessionId,
        file,
        offset: scanned.valid,
        droppedBytes: buffer.length - scanned.valid,
        reason: scanned.torn,
      };
      this.#diagnostics.push(info);
      try {
        this.#onCorruptTail?.({ ...info });
      } catch {
        // A reporting callback cannot break the store.
      }
    }
    const cache = [];
    for (const r of scanned.records) {
      if (this.#cached.has(r.type)) cache.push({ seq: r.event.seq, type: r.event.type, payload: r.event.payload ?? null });
      delete r.event;
    }
    return {
      file,
      exists: scanned.exists,
      version: scanned.version,
      records: scanned.records,
      valid: scanned.valid,
      size: buffer.length,
      cache,
    };
  }

  /**
   * Appends events that carry their `seq`; the first must equal the log's
   * length (`APPEND_CONFLICT` otherwise). An empty array creates the session.
   * Appends to one session run one at a time, in call order.
   */
  append(sessionId, events) {
    let rows;
    try {
      checkId(sessionId);
      rows = checkEvents(events);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#queued(sessionId, () => this.#append(sessionId, rows));
  }

  /** Runs `fn` in the session's queue, after the appends and repairs before it (whatever their outcome). */
  #queued(sessionId, fn) {
    const previous = this.#queues.get(sessionId) ?? Promise.resolve();
    const run = previous.then(fn);
    const tail = run.then(
      () => {},
      () => {},
    );
    this.#queues.set(sessionId, tail);
    tail.then(() => {
      if (this.#queues.get(sessionId) === tail) this.#queues.delete(sessionId);
    });
    return run;
  }

  async #append(sessionId, rows) {
    this.#checkOwner();
    const state = await this.#state(sessionId);
    const length = state.records.length;
    const bad = rows.findIndex((r, i) => r.seq !== length + i);
    if (bad >= 0) {
      throw storeError('APPEND_CONFLICT', `append to session ${quote(sessionId)} must continue at seq ${length + bad}, not ${rows[bad].seq}`);
    }
    if (state.exists && rows.length === 0) return;
    if (state.exists && state.version === 1) await this.#upgrade(sessionId, state);
    let text = '';
    const added = [];
    let offset = state.exists ? state.valid : Buffer.byteLength(headerLine(sessionId));
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      let line;
      try {
        // The batch's last record carries the commit mark: without it, the whole batch is a torn tail.
        line = `${JSON.stringify(i === rows.length - 1 ? { ...row, commit: true } : row)}\n`;
      } catch (e) {
        throw storeError('INVALID_ARGUMENT', `event seq ${row.seq} of session ${quote(sessionId)} is not JSON`, e);
      }
      const bytes = Buffer.byteLength(line);
      added.push({ seq: row.seq, type: row.type, offset, bytes, event: row });
      offset += bytes;
      text += line;
    }
    try {
      if (!state.exists) {
        // A new log, or a file whose header never completed: start it over.
        if (state.size > 0) await truncate(state.file, 0);
        text = headerLine(sessionId) + text;
        this.#dirDirty = true;
      } else if (state.size > state.valid) {
        await truncate(state.file, state.valid); // cut a torn tail off before writing
      }
      state.size = state.valid;
      if (this.#fsync === 'append') {
        const handle = await open(state.file, 'a');
        try {
          await handle.appendFile(text);
          await handle.sync();
        } finally {
          await handle.close();
        }
        if (this.#dirDirty) await this.#syncDir();
      } else {
        await appendFile(state.file, text);
      }
    } catch (e) {
      // The file may now hold part of the write: rescan it on next use.
      this.#sessions.delete(sessionId);
      throw storeError('PERSISTENCE_UNAVAILABLE', `append to session log ${quote(state.file)} failed`, e);
    }
    state.exists = true;
    state.version = VERSION;
    state.valid = offset;
    state.size = offset;
    for (const r of added) {
      if (this.#cached.has(r.type)) state.cache.push(structuredClone(r.event));
      delete r.event;
      state.records.push(r);
    }
  }

  /** Rewrites a version-1 log as version 2 (every old line its own committed batch), atomically by rename. */
  async #upgrade(sessionId, state) {
    let buffer;
    try {
      buffer = await readFile(state.file);
    } catch (e) {
      this.#sessions.delete(sessionId);
      throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(state.file)} could not be read`, e);
    }
    let text = headerLine(sessionId);
    const records = [];
    for (const r of state.records) {
      const event = JSON.parse(buffer.subarray(r.offset, r.offset + r.bytes - 1).toString('utf8'));
      const line = `${JSON.stringify({ seq: event.seq, type: event.type, payload: event.payload ?? null, commit: true })}\n`;
      records.push({ seq: r.seq, type: r.type, offset: Buffer.byteLength(text), bytes: Buffer.byteLength(line) });
      text += line;
    }
    const tmp = `${state.file}.${process.pid}.tmp`;
    try {
      const handle = await open(tmp, 'w');
      try {
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, state.file);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      this.#sessions.delete(sessionId);
      throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(state.file)} could not be upgraded`, e);
    }
    this.#dirDirty = true;
    state.version = VERSION;
    state.records = records;
    state.valid = state.size = Buffer.byteLength(text);
  }

  #checkOwner() {
    if (this.#closed) throw storeError('PERSISTENCE_UNAVAILABLE', `this FileStore of ${quote(this.#dir)} is closed`);
    if (owners.get(this.#dir) !== this) {
      throw storeError(
        'PERSISTENCE_UNAVAILABLE',
        `the store directory ${quote(this.#dir)} was opened again by a newer FileStore, which owns it now`,
      );
    }
  }

  /** Resolves once every append queued so far has settled. */
  async #idle() {
    while (this.#queues.size > 0) await Promise.all([...this.#queues.values()]);
  }

  /** Releases the directory (its lock file) after the appends in flight; later appends reject. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    await this.#idle();
    if (owners.get(this.#dir) !== this) return;
    owners.delete(this.#dir);
    const file = path.join(this.#dir, LOCK_FILE);
    const token = held.get(file);
    held.delete(file);
    try {
      if (JSON.parse(await readFile(file, 'utf8')).token === token) await unlink(file);
    } catch {
      // Already gone.
    }
  }

  /**
   * A session's events (only `types`, only `seq >= fromSeq` when given), or
   * `null` when the session does not exist.
   */
  async read(sessionId, { types, fromSeq, signal } = {}) {
    checkId(sessionId);
    checkSignal(signal);
    const state = await this.#state(sessionId);
    checkSignal(signal);
    if (!state.exists) return null;
    const start = Number.isFinite(fromSeq) && fromSeq > 0 ? Math.floor(fromSeq) : 0;
    const wanted = Array.isArray(types) ? new Set(types.filter((t) => typeof t === 'string')) : null;
    // A snapshot: appends after this point are not part of this read.
    const records = state.records.slice(start);
    if (wanted !== null && [...wanted].every((t) => this.#cached.has(t))) {
      return state.cache.filter((e) => e.seq >= start && wanted.has(e.type)).map((e) => structuredClone(e));
    }
    if (records.length === 0) return [];
    const from = records[0].offset;
    const last = records[records.length - 1];
    const length = last.offset + last.bytes - from;
    let buffer;
    try {
      const handle = await open(state.file, 'r');
      try {
        buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, from);
        if (bytesRead !== length) throw new Error(`short read: ${bytesRead} of ${length} bytes`);
      } finally {
        await handle.close();
      }
    } catch (e) {
      throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(state.file)} could not be read`, e);
    }
    checkSignal(signal);
    const out = [];
    for (const r of records) {
      if (wanted !== null && !wanted.has(r.type)) continue;
      const event = JSON.parse(buffer.subarray(r.offset - from, r.offset - from + r.bytes - 1).toString('utf8'));
      out.push({ seq: event.seq, type: event.type, payload: event.payload ?? null });
    }
    return out;
  }

  /** One result per id, in order: events, `null` (no such session), or an `Error` for that id. */
  async readMany(sessionIds, { types, signal } = {}) {
    if (!Array.isArray(sessionIds)) throw storeError('INVALID_ARGUMENT', 'sessionIds must be an array');
    sessionIds.forEach((id) => checkId(id, 'each session id'));
    checkSignal(signal);
    const out = await Promise.all(
      sessionIds.map((id) =>
        this.read(id, { types, signal }).catch((e) => {
          if (e instanceof SubagentError && e.code === 'CANCELLED') throw e;
          return e instanceof Error ? e : new Error(String(e));
        }),
      ),
    );
    checkSignal(signal);
    return out;
  }

  /**
   * The durability barrier: waits for the session's appends, then fsyncs its
   * file (and the directory when files were created). Resolves `true`.
   */
  async flush(sessionId) {
    checkId(sessionId);
    await this.#queues.get(sessionId);
    const state = await this.#state(sessionId);
    try {
      if (state.exists) {
        const handle = await open(state.file, 'r+');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
      if (this.#dirDirty) await this.#syncDir();
    } catch (e) {
      throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(state.file)} could not be synced`, e);
    }
    return true;
  }

  async #syncDir() {
    this.#dirDirty = false;
    let handle;
    try {
      handle = await open(this.#dir, 'r');
      await handle.sync();
    } catch {
      // Some platforms cannot fsync a directory; the file itself is synced.
    } finally {
      await handle?.close();
    }
  }

  /**
   * Repairs a damaged log: keeps every committed record that reads and fits
   * the log's order, where it was, and drops only the damaged lines (a
   * `store/damaged` record takes the seq of each record they held, so later
   * records keep theirs); moves the whole file aside as
   * `<file>.damaged-<time>` and reports each dropped line (a lost catalog
   * entry with the child it named, when its bytes still say). A log that is
   * not damaged is left as it is (a torn tail is cut off by the next append).
   * Resolves `{ sessionId, file, repaired, keptEvents, droppedBytes, reason?,
   * damaged?: [{ offset, bytes, reason, seq?, childId? }], backup? }`.
   */
  repair(sessionId) {
    try {
      checkId(sessionId);
    } catch (e) {
      return Promise.reject(e);
    }
    // In the session's append queue: no append interleaves with the rewrite.
    return this.#queued(sessionId, () => this.#repair(sessionId));
  }

  async #repair(sessionId) {
    this.#checkOwner();
    const file = this.#file(sessionId);
    let buffer;
    try {
      buffer = await readFile(file);
    } catch (e) {
      if (e?.code === 'ENOENT') return { sessionId, file, repaired: false, keptEvents: 0, droppedBytes: 0 };
      throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(file)} could not be read`, e);
    }
    const scanned = scan(buffer, sessionId, file, { salvage: true });
    if (scanned.damaged === null) return { sessionId, file, repaired: false, keptEvents: scanned.records.length, droppedBytes: 0 };
    const headerEnd = buffer.indexOf(10) + 1;
    const salvaged = salvage(buffer, headerEnd, scanned.version);
    const backup = `${file}.damaged-${Date.now()}`;
    const tmp = `${file}.${process.pid}.repair.tmp`;
    try {
      const handle = await open(tmp, 'wx');
      try {
        await handle.writeFile(Buffer.concat([buffer.subarray(0, headerEnd), ...salvaged.lines]));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await link(file, backup); // the damaged bytes stay, under another name
      await rename(tmp, file); // atomic: readers see the damaged log or the repaired one
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw storeError('PERSISTENCE_UNAVAILABLE', `session log ${quote(file)} could not be repaired`, e);
    } finally {
      this.#sessions.delete(sessionId); // read again from the repaired file
    }
    this.#dirDirty = true;
    const droppedBytes = salvaged.damaged.reduce((n, d) => n + d.bytes, 0);
    const report = { sessionId, file, repaired: true, keptEvents: salvaged.kept, droppedBytes, reason: scanned.damaged, damaged: salvaged.damaged, backup };
    for (const d of salvaged.damaged) {
      this.#diagnostics.push({ sessionId, file, offset: d.offset, droppedBytes: d.bytes, reason: `repaired: ${d.reason}`, backup, ...(d.childId === undefined ? {} : { childId: d.childId }) });
    }
    return report;
  }

  /** A log's length, or `null` when the session does not exist. */
  async length(sessionId) {
    checkId(sessionId);
    const state = await this.#state(sessionId);
    return state.exists ? state.records.length : null;
  }

  /** Every session id with a log in the directory, sorted. */
  async sessionIds() {
    const names = (await readdir(this.#dir)).filter((n) => n.endsWith('.jsonl'));
    const ids = [];
    for (const name of names) {
      const stem = name.slice(0, -'.jsonl'.length);
      if (/^([0-9a-f]{2})+$/.test(stem)) {
        ids.push(Buffer.from(stem, 'hex').toString('utf8'));
      } else if (stem.startsWith('h-')) {
        try {
          const text = await readFile(path.join(this.#dir, name), 'utf8');
          const header = JSON.parse(text.slice(0, text.indexOf('\n')));
          if (typeof header?.sessionId === 'string') ids.push(header.sessionId);
        } catch {
          // Not a readable log: skipped.
        }
      }
    }
    return ids.sort();
  }
}

function checkEvents(events) {
  if (!Array.isArray(events)) throw storeError('INVALID_ARGUMENT', 'events must be an array');
  return events.map((e, i) => {
    if (e === null || typeof e !== 'object' || typeof e.type !== 'string' || !Number.isSafeInteger(e.seq) || e.seq < 0) {
      throw storeError('INVALID_ARGUMENT', `event [${i}] must be an object with an integer seq and a string type`);
    }
    return { seq: e.seq, type: e.type, payload: e.payload === undefined ? null : e.payload };
  });
}
