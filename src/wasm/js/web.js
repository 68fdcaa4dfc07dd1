// subagent-tree, browser / bundler / default entry: fetches and instantiates
// the module with a top-level await, so importers can use it at once.
// `init` stays exported (idempotent) for callers that want to await it.
import glueInit, { errorCodeList, MemoryStore as GlueMemoryStore, SubagentRuntime } from './subagent_tree.js';
import { captureRuntimeClass } from './web/runtime-methods.js';
import { ownMemoryStore } from '__STORE_SNIPPET__';

const wasm = new URL('./subagent_tree_bg.wasm', import.meta.url);
try {
  await glueInit({ module_or_path: wasm });
} catch (cause) {
  // Most often a bundler that did not copy the .wasm next to its output (esbuild): say how to serve it.
  throw new Error(
    `subagent-tree could not load its WebAssembly module from ${wasm} (${cause?.message ?? cause}). ` +
      'Serve subagent_tree_bg.wasm beside the script that imports the package: a bundler that does not copy ' +
      'assets (esbuild) needs node_modules/subagent-tree/subagent_tree_bg.wasm, and subagent_tree_lite_bg.wasm ' +
      'for <subagent-tree> over a store, copied into its output directory (see "Bundlers" in the README).',
    { cause },
  );
}

export * from './subagent_tree.js';
// `init`/`initSync` shadow the glue's own: they return nothing, so the raw
// wasm exports (memory, allocator) never reach page code.
/** Idempotent (the module is instantiated on import). Resolves to nothing. */
export async function init() {}
/** Idempotent. Returns nothing. */
export function initSync() {}
export { SubagentError } from '__SNIPPET__';
export { Agent } from '__RUNTIME_SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
// The glue's class, each instance filed as it is made so that runtimes and
// listings can use it natively (see the snippet's comments).
export const MemoryStore = ownMemoryStore(GlueMemoryStore);
// Before any page code can patch it: `<subagent-tree>` calls these, not the prototype's current ones
// (browser entry only: the element runs in pages, and workerd lists its modules).
captureRuntimeClass(SubagentRuntime);
