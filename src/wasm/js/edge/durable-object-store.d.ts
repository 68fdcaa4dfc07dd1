// subagent-tree/durable-object-store: a durable session store over Durable Object storage.
/**
 * A durable session store over Durable Object storage.
 *
 * @module subagent-tree/durable-object-store
 */
import type { ReadManyOptions, ReadOptions, SessionEvent } from '../index.js';

/** The subset of Durable Object storage (`state.storage`) the store uses. */
export interface DurableObjectStorageLike {
  get<T = unknown>(key: string): Promise<T | undefined>;
  get<T = unknown>(keys: string[]): Promise<Map<string, T>>;
  put(entries: Record<string, unknown>): Promise<void>;
  list<T = unknown>(options?: { prefix?: string; start?: string; end?: string; limit?: number }): Promise<Map<string, T>>;
  transaction?<T>(closure: (txn: Pick<DurableObjectStorageLike, 'get' | 'put'>) => Promise<T>): Promise<T>;
  sync?(): Promise<void>;
}

export interface DurableObjectStoreOptions {
  /** Every key starts with this (default `''`), so the object can keep other data beside the logs. */
  prefix?: string;
  /**
   * Event types copied into a per-session index so typed reads of them never
   * touch the rest of a log (default `subagent/catalog`, `session/start`,
   * `team/task`). Recorded per session when it is created.
   */
  indexedTypes?: string[];
}

export declare const DEFAULT_INDEXED_TYPES: readonly string[];

/**
 * A `SessionStore` over Durable Object storage. Keys: `m:<sid>` (length),
 * `e:<sid>:<seq>` (events), `i:<sid>:<n>` (indexed types), each behind
 * `prefix`. Appends continue a log at its length (`APPEND_CONFLICT`
 * otherwise) in one storage transaction; `readMany` uses batched `get`s of at
 * most 128 keys. Failures are `SubagentError`s (`PERSISTENCE_UNAVAILABLE`,
 * `APPEND_CONFLICT`, `INVALID_ARGUMENT`, `CANCELLED`).
 */
export declare class DurableObjectStore {
  /** `new DurableObjectStore(state.storage)` or `new DurableObjectStore(state)`. */
  constructor(storageOrState: DurableObjectStorageLike | { storage: DurableObjectStorageLike }, options?: DurableObjectStoreOptions);
  readonly prefix: string;
  append(sessionId: string, events: SessionEvent[]): Promise<void>;
  read(sessionId: string, options?: ReadOptions): Promise<SessionEvent[] | null>;
  readMany(sessionIds: string[], options?: ReadManyOptions): Promise<Array<SessionEvent[] | null | Error>>;
  /** Waits for the session's appends in flight and `storage.sync()`; resolves `true`. */
  flush(sessionId: string): Promise<boolean>;
  /** A log's length, or `null` when the session does not exist. */
  length(sessionId: string): Promise<number | null>;
  /** Every session id of this store. */
  sessionIds(): Promise<string[]>;
}
