// subagent-tree: the types every entry shares (names, catalog, listing,
// stores, errors). The package's generated `subagent_tree.d.ts` and
// `subagent_tree_lite.d.ts` import and re-export them (scripts/public-types.mjs);
// the build copies this file to `types/core.d.ts`.
/** Every code a `SubagentError` can carry. */
export type SubagentErrorCode =
  | "NO_PROVIDER"
  | "DUPLICATE_PROVIDER"
  | "UNSUPPORTED_CAPABILITY"
  | "CONTINUATION_UNAVAILABLE"
  | "PERSISTENCE_UNAVAILABLE"
  | "UNAUTHORIZED"
  | "DRAINING"
  | "ACTIVATION_CLOSING"
  | "ACTIVATION_LIMIT_REACHED"
  | "ACTIVATION_TEARDOWN_FAILED"
  | "DUPLICATE_CHILD"
  | "NOT_RESUMABLE"
  | "NOT_CONTINUABLE"
  | "INPUT_CLOSED"
  | "PARENT_UNAVAILABLE"
  | "CANCELLED"
  | "DEPTH_EXCEEDED"
  | "INVALID_NAME"
  | "DUPLICATE_NAME"
  | "UNKNOWN_AGENT"
  | "CORRUPT_CATALOG"
  | "INVALID_ARGUMENT"
  | "APPEND_CONFLICT"
  | "LIMIT_EXCEEDED"
  | "BUDGET_EXHAUSTED";

/**
 * A cancellation signal: the platform's `AbortSignal` where the project's
 * types declare one (the DOM lib, `@types/node`, Cloudflare's workers types),
 * else the part of one the package reads. So these types need neither the DOM
 * lib nor `@types/node`.
 */
export type AbortSignalLike = typeof globalThis extends { AbortSignal: { prototype: infer S } }
  ? S
  : {
      readonly aborted: boolean;
      readonly reason?: unknown;
      addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
      removeEventListener(type: 'abort', listener: () => void): void;
    };

/** JSON data, as event payloads hold it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One event of a session's append-only log; `seq` counts from 0 without gaps. */
export interface SessionEvent {
  seq: number;
  type: string;
  payload: JsonValue;
}

/** How a child runs: `unknown` marks a historical child that can be listed but never continued. */
export type CatalogMode = "one-shot" | "continuable" | "external" | "unknown";

/** One child in its parent's catalog. */
export interface CatalogEntry {
  id: string;
  createdAt: number;
  mode: CatalogMode;
  label?: string;
  name?: string;
}

/** A listed descendant. `path` is its full name from the requested root, when every member on the way is named. */
export interface ChildRow {
  kind: "child";
  id: string;
  parentId: string;
  depth: number;
  mode: CatalogMode;
  label?: string;
  name?: string;
  path?: string;
  hasChildren: boolean;
}

/** Why a row is a diagnostic: `foreign` is a catalog entry whose child's own log names another creator (never shown, resumed or written). */
export type DiagnosticReason = "corrupt" | "unavailable" | "unsupported" | "foreign";

/**
 * A branch that could not be shown: `corrupt` data, an `unavailable` session, or an `unsupported` (unknown-mode) entry.
 * A catalog entry that does not decode (bad or damaged data in the store) is one `corrupt` row with `seq` and
 * `detail`; the rest of its catalog is listed.
 */
export interface DiagnosticRow {
  kind: "diagnostic";
  /** The child's Session id; `""` when the entry's `childId` cannot be read (no Session has that id). */
  id: string;
  parentId: string;
  depth: number;
  reason: DiagnosticReason;
  /** For an entry that does not decode: its event's `seq` in the parent's log. */
  seq?: number;
  /** For an entry that does not decode: why, in one sentence. */
  detail?: string;
}

export type Row = ChildRow | DiagnosticRow;

/**
 * How a member's last turn ended, from its log: `stopReason` of its last
 * `turn/end` (`completed`, `aborted`, `error`, `max-tokens`, `refusal`,
 * `budget-exhausted`, or a reason a host added), and the text of its latest
 * non-empty output, at most 4096 bytes of UTF-8 (ending `…` when cut).
 */
export interface LastTurn {
  stopReason?: string;
  output?: string;
}

/** What a member's log says of its turns (`listTree`). */
export interface TreeTurns {
  /** Its last turn started and has not ended: it runs where another runtime drives it, or was lost in a crash. */
  turnOpen: boolean;
  /** Absent until a turn ended. */
  lastTurn?: LastTurn;
  /** The preset its log records (see `RuntimeInit.presets`), when it runs with one. */
  preset?: string;
}

/** A `listTree` row: a `listDescendants` row, plus its turns when its log was read (not an external run or a diagnostic). */
export type TreeRow = Row & Partial<TreeTurns>;

/** `listTree`'s answer: the root's turns, and every descendant in `listDescendants` order. */
export interface TreeListing {
  root: { id: string } & TreeTurns;
  rows: TreeRow[];
}

/** What a reference names: the root, a full name, or (anything else) a Session id. */
export type AgentRef =
  | { kind: "lead" }
  | { kind: "path"; segments: string[] }
  | { kind: "session"; id: string };

/** A value or a Promise of it: store methods may return either, reject, or throw. */
export type MaybePromise<T> = T | PromiseLike<T>;

export interface ReadOptions {
  /** Only events of these types (stores may ignore this; readers filter again). */
  types?: string[];
  /** Only events with `seq >= fromSeq`. */
  fromSeq?: number;
  /** The caller's cancellation, passed through so a store can stop real I/O. */
  signal?: AbortSignalLike;
}

export interface ReadManyOptions {
  types?: string[];
  signal?: AbortSignalLike;
}

/**
 * Session log storage supplied by the host. `read` resolves to the session's
 * events or `null` when the session does not exist. `readMany`, when present,
 * answers one result per id, in order: events, `null`, or an `Error` for that id.
 *
 * Reads may overlap: without `readMany`, listing calls `read` for up to 64
 * sessions of one tree level before the first answers (each session once),
 * so a tree of depth d costs d + 1 round trips of latency with either method.
 */
export interface SessionStore {
  append(sessionId: string, events: SessionEvent[]): MaybePromise<unknown>;
  read(sessionId: string, options: ReadOptions): MaybePromise<SessionEvent[] | null | undefined>;
  readMany?(
    sessionIds: string[],
    options: ReadManyOptions,
  ): MaybePromise<Array<SessionEvent[] | null | undefined | Error>>;
  flush?(sessionId: string): MaybePromise<unknown>;
}

export interface CallOptions {
  signal?: AbortSignalLike;
}

export interface ProjectCatalogOptions {
  /** Events with `seq` below this were inherited by a fork and are ignored (default 0). */
  inheritedEventCount?: number;
}

/** `new MemoryStore(options)`. */
export interface MemoryStoreOptions {
  /**
   * The most the store holds, each event measured as what it takes on the
   * heap (16 bytes per JSON value, string and key bytes, its type, plus 128
   * bytes): an append past it is refused `LIMIT_EXCEEDED` and changes
   * nothing. Default 256 MiB; 1 MiB - 2 GiB.
   */
  maxBytes?: number;
}
