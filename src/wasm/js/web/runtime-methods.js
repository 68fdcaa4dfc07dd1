// subagent-tree, browser: the `SubagentRuntime` methods `<subagent-tree>`
// calls, captured when the browser entry loads (it calls
// `captureRuntimeClass` before any page code can reach the class). The element
// holds its runtime privately; were it to call `runtime.listDescendants(...)`
// at call time, a page script that patched `SubagentRuntime.prototype` later
// would receive that runtime as `this`. This module imports nothing, so a page
// that only reads a store never downloads the runtime for it.
const { getPrototypeOf, freeze } = Object;
const { get: weakGet, has: weakHas, set: weakSet } = WeakMap.prototype;
const apply = Reflect.apply;

/** prototype -> the methods it had when its entry loaded (first capture wins). */
const byPrototype = new WeakMap();

/** Files `cls.prototype`'s `listTree`, `listDescendants` and `on` as they are now. */
export function captureRuntimeClass(cls) {
  const proto = cls.prototype;
  if (apply(weakHas, byPrototype, [proto])) return;
  apply(weakSet, byPrototype, [proto, freeze({ listTree: proto.listTree, listDescendants: proto.listDescendants, on: proto.on })]);
}

/**
 * The methods to call on `runtime`: the captured ones for a runtime an entry
 * made, else (a runtime-like object of the page's own) its methods as they
 * are now, read once. Missing methods are null.
 */
export function runtimeMethods(runtime) {
  const captured = apply(weakGet, byPrototype, [getPrototypeOf(runtime)]);
  const source = captured ?? runtime;
  const pick = (name) => (typeof source[name] === 'function' ? source[name] : null);
  return freeze({ listTree: pick('listTree'), listDescendants: pick('listDescendants'), on: pick('on') });
}
