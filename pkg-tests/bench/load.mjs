// Loads the package for the benchmarks: as a user imports it when pkg-tests has
// it installed, else the built pkg/ directly (through its exports map).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export async function loadPackage() {
  if (existsSync(join(here, '..', 'node_modules', 'subagent-tree', 'package.json'))) {
    return { lib: await import('subagent-tree'), from: 'subagent-tree (pkg-tests/node_modules)' };
  }
  const pkgDir = join(here, '..', '..', 'pkg');
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  let entry = manifest.exports?.['.'] ?? manifest.exports ?? manifest.module ?? manifest.main;
  while (entry && typeof entry === 'object') entry = entry.node ?? entry.import ?? entry.default;
  entry ??= 'node.js';
  return { lib: await import(pathToFileURL(join(pkgDir, entry)).href), from: `pkg/${entry}` };
}
