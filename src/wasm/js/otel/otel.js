// subagent-tree/otel: a tree's work as OpenTelemetry GenAI spans, through a
// `Tracer` of `@opentelemetry/api` the app passes (an optional peer: this
// entry imports nothing of it, and emits nothing without a tracer, not even
// to the global provider).
//
// From the runtime's events, per tree:
// - `create_agent {full name}` when a member starts (ended at once: its
//   context is what the member's turns hang from); under its creator's turn
//   when that turn is running, else under its creator's `create_agent`. A
//   tree's root gets one at its first event, so all of a tree is one trace.
// - `invoke_agent {full name}` per turn (INTERNAL), under the member's
//   `create_agent`: the conversation id (the root's Session id), usage and
//   the stop reason on its end, ERROR status on a failed turn.
// - each message accepted for a member, as an event on its running turn.
import * as C from './conventions.js';

const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

/**
 * A context as `@opentelemetry/api`'s own (immutable: each change makes a new
 * one). The API keys the active span under the registered symbol above, so
 * every copy of the API agrees on it, and a tracer's `startSpan(name,
 * options, context)` reads the parent from there.
 */
class Context {
  #values;
  constructor(values) {
    this.#values = values;
  }
  getValue(key) {
    return this.#values.get(key);
  }
  setValue(key, value) {
    return new Context(new Map(this.#values).set(key, value));
  }
  deleteValue(key) {
    const values = new Map(this.#values);
    values.delete(key);
    return new Context(values);
  }
}

/** A context whose active span is `span`. */
const contextWith = (span) => new Context(new Map([[SPAN_KEY, span]]));

/**
 * Instruments `runtime` with `tracer`: returns the function that removes it
 * (ending any span it holds open).
 */
export function instrument(runtime, options) {
  const tracer = options?.tracer;
  if (!runtime || typeof runtime.on !== 'function') throw new TypeError('instrument needs a SubagentRuntime');
  if (!tracer) return () => {}; // nothing is emitted without a tracer
  if (typeof tracer.startSpan !== 'function') throw new TypeError('tracer must be an OpenTelemetry Tracer (with startSpan)');
  /** Session id -> the member's `create_agent` span. */
  const agents = new Map();
  /** Session id -> the member's running `invoke_agent` span. */
  const turns = new Map();

  const createAgent = (id, name, attributes, parent) => {
    const span = tracer.startSpan(
      `${C.CREATE_AGENT} ${name}`,
      { kind: C.SPAN_KIND_INTERNAL, attributes: { [C.OPERATION]: C.CREATE_AGENT, [C.AGENT_NAME]: name, [C.AGENT_ID]: id, ...attributes } },
      // A root starts its own trace (never under whatever span the app has active).
      parent ? contextWith(parent) : new Context(new Map()),
    );
    span.end();
    agents.set(id, span);
    return span;
  };
  // A member's anchor: its own create_agent, or for a root (which no start event announces) one made now.
  const anchorOf = (id, name) => agents.get(id) ?? createAgent(id, name, {}, undefined);

  const offs = [
    runtime.on('subagent/start', (e) => {
      if (agents.has(e.id)) return; // a cold resume: the member's spans still hang from its first start
      const creator = turns.get(e.parentSessionId) ?? anchorOf(e.parentSessionId, e.parentSessionId === e.rootSessionId ? 'lead' : e.parentSessionId);
      createAgent(e.id, e.name, { [C.AGENT_DESCRIPTION]: e.label, [C.PROVIDER]: e.provider, [C.MODE]: e.mode, [C.CONVERSATION_ID]: e.rootSessionId }, creator);
    }),
    runtime.on('subagent/turn', (e) => {
      if (e.phase === 'start') {
        const span = tracer.startSpan(
          `${C.INVOKE_AGENT} ${e.name}`,
          { kind: C.SPAN_KIND_INTERNAL, attributes: { [C.OPERATION]: C.INVOKE_AGENT, [C.AGENT_NAME]: e.name, [C.AGENT_ID]: e.sessionId, [C.CONVERSATION_ID]: e.rootSessionId } },
          contextWith(anchorOf(e.sessionId, e.name)),
        );
        turns.get(e.sessionId)?.end();
        turns.set(e.sessionId, span);
        return;
      }
      const span = turns.get(e.sessionId);
      if (!span) return;
      turns.delete(e.sessionId);
      const u = e.usage;
      const attributes = {};
      if (u) {
        attributes[C.INPUT_TOKENS] = u.inputTokens;
        attributes[C.OUTPUT_TOKENS] = u.outputTokens;
        if (u.cacheReadTokens !== undefined) attributes[C.CACHE_READ_TOKENS] = u.cacheReadTokens;
        if (u.cacheWriteTokens !== undefined) attributes[C.CACHE_CREATION_TOKENS] = u.cacheWriteTokens;
      }
      if (typeof e.stopReason === 'string') attributes[C.FINISH_REASONS] = [e.stopReason];
      span.setAttributes(attributes);
      if (e.stopReason === 'error') {
        span.setAttribute(C.ERROR_TYPE, 'turn_failed');
        span.setStatus({ code: C.STATUS_ERROR, message: 'the turn failed' });
      }
      span.end();
    }),
    runtime.on('subagent/message', (e) => {
      const attributes = { [C.MESSAGE_KIND]: e.kind, [C.MESSAGE_ID]: e.messageId, [C.AGENT_NAME]: e.name };
      if (typeof e.from === 'string') attributes[C.MESSAGE_FROM] = e.from;
      turns.get(e.sessionId)?.addEvent('subagent_tree.message', attributes);
    }),
  ];
  return () => {
    for (const off of offs.splice(0)) off();
    for (const span of turns.values()) span.end();
    turns.clear();
  };
}
