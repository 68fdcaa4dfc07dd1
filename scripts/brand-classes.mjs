// Rewrites a wasm-bindgen glue file (--target web, before minification) so
// that its exported classes check their receiver by a brand page code cannot
// forge. wasm-bindgen keeps each object's wasm address in a public
// `__wbg_ptr` property and every method passes `this.__wbg_ptr` straight to
// the wasm: a forged `{ __wbg_ptr: n }` (or `Class.__wrap(n)`) reached any
// runtime at that address, and a bad address trapped the module for good.
// Here the addresses live in a WeakMap private to the glue module, filled only
// by the glue's constructors and wrappers; a receiver that is not in it is a
// TypeError before any wasm call. A Proxy over an instance is not one either,
// as with the built-in classes (Map, Date).
//   node scripts/brand-classes.mjs pkg/subagent_tree.js
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
let src = readFileSync(file, 'utf8');
const fail = (why) => {
  console.error(`brand-classes: ${why} in ${file}; wasm-bindgen's glue changed, update scripts/brand-classes.mjs`);
  process.exit(1);
};

// Each class's writes and reads of the address name the class, so a method
// (free() too) called on an object of another class of this module is the
// same TypeError as a forged receiver, never another class's memory: the
// class of each brand write and read is the class (or wrapper, or destroyer)
// it sits in.
src = src.replace(/\nexport class (\w+) \{\n([\s\S]*?)\n\}\n/g, (whole, cls, body) =>
  whole
    .replace(/\bthis\.__wbg_ptr = ([^;\n]+);/g, `__wbg_brand(this, $1, '${cls}');`)
    .replace(/\bthis\.__wbg_ptr\b/g, `__wbg_ptr_of(this, '${cls}')`),
);

// `static __wrap(ptr)` is public on the exported class (a way to mint an
// object for any address): it becomes a module-private function.
const wrappers = [];
src = src.replace(/\n {4}static __wrap\(ptr\) \{\n([\s\S]*?)\n {4}\}\n/g, (_, body) => {
  const cls = /Object\.create\((\w+)\.prototype\)/.exec(body)?.[1];
  if (!cls) fail('a __wrap without Object.create(Class.prototype)');
  wrappers.push(`function __wbg_wrap_${cls}(ptr) {\n${body.replace(/\bobj\.__wbg_ptr = ([^;\n]+);/, `__wbg_brand(obj, $1, '${cls}');`)}\n}`);
  return '\n';
});
for (const w of wrappers) {
  const cls = /__wbg_wrap_(\w+)/.exec(w)[1];
  src = src.split(`${cls}.__wrap(`).join(`__wbg_wrap_${cls}(`);
}
if (src.includes('__wrap')) fail('a __wrap left over');

// `__destroy_into_raw()` is public too (it unbrands a live object without
// freeing it); each becomes a module-private function, called by its class's
// `free()` right below it.
const destroyers = [];
for (;;) {
  const m = /\n {4}__destroy_into_raw\(\) \{\n([\s\S]*?)\n {4}\}\n/.exec(src);
  if (!m) break;
  const cls = /(\w+)Finalization\.unregister\(this\)/.exec(m[1])?.[1];
  if (!cls) fail('a __destroy_into_raw without its FinalizationRegistry');
  const body = m[1].replace(`const ptr = __wbg_ptr_of(this, '${cls}');`, `const ptr = __wbg_ptr_or_0(this, '${cls}');`).replace(/\bthis\b/g, 'obj');
  if (!body.includes(`__wbg_ptr_or_0(obj, '${cls}')`)) fail(`${cls}'s __destroy_into_raw does not read its address first`);
  destroyers.push(`function __wbg_destroy_${cls}(obj) {\n${body}\n}`);
  const rest = src.slice(m.index + m[0].length);
  const call = 'this.__destroy_into_raw()';
  const at = rest.indexOf(call);
  if (at < 0 || !rest.slice(0, at).startsWith('    free() {')) fail(`${cls}'s free() does not follow __destroy_into_raw`);
  // A second free() (or a using block after one) is a no-op, not a wasm error.
  const freed = `__wbg_destroy_${cls}(this);\n        if (ptr === 0) return;`;
  src = src.slice(0, m.index) + '\n' + rest.slice(0, at) + freed + rest.slice(at + call.length + 1);
}
if (src.includes('__destroy_into_raw')) fail('a __destroy_into_raw left over (a class passed by value?)');

const prelude = `
// Receiver brands (scripts/brand-classes.mjs): intrinsics captured at load.
// An object's address, and the class that made it (kept when it is freed).
const __wbg_ptrs = new WeakMap();
const __wbg_classes = new WeakMap();
const { get: __wbg_get, set: __wbg_set } = WeakMap.prototype;
const __wbg_apply = Reflect.apply;
function __wbg_brand(obj, ptr, cls) {
    __wbg_apply(__wbg_set, __wbg_ptrs, [obj, ptr]);
    if (cls !== undefined) __wbg_apply(__wbg_set, __wbg_classes, [obj, cls]);
}
function __wbg_ptr_or_0(obj, cls) {
    const ptr = __wbg_apply(__wbg_get, __wbg_ptrs, [obj]);
    if (ptr === undefined) throw new TypeError('Illegal invocation: the receiver is not an object this module made (a copy, a Proxy or a forged object)');
    const made = __wbg_apply(__wbg_get, __wbg_classes, [obj]);
    if (cls !== undefined && made !== cls) throw new TypeError('Illegal invocation: the receiver is a ' + made + ', not a ' + cls);
    return ptr;
}
function __wbg_ptr_of(obj, cls) {
    const ptr = __wbg_ptr_or_0(obj, cls);
    if (ptr === 0) throw new TypeError('Illegal invocation: the receiver was freed (free() or a using block)');
    return ptr;
}
${wrappers.join('\n')}
${destroyers.join('\n')}
`;
// After the last import line at the top.
const lines = src.split('\n');
let at = 0;
for (let i = 0; i < lines.length && i < 40; i++) if (/^import /.test(lines[i])) at = i + 1;
if (at === 0) fail('no import lines at the top');
lines.splice(at, 0, prelude);
src = lines.join('\n');

// Writes, then reads, of the address (the moved wrappers' too).
src = src.replace(/\b(\w+)\.__wbg_ptr = ([^;\n]+);/g, '__wbg_brand($1, $2);');
src = src.replace(/\b(\w+)\.__wbg_ptr\b/g, '__wbg_ptr_of($1)');
if (/\.__wbg_ptr\b|\b__wbg_ptr\s*=/.test(src)) fail('an address use left over');
if (!/__wbg_ptr_of\(this, '\w+'\)/.test(src)) fail('no class found');
if (/__wbg_ptr_of\(this\)/.test(src)) fail('a method outside its class');
writeFileSync(file, src);
