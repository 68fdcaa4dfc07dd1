// Makes wasm-bindgen's pkg/subagent_tree.d.ts the package's public types:
// drops the loader internals (InitInput/InitOutput with the module's ~50
// mangled exports, initSync, the default init export: index.d.ts declares a
// DOM-free `init`), and each class's `free()` / `[Symbol.dispose]()`: they
// need the DOM and `esnext.disposable` libs, and a freed runtime only fails.
// Fails loudly when wasm-bindgen's output no longer has the expected shape.
//   node scripts/public-types.mjs pkg/subagent_tree.d.ts
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) throw new Error('usage: node scripts/public-types.mjs <pkg/subagent_tree.d.ts>');
const fail = (why) => {
  console.error(`public-types: ${file}: ${why} (did the wasm-bindgen version change?)`);
  process.exit(1);
};

let text = readFileSync(file, 'utf8');
const before = text.length;

const loader = text.indexOf('\nexport type InitInput =');
if (loader < 0) fail('no `export type InitInput` to cut the loader types at');
if (!/export default function __wbg_init/.test(text.slice(loader))) fail('the loader types are not at the end');
text = `${text.slice(0, loader).trimEnd()}\n`;

const classes = (text.match(/^export class \w+ \{$/gm) ?? []).length;
let removed = 0;
text = text.replace(/^ {4}(?:free\(\): void;|\[Symbol\.dispose\]\(\): void;)\n/gm, () => {
  removed += 1;
  return '';
});
if (classes === 0 || removed !== classes * 2) fail(`expected free() and [Symbol.dispose]() on each of ${classes} classes, removed ${removed} lines`);

for (const internal of ['InitOutput', 'initSync', 'Symbol.dispose', 'WebAssembly', 'RequestInfo', '__wbg', 'free()']) {
  if (text.includes(internal)) fail(`still mentions ${internal}`);
}
writeFileSync(file, text);
console.log(`public-types: ${file}: loader types and ${removed} free/dispose declarations removed (${before - text.length} bytes)`);
