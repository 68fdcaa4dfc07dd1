// Shortens the names a wasm and its wasm-bindgen glue share.
//
// wasm-bindgen names every import `__wbg_<name>_<16 hex digits>` in a module
// named after the glue file, and every export after its Rust item: about
// 30 incompressible bytes each, written twice (the wasm's import section and
// the glue's import object). `wasm-opt --minify-imports-and-exports-and-modules`
// has already renamed them in the wasm (one module, one- or two-letter names)
// and printed the map this script reads; here the glue is rewritten to match.
//
//   node scripts/minify-names.mjs <wasm> <glue.js> <map.json>
//
// Every rewrite is checked: a glue whose shape differs from what this expects
// fails the build instead of shipping a module that cannot link.
import { readFileSync, writeFileSync } from 'node:fs';

const [wasmPath, gluePath, mapPath] = process.argv.slice(2);
const fail = (message) => {
  console.error(`minify-names: ${gluePath}: ${message}`);
  process.exit(1);
};
const map = JSON.parse(readFileSync(mapPath, 'utf8'));
let glue = readFileSync(gluePath, 'utf8');
const escape = (s) => s.replace(/[$.*+?()[\]{}|\\^]/g, '\\$&');

const modules = [...new Set(WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(wasmPath))).map((i) => i.module))];
if (modules.length !== 1) fail(`expected the minified wasm to import from one module, not ${JSON.stringify(modules)}`);

// The import object: `return { __proto__: null, "<module>": importN, ... };`
const returned = /return \{\n\s*__proto__: null,\n((?:\s*"[^"]+": import\d+,\n)+)\s*\};/.exec(glue);
if (!returned) fail('the import object returned by __wbg_get_imports was not found');
const namespaces = new Map([...returned[1].matchAll(/"([^"]+)": (import\d+),/g)].map((m) => [m[1], m[2]]));
const own = [...namespaces].find(([, v]) => v === 'import0')?.[0];
if (!own) fail('the glue has no import0 module');

// Imports the glue defines (import0's functions) are renamed in place;
// direct imports of snippet modules join import0 under their new names.
const direct = [];
for (const [module, base, short] of map.imports) {
  const namespace = namespaces.get(module);
  if (!namespace) fail(`the wasm imports from ${module}, which the glue does not provide`);
  if (namespace !== 'import0') {
    direct.push(`        ${JSON.stringify(short)}: ${namespace}.${base},`);
    continue;
  }
  const key = new RegExp(`^(\\s+)${escape(base)}: function\\(`, 'gm');
  const found = glue.match(key)?.length ?? 0;
  if (found !== 1) fail(`import ${base} is defined ${found} times, not once`);
  glue = glue.replace(key, `$1${JSON.stringify(short)}: function(`);
}
glue = glue.replace(
  returned[0],
  `return {\n        __proto__: null,\n        ${JSON.stringify(modules[0])}: import0,\n    };`,
);
if (direct.length) {
  const head = 'const import0 = {\n        __proto__: null,\n';
  if (!glue.includes(head)) fail('the import0 object literal was not found');
  glue = glue.replace(head, head + direct.join('\n') + '\n');
}

// Exports are read as `wasm.<name>`.
for (const [name, short] of map.exports) {
  glue = glue.replace(new RegExp(`\\bwasm\\.${escape(name)}(?![\\w$])`, 'g'), `wasm.${short}`);
}
const left = glue.match(/__wbg_[A-Za-z0-9_]*_[0-9a-f]{16}\b|\bwasm\.(?!(?:[A-Za-z$_]{1,3})\b)[\w$]+/g);
if (left) fail(`names left unminified: ${[...new Set(left)].slice(0, 5).join(', ')}`);
writeFileSync(gluePath, glue);
