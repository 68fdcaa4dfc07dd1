// subagent-tree/testing: a test-harness kit (scripted hosts, record and replay, determinism, settling, snapshots, portable trees).
/**
 * A test-harness kit over the public API, the same in Node, browsers and
 * workerd: scripted hosts, record and replay of model turns, a virtual clock
 * and a seeded id source, settling a whole tree, stable tree snapshots, and
 * moving every log of a tree between two stores.
 *
 * @module subagent-tree/testing
 */
import type { AbortSignalLike, DeltaPart, Usage, Agent, AgentHost, AgentTurn, AgentTurnOutcome, JsonValue, SessionEvent, SessionStore, SubagentRuntime, SubagentStopReason } from '../index.js';

/** Every code a `TestingError` can carry. */
export type TestingErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_SCRIPT'
  | 'UNSCRIPTED_TURN'
  | 'SCRIPT_MISMATCH'
  | 'SCRIPTED_FAILURE'
  | 'INVALID_CASSETTE'
  | 'REPLAY_DRIFT'
  | 'INVALID_BUNDLE'
  | 'TARGET_NOT_EMPTY'
  | 'IMPORT_FAILED';

/** Every failure of this kit; `code` is stable, `message` names the member and turn where there is one. */
export declare class TestingError extends Error {
  constructor(code: TestingErrorCode, message: string, options?: { cause?: unknown });
  readonly name: 'TestingError';
  readonly code: TestingErrorCode;
  cause?: unknown;
}

/** Every testing error code, in a stable order. */
export declare const testingErrorCodes: readonly TestingErrorCode[];

/** A clock for `RuntimeInit.now`: each read returns the time, then moves it on by `tick` ms. */
export interface VirtualClock {
  readonly now: () => number;
  /** The time the next read returns (does not tick). */
  peek(): number;
  /** Moves the clock on by `ms`; returns the new time. */
  advance(ms: number): number;
}

/** A virtual clock (default start 1,700,000,000,000 ms, tick 1 ms per read). */
export declare function virtualClock(options?: { start?: number; tick?: number }): VirtualClock;

/** A seeded id source for `RuntimeInit.newId`: the same UUID-shaped ids, in the same order, for the same seed. */
export declare function seededIds(seed?: string | number): (kind: 'session' | 'message') => string;

/** One step of a scripted turn. */
export type ScriptStep =
  /** Calls the member's tool by name (`spawn_agent`, `send_message`, ...); `expectError` checks `isError`. */
  | { call: string; input?: JsonValue; expectError?: boolean }
  /** An assistant message (the output is the last non-empty one). */
  | { say: string }
  /** Streams a part (or parts, in order) to `subagent/delta` listeners, as a model host would. */
  | { emit: DeltaPart | DeltaPart[] }
  /**
   * Waits until a message is steered in (any, or one whose text contains / matches); ends `aborted` if
   * interrupted first. If the rest of the tree goes quiet without one (`turn.waitForSteered()` says
   * `quiet`), the turn fails with `SCRIPT_MISMATCH` instead of hanging.
   */
  | { waitForMessage: true | string | RegExp }
  /** Works until interrupted, then ends `aborted`; `SCRIPT_MISMATCH` if the rest of the tree goes quiet first. */
  | { waitForAbort: true };

/** One scripted turn. */
export interface ScriptTurnSpec {
  /** The turn's input text (joined by newlines) must contain this / match it (`SCRIPT_MISMATCH`). */
  expectInput?: string | RegExp;
  steps?: ScriptStep[];
  /** The final assistant message. */
  reply?: string;
  stopReason?: SubagentStopReason;
  diagnostic?: string;
  structured?: JsonValue;
  /** What the turn reports spending (recorded in its `turn/end`, rolled up by `runtime.usage`). */
  usage?: Usage;
  /** The turn throws (`SCRIPTED_FAILURE`) after its steps: the runtime records an `error` turn. */
  fail?: string;
}

/** A turn: the reply text, a turn object, or a function for anything else. */
export type ScriptTurn = string | ScriptTurnSpec | ((turn: AgentTurn) => AgentTurnOutcome | undefined | Promise<AgentTurnOutcome | undefined>);

/** Turns per full name (`lead`, `reviewer`, `reviewer/checker`), in order. */
export type Script = Record<string, ScriptTurn[]>;

/** What kit hosts share: the errors their turns threw, and `check()` that throws the first. */
export interface CheckedHost extends AgentHost {
  readonly failures: readonly Error[];
  check(): void;
}

export interface ScriptedHost extends CheckedHost {
  /** Not needed any more (waits use the turn's `waitForSteered` / `waitForInterrupt`); kept for earlier callers. */
  attach(runtime: SubagentRuntime): this;
}

/** A host playing `script`; an unscripted turn throws `UNSCRIPTED_TURN` naming the member and the turn number. */
export declare function scriptedHost(script: Script, options?: { onTurn?: (info: { name: string; turn: number; inputText: readonly string[] }) => void }): ScriptedHost;

