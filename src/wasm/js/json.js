// The bridge's one-crossing fast path (src/wasm/fast.rs). JS data crosses into
// the wasm as one JSON string instead of one import per property and value,
// and results come back as one JSON string for `JSON.parse`.
//
// A writer first checks that the data is plain JSON data, then lets the
// engine's `JSON.stringify` write it. It gives up (returns undefined) on
// anything the exact Rust reader (src/wasm/convert.rs) would refuse or has to
// decide: a throwing getter or trap, a function, symbol or bigint, NaN,
// infinities and -0, too deep a nesting, an undefined property (the exact
// reader charges its key), anything that is not a plain object or array, or
// more data than the budget. The Rust reader then runs and words the error,
// so both paths accept the same data and refuse it with the same sentence.
// Every rule stays in Rust: this file only copies values. (Plain data is read
// twice, by the check and by `JSON.stringify`; a getter or Proxy trap that
// answers differently the second time has its second answer written.)

// Captured at module load: page code that patches these later cannot change
// what the bridge reads.
const isArray = Array.isArray;
const keys = Object.keys;
const protoOf = Object.getPrototypeOf;
const stringify = JSON.stringify;
const parse = JSON.parse;
const isRawJSON = JSON.isRawJSON;
const utf8 = new TextEncoder();
const encode = TextEncoder.prototype.encode;
const isInteger = Number.isInteger;
const call = Function.prototype.call.bind(Function.prototype.call);
const includes = Array.prototype.includes;
const regexTest = RegExp.prototype.test;
const SHORT_ASCII = /^[\x00-\x7f]{0,256}$/;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const OBJECT = Object.prototype;
const ARRAY = Array.prototype;

const GIVE_UP = {};
let size = 0;
let limit = 0;
let maxDepth = 0;

// Checks that `JSON.stringify` will write `v` as the exact reader reads it:
// plain objects (no `toJSON`, prototype Object.prototype or null) and plain
// arrays of finite numbers, strings, booleans and null. Anything else (class
// instances, boxed primitives, raw JSON, functions and the like) is left to
// the exact reader. `size` counts one per value plus the UTF-16 length of
// every string and key: a lower bound of the UTF-8 size the Rust side then
// measures exactly, so oversized data is left before it is copied.
function check(v, depth) {
  size++;
  if (v === null) return;
  switch (typeof v) {
    case 'boolean':
      return;
    case 'number':
      if (v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0)) throw GIVE_UP;
      return;
    case 'string':
      size += v.length;
      if (size > limit) throw GIVE_UP;
      return;
    case 'object':
      break;
    default:
      throw GIVE_UP;
  }
  if (depth >= maxDepth || (isRawJSON !== undefined && isRawJSON(v))) throw GIVE_UP;
  const proto = protoOf(v);
  if (isArray(v)) {
    const length = v.length;
    if (proto !== ARRAY || length > limit - size) throw GIVE_UP;
    for (let i = 0; i < length; i++) {
      const item = v[i];
      if (item === undefined) throw GIVE_UP;
      check(item, depth + 1);
    }
    return;
  }
  if ((proto !== OBJECT && proto !== null) || v.toJSON !== undefined) throw GIVE_UP;
  const names = keys(v);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    size += name.length;
    const item = v[name];
    if (item === undefined) throw GIVE_UP;
    check(item, depth + 1);
  }
}

function start(depth, budget) {
  size = 0;
  limit = budget;
  maxDepth = depth;
}

// The text as UTF-8 bytes: copying bytes into the wasm is one memcpy, where
// a string is copied a code unit at a time.
function finish(text) {
  // Escapes and punctuation make text longer than its measure; past this the
  // exact reader, which checks lengths before it copies, is the safer way.
  return text.length > 2 * limit + 1024 ? undefined : call(encode, utf8, text);
}

/** JSON text (UTF-8) of `value` nested at most `depth` levels within `budget`, or undefined. */
export function valueJson(value, depth, budget) {
  start(depth, budget);
  try {
    check(value, 0);
    return finish(stringify(value));
  } catch {
    return undefined;
  }
}

// `[[seq, type, payload], ...]` for one list of events. With `types`, an
// event whose short ASCII type is not among them is skipped unread, as the
// exact reader skips it.
function eventRows(list, types) {
  if (!isArray(list) || protoOf(list) !== ARRAY) throw GIVE_UP;
  const length = list.length;
  const rows = [];
  for (let i = 0; i < length; i++) {
    const event = list[i];
    if (event === null || (typeof event !== 'object' && typeof event !== 'function')) throw GIVE_UP;
    if (types !== undefined) {
      const wanted = event.type;
      if (typeof wanted === 'string' && !call(includes, types, wanted)) {
        if (call(regexTest, SHORT_ASCII, wanted)) continue;
        throw GIVE_UP;
      }
    }
    const seq = event.seq;
    if (typeof seq !== 'number' || !isInteger(seq) || seq < 0 || seq > MAX_SAFE) throw GIVE_UP;
    const type = event.type;
    if (typeof type !== 'string') throw GIVE_UP;
    size += type.length + 8;
    let payload = event.payload;
    if (payload === undefined) payload = null;
    check(payload, 0);
    rows.push([seq, type, payload]);
  }
  return rows;
}

/** A list of events as JSON text (UTF-8) `[[seq,"type",payload],...]`, or undefined. */
export function eventsJson(list, types, depth, budget) {
  start(depth, budget);
  try {
    return finish(stringify(eventRows(list, types)));
  } catch {
    return undefined;
  }
}

/**
 * A `readMany` answer (per session: a list of events, or null/undefined for
 * none) as one JSON text (UTF-8), each list within `budget`; or undefined.
 */
export function eventListsJson(lists, types, depth, budget) {
  start(depth, budget);
  try {
    if (!isArray(lists) || protoOf(lists) !== ARRAY) return undefined;
    const out = [];
    for (let i = 0; i < lists.length; i++) {
      const list = lists[i];
      size = 0;
      out.push(list === null || list === undefined ? null : eventRows(list, types));
    }
    return finish(stringify(out));
  } catch {
    return undefined;
  }
}

/** JSON text written by the bridge, as fresh JS data. */
export function fromJson(text) {
  return parse(text);
}

/**
 * Listing rows from JSON. A row whose `path` the bridge gave as one segment
 * has a base row (`bases[i] >= 0`): its path is that row's path, `/`, and the
 * segment. V8 keeps the concatenation as a rope, so a 20,000-deep chain costs
 * memory linear in the tree.
 */
export function rowsFromJson(text, bases) {
  const rows = parse(text);
  for (let i = 0; i < rows.length; i++) {
    const base = bases[i];
    if (base >= 0) rows[i].path = `${rows[base].path}/${rows[i].path}`;
  }
  return rows;
}
