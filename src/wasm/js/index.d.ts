// subagent-tree: types of every entry (node, workerd, browser/default).
export * from './subagent_tree.js';
/** Idempotent: every entry instantiates the module on import. Resolves to nothing (no raw wasm exports). */
export declare function init(options?: unknown): Promise<void>;
/** Idempotent. Returns nothing. */
export declare function initSync(options?: unknown): void;
import type { SubagentErrorCode } from './subagent_tree.js';

/**
 * Every failure the library reports. `code` is stable; `message` is one
 * sentence naming the offending value; `cause` (when present) is the value a
 * store threw, or the `AbortSignal`'s `reason` for `CANCELLED`.
 */
export declare class SubagentError extends Error {
  constructor(code: SubagentErrorCode, message: string, options?: { cause?: unknown });
  readonly name: 'SubagentError';
  readonly code: SubagentErrorCode;
  cause?: unknown;
}

/**
 * A live member handle from a `SubagentRuntime`. Holding the exact handle is
 * the only authority the runtime accepts: a Session id or a name never
 * authorizes anything, a plain object with the same fields is no handle, and
 * a handle whose member left residency is dead (`live` is false).
 */
export declare class Agent {
  private constructor();
  readonly sessionId: string;
  /** Full name: `lead`, a path such as `reviewer/checker`, or the Session id. */
  readonly name: string;
  readonly rootId: string;
  readonly parentId?: string;
  /** Edges from the root (the root is 0). */
  readonly depth: number;
  readonly live: boolean;
  toJSON(): { sessionId: string; name: string };
}

/** Every error code, in a stable order. */
export declare const errorCodes: readonly SubagentErrorCode[];
