// subagent-tree, Cloudflare Workers / workerd entry (the `workerd` export
// condition). workerd refuses to compile wasm from bytes, so the module is
// imported as a compiled WebAssembly.Module and instantiated synchronously.
// Nothing here creates ids or randomness at module top level: workerd would
// kill the worker before it starts.
import wasm from './subagent_tree_bg.wasm';
import { initSync as glueInitSync, errorCodeList, MemoryStore as GlueMemoryStore } from './subagent_tree.js';
import { ownMemoryStore } from '__STORE_SNIPPET__';

glueInitSync({ module: wasm });

export * from './subagent_tree.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Already initialised on import; kept for code written for the web entry. Resolves to nothing. */
export async function init() {}
/** Already initialised on import. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export { Agent } from '__RUNTIME_SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
// The glue's class, each instance filed as it is made so that runtimes and
// listings can use it natively (see the snippet's comments).
export const MemoryStore = ownMemoryStore(GlueMemoryStore);
