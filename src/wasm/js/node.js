// subagent-tree, Node entry (the `node` export condition): the module is
// compiled and instantiated synchronously on import, so no init call is needed.
import { readFileSync } from 'node:fs';
import { initSync as glueInitSync, errorCodeList, MemoryStore as GlueMemoryStore } from './subagent_tree.js';
import { ownMemoryStore } from '__STORE_SNIPPET__';

glueInitSync({ module: readFileSync(new URL('./subagent_tree_bg.wasm', import.meta.url)) });

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
