// subagent-tree/otel: a tree's work as OpenTelemetry GenAI spans, through a
// `Tracer` of `@opentelemetry/api` the app passes (an optional peer: this
// entry imports nothing of it, and emits nothing without a tracer, not even
// to the global provider).
//
// From the runtime's events, per tree:
// - `create_agent {full name}` when a member is created (ended at once: its
//   context is what the member's turns hang from); under the delegation call
//   that made it, else its creator's running turn, else its creator's
//   `create_agent`. A root gets one when it opens (or at its first event), so
//   all of a tree is one trace. The runtime keeps each one's context in the
//   member's log (`runtime.setTraceContextSource`): a later runtime's turns of
//   the member hang from it, in the same trace.
// - `invoke_agent {full name}` per turn (INTERNAL), under the member's
//   `create_agent`: the conversation id (the root's Session id), usage and
//   the stop reason on its end, ERROR status on a failed turn.
// - `execute_tool {tool}` per tool call (INTERNAL), under the caller's running
//   turn: the tool's name and call id, ERROR status on a refusal; a delegation
//   names the child it started, and that child's `create_agent` hangs from it.
// - each message accepted for a member, as an event on the turn that takes it
//   in: its running turn, or (a message that wakes an idle member, the common
//   case) its next turn, stamped with the time it was accepted.
//
// Content is recorded only with `recordContent: true`: tool arguments and
// results, message text, and a child's label (the model's spawn description).
// Without it, nothing a model or user wrote leaves in an attribute, event or
// status: a refused tool call's status is its error code and a fixed sentence
// (its text may repeat the model's arguments); a failed turn's is a fixed
// sentence. Committed names and full names are identities, always recorded.
import * as C from './conventions.js';

const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

/** The event each accepted message is on its turn's span. */
const MESSAGE_EVENT = 'subagent_tree.message';
/** Messages kept per member between its turns (a member that never runs again holds no more). */
const MAX_WAITING = 256;

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

/** A span context as a W3C `traceparent` (what the runtime keeps in the member's log). */
const traceparentOf = (span) => {
  const c = span.spanContext?.();
  if (!c) return undefined;
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
};

/**
 * A span created by an earlier runtime, as a parent: only its context (it is
 * not recording, and ending it does nothing), as `@opentelemetry/api`'s
 * `trace.wrapSpanContext` makes one.
 */
const remoteSpan = (traceparent) => {
  const [, traceId, spanId, flags] = traceparent.split('-');
  const context = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
  const self = () => remote;
  const remote = {
    spanContext: () => context,
    setAttribute: self,
    setAttributes: self,
    addEvent: self,
    addLink: self,
    addLinks: self,
    setStatus: self,
    updateName: self,
    end() {},
    isRecording: () => false,
    recordException() {},
  };
  return remote;
};

/** A message's content as one text: its text blocks, or JSON for anything else. */
const textOf = (content) =>
  typeof content === 'string'
    ? content
    : Array.isArray(content) && content.every((b) => b?.type === 'text')
      ? content.map((b) => b.text).join('\n')
      : JSON.stringify(content);

/**
 * Instruments `runtime` with `tracer`: returns the function that removes it
 * (ending any span it holds open).
 */
