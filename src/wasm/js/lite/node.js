// subagent-tree/lite, Node entry: names, catalog, listing, resolveName,
// MemoryStore and errors from the small wasm (no runtime). Instantiated
// synchronously on import, like the full entry.
import { readFileSync } from 'node:fs';
import { initSync as glueInitSync, errorCodeList } from './subagent_tree_lite.js';

glueInitSync({ module: readFileSync(new URL('./subagent_tree_lite_bg.wasm', import.meta.url)) });

export * from './lite-exports.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Idempotent (the module is instantiated on import). Resolves to nothing. */
export async function init() {}
/** Idempotent. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