/** One step of a recorded turn, in order. */
export type CassetteStep =
  | { call: string; input: JsonValue; result?: { content: string; isError: boolean; structured?: JsonValue } }
  | { steered: string[] }
  /** The turn's signal aborted here (an interrupt, disposal or drain); cassette version 2. */
  | { aborted: true };

/** One line of a cassette after its header: a turn, keyed by `name` and `turn` (from 1). */
export interface CassetteRecord {
  name: string;
  turn: number;
  first: boolean;
  inputText: string[];
  /** What the turn was offered (absent in older cassettes, then not compared): its tools' names, output schema (`null` for none) and cwd. A replay offered otherwise is drift. */
  tools?: string[];
  outputSchema?: JsonValue;
  cwd?: string;
  steps: CassetteStep[];
  /** What the host returned (`null` for nothing). */
  outcome?: JsonValue;
  /** What the host threw instead: its message, and its name when not `Error`. */
  error?: string;
  errorName?: string;
}

export interface RecordingHost extends AgentHost {
  /** The turns recorded so far, in the order they ended. */
  readonly records: readonly CassetteRecord[];
  /** The cassette: a header line, then one JSON line per turn. */
  cassette(): string;
  /** Calls the wrapped host's `attach`, if it has one. */
  attach(runtime: SubagentRuntime): this;
  /** Calls the wrapped host's `check`, if it has one. */
  check(): void;
}

export declare const CASSETTE_FORMAT: 'subagent-tree/cassette';
/** The version `recordingHost` writes: 2 (adds `{aborted: true}` steps). Version 1 cassettes still replay. */
export declare const CASSETTE_VERSION: 2;

/** Wraps `host`, recording every turn; `onRecord` receives each JSON line (the header first) as it is written. */
export declare function recordingHost(host: AgentHost, options?: { onRecord?: (line: string) => void }): RecordingHost;

/** A replaying host. */
export interface ReplayHost extends CheckedHost {
  /** Not needed any more (waits use the turn's own conditions); kept for earlier callers. */
  attach(runtime: SubagentRuntime): this;
}

/**
 * A host replaying a cassette without a model; drift ends the turn with
 * `REPLAY_DRIFT` naming member, turn and first difference. A recorded step
 * of steered messages waits (`turn.waitForSteered()`) until as many arrive;
 * a recorded `{aborted: true}` step waits (`turn.waitForInterrupt()`) for
 * the same interrupt. Either wait that ends because the rest of the tree is
 * quiet (or the turn ended) is drift, never a hang; so is an interrupt the
 * recorded turn did not have.
 */
export declare function replayHost(
  cassette: string | CassetteRecord[],
  /** `onTurn` runs as each replayed turn starts, its signal live: where a test repeats an interrupt from outside the tree. */
  options?: { onTurn?: (info: { name: string; turn: number; inputText: readonly string[] }) => void },
): ReplayHost;

/** Checks a cassette (`INVALID_CASSETTE`); its records by `"<turn> <name>"`. */
export declare function parseCassette(cassette: string | CassetteRecord[]): Map<string, CassetteRecord>;

/** Where two JSON values first differ (`path: recorded X, now Y`), or `undefined`. */
export declare function firstDifference(recorded: unknown, now: unknown, path?: string): string | undefined;

/** Resolves once the whole tree is quiet, then calls each host's `check()`. */
export declare function settle(runtime: SubagentRuntime, root: Agent, options?: { hosts?: readonly { check?(): void }[]; signal?: AbortSignalLike }): Promise<void>;

/** A stable text of the tree: full names, labels, mode, activity, last stop reason and output. */
export declare function snapshotTree(runtime: SubagentRuntime, store: SessionStore, root: Agent | string, options?: { maxOutput?: number }): Promise<string>;

export declare const BUNDLE_FORMAT: 'subagent-tree/tree-bundle';

/** Every log of a tree, JSON-ready. */
export interface TreeBundle {
  format: 'subagent-tree/tree-bundle';
  version: 1;
  rootId: string;
  /** The root first, then descendants breadth-first. */
  sessions: { id: string; events: SessionEvent[] }[];
  /** Catalogued children whose log the source store did not have. */
  missing?: string[];
}

/** Reads every log of the tree under `rootId`. */
export declare function exportTree(store: SessionStore, rootId: string, options?: { signal?: AbortSignalLike }): Promise<TreeBundle>;

/** Writes a bundle (or its JSON text) into a store without those sessions: checked whole first, root written last. */
export declare function importTree(store: SessionStore, bundle: TreeBundle | string, options?: { signal?: AbortSignalLike }): Promise<{ rootId: string; sessions: number }>;

/** Every log of a tree as one canonical JSON-lines text, for byte-for-byte comparisons. */
export declare function treeLogText(store: SessionStore, rootId: string): Promise<string>;
