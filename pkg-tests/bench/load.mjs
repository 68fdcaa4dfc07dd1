// Loads the package for the benchmarks: as a user imports it when pkg-tests has
// it installed, else the built pkg/ directly (through its exports map).
// BENCH_PKG=<dir> loads a built package directory instead (e.g. a copy of an
// earlier build, for before/after figures).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The package directory the benchmarks use, and how it was found. */
export function packageDir() {
  if (process.env.BENCH_PKG) return { dir: resolve(process.env.BENCH_PKG), from: `BENCH_PKG=${process.env.BENCH_PKG}` };
  const installed = join(here, '..', 'node_modules', 'subagent-tree');
  const built = join(here, '..', '..', 'pkg');
  // The copy pkg-tests/run.sh installed is only as new as the last test run:
  // a pkg/ built since is what was meant (else an old build is measured silently).
  const wasm = (dir) => join(dir, 'subagent_tree_bg.wasm');
  const stale = existsSync(wasm(built)) && existsSync(wasm(installed)) && statSync(wasm(built)).mtimeMs > statSync(wasm(installed)).mtimeMs;
  if (existsSync(join(installed, 'package.json')) && !stale) return { dir: installed, from: 'subagent-tree (pkg-tests/node_modules)' };
  return { dir: built, from: stale ? 'pkg/ (newer than the copy in pkg-tests/node_modules)' : 'pkg/' };
}

/** The file an export key (`.`, `./lite`) resolves to under a condition (`node`, `browser`, `workerd`). */
export function entryFile(dir, key = '.', condition = 'node') {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  let entry = manifest.exports?.[key] ?? (key === '.' ? manifest.module ?? manifest.main : undefined);
  while (entry && typeof entry === 'object') entry = entry[condition] ?? entry.import ?? entry.default;
  return (entry ?? 'node.js').replace(/^\.\//, '');
}

/**
 * Imports the package's Node entry. `wasmMemory()` reads the size of the
 * module's linear memory: the package hands out no raw wasm exports, so the
 * benchmark notes the memory of the instance the entry creates on import.
 */
export async function loadPackage() {
  const { dir, from } = packageDir();
  const entry = entryFile(dir);
  const memories = [];
  const Instance = WebAssembly.Instance;
  WebAssembly.Instance = function BenchInstance(module, imports) {
    const instance = new Instance(module, imports);
    for (const value of Object.values(instance.exports)) if (value instanceof WebAssembly.Memory) memories.push(value);
    return instance;
  };
  let lib;
  try {
    lib = await import(pathToFileURL(join(dir, entry)).href);
  } finally {
    WebAssembly.Instance = Instance;
  }
  if (memories.length !== 1) throw new Error(`expected the entry to instantiate one wasm memory, saw ${memories.length}`);
  const wasmMemory = () => memories[0].buffer.byteLength;
  return { lib, from: `${from} ${entry}`, wasmMemory };
}

/** A plain JS store keeping logs as arrays of JS objects (the benches' reference store). */
export function jsArrayStore() {
  const logs = new Map();
  const select = (id, { types, fromSeq = 0 } = {}) => {
    const log = logs.get(id);
    if (!log) return null;
    return log.filter((e) => e.seq >= fromSeq && (!types || types.includes(e.type)));
  };
  return {
    append(id, events) {
      const log = logs.get(id) ?? [];
      log.push(...events);
      logs.set(id, log);
    },
    read: (id, options) => select(id, options),
    readMany: (ids, options) => ids.map((id) => select(id, options)),
  };
}
