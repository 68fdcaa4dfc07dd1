// subagent-tree/lite: names, catalog, listing, resolveName, MemoryStore and
// errors, from a small wasm without the runtime. Same behaviour and error
// class as the full entry (`SubagentError` is one class shared by both).
export * from './subagent_tree_lite.js';
/** Idempotent: every entry already instantiates the module on import (see the main entry's `init`). */
export declare function init(input?: { module_or_path: import('./index.js').InitInput | Promise<import('./index.js').InitInput> }): Promise<void>;
/** Idempotent. Returns nothing. */
export declare function initSync(options?: unknown): void;
export { SubagentError, errorCodes } from './index.js';
