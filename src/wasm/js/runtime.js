// The JS side of the runtime bridge: agent handles, activations, turns and
// tools. A handle's key lives in this module's private WeakMap, so a handle
// cannot be forged from its visible fields; every callable routes through one
// dispatcher the bridge installs, so no per-object Rust closure is ever leaked.
//
// This file ships in the package (wasm-bindgen imports it), so page code can
// import it too. Nothing exported here mints, looks up or replaces a handle
// or the dispatcher without the capability `CAP`, which only the first
// `installDispatcher` call receives: the bridge makes that call while the
// module is instantiated. Every intrinsic the handle table and the builders
// use is captured at module load, so patching `WeakMap.prototype`,
// `Object.freeze` or `Array.prototype` later changes nothing here, and
// objects that carry a handle get it as an own property (never through an
// assignment an `Object.prototype` setter could intercept).

const keys = new WeakMap();
const { apply } = Reflect;
const { get: weakGet, set: weakSet } = WeakMap.prototype;
const { freeze, create, defineProperty } = Object;
const { catch: promiseCatch, then: promiseThen } = Promise.prototype;
const promiseReject = Promise.reject.bind(Promise);
const WAIT_ENDS = freeze(['steered', 'aborted', 'quiet', 'ended']);
const TypeErrorCtor = TypeError;
const ErrorCtor = Error;

/** The capability: created here, handed out once. */
const CAP = freeze(create(null));
let dispatcher = null;

function own(obj, key, value) {
  defineProperty(obj, key, { __proto__: null, value, enumerable: true, writable: false, configurable: false });
}

function check(cap) {
  if (cap !== CAP) throw new TypeErrorCtor('subagent-tree: only the runtime bridge can do this');
}

/** Installs the dispatcher `(op, args) => result`: only once; returns the capability to that first caller. */
export function installDispatcher(fn) {
  if (dispatcher !== null || typeof fn !== 'function') return undefined;
  dispatcher = fn;
  return CAP;
}

function dispatch(op, ...args) {
  if (dispatcher === null) throw new ErrorCtor("subagent-tree: the runtime bridge is not initialised; import from 'subagent-tree' (its entries initialise the module) and create a SubagentRuntime before using its handles");
  return dispatcher(op, args);
}

function keyOf(value) {
  return apply(weakGet, keys, [value]);
}

/** A live member handle: holding the exact handle is the only authority the runtime accepts. */
export class Agent {
  constructor() {
    throw new TypeError('Agent handles cannot be constructed: take them from a SubagentRuntime (openRoot(), startActivation(...).agent, turn.agent or runtime.reopen(root, name))');
  }

  /** Whether the member is still resident and live (a disposed handle is dead). */
  get live() {
    const key = keyOf(this);
    return key !== undefined && dispatch('isLive', key.runtime, key.sessionId, key.incarnation) === true;
  }

  toJSON() {
    return { sessionId: this.sessionId, name: this.name };
  }
}
freeze(Agent.prototype);
freeze(Agent);
const AGENT_PROTOTYPE = Agent.prototype;

export function makeAgent(cap, runtime, sessionId, incarnation, name, rootId, parentId, depth) {
  check(cap);
  const agent = create(AGENT_PROTOTYPE);
  own(agent, 'sessionId', sessionId);
  own(agent, 'name', name);
  own(agent, 'rootId', rootId);
  own(agent, 'depth', depth);
  if (parentId !== undefined) own(agent, 'parentId', parentId);
  apply(weakSet, keys, [agent, freeze({ runtime, sessionId, incarnation })]);
  return freeze(agent);
}

/** `[runtimeId, sessionId, incarnation]` of a genuine handle, else undefined. Never throws. */
export function agentKey(cap, value) {
  check(cap);
  try {
    const key = typeof value === 'object' && value !== null ? keyOf(value) : undefined;
    return key === undefined ? undefined : [key.runtime, key.sessionId, key.incarnation];
  } catch {
    return undefined;
  }
}

/** An activation receipt; `dispose()` returns the same promise every time. */
export function makeActivation(cap, runtime, childId, incarnation, name, messageId, result, disposed, agent, budget) {
  check(cap);
  // Callers may never await these; a rejection must not become an unhandled one.
  apply(promiseCatch, result, [() => {}]);
  apply(promiseCatch, disposed, [() => {}]);
  let triggered = false;
  const activation = {
    childId,
    name,
    result,
    dispose() {
      if (!triggered) {
        triggered = true;
        dispatch('dispose', runtime, childId, incarnation);
      }
      return disposed;
    },
  };
  if (messageId !== undefined) own(activation, 'messageId', messageId);
  if (agent !== undefined) own(activation, 'agent', agent);
  if (budget !== undefined) own(activation, 'budget', budget);
  return freeze(activation);
}

