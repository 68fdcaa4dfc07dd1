// subagent-tree/indexeddb: a durable browser session store, and TreeLock.
/**
 * A durable browser session store (IndexedDB), and `TreeLock`.
 *
 * @module subagent-tree/indexeddb
 */
import type { ReadManyOptions, ReadOptions, SessionEvent } from '../index.js';

export { TreeLock, TreeLockOptions, TreeLockRole } from './tree-lock.js';

export interface IndexedDBStoreOptions {
  /** Transaction durability of appends (default `'strict'`: committed to disk before an append resolves). */
  durability?: 'strict' | 'relaxed' | 'default';
  /** The IndexedDB factory (default `globalThis.indexedDB`). */
  indexedDB?: IDBFactory;
}

/**
 * A `SessionStore` over IndexedDB: object store `events` keyed
 * `[sessionId, seq]` with index `bySessionType` on `[sessionId, type, seq]`
 * (typed reads never scan a whole log), and `sessions` holding each log's
 * length. Appends continue a log at its length (`APPEND_CONFLICT`
 * otherwise), in one transaction; `readMany` reads every id in one.
 * Failures are `SubagentError`s (`PERSISTENCE_UNAVAILABLE`, `APPEND_CONFLICT`,
 * `INVALID_ARGUMENT`, `CANCELLED`).
 */
export declare class IndexedDBStore {
  private constructor();
  /** Opens (creating or upgrading) the database `name` (default `'subagent-tree'`). */
  static open(name?: string, options?: IndexedDBStoreOptions): Promise<IndexedDBStore>;
  /** Deletes a database (close its stores first). */
  static deleteDatabase(name?: string, options?: Pick<IndexedDBStoreOptions, 'indexedDB'>): Promise<void>;
  readonly name: string;
  close(): void;
  append(sessionId: string, events: SessionEvent[]): Promise<void>;
  read(sessionId: string, options?: ReadOptions): Promise<SessionEvent[] | null>;
  readMany(sessionIds: string[], options?: ReadManyOptions): Promise<Array<SessionEvent[] | null>>;
  /** Waits for the session's appends in flight; resolves `true` (appends are committed when they resolve). */
  flush(sessionId: string): Promise<boolean>;
  /** Every session id in the database, sorted. */
  sessionIds(): Promise<string[]>;
  /** A log's length (0 when the session does not exist). */
  length(sessionId: string): Promise<number>;
  /**
   * Calls `listener` after each committed append to this database, by this
   * store, another store on it in this page, or another tab (a
   * BroadcastChannel named after the database). Returns the unsubscribe
   * function. `<subagent-tree>` given this store stays current with it.
   */
  subscribe(listener: (change: IndexedDBStoreChange) => void): () => void;
}

/** One committed append: `count` events of `sessionId` from `fromSeq`. */
export interface IndexedDBStoreChange {
  sessionId: string;
  fromSeq: number;
  count: number;
}
