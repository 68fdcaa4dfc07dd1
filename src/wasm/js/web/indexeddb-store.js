// subagent-tree, browser: a durable session store over IndexedDB, and
// `TreeLock`, which lets one tab drive a tree while others follow read-only.
//
// Layout (database `name`, version 1):
//   sessions  keyPath 'sessionId'          { sessionId, length }
//   events    keyPath ['sessionId','seq']  { sessionId, seq, type, payload }
//     index bySessionType ['sessionId','type','seq']
// A read with `types` (the catalog reads of listing and resolution ask for
// `subagent/catalog` and `session/start`) walks only those index ranges, so
// it never scans a whole log. An append checks and extends a log in one
// readwrite transaction; `readMany` answers every id in one transaction.
// The error class straight from its module (the build fills the path in): a page that
// only reads a store never downloads the runtime.
import { SubagentError } from '__SNIPPET__';

// Session ids must be well-formed Unicode: a lone surrogate has no UTF-8 form and would alias another id.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export { TreeLock } from './tree-lock.js';

const SESSIONS = 'sessions';
const EVENTS = 'events';
const BY_TYPE = 'bySessionType';

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? new DOMException('transaction aborted', 'AbortError'));
    tx.onerror = () => {}; // reported through onabort
  });
}

function checkSignal(signal) {
  if (signal?.aborted) {
    throw new SubagentError('CANCELLED', 'the read was cancelled', { cause: signal.reason });
  }
}

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
    throw storeError('INVALID_ARGUMENT', `${what} is not well-formed Unicode (it holds a lone surrogate)`);
  }
}

/**
 * A `SessionStore` over IndexedDB. Open with `await IndexedDBStore.open(name)`.
 * Events are stored verbatim (structured clone of `payload`).
 */
export class IndexedDBStore {
  #db;
  #name;
  #durability;
  #pending = new Map(); // sessionId -> Promise of the latest append
  #listeners = new Set();
  #channel = null; // the database's BroadcastChannel, opened at the first append or subscribe

  /** @private use `IndexedDBStore.open` */
  constructor(db, name, durability) {
    this.#db = db;
    this.#name = name;
    this.#durability = durability;
    db.onversionchange = () => db.close();
  }

