// subagent-tree/durable-object-store: a durable session store over Cloudflare
// Durable Object storage (`state.storage`), for trees hosted in workerd.
//
// Key layout (every key starts with the store's `prefix`; session ids are
// percent-encoded so they never contain the `:` separator):
//   m:<sid>         { length, idx, it }  the log's length, how many events are
//                   indexed, and which types this session indexes (`it`)
//   e:<sid>:<seq>   { seq, type, payload }          every event (seq zero-padded)
//   i:<sid>:<n>     { seq, type, payload }          the n-th event of an indexed
//                   type (by default `subagent/catalog`, `session/start`,
//                   `team/task`): a catalog read never touches the rest of a log
//
// An append checks the length and writes the events, their index copies and
// the new length in one `storage.transaction` (or, on a storage without
// transactions, as puts whose last one carries the length, so a torn write
// is never visible). `readMany` answers a whole level of a tree with batched
// `storage.get([...keys])` calls of at most 128 keys. `flush` calls
// `storage.sync()` when the runtime has it.
import { SubagentError } from '__SNIPPET__';

// Session ids must be well-formed Unicode: a lone surrogate has no UTF-8 form and would alias another id.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Durable Object storage accepts at most this many keys per get/put. */
const BATCH = 128;
const MAX_KEY_BYTES = 2048;
const SEQ_DIGITS = 16;
export const DEFAULT_INDEXED_TYPES = Object.freeze(['subagent/catalog', 'session/start', 'team/task']);

function storeError(code, message, cause) {
  return cause === undefined ? new SubagentError(code, message) : new SubagentError(code, message, { cause });
}

function quote(id) {
  const text = String(id);
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
}

function checkSignal(signal) {
  if (signal?.aborted) throw new SubagentError('CANCELLED', 'the read was cancelled', { cause: signal.reason });
}

function pad(n) {
  return String(n).padStart(SEQ_DIGITS, '0');
}

function chunks(items, size = BATCH) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const encoder = new TextEncoder();

/**
 * A `SessionStore` over Durable Object storage. One store per object; the
 * object's single-threaded execution plus a per-session append queue keep
 * appends to one log in order.
 */
export class DurableObjectStore {
  #storage;
  #prefix;
  #indexed;
  #queues = new Map(); // sessionId -> tail of its append queue

  /**
   * @param storageOrState `state.storage`, or the `state` (DurableObjectState) itself
   * @param options `{ prefix?, indexedTypes? }`
   */
  constructor(storageOrState, { prefix = '', indexedTypes = DEFAULT_INDEXED_TYPES } = {}) {
    const storage = storageOrState?.storage ?? storageOrState;
    if (storage === null || typeof storage !== 'object' || typeof storage.get !== 'function' || typeof storage.put !== 'function') {
      throw storeError('INVALID_ARGUMENT', 'DurableObjectStore needs Durable Object storage (state.storage) or the state itself');
    }
    if (typeof prefix !== 'string') throw storeError('INVALID_ARGUMENT', 'prefix must be a string');
    if (!Array.isArray(indexedTypes) || indexedTypes.some((t) => typeof t !== 'string')) {
      throw storeError('INVALID_ARGUMENT', 'indexedTypes must be an array of strings');
    }
    this.#storage = storage;
    this.#prefix = prefix;
    this.#indexed = [...new Set(indexedTypes)];
  }

  /** The key prefix every key of this store starts with. */
  get prefix() {
    return this.#prefix;
  }

  #sid(sessionId, what = 'sessionId') {
    if (typeof sessionId !== 'string' || sessionId === '') {
      throw storeError('INVALID_ARGUMENT', `${what} must be a non-empty string`);
    }
    if (LONE_SURROGATE.test(sessionId)) {
      throw storeError('INVALID_ARGUMENT', `${what} is not well-formed Unicode (it holds a lone surrogate)`);
    }
    const encoded = encodeURIComponent(sessionId);
    // The longest key is `i:`/`e:` + id + `:` + 16 digits.
    if (encoder.encode(this.#prefix).length + encoded.length + SEQ_DIGITS + 3 > MAX_KEY_BYTES) {
      throw storeError('INVALID_ARGUMENT', `session id ${quote(sessionId)} is too long for a Durable Object storage key`);
    }
    return encoded;
  }

