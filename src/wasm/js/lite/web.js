// subagent-tree/lite, browser / bundler / default entry: the small wasm
// (names, catalog, listing, resolveName, MemoryStore, errors; no runtime),
// fetched and instantiated with a top-level await. `<subagent-tree>` loads
// this entry when it renders from a store.
import glueInit, { errorCodeList } from './subagent_tree_lite.js';

const wasm = new URL('./subagent_tree_lite_bg.wasm', import.meta.url);
try {
  await glueInit({ module_or_path: wasm });
} catch (cause) {
  // Most often a bundler that did not copy the .wasm next to its output (esbuild): say how to serve it.
  throw new Error(
    `subagent-tree/lite could not load its WebAssembly module from ${wasm} (${cause?.message ?? cause}). ` +
      'Serve subagent_tree_lite_bg.wasm beside the script that imports it: a bundler that does not copy ' +
      'assets (esbuild) needs node_modules/subagent-tree/subagent_tree_lite_bg.wasm copied into its output ' +
      'directory (see "Bundlers" in the README).',
    { cause },
  );
}

export * from './lite-exports.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Idempotent (the module is instantiated on import). Resolves to nothing. */
export async function init() {}
/** Idempotent. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
