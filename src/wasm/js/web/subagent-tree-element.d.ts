// subagent-tree/element: <subagent-tree>, an accessible, live agent-tree view.
/**
 * `<subagent-tree>`, an accessible, live agent-tree view.
 *
 * @module subagent-tree/element
 */
import type { BudgetState, CatalogEntry, CatalogMode, DiagnosticReason, SessionStore, SubagentStopReason } from '../index.js';

/** The part of a live runtime the element uses (a `SubagentRuntime` has it). */
export interface TreeRuntimeLike {
  listDescendants(rootSessionId: string, options: { signal?: AbortSignal }): Promise<unknown[]>;
  on?(type: any, listener: (detail: any) => void, options: { root?: string }): () => void;
}

/** A live agent handle as far as the element needs it. */
export interface TreeRootLike {
  readonly sessionId: string;
  readonly name: string;
}

export interface SubagentTreeSelectDetail {
  /** The member's Session id. */
  sessionId: string;
  /** Its full name (`lead`, `reviewer/checker`, or its Session id when unnamed). */
  name: string;
  /** False when `name` is a Session id (a member written before names, or under one). */
  named: boolean;
}

/**
 * A member's state as the element shows it, from the runtime's events:
 * `running` (a turn or an external run in progress), `idle` (resident, waiting
 * for input), `parked` (interrupted with unread input waiting for the next
 * message), `settled` (finished, not resident), `error` (its last turn or its
 * settlement failed).
 */
export type SubagentTreeMemberState = 'running' | 'idle' | 'parked' | 'settled' | 'error';

export interface SubagentTreeNodeInfo {
  sessionId: string;
  /** Its full name, or its Session id when unnamed. */
  name: string;
  /** False when `name` is a Session id (shown marked, as ASCII). */
  named: boolean;
  kind: 'root' | 'child' | 'diagnostic';
  parentId: string | null;
  /** Edges from the root (the root is 0). */
  depth: number;
  mode?: CatalogMode;
  label?: string;
  reason?: DiagnosticReason;
  hasChildren: boolean;
  /** Whether its children were listed (deep branches load when expanded). */
  loaded: boolean;
  expanded: boolean;
  activity?: 'running' | 'inactive';
  /** Its state, once an event said (a listing alone says only `activity`). */
  state?: SubagentTreeMemberState;
  /** Its last turn's output text (the latest non-empty one this view saw). */
  output?: string;
  /** How its last turn stopped (an external run: how it ended), from its events or its log; shown as the `stop` badge. */
  stopReason?: SubagentStopReason;
  /** While it runs: the last non-empty line its turn streamed (`subagent/delta`), at most 160 characters (its end). */
  live?: string;
  /** Input plus output tokens it spent (`own`) and its subtree (`subtree`), from a runtime's listing and later turns; `complete: false` when a turn was lost. */
  tokens?: { own: number; subtree: number; complete: boolean };
  /** Its own budget, set and remaining, where it has one (from the listing, its start event, then counted down by turns). */
  budget?: BudgetState;
}

export interface SubagentTreeEventMap extends Omit<HTMLElementEventMap, 'error' | 'select' | 'load'> {
  /** A member was selected (click, Enter or Space, or `select()`). */
  select: CustomEvent<SubagentTreeSelectDetail>;
  /** A (re)load finished; `count` members below the root are known. */
  load: CustomEvent<{ rootId: string; count: number }>;
  /** The tree or a branch could not be read. */
  error: CustomEvent<{ error: unknown; sessionId?: string }>;
}

/**
 * `<subagent-tree>`: renders one agent tree with ARIA tree roles and keyboard
 * navigation (Up/Down, Left/Right, Home/End, Enter/Space selects).
 * Attributes: `root-id`, `root-name`, `initial-depth`, `aria-label`.
 * An unnamed member is shown by its Session id: an `id` mark (part `id-mark`),
 * then the id in monospace (parts `name id`) with every character outside
 * printable ASCII shown as `⟪U+0435⟫`, so no id passes for a name.
 * Parts: `tree`, `item`, `row`, `toggle`, `name`, `id`, `id-mark`, `label`, `badge`, `mode`,
 * `activity` with the shown state (`running`, `idle`, `parked`, `settled`,
 * `error`, `inactive`), `stop` with how the last turn stopped (`completed`,
 * `aborted`, `error`, `budget-exhausted`, `max-tokens`, `refusal`, `other`),
 * `usage`, `budget` (a `role="meter"` bar) and `budget-fill`,
 * `reason`, `note`, `output` (`full` in the selected row, `live` for a running
 * turn's streamed line), `group`, `status`. Custom properties: `--subagent-tree-font`,
 * `-color`, `-muted`, `-accent`, `-indent`, `-hover`, `-selected`,
 * `-disabled`, `-running`, `-error`, `-id-mark`, `-budget`, `-budget-track` (each `--subagent-tree-…`).
 */
export declare class SubagentTreeElement extends HTMLElement {
  /** A live runtime: rows carry activity and follow its events. Write-only: never read back. */
  set runtime(value: TreeRuntimeLike | null);
  /** The root: a live `Agent` (with `runtime`) or a Session id. Write-only, like `runtime`. */
  set root(value: TreeRootLike | string | null);
  /** A store to read the tree from without a runtime. */
  store: SessionStore | null;
  /** The root Session id (alternative to `root`). */
  rootId: string | null;
  /** The root's full name (default: the root Agent's name, else `lead`). */
  rootName: string;
  /** Levels below the root listed up front (default 2); deeper branches are listed when expanded. */
  initialDepth: number;
  readonly selectedId: string | null;
  /** Resolves when the current (re)load has finished. */
  readonly ready: Promise<void>;
  /** Focuses the tree's current item (the one Tab reaches); the shadow root delegates focus. */
  focus(options?: FocusOptions): void;
  /** Reads the tree again, keeping expansion, focus and selection. */
  refresh(): Promise<void>;
  /**
   * Applies a `subagent/start`, `subagent/end`, `subagent/turn`, `subagent/message`, `subagent/catalog`
   * or `subagent/delta` event without reading anything (deltas show at the next animation frame).
   */
  applyEvent(
    type: 'subagent/start' | 'subagent/end' | 'subagent/turn' | 'subagent/message' | 'subagent/catalog' | 'subagent/delta' | string,
    detail: { id?: string; parentSessionId?: string; entry?: CatalogEntry } & Record<string, unknown>,
  ): void;
  /** Sets (or with `undefined` clears) a member's shown activity; `inactive` keeps a state events gave. */
  setActivity(sessionId: string, activity: 'running' | 'inactive' | undefined): void;
  expand(sessionId: string): Promise<void>;
  collapse(sessionId: string): void;
  /** Selects a member; emits `select` unless `emit: false`. Returns false for unknown or disabled rows. */
  select(sessionId: string, options?: { emit?: boolean; focus?: boolean }): boolean;
  nodeInfo(sessionId: string): SubagentTreeNodeInfo | null;
  addEventListener<K extends keyof SubagentTreeEventMap>(
    type: K,
    listener: (this: SubagentTreeElement, ev: SubagentTreeEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
}

declare global {
  interface HTMLElementTagNameMap {
    'subagent-tree': SubagentTreeElement;
  }
}

/** Tree text as the element shows it: bidi control characters replaced by visible `⟪U+202E⟫` marks. */
export declare function visibleText(value: unknown): string;

/** A Session id as the element shows it: every character outside printable ASCII replaced by a visible `⟪U+0435⟫` mark. */
export declare function idText(value: unknown): string;
