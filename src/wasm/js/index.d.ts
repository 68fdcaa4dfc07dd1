// subagent-tree: types of every entry (node, workerd, browser/default).
export * from './subagent_tree.js';
export { default as init } from './subagent_tree.js';
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

/** Every error code, in a stable order. */
export declare const errorCodes: readonly SubagentErrorCode[];
