// subagent-tree/lite, Cloudflare Workers / workerd entry: the small wasm
// imported as a compiled WebAssembly.Module and instantiated synchronously
// (workerd refuses to compile wasm from bytes). No ids or randomness at top level.
import wasm from './subagent_tree_lite_bg.wasm';
import { initSync as glueInitSync, errorCodeList, MemoryStore as GlueMemoryStore } from './subagent_tree_lite.js';
import { ownMemoryStore } from '__STORE_SNIPPET__';

glueInitSync({ module: wasm });

export * from './subagent_tree_lite.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Idempotent (the module is instantiated on import). Resolves to nothing. */
export async function init() {}
/** Idempotent. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
// The glue's class, each instance filed as it is made so that runtimes and
// listings can use it natively (see the snippet's comments).
export const MemoryStore = ownMemoryStore(GlueMemoryStore);
