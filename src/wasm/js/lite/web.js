// subagent-tree/lite, browser / bundler / default entry: the small wasm
// (names, catalog, listing, resolveName, MemoryStore, errors; no runtime),
// fetched and instantiated with a top-level await. `<subagent-tree>` loads
// this entry when it renders from a store.
import glueInit, { errorCodeList } from './subagent_tree_lite.js';

await glueInit({ module_or_path: new URL('./subagent_tree_lite_bg.wasm', import.meta.url) });

export * from './lite-exports.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Idempotent (the module is instantiated on import). Resolves to nothing. */
export async function init() {}
/** Idempotent. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
