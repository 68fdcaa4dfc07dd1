// `node --import ./lite-entry.mjs`: every import of `subagent-tree` in that
// process loads `subagent-tree/lite` instead, so the full entry's suites can
// run unchanged against the lite wasm (lite-parity.test.mjs).
import { register } from 'node:module';

register('./lite-resolve.mjs', import.meta.url);
