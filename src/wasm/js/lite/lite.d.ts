// subagent-tree/lite: names, catalog, listing, resolveName, MemoryStore and
// errors, from a small wasm without the runtime. Same behaviour and error
// class as the full entry (`SubagentError` is one class shared by both).
export * from './subagent_tree_lite.js';
export { default as init } from './subagent_tree_lite.js';
export { SubagentError, errorCodes } from './index.js';
