// The JS side of the runtime bridge: agent handles, activations, turns and
// tools. A handle's key lives in this module's private WeakMap, so a handle
// cannot be forged from its visible fields; every callable routes through one
// dispatcher the bridge installs, so no per-object Rust closure is ever leaked.

const keys = new WeakMap();
let dispatcher = null;

/** Installed once by the bridge: `(op, args) => result`. */
export function installDispatcher(fn) {
  dispatcher = fn;
}

function dispatch(op, ...args) {
  if (dispatcher === null) throw new Error("subagent-tree: the runtime bridge is not initialised; import from 'subagent-tree' (its entries initialise the module) and create a SubagentRuntime before using its handles");
  return dispatcher(op, args);
}

/** A live member handle: holding the exact handle is the only authority the runtime accepts. */
export class Agent {
  constructor() {
    throw new TypeError('Agent handles cannot be constructed: take them from a SubagentRuntime (openRoot(), startActivation(...).agent, turn.agent or runtime.agent(sessionId))');
  }

  /** Whether the member is still resident and live (a disposed handle is dead). */
  get live() {
    const key = keys.get(this);
    return key !== undefined && dispatch('isLive', key.runtime, key.sessionId, key.incarnation) === true;
  }

  toJSON() {
    return { sessionId: this.sessionId, name: this.name };
  }
}

export function makeAgent(runtime, sessionId, incarnation, name, rootId, parentId, depth) {
  const agent = Object.create(Agent.prototype);
  const fields = { sessionId, name, rootId, depth };
  if (parentId !== undefined) fields.parentId = parentId;
  for (const [k, v] of Object.entries(fields)) {
    Object.defineProperty(agent, k, { value: v, enumerable: true });
  }
  keys.set(agent, { runtime, sessionId, incarnation });
  return Object.freeze(agent);
}

/** `[runtimeId, sessionId, incarnation]` of a genuine handle, else undefined. Never throws. */
export function agentKey(value) {
  try {
    const key = typeof value === 'object' && value !== null ? keys.get(value) : undefined;
    return key === undefined ? undefined : [key.runtime, key.sessionId, key.incarnation];
  } catch {
    return undefined;
  }
}

/** An activation receipt; `dispose()` returns the same promise every time. */
export function makeActivation(runtime, childId, incarnation, name, messageId, result, disposed, agent) {
  // Callers may never await these; a rejection must not become an unhandled one.
  result.catch(() => {});
  disposed.catch(() => {});
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
  if (messageId !== undefined) activation.messageId = messageId;
  if (agent !== undefined) activation.agent = agent;
  return Object.freeze(activation);
}

/** Completes a turn object built by the bridge with its callables. */
export function makeTurn(runtime, turn, agent, incarnation, turnId) {
  turn.agent = agent;
  turn.takeSteered = () => dispatch('takeSteered', runtime, agent.sessionId, incarnation, turnId);
  let tools;
  Object.defineProperty(turn, 'tools', {
    enumerable: true,
    get() {
      tools ??= dispatch('toolsFor', runtime, agent);
      return tools;
    },
  });
  return Object.freeze(turn);
}

/** Tools handed to a model: each spec plus `call(input, { signal })`. */
export function makeTools(runtime, agent, specs) {
  return Object.freeze(
    specs.map((spec) =>
      Object.freeze({ ...spec, call: (input, options) => dispatch('callTool', runtime, agent, spec.name, input, options) }),
    ),
  );
}

/** A disposer that acts once. */
export function makeDisposer(op, runtime, token) {
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
  promise.catch(() => {});
  return promise;
}
