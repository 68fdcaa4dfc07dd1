// subagent-tree/lite, Cloudflare Workers / workerd entry: the small wasm
// imported as a compiled WebAssembly.Module and instantiated synchronously
// (workerd refuses to compile wasm from bytes). No ids or randomness at top level.
import wasm from './subagent_tree_lite_bg.wasm';
import { initSync as glueInitSync, errorCodeList } from './subagent_tree_lite.js';

glueInitSync({ module: wasm });

export * from './lite-exports.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Idempotent (the module is instantiated on import). Resolves to nothing. */
export async function init() {}
/** Idempotent. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
