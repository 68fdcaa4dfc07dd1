// A strict consumer of subagent-tree/otel: a real OpenTelemetry Tracer (the
// SDK's, typed by @opentelemetry/api) passes where the entry's structural
// TracerLike is expected.
import type { Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { instrument, type InstrumentOptions, type TracerLike } from 'subagent-tree/otel';

const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] });
const tracer: Tracer = provider.getTracer('app');
const structural: TracerLike = tracer;
const options: InstrumentOptions = { tracer: structural };
export const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: async () => ({ messages: ['ok'] }) } });
export const remove: () => void = instrument(runtime, options);
export const withApiTracer: () => void = instrument(runtime, { tracer });
