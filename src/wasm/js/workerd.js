// subagent-tree, Cloudflare Workers / workerd entry (the `workerd` export
// condition). workerd refuses to compile wasm from bytes, so the module is
// imported as a compiled WebAssembly.Module and instantiated synchronously.
// Nothing here creates ids or randomness at module top level: workerd would
// kill the worker before it starts.
import wasm from './subagent_tree_bg.wasm';
import { initSync as glueInitSync, errorCodeList } from './subagent_tree.js';

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
