// subagent-tree/otel: a tree's work as OpenTelemetry GenAI spans (a `Tracer` of `@opentelemetry/api`, optional peer).
/**
 * OpenTelemetry GenAI spans of a tree, from the runtime's events, through a
 * tracer the app passes. Typed structurally: the package does not depend on
 * `@opentelemetry/api`.
 *
 * @module subagent-tree/otel
 */
import type { SubagentRuntime } from '../index.js';

/** The part of an OpenTelemetry `Span` this entry uses. */
export interface SpanLike {
  /** Its ids, kept as a W3C `traceparent` in the member's log. */
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
  setAttribute(key: string, value: string | number | boolean | string[]): unknown;
  setAttributes(attributes: Record<string, string | number | boolean | string[]>): unknown;
  addEvent(name: string, attributes?: Record<string, string | number | boolean>): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

/** The part of an OpenTelemetry `Context` a tracer reads (the parent span). */
export interface ContextLike {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): ContextLike;
  deleteValue(key: symbol): ContextLike;
}

/** The part of an OpenTelemetry `Tracer` this entry uses (`provider.getTracer(...)` is one). */
export interface TracerLike {
  startSpan(name: string, options?: { kind?: number; attributes?: Record<string, string | number | boolean> }, context?: ContextLike): SpanLike;
}

export interface InstrumentOptions {
  /** Where spans go; without one nothing is emitted (not even to the global tracer provider). */
  tracer?: TracerLike;
  /**
   * Record content (opt-in, as the GenAI conventions ask): tool call
   * arguments and results (`gen_ai.tool.call.arguments` / `.result`) and the
   * text of messages between members. Default `false`.
   */
  recordContent?: boolean;
}

/**
 * Emits `create_agent {full name}` when a member starts (under its creator's
 * running turn, else its creator's `create_agent`; a root's at its first event),
 * `invoke_agent {full name}` per turn (INTERNAL, under the member's
 * `create_agent`, with `gen_ai.conversation.id`, usage, the stop reason, and
 * ERROR status on a failed turn), `execute_tool {tool}` per tool call under the
 * caller's turn (a delegation names its child, whose `create_agent` hangs
 * from it), and each message accepted for a member as an
 * event on its running turn. Each member's `create_agent` context is kept in
 * its log (through `runtime.setTraceContextSource`, which this takes over), so
 * its turns after a restart, in any later runtime, join the same trace.
 * Returns the function that removes it.
 */
export declare function instrument(runtime: SubagentRuntime, options?: InstrumentOptions): () => void;
