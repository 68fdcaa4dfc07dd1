// Benchmark of idle event readers: `make bench` runs this for 1, 10 and 100
// readers, each in a fresh process (wasm memory never shrinks).
//
// N `runtime.events()` readers that never read, while 64 messages of 64 KiB
// (and their answers) flow through one tree. Every stream reads one journal
// through its own cursor, so the readers should cost one copy of what flows,
// not N: reports the wasm memory the module grew by (the store's logs, about
// 4 MiB, included in every row).
import { loadPackage } from './load.mjs';
import { record } from './results.mjs';

const { lib, wasmMemory } = await loadPackage();
const { SubagentRuntime, MemoryStore } = lib;
const readers = Number(process.argv[2] ?? 1);
const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { async runTurn() { return { messages: ['ok'] }; } } });
const lead = await runtime.openRoot({ sessionId: 'root' });
await (await runtime.ask(lead, 'lead', 'warm up')).answer;
globalThis.gc?.();
const before = wasmMemory();
const streams = Array.from({ length: readers }, () => runtime.events({ root: 'root' }));
const text = 'x'.repeat(64 * 1024);
for (let i = 0; i < 64; i++) await (await runtime.ask(lead, 'lead', text)).answer;
globalThis.gc?.();
const grew = (wasmMemory() - before) / (1024 * 1024);
console.log(`readers: ${String(readers).padStart(3)} idle events() readers while 64 messages of 64 KiB flow        wasm memory +${grew.toFixed(1)} MiB (the logs' 4 MiB included)`);
record(`readers.${readers}.wasmMiB`, grew);
for (const s of streams) await s.return();
process.exit(0);