export function instrument(runtime, options) {
  const tracer = options?.tracer;
  if (!runtime || typeof runtime.on !== 'function') throw new TypeError('instrument needs a SubagentRuntime');
  if (!tracer) return () => {}; // nothing is emitted without a tracer
  if (typeof tracer.startSpan !== 'function') throw new TypeError('tracer must be an OpenTelemetry Tracer (with startSpan)');
  const recordContent = options.recordContent === true;
  /** Session id -> the member's `create_agent` span. */
  const agents = new Map();
  /** Session id -> the member's running `invoke_agent` span. */
  const turns = new Map();
  /** Call id -> the call's open `execute_tool` span. */
  const calls = new Map();
  /** Session id -> messages accepted while no turn of the member ran: `[attributes, time]`, for its next turn. */
  const waiting = new Map();

  const createAgent = (id, name, rootId, attributes, parent) => {
    const span = tracer.startSpan(
      `${C.CREATE_AGENT} ${name}`,
      { kind: C.SPAN_KIND_INTERNAL, attributes: { [C.OPERATION]: C.CREATE_AGENT, [C.AGENT_NAME]: name, [C.AGENT_ID]: id, [C.CONVERSATION_ID]: rootId, ...attributes } },
      // A root starts its own trace (never under whatever span the app has active).
      parent ? contextWith(parent) : new Context(new Map()),
    );
    span.end();
    agents.set(id, span);
    return span;
  };
  // A member's anchor: its own create_agent; the one an earlier runtime made,
  // from the trace context its log keeps; or for a root instrumented after it
  // opened (which no start event announces), one made now.
  const anchorOf = (id, name, rootId, trace) => {
    let anchor = agents.get(id);
    if (anchor) return anchor;
    if (trace?.traceparent) {
      anchor = remoteSpan(trace.traceparent);
      agents.set(id, anchor);
      return anchor;
    }
    return createAgent(id, name, rootId, {}, undefined);
  };
  // A label is the model's own words (spawn_agent's description): content.
  const childAttributes = (m) => (recordContent ? { [C.AGENT_DESCRIPTION]: m.label, [C.PROVIDER]: m.provider } : { [C.PROVIDER]: m.provider });
  // The creator's span a new child hangs from: the delegation call making it, else the creator's turn.
  const creatorSpan = (m) => calls.get(m.toolCallId) ?? turns.get(m.parentSessionId) ?? anchorOf(m.parentSessionId, m.parentSessionId === m.rootSessionId ? 'lead' : m.parentSessionId, m.rootSessionId);

  // Asked when a member is created (a child's log, or a root whose log keeps
  // none): its create_agent, made now, is what its log keeps, so its turns
  // join this trace after any restart.
  runtime.setTraceContextSource((m) => {
    const span = m.parentSessionId === undefined ? createAgent(m.sessionId, m.name, m.rootSessionId, {}, undefined) : createAgent(m.sessionId, m.name, m.rootSessionId, { ...childAttributes(m), [C.MODE]: 'continuable' }, creatorSpan(m));
    const traceparent = traceparentOf(span);
    return traceparent ? { traceparent } : undefined;
  });

  const offs = [
    runtime.on('subagent/start', (e) => {
      // Made by the trace source as the child's log was written, or a resume.
      if (agents.has(e.id)) return;
      // A cold resume by a new runtime joins the trace its log keeps; an external run has no log.
      if (e.trace) return anchorOf(e.id, e.name, e.rootSessionId, e.trace);
      createAgent(e.id, e.name, e.rootSessionId, { ...childAttributes(e), [C.MODE]: e.mode }, creatorSpan(e));
    }),
    runtime.on('subagent/turn', (e) => {
      if (e.phase === 'start') {
        const span = tracer.startSpan(
          `${C.INVOKE_AGENT} ${e.name}`,
          { kind: C.SPAN_KIND_INTERNAL, attributes: { [C.OPERATION]: C.INVOKE_AGENT, [C.AGENT_NAME]: e.name, [C.AGENT_ID]: e.sessionId, [C.CONVERSATION_ID]: e.rootSessionId } },
          contextWith(anchorOf(e.sessionId, e.name, e.rootSessionId, e.trace)),
        );
        turns.get(e.sessionId)?.end();
        turns.set(e.sessionId, span);
        for (const [attributes, time] of waiting.get(e.sessionId) ?? []) span.addEvent(MESSAGE_EVENT, attributes, time);
        waiting.delete(e.sessionId);
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
    runtime.on('subagent/tool', (e) => {
      if (e.phase === 'start') {
        const attributes = { [C.OPERATION]: C.EXECUTE_TOOL, [C.TOOL_NAME]: e.tool, [C.TOOL_CALL_ID]: String(e.callId), [C.TOOL_TYPE]: 'function' };
        if (recordContent) attributes[C.TOOL_CALL_ARGUMENTS] = JSON.stringify(e.input ?? null);
        const parent = turns.get(e.sessionId) ?? anchorOf(e.sessionId, e.name, e.rootSessionId);
        calls.set(e.callId, tracer.startSpan(`${C.EXECUTE_TOOL} ${e.tool}`, { kind: C.SPAN_KIND_INTERNAL, attributes }, contextWith(parent)));
        return;
      }
      const span = calls.get(e.callId);
      if (!span) return;
      calls.delete(e.callId);
      if (e.childId !== undefined) span.setAttributes({ [C.CHILD_ID]: e.childId, [C.CHILD_NAME]: e.childName });
      if (recordContent) span.setAttribute(C.TOOL_CALL_RESULT, e.output);
      if (e.isError) {
        span.setAttribute(C.ERROR_TYPE, 'tool_error');
        // The refusal's text is for the model and may repeat its arguments: content.
        const message = recordContent ? e.output.slice(0, 200) : `${e.errorCode ?? 'TOOL_ERROR'}: the tool call was refused`;
        span.setStatus({ code: C.STATUS_ERROR, message });
      }
      span.end();
    }),
    runtime.on('subagent/message', (e) => {
      const attributes = { [C.MESSAGE_KIND]: e.kind, [C.MESSAGE_ID]: e.messageId, [C.AGENT_NAME]: e.name };
      if (typeof e.from === 'string') attributes[C.MESSAGE_FROM] = e.from;
      if (recordContent && e.content !== undefined) attributes[C.MESSAGE_CONTENT] = textOf(e.content);
      const turn = turns.get(e.sessionId);
      if (turn) return turn.addEvent(MESSAGE_EVENT, attributes);
      const queue = waiting.get(e.sessionId) ?? [];
      // Bounded: a member that never runs again keeps at most the latest MAX_WAITING.
      if (queue.length >= MAX_WAITING) queue.shift();
      queue.push([attributes, new Date()]);
      waiting.set(e.sessionId, queue);
    }),
    // A member that ends runs no next turn: its waiting messages have nowhere to go.
    runtime.on('subagent/end', (e) => waiting.delete(e.id)),
  ];
  return () => {
    runtime.setTraceContextSource(null);
    for (const off of offs.splice(0)) off();
    for (const span of [...calls.values(), ...turns.values()]) span.end();
    calls.clear();
    turns.clear();
    waiting.clear();
  };
}