  /** Opens (creating or upgrading) the database `name`. */
  static async open(name = 'subagent-tree', { durability = 'strict', indexedDB: factory = globalThis.indexedDB } = {}) {
    if (!factory) throw storeError('PERSISTENCE_UNAVAILABLE', 'IndexedDB is not available in this context (a browser page or worker has it); use MemoryStore or another SessionStore here');
    const req = factory.open(name, 1);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains(SESSIONS)) db.createObjectStore(SESSIONS, { keyPath: 'sessionId' });
      if (!db.objectStoreNames.contains(EVENTS)) {
        const events = db.createObjectStore(EVENTS, { keyPath: ['sessionId', 'seq'] });
        events.createIndex(BY_TYPE, ['sessionId', 'type', 'seq']);
      }
    };
    let db;
    try {
      db = await request(req);
    } catch (e) {
      throw storeError('PERSISTENCE_UNAVAILABLE', `IndexedDB database ${quote(name)} could not be opened`, e);
    }
    return new IndexedDBStore(db, name, durability);
  }

  /** Deletes the database `name` (close every store on it first). */
  static async deleteDatabase(name = 'subagent-tree', { indexedDB: factory = globalThis.indexedDB } = {}) {
    await request(factory.deleteDatabase(name));
  }

  get name() {
    return this.#name;
  }

  close() {
    this.#db.close();
    this.#channel?.close();
    this.#channel = null;
    this.#listeners.clear();
  }

  /**
   * Calls `listener({ sessionId, fromSeq, count })` after each committed
   * append to this database: by this store, another store on it in this page,
   * or another tab (over a BroadcastChannel named after the database). Returns
   * the function that unsubscribes. `<subagent-tree>` given this store follows
   * the tree with it, so a page that only reads stays current.
   */
  subscribe(listener) {
    if (typeof listener !== 'function') throw storeError('INVALID_ARGUMENT', 'subscribe(listener) needs a function');
    this.#open();
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The database's channel (none where BroadcastChannel is missing: this page still hears itself). */
  #open() {
    if (this.#channel || typeof BroadcastChannel !== 'function') return this.#channel;
    this.#channel = new BroadcastChannel(`subagent-tree/indexeddb/${this.#name}`);
    this.#channel.onmessage = (e) => this.#notify(e.data, false);
    return this.#channel;
  }

  #notify(change, post) {
    if (!change || typeof change.sessionId !== 'string') return;
    const notice = { sessionId: change.sessionId, fromSeq: change.fromSeq, count: change.count };
    if (post) this.#open()?.postMessage(notice);
    for (const listener of [...this.#listeners]) {
      try {
        listener(notice);
      } catch (e) {
        globalThis.reportError?.(e); // one failing listener does not stop the others
      }
    }
  }

  #tx(stores, mode) {
    try {
      return mode === 'readwrite'
        ? this.#db.transaction(stores, mode, { durability: this.#durability })
        : this.#db.transaction(stores, mode);
    } catch (e) {
      throw storeError('PERSISTENCE_UNAVAILABLE', `IndexedDB database ${quote(this.#name)} is closed or unusable; open it again with IndexedDBStore.open(${quote(this.#name)})`, e);
    }
  }

  /**
   * Appends events that carry their `seq`; the first must equal the log's
   * current length (`APPEND_CONFLICT` otherwise). Resolves once committed.
   */
  append(sessionId, events) {
    const run = async () => {
      checkId(sessionId);
      if (!Array.isArray(events)) throw storeError('INVALID_ARGUMENT', 'events must be an array');
      const rows = events.map((e, i) => {
        if (e === null || typeof e !== 'object' || typeof e.type !== 'string' || !Number.isSafeInteger(e.seq)) {
          throw storeError('INVALID_ARGUMENT', `event [${i}] must be an object with an integer seq and a string type`);
        }
        return { sessionId, seq: e.seq, type: e.type, payload: e.payload ?? null };
      });
      const tx = this.#tx([SESSIONS, EVENTS], 'readwrite');
      const committed = done(tx);
      const sessions = tx.objectStore(SESSIONS);
      let conflict;
      const head = sessions.get(sessionId);
      head.onsuccess = () => {
        const length = head.result?.length ?? 0;
        const bad = rows.findIndex((r, i) => r.seq !== length + i);
        if (bad >= 0) {
          conflict = storeError(
            'APPEND_CONFLICT',
            `append to session ${quote(sessionId)} must continue at seq ${length + bad}, not ${rows[bad].seq}`,
          );
          tx.abort();
          return;
        }
        const store = tx.objectStore(EVENTS);
        // One transaction: an event that cannot be stored aborts the whole batch.
        for (const [i, row] of rows.entries()) {
          try {
            store.add(row);
          } catch (e) {
            conflict = storeError('INVALID_ARGUMENT', `event [${i}] cannot be stored in IndexedDB (${e?.name ?? 'Error'}); nothing of the batch was written`, e);
            tx.abort();
            return;
          }
        }
        sessions.put({ sessionId, length: length + rows.length });
      };
      try {
        await committed;
      } catch (e) {
        if (conflict) throw conflict;
        throw storeError('PERSISTENCE_UNAVAILABLE', `IndexedDB append failed for session ${quote(sessionId)}`, e);
      }
      if (rows.length > 0) this.#notify({ sessionId, fromSeq: rows[0].seq, count: rows.length }, true);
    };
    const result = run();
    const settled = result.then(
      () => {},
      () => {},
    );
    this.#pending.set(sessionId, settled);
    settled.then(() => {
      if (this.#pending.get(sessionId) === settled) this.#pending.delete(sessionId);
    });
    return result;
  }

  /**
   * A session's events (only `types`, only `seq >= fromSeq` when given), or
   * `null` when the session does not exist.
   */
  async read(sessionId, { types, fromSeq, signal } = {}) {
    checkId(sessionId);
    checkSignal(signal);
    const tx = this.#tx([SESSIONS, EVENTS], 'readonly');
    const out = await this.#readIn(tx, sessionId, types, fromSeq ?? 0);
    checkSignal(signal);
    return out;
  }

  /** One result per id, in order (events or `null`), read in one transaction. */
  async readMany(sessionIds, { types, signal } = {}) {
    if (!Array.isArray(sessionIds)) throw storeError('INVALID_ARGUMENT', 'sessionIds must be an array');
    sessionIds.forEach((id) => checkId(id, 'each session id'));
    checkSignal(signal);
    if (sessionIds.length === 0) return [];
    const tx = this.#tx([SESSIONS, EVENTS], 'readonly');
    const out = await Promise.all(sessionIds.map((id) => this.#readIn(tx, id, types, 0)));
    checkSignal(signal);
    return out;
  }

  async #readIn(tx, sessionId, types, fromSeq) {
    const start = Number.isFinite(fromSeq) && fromSeq > 0 ? Math.floor(fromSeq) : 0;
    const sessions = tx.objectStore(SESSIONS);
    const events = tx.objectStore(EVENTS);
    // All requests are issued before any await so the transaction stays alive.
    const head = request(sessions.get(sessionId));
    let parts;
    if (Array.isArray(types)) {
      const index = events.index(BY_TYPE);
      parts = [...new Set(types.filter((t) => typeof t === 'string'))].map((type) =>
        request(index.getAll(IDBKeyRange.bound([sessionId, type, start], [sessionId, type, Infinity]))),
      );
    } else {
      parts = [request(events.getAll(IDBKeyRange.bound([sessionId, start], [sessionId, Infinity])))];
    }
    let found;
    try {
      [found, ...parts] = await Promise.all([head, ...parts]);
    } catch (e) {
      throw storeError('PERSISTENCE_UNAVAILABLE', `IndexedDB read failed for session ${quote(sessionId)}`, e);
    }
    if (!found) return null;
    const rows = parts.length === 1 ? parts[0] : parts.flat().sort((a, b) => a.seq - b.seq);
    return rows.map((r) => ({ seq: r.seq, type: r.type, payload: r.payload }));
  }

  /**
   * The durability barrier: waits for this session's appends in flight and
   * resolves `true` (each append is committed before it resolves).
   */
  async flush(sessionId) {
    await this.#pending.get(sessionId);
    return true;
  }

  /** Every session id in the database, sorted (for inspection and tools). */
  async sessionIds() {
    const tx = this.#tx([SESSIONS], 'readonly');
    return request(tx.objectStore(SESSIONS).getAllKeys());
  }

  /** The length of a session's log (0 when it does not exist). */
  async length(sessionId) {
    checkId(sessionId);
    const tx = this.#tx([SESSIONS], 'readonly');
    const head = await request(tx.objectStore(SESSIONS).get(sessionId));
    return head?.length ?? 0;
  }
}
