// subagent-tree/lite, Node entry: names, catalog, listing, resolveName,
// MemoryStore and errors from the small wasm (no runtime). Instantiated
// synchronously on import, like the full entry.
import { readFileSync } from 'node:fs';
import { initSync, errorCodeList } from './subagent_tree_lite.js';

initSync({ module: readFileSync(new URL('./subagent_tree_lite_bg.wasm', import.meta.url)) });

export * from './subagent_tree_lite.js';
export { default as init } from './subagent_tree_lite.js';
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