  #metaKey(sid) {
    return `${this.#prefix}m:${sid}`;
  }
  #eventKey(sid, seq) {
    return `${this.#prefix}e:${sid}:${pad(seq)}`;
  }
  #indexKey(sid, n) {
    return `${this.#prefix}i:${sid}:${pad(n)}`;
  }

  /** `storage.get(keys)` in batches of at most 128 keys, merged into one Map. */
  async #getAll(keys) {
    const out = new Map();
    const parts = await Promise.all(chunks(keys).map((part) => this.#storage.get(part)));
    for (const part of parts) for (const [k, v] of part) out.set(k, v);
    return out;
  }

  /**
   * Appends events that carry their `seq`; the first must equal the log's
   * current length (`APPEND_CONFLICT` otherwise). An empty array creates the
   * session. Atomic: either every event is stored or none is.
   */
  append(sessionId, events) {
    let sid;
    let rows;
    try {
      sid = this.#sid(sessionId);
      rows = checkEvents(events);
    } catch (e) {
      return Promise.reject(e);
    }
    const previous = this.#queues.get(sessionId) ?? Promise.resolve();
    const run = previous.then(() => this.#append(sessionId, sid, rows));
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

  async #append(sessionId, sid, rows) {
    const write = async (tx) => {
      const meta = await tx.get(this.#metaKey(sid));
      const length = meta?.length ?? 0;
      const bad = rows.findIndex((r, i) => r.seq !== length + i);
      if (bad >= 0) {
        throw storeError(
          'APPEND_CONFLICT',
          `append to session ${quote(sessionId)} must continue at seq ${length + bad}, not ${rows[bad].seq}`,
        );
      }
      const it = meta?.it ?? this.#indexed;
      let idx = meta?.idx ?? 0;
      const entries = [];
      for (const row of rows) {
        entries.push([this.#eventKey(sid, row.seq), row]);
        if (it.includes(row.type)) entries.push([this.#indexKey(sid, idx++), row]);
      }
      // The length goes in the last put: without a transaction, a torn write
      // leaves only keys beyond the length, which no read looks at.
      entries.push([this.#metaKey(sid), { length: length + rows.length, idx, it }]);
      for (const part of chunks(entries)) await tx.put(Object.fromEntries(part));
    };
    try {
      if (typeof this.#storage.transaction === 'function') {
        await this.#storage.transaction(write);
      } else {
        await write(this.#storage);
      }
    } catch (e) {
      if (e instanceof SubagentError) throw e;
      throw storeError('PERSISTENCE_UNAVAILABLE', `Durable Object storage append failed for session ${quote(sessionId)}`, e);
    }
  }

  /**
   * A session's events (only `types`, only `seq >= fromSeq` when given), or
   * `null` when the session does not exist.
   */
  async read(sessionId, { types, fromSeq, signal } = {}) {
    const sid = this.#sid(sessionId);
    checkSignal(signal);
    const wanted = typeFilter(types);
    const start = Number.isFinite(fromSeq) && fromSeq > 0 ? Math.floor(fromSeq) : 0;
    let out;
    try {
      const meta = await this.#storage.get(this.#metaKey(sid));
      checkSignal(signal);
      if (meta === undefined) return null;
      const keys = this.#keysFor(sid, meta, wanted, start);
      const found = await this.#getAll(keys);
      out = this.#assemble(sessionId, keys, found, wanted, start);
    } catch (e) {
      if (e instanceof SubagentError) throw e;
      throw storeError('PERSISTENCE_UNAVAILABLE', `Durable Object storage read failed for session ${quote(sessionId)}`, e);
    }
    if (out instanceof Error) throw out;
    checkSignal(signal);
    return out;
  }

  /**
   * One result per id, in order: events, `null` (no such session), or an
   * `Error` for a session whose stored log is damaged. Two rounds of batched
   * gets answer every id: lengths first, then events.
   */
  async readMany(sessionIds, { types, signal } = {}) {
    if (!Array.isArray(sessionIds)) throw storeError('INVALID_ARGUMENT', 'sessionIds must be an array');
    const sids = sessionIds.map((id) => this.#sid(id, 'each session id'));
    checkSignal(signal);
    if (sids.length === 0) return [];
    const wanted = typeFilter(types);
    try {
      const metas = await this.#getAll([...new Set(sids.map((s) => this.#metaKey(s)))]);
      checkSignal(signal);
      const plans = sids.map((sid) => {
        const meta = metas.get(this.#metaKey(sid));
        return meta === undefined ? null : this.#keysFor(sid, meta, wanted, 0);
      });
      const found = await this.#getAll([...new Set(plans.flatMap((keys) => keys ?? []))]);
      checkSignal(signal);
      return plans.map((keys, i) => (keys === null ? null : this.#assemble(sessionIds[i], keys, found, wanted, 0)));
    } catch (e) {
      if (e instanceof SubagentError) throw e;
      throw storeError('PERSISTENCE_UNAVAILABLE', 'Durable Object storage batch read failed', e);
    }
  }

  /** The keys holding what a read asks for: the index when it covers `wanted`, else the log from `start`. */
  #keysFor(sid, meta, wanted, start) {
    const indexed = Array.isArray(meta.it) ? meta.it : [];
    const keys = [];
    if (wanted !== null && [...wanted].every((t) => indexed.includes(t))) {
      for (let n = 0; n < (meta.idx ?? 0); n++) keys.push(this.#indexKey(sid, n));
    } else {
      for (let seq = start; seq < meta.length; seq++) keys.push(this.#eventKey(sid, seq));
    }
    return keys;
  }

  #assemble(sessionId, keys, found, wanted, start) {
    const out = [];
    for (const key of keys) {
      const row = found.get(key);
      if (row === undefined || row === null || typeof row !== 'object') {
        return storeError('PERSISTENCE_UNAVAILABLE', `session ${quote(sessionId)} is missing its stored event ${quote(key)}`);
      }
      if (row.seq < start || (wanted !== null && !wanted.has(row.type))) continue;
      out.push({ seq: row.seq, type: row.type, payload: row.payload });
    }
    return out;
  }

  /** The durability barrier: waits for this session's appends, then `storage.sync()` when available. Resolves `true`. */
  async flush(sessionId) {
    await this.#queues.get(sessionId);
    if (typeof this.#storage.sync === 'function') {
      try {
        await this.#storage.sync();
      } catch (e) {
        throw storeError('PERSISTENCE_UNAVAILABLE', `Durable Object storage sync failed for session ${quote(sessionId)}`, e);
      }
    }
    return true;
  }

  /** A log's length, or `null` when the session does not exist. */
  async length(sessionId) {
    const meta = await this.#storage.get(this.#metaKey(this.#sid(sessionId)));
    return meta === undefined ? null : meta.length;
  }

  /** Every session id of this store, sorted by key. */
  async sessionIds() {
    const start = `${this.#prefix}m:`;
    const listed = await this.#storage.list({ prefix: start });
    return [...listed.keys()].map((k) => decodeURIComponent(k.slice(start.length)));
  }
}

function typeFilter(types) {
  if (!Array.isArray(types)) return null;
  return new Set(types.filter((t) => typeof t === 'string'));
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
