// Benchmark of tracing (issue 53): what `subagent-tree/otel` costs a message
// to an idle root until its answer: no instrumentation, `instrument` without a
// tracer (goal: nothing measurable), and with the OpenTelemetry SDK's tracer
// exporting to memory. Medians over alternated runs, as usage.mjs does.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadPackage, packageDir } from './load.mjs';
import { record } from './results.mjs';
import { RUNS, median, time } from './timing.mjs';

const { lib } = await loadPackage();
const { SubagentRuntime, MemoryStore } = lib;
const { instrument } = await import(pathToFileURL(join(packageDir().dir, 'otel', 'otel.js')).href);
let sdk;
try {
  sdk = await import('@opentelemetry/sdk-trace-base');
} catch {
  sdk = null;
}

async function perMessage(mode) {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: () => ({ messages: ['ok'], usage: { inputTokens: 10, outputTokens: 2 } }) } });
  let exporter = null;
  if (mode === 'no tracer') instrument(runtime, {});
  if (mode === 'tracer') {
    exporter = new sdk.InMemorySpanExporter();
    const tracer = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] }).getTracer('bench');
    instrument(runtime, { tracer });
  }
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const n = 200;
  const ms = await time(RUNS, async () => {
    for (let i = 0; i < n; i++) await (await runtime.ask(lead, 'lead', 'go')).answer;
    exporter?.reset();
  });
  return (ms * 1000) / n;
}

const modes = sdk ? ['plain', 'no tracer', 'tracer'] : ['plain', 'no tracer'];
const samples = Object.fromEntries(modes.map((m) => [m, []]));
for (let i = 0; i < 5; i++) for (const m of modes) samples[m].push(await perMessage(m));
const us = Object.fromEntries(modes.map((m) => [m, median(samples[m])]));
console.log(
  `otel: a message to an idle root until its answer: ${us.plain.toFixed(1)} µs uninstrumented, ${us['no tracer'].toFixed(1)} µs instrumented without a tracer` +
    (sdk ? `, ${us.tracer.toFixed(1)} µs with the SDK's tracer (in-memory exporter)` : ' (the OpenTelemetry SDK is not installed)'),
);
record('otel.message.plain', us.plain);
record('otel.message.noTracer', us['no tracer']);
if (sdk) record('otel.message.tracer', us.tracer);
process.exit(0);
