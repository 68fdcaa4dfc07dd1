// subagent-tree, browser / bundler / default entry: fetches and instantiates
// the module with a top-level await, so importers can use it at once.
// `init` stays exported (idempotent) for callers that want to await it.
import init, { errorCodeList } from './subagent_tree.js';

await init({ module_or_path: new URL('./subagent_tree_bg.wasm', import.meta.url) });

export * from './subagent_tree.js';
export { init };
export { SubagentError } from '__SNIPPET__';
export { Agent } from '__RUNTIME_SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
