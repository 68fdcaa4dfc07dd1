// subagent-tree: types of every entry (node, workerd, browser/default).
// `subagent_tree.d.ts` is wasm-bindgen's output with the loader's internals
// (the raw wasm exports, the synchronous loader, the classes' manual memory
// release) removed by scripts/public-types.mjs, so these types need neither
// the DOM lib, `@types/node` nor `esnext.disposable` (pkg-tests/types-bare).
/**
 * Names, catalogs, listing and the live subagent runtime. Every entry (Node, workerd, browsers and bundlers) has these types.
 *
 * @module subagent-tree
 */
export * from './subagent_tree.js';
import type { SubagentErrorCode } from './subagent_tree.js';

/** A `Response`, where the environment's types have one (DOM, `@types/node`). */
export type ResponseLike = typeof globalThis extends { Response: { prototype: infer R } } ? R : never;
/** A `WebAssembly.Module`, where the environment's types have one (DOM, workers). */
export type WasmModuleLike = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/** A `URL`, where the environment's types have one (DOM, `@types/node`, workers). */
export type URLLike = typeof globalThis extends { URL: { prototype: infer U } } ? U : never;

/** Where `init` may load the module from: a URL, its bytes, a fetch `Response` or a compiled module. */
export type InitInput = string | URLLike | ArrayBuffer | ArrayBufferView | ResponseLike | WasmModuleLike;

/**
 * Instantiates the WebAssembly module. Every entry already does this on
 * import (Node and workerd synchronously, browsers with a top-level await),
 * so calling it is never required; it is idempotent, and lets a browser app
 * load the `.wasm` from somewhere else.
 */
export declare function init(input?: { module_or_path: InitInput | Promise<InitInput> }): Promise<void>;

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
  /** The member's identity (also its `childId`, a model's `subagentId`). */
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
