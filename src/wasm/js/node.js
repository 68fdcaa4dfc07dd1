// subagent-tree, Node entry (the `node` export condition): the module is
// compiled and instantiated synchronously on import, so no init call is needed.
import { readFileSync } from 'node:fs';
import { initSync, errorCodeList } from './subagent_tree.js';

initSync({ module: readFileSync(new URL('./subagent_tree_bg.wasm', import.meta.url)) });

export * from './subagent_tree.js';
export { default as init } from './subagent_tree.js';
export { SubagentError } from '__SNIPPET__';
export { Agent } from '__RUNTIME_SNIPPET__';
export const errorCodes = Object.freeze(errorCodeList());