/** Completes a turn object built by the bridge with its callables. */
export function makeTurn(cap, runtime, turn, agent, incarnation, turnId) {
  check(cap);
  own(turn, 'agent', agent);
  own(turn, 'turnId', turnId);
  own(turn, 'takeSteered', () => dispatch('takeSteered', runtime, agent.sessionId, incarnation, turnId));
  // A part for `subagent/delta` listeners: `false` once this turn has ended (ignored); a bad part throws.
  own(turn, 'emit', (part) => dispatch('emit', runtime, agent.sessionId, incarnation, turnId, part));
  // Moves the member's directory (relative to its current one, confined to the root's): resolves with the new one.
  own(turn, 'setCwd', (path) => {
    try {
      return dispatch('setCwd', runtime, agent.sessionId, incarnation, turnId, path);
    } catch (e) {
      return promiseReject(e); // a bad path rejects, as the method's promise would
    }
  });
  // The member's own log ({ types?, signal? }), read by the runtime: its host's history needs no store.
  own(turn, 'readLog', (options) => {
    try {
      return dispatch('readLog', runtime, agent.sessionId, incarnation, options);
    } catch (e) {
      return promiseReject(e);
    }
  });
  // The core answers with WaitEnd's discriminant (Steered, Aborted, Quiet, Ended).
  const wait = (steer) => apply(promiseThen, dispatch('waitForInput', runtime, agent.sessionId, incarnation, turnId, steer), [(n) => WAIT_ENDS[n]]);
  own(turn, 'waitForSteered', () => wait(true));
  own(turn, 'waitForInterrupt', () => wait(false));
  let tools;
  defineProperty(turn, 'tools', {
    __proto__: null,
    enumerable: true,
    get() {
      tools ??= dispatch('toolsFor', runtime, agent);
      return tools;
    },
  });
  // The member's tools narrowed to `{ only?, except? }` (what a host configured).
  own(turn, 'toolsFor', (options) => dispatch('toolsFor', runtime, agent, options));
  return freeze(turn);
}

const DONE = freeze({ value: undefined, done: true });
const { resolve: promiseResolve } = Promise;
const ASYNC_ITERATOR = Symbol.asyncIterator;
/**
 * A stream nobody closed is closed once its iterator is collected (its
 * subscription would keep filling), where the engine has a
 * FinalizationRegistry (workerd has none: there, close what you open).
 */
const streams =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((args) => {
        try {
          dispatch('streamClose', ...args);
        } catch {
          // Its runtime was freed first: nothing is subscribed any more.
        }
      })
    : null;

/**
 * `runtime.events()`: an async iterator over stream `id` of `runtime`, as
 * `{ type, event }` items. `break`, `return()` or the signal's abort
 * unsubscribes; what was queued is dropped.
 */
export function makeEventStream(cap, runtime, id, signal) {
  check(cap);
  let done = false;
  const close = () => {
    if (!done) {
      done = true;
      dispatch('streamClose', runtime, id);
    }
  };
  const iterator = {};
  own(iterator, 'next', () => (done ? apply(promiseResolve, Promise, [DONE]) : dispatch('streamNext', runtime, id)));
  own(iterator, 'return', () => {
    close();
    return apply(promiseResolve, Promise, [DONE]);
  });
  own(iterator, ASYNC_ITERATOR, () => iterator);
  if (signal) {
    if (signal.aborted) close();
    else signal.addEventListener('abort', close, { once: true });
  }
  streams?.register(iterator, [runtime, id]);
  return freeze(iterator);
}

/** Tools handed to a model: each spec plus `call(input, { signal })`. */
/**
 * An external run's `request.emit(part)`: what the run streams (text, its own
 * tool calls) reaches listeners as its child's once the run is the child;
 * `false` when ignored (before, after it left, or a result of no open call).
 */
export function makeRunEmitter(cap, runtime, token) {
  check(cap);
  return (part) => dispatch('emitRun', runtime, token, part);
}

export function makeTools(cap, runtime, agent, specs) {
  check(cap);
  const tools = [];
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i];
    const tool = { ...spec };
    own(tool, 'call', (input, options) => dispatch('callTool', runtime, agent, spec.name, input, options));
    own(tools, i, freeze(tool));
  }
  return freeze(tools);
}

/** A disposer that acts once. */
export function makeDisposer(cap, op, runtime, token) {
  check(cap);
  let done = false;
  return () => {
    if (!done) {
      done = true;
      dispatch(op, runtime, token);
    }
  };
}

/** Marks a promise's rejection as handled (someone may never await it) and returns it. */
export function quiet(promise) {
  apply(promiseCatch, promise, [() => {}]);
  return promise;
}
