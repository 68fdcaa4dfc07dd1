// subagent-tree/lite, Cloudflare Workers / workerd entry: the small wasm
// imported as a compiled WebAssembly.Module and instantiated synchronously
// (workerd refuses to compile wasm from bytes). No ids or randomness at top level.
import wasm from './subagent_tree_lite_bg.wasm';
import { initSync, errorCodeList } from './subagent_tree_lite.js';

initSync({ module: wasm });

export * from './subagent_tree_lite.js';
export { default as init } from './subagent_tree_lite.js';
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
