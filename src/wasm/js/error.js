// The error class every failure of subagent-tree is an instance of, plus the
// few helpers the Rust bridge needs that must not throw into WebAssembly.
// wasm-bindgen copies this file into pkg/snippets/; the package entries
// re-export the class from there, so `instanceof SubagentError` holds for the
// exact class the bridge throws.

export class SubagentError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.code = code;
  }
}

// `name` is on the prototype (so it is not an own enumerable field, like a
// built-in Error's), and `code` is an own field.
Object.defineProperty(SubagentError.prototype, 'name', { value: 'SubagentError', writable: true, configurable: true });

// Captured at module load: page code that patches String.prototype later
// cannot change what the bridge sees.
const wellFormed = String.prototype.isWellFormed;
const stringSlice = String.prototype.slice;
const call = Function.prototype.call.bind(Function.prototype.call);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const regexTest = RegExp.prototype.test;

/** Whether a string is well-formed UTF-16 (no lone surrogate). Never throws. */
export function isWellFormed(text) {
  if (typeof text !== 'string') return false;
  return wellFormed ? call(wellFormed, text) : !call(regexTest, LONE_SURROGATE, text);
}

/** At most `max` code units of `text` (the bridge copies only short text). */
function cut(text, max) {
  return text.length > max ? `${call(stringSlice, text, 0, max)}…` : text;
}

/** Builds an error; `cause` is set only when `hasCause`, so it stays absent otherwise. */
export function makeError(code, message, hasCause, cause) {
  return hasCause ? new SubagentError(code, message, { cause }) : new SubagentError(code, message);
}

/** The code of a SubagentError thrown by a store or callback, or undefined for anything else. */
export function codeOf(value) {
  try {
    if (value instanceof SubagentError && typeof value.code === 'string' && value.code.length <= 64) return value.code;
  } catch {
    // A Proxy whose traps throw is not ours.
  }
  return undefined;
}

/** A short, safe description of a thrown value for an error sentence (at most 300 code units). */
export function describeThrown(value) {
  try {
    return cut(describeFull(value), 300);
  } catch {
    return 'a value that could not be described';
  }
}

function describeFull(value) {
  try {
    if (value instanceof Error) {
      const message = cut(String(value.message), 300);
      const name = cut(String(value.name), 60);
      return message ? `${name}: ${message}` : name;
    }
    if (typeof value === 'string') return JSON.stringify(cut(value, 300));
    if (value === null || value === undefined || typeof value !== 'object') return cut(String(value), 300);
    return 'a non-Error object';
  } catch {
    return 'a value that could not be described';
  }
}

/**
 * A fresh native Promise settled by `value`: plain values, Promises, thenables
 * and thenables whose `then` throws all settle it; it never throws itself.
 */
export function settle(value) {
  return new Promise((resolve) => resolve(value));
}
