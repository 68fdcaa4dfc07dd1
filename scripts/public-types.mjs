// Makes wasm-bindgen's pkg/subagent_tree.d.ts the package's public types:
// drops the loader internals (InitInput/InitOutput with the module's ~50
// mangled exports, initSync, the default init export: index.d.ts declares a
// DOM-free `init`), and each class's `free()` / `[Symbol.dispose]()`: they
// need the DOM and `esnext.disposable` libs, and a freed runtime only fails.
// Then it imports and re-exports the hand-written type modules given after it
// (src/wasm/js/types/*.d.ts, copied beside it by the build): the generated
// signatures name their types (`RuntimeInit`, `Row`, ...), which live in
// those files so that tsc checks them as files, not as Rust strings.
// Fails loudly when wasm-bindgen's output no longer has the expected shape.
//   node scripts/public-types.mjs pkg/subagent_tree.d.ts types/core.d.ts types/runtime.d.ts
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [file, ...modules] = process.argv.slice(2);
if (!file) throw new Error('usage: node scripts/public-types.mjs <pkg/subagent_tree.d.ts> [types/x.d.ts ...]');
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

// Every name a type module exports, imported for the generated signatures and
// re-exported; and what a module imports from beyond its folder (the `Agent`
// class of index.d.ts), which the generated signatures name too.
const own = `./${path.basename(file).replace(/\.d\.ts$/, '.js')}`;
const links = modules.flatMap((rel) => {
  const source = readFileSync(path.join(path.dirname(file), rel), 'utf8');
  const names = [...source.matchAll(/^export (?:declare )?(?:interface|type) (\w+)/gm)].map((m) => m[1]);
  if (names.length === 0) fail(`${rel} exports no types`);
  const spec = `./${rel.replace(/\.d\.ts$/, '.js')}`;
  const outside = [...source.matchAll(/^import type \{ ([\w, ]+) \} from '(\.\.\/[^']+)';$/gm)]
    .map(([, imported, from]) => [imported, `./${path.posix.join(path.posix.dirname(rel), from)}`])
    .filter(([, from]) => from !== own)
    .map(([imported, from]) => `import type { ${imported} } from '${from}';\n`);
  return [...outside, `import type { ${names.join(', ')} } from '${spec}';\nexport type { ${names.join(', ')} } from '${spec}';\n`];
});
const header = text.match(/^(?:\/\*.*\*\/\n|\/\/.*\n)*/)[0];
text = `${header}${links.join('')}${text.slice(header.length)}`;
writeFileSync(file, text);
console.log(`public-types: ${file}: loader types and ${removed} free/dispose declarations removed, ${modules.length} type module(s) linked`);
