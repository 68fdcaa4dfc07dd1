// subagent-tree/file-store: a durable session store for Node hosts.
/**
 * A durable session store for Node hosts.
 *
 * @module subagent-tree/file-store
 */
import type { ReadManyOptions, ReadOptions, SessionEvent } from '../index.js';

/** A torn tail found when a log was opened: bytes after the last good record, ignored. */
export interface CorruptTail {
  sessionId: string;
  /** The log file (absolute path). */
  file: string;
  /** Byte offset where the good records end. */
  offset: number;
  droppedBytes: number;
  /** `'an incomplete last line'`, `'a line that is not JSON'`, ... (`'repaired: ...'` after `repair`). */
  reason: string;
  /** After `repair`: where the damaged file was moved. */
  backup?: string;
  /** After `repair`: the child a lost catalog entry named, when its bytes still did. */
  childId?: string;
}

/** One line `repair` dropped. */
export interface DamagedLine {
  /** Its byte offset in the damaged file (`backup`). */
  offset: number;
  bytes: number;
  /** `'a line that is not JSON'`, `'a record out of order (expected seq 4)'`, `'a batch without its commit mark'`, ... */
  reason: string;
  /** The seq of the record it held, now a `store/damaged` record's (absent when it held none). */
  seq?: number;
  /** A lost catalog entry's child, when the line's bytes still name it. */
  childId?: string;
}

/** What `repair` did to a session's log. */
export interface RepairReport {
  sessionId: string;
  file: string;
  /** `false` when the log was not damaged (or does not exist): nothing changed. */
  repaired: boolean;
  /** Records of the log that were kept (the `store/damaged` records in place of lost ones aside). */
  keptEvents: number;
  /** Bytes of the dropped lines, kept only in `backup`. */
  droppedBytes: number;
  /** Why the log was damaged: its first bad line (`a record out of order (expected seq 4)`, ...). */
  reason?: string;
  /** Each line dropped, in file order. */
  damaged?: DamagedLine[];
  /** The damaged file, moved aside: `<file>.damaged-<ms since epoch>`. */
  backup?: string;
}

export interface FileStoreOptions {
  /** `'flush'` (default): fsync on `flush(sessionId)`; `'append'`: fsync every append. */
  fsync?: 'flush' | 'append';
  /** Called once per torn tail found (the next append cuts it off). */
  onCorruptTail?: (info: CorruptTail) => void;
  /** Event types kept in memory for typed reads (default `subagent/catalog`, `session/start`, `team/task`). */
  cachedTypes?: string[];
}

export declare const DEFAULT_CACHED_TYPES: readonly string[];

/** The log file name of a session: hex of its UTF-8 bytes (`.jsonl`), or `h-<sha256>.jsonl` for ids over 100 bytes. */
export declare function fileNameFor(sessionId: string): string;

/**
 * A `SessionStore` over a directory of append-only JSON-lines logs, one per
 * session. An append resolves once written (it survives the process dying);
 * `flush` fsyncs (it survives a power loss). A torn last line after a crash
 * is ignored and reported. Appends to one session are serialized. Failures
 * are `SubagentError`s (`PERSISTENCE_UNAVAILABLE`, `APPEND_CONFLICT`,
 * `INVALID_ARGUMENT`, `CANCELLED`).
 */
export declare class FileStore {
  private constructor();
  /** Opens (creating) the directory. One FileStore should own a directory. */
  static open(dir: string, options?: FileStoreOptions): Promise<FileStore>;
  readonly dir: string;
  /** Torn tails found so far, oldest first. */
  readonly diagnostics: CorruptTail[];
  append(sessionId: string, events: SessionEvent[]): Promise<void>;
  read(sessionId: string, options?: ReadOptions): Promise<SessionEvent[] | null>;
  readMany(sessionIds: string[], options?: ReadManyOptions): Promise<Array<SessionEvent[] | null | Error>>;
  /** Waits for the session's appends, fsyncs its log; resolves `true`. */
  flush(sessionId: string): Promise<boolean>;
  /**
   * Repairs a log that reads as damaged (a bad line before later records):
   * keeps every committed record that reads and fits the log's order, where
   * it was; a `store/damaged` record takes the seq of each record a dropped
   * line held, so later records keep theirs. Moves the whole file aside
   * (`backup`) and reports each dropped line (`damaged`). A healthy log is
   * left alone (`repaired: false`).
   */
  repair(sessionId: string): Promise<RepairReport>;
  /** A log's length, or `null` when the session does not exist. */
  length(sessionId: string): Promise<number | null>;
  /** Every session id with a log in the directory, sorted. */
  sessionIds(): Promise<string[]>;
  /** Releases the directory (its lock file) once the appends in flight settle; later appends reject. */
  close(): Promise<void>;
}
