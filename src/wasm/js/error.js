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

/** Builds an error; `cause` is set only when `hasCause`, so it stays absent otherwise. */
export function makeError(code, message, hasCause, cause) {
  return hasCause ? new SubagentError(code, message, { cause }) : new SubagentError(code, message);
}

/** The code of a SubagentError thrown by a store or callback, or undefined for anything else. */
export function codeOf(value) {
  try {
    if (value instanceof SubagentError && typeof value.code === 'string') return value.code;
  } catch {
    // A Proxy whose traps throw is not ours.
  }
  return undefined;
}

/** A short, safe description of a thrown value for an error sentence. */
export function describeThrown(value) {
  try {
    if (value instanceof Error) {
      const message = String(value.message);
      const name = String(value.name);
      return message ? `${name}: ${message}` : name;
    }
    if (typeof value === 'string') return JSON.stringify(value);
    if (value === null || value === undefined || typeof value !== 'object') return String(value);
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
