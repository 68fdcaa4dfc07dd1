// subagent-tree, browser / bundler / default entry: fetches and instantiates
// the module with a top-level await, so importers can use it at once.
// `init` stays exported (idempotent) for callers that want to await it.
import glueInit, { errorCodeList, MemoryStore as GlueMemoryStore, SubagentRuntime } from './subagent_tree.js';
import { captureRuntimeClass } from './web/runtime-methods.js';
import { ownMemoryStore } from '__STORE_SNIPPET__';

await glueInit({ module_or_path: new URL('./subagent_tree_bg.wasm', import.meta.url) });

export * from './subagent_tree.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Idempotent (the module is instantiated on import). Resolves to nothing. */
export async function init() {}
/** Idempotent. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export { Agent } from '__RUNTIME_SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
// The glue's class, each instance filed as it is made so that runtimes and
// listings can use it natively (see the snippet's comments).
export const MemoryStore = ownMemoryStore(GlueMemoryStore);
// Before any page code can patch it: `<subagent-tree>` calls these, not the prototype's current ones
// (browser entry only: the element runs in pages, and workerd lists its modules).
captureRuntimeClass(SubagentRuntime);
