// Recognition of the package's own MemoryStore, so the runtime and the
// listing functions can use the core store inside wasm instead of calling
// its JS methods (each call converts every event Rust -> JS -> Rust).
//
// The glue's methods find their object's wasm address in a WeakMap private
// to the glue (scripts/brand-classes.mjs), so a forged, copied or proxied
// object reaches no wasm: its methods throw a TypeError. The full entries
// export `MemoryStore` as `ownMemoryStore(glue class)`: its constructor files
// the new object in this module's private WeakMap under the key the bridge's
// registry gave the store (`born`). `storeKey` then answers from that map and
// from the object's effective methods, never throwing. Every intrinsic is
// captured at load. Calling these exports from page code can at worst refuse
// a store: a key only ever names a store the bridge holds.

const { apply } = Reflect;
const { freeze } = Object;
const { get: weakGet, set: weakSet } = WeakMap.prototype;
const { has: setHas, add: setAdd } = Set.prototype;

const tags = new WeakMap(); // store object -> { key, methods }
const ownFns = new Set(); // every MemoryStore class's own store methods
const NAMES = freeze(['append', 'read', 'readMany', 'flush']);
const UNREADABLE = freeze({});
let nextKey = 0;
let pending;

/** The bridge's MemoryStore constructor: a fresh key for the store it is making. */
export function born() {
  pending = ++nextKey;
  return pending;
}

/** The package's `MemoryStore`: the glue's class, whose instances are filed as they are made. */
export function ownMemoryStore(Glue) {
  const proto = Glue.prototype;
  const methods = [];
  for (let i = 0; i < NAMES.length; i++) {
    methods[i] = proto[NAMES[i]];
    apply(setAdd, ownFns, [methods[i]]);
  }
  freeze(methods);
  return class MemoryStore extends Glue {
    constructor(options) {
      super(options);
      const key = pending;
      pending = undefined;
      if (key === undefined) return;
      apply(weakSet, tags, [this, freeze({ key, methods })]);
    }
  };
}

function read(obj, name) {
  try {
    return obj[name];
  } catch {
    return UNREADABLE;
  }
}

/**
 * How the bridge may use a store object. Never throws.
 * - key > 0: a store this module made, with the package's own methods
 *   (native when the bridge still holds that key; else a freed store or
 *   another instance's, used through its methods, which are safe to call);
 * - 0: not a store this module made, yet with MemoryStore's methods (a copy,
 *   a Proxy or a forged object): they would only throw a TypeError;
 * - undefined: any other object (a JS store, or a genuine one whose methods
 *   were replaced), used through its methods.
 */
export function storeKey(obj) {
  const rec = apply(weakGet, tags, [obj]);
  let unpatched = rec !== undefined;
  let borrowed = false;
  for (let i = 0; i < NAMES.length; i++) {
    const fn = read(obj, NAMES[i]);
    if (unpatched && fn !== rec.methods[i]) unpatched = false;
    if (apply(setHas, ownFns, [fn])) borrowed = true;
  }
  if (unpatched) return rec.key;
  return rec === undefined && borrowed ? 0 : undefined;
}
