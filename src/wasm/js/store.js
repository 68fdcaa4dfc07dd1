// Recognition of the package's own MemoryStore, so the runtime and the
// listing functions can use the core store inside wasm instead of calling
// its JS methods (each call converts every event Rust -> JS -> Rust).
//
// wasm-bindgen's methods trust `this.__wbg_ptr`, which page code can forge
// or change, so it is never the evidence. The full entries export
// `MemoryStore` as `ownMemoryStore(glue class)`: its constructor files the
// new object in this module's private WeakMap under the key the bridge's
// registry gave the store (`born`). `storeKey` then answers from that map and from the object's
// effective methods, never throwing. Every intrinsic is captured at load.
// Calling these exports from page code can at worst alias or refuse a live
// store: a key only ever names a store the bridge holds.

const { apply } = Reflect;
const { freeze } = Object;
const { get: weakGet, set: weakSet } = WeakMap.prototype;
const { get: mapGet, set: mapSet, delete: mapDelete } = Map.prototype;
const { has: setHas, add: setAdd } = Set.prototype;

const tags = new WeakMap(); // store object -> { key, ptr, methods, live }
const byKey = new Map(); // key -> record, while its store lives
const byPtr = new Map(); // pointer -> records of live stores there (one per wasm instance)
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

/** The bridge dropped the store with `key` (freed or finalized). */
export function died(key) {
  const rec = apply(mapGet, byKey, [key]);
  if (rec === undefined) return;
  rec.live = false;
  apply(mapDelete, byKey, [key]);
  const list = apply(mapGet, byPtr, [rec.ptr]) ?? [];
  const rest = [];
  for (let i = 0; i < list.length; i++) if (list[i] !== rec) rest[rest.length] = list[i];
  if (rest.length) apply(mapSet, byPtr, [rec.ptr, rest]);
  else apply(mapDelete, byPtr, [rec.ptr]);
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
    constructor() {
      super();
      const key = pending;
      pending = undefined;
      if (key === undefined) return;
      const rec = { key, ptr: this.__wbg_ptr, methods, live: true };
      apply(weakSet, tags, [this, rec]);
      apply(mapSet, byKey, [key, rec]);
      const list = apply(mapGet, byPtr, [rec.ptr]);
      if (list) list[list.length] = rec;
      else apply(mapSet, byPtr, [rec.ptr, [rec]]);
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
 * - key > 0: a genuine store with the package's own methods (native when the
 *   key is the bridge's; else another instance's store, or a freed one whose
 *   pointer is 0: its methods are safe to call);
 * - key < 0: the same with a changed `__wbg_ptr` (native only);
 * - 0: calling its methods would hand wasm a pointer that is no live store's;
 * - undefined: any other object (a JS store, or a genuine one whose methods
 *   were replaced), used through its methods.
 */
export function storeKey(obj) {
  const rec = apply(weakGet, tags, [obj]);
  const fns = [];
  let unpatched = rec !== undefined;
  for (let i = 0; i < NAMES.length; i++) {
    fns[i] = read(obj, NAMES[i]);
    if (unpatched && fns[i] !== rec.methods[i]) unpatched = false;
  }
  const ptr = read(obj, '__wbg_ptr');
  const nullPtr = ptr === 0 || ptr === undefined;
  if (unpatched) {
    if (rec.live) return ptr === rec.ptr ? rec.key : -rec.key;
    return nullPtr ? rec.key : 0;
  }
  if (nullPtr) return undefined;
  const live = apply(mapGet, byPtr, [ptr]) ?? [];
  for (let i = 0; i < fns.length; i++) {
    if (!apply(setHas, ownFns, [fns[i]])) continue;
    let found = false;
    for (let j = 0; j < live.length; j++) {
      const own = live[j].methods;
      if (own[0] === fns[i] || own[1] === fns[i] || own[2] === fns[i] || own[3] === fns[i]) found = true;
    }
    if (!found) return 0;
  }
  return undefined;
}
