// subagent-tree, Cloudflare Workers / workerd entry (the `workerd` export
// condition). workerd refuses to compile wasm from bytes, so the module is
// imported as a compiled WebAssembly.Module and instantiated synchronously.
// Nothing here creates ids or randomness at module top level: workerd would
// kill the worker before it starts.
import wasm from './subagent_tree_bg.wasm';
import { initSync, errorCodeList } from './subagent_tree.js';

initSync({ module: wasm });

export * from './subagent_tree.js';
export { default as init } from './subagent_tree.js';
export { SubagentError } from '__SNIPPET__';
export { Agent } from '__RUNTIME_SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
