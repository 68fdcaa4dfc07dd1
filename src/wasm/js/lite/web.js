// subagent-tree/lite, browser / bundler / default entry: the small wasm
// (names, catalog, listing, resolveName, MemoryStore, errors; no runtime),
// fetched and instantiated with a top-level await. `<subagent-tree>` loads
// this entry when it renders from a store.
import init, { errorCodeList } from './subagent_tree_lite.js';

await init({ module_or_path: new URL('./subagent_tree_lite_bg.wasm', import.meta.url) });

export * from './subagent_tree_lite.js';
export { init };
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
