// What a page downloads for one package entry: the entry file, every module
// it imports (followed through relative `import`/`export ... from`
// specifiers), and the .wasm files those modules name, each gzipped (-9) on
// its own as a server would send it. The budget in size-budget.json counts
// only the wasm and its glue; this is the whole of it.
//
//   node scripts/page-size.mjs <pkg dir> <entry file> [label]
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const [dir, entry, label = entry] = process.argv.slice(2);
const seen = new Set();
const queue = [resolve(dir, entry)];
let total = 0;
while (queue.length > 0) {
  const file = queue.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  const bytes = readFileSync(file);
  total += gzipSync(bytes, { level: 9 }).length;
  if (!file.endsWith('.js')) continue;
  const text = bytes.toString('utf8');
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']|new URL\(\s*["'](\.{1,2}\/[^"']+\.wasm)["']/g)) {
    const next = join(dirname(file), m[1] ?? m[2]);
    if (existsSync(next)) queue.push(next);
  }
}
const files = [...seen].map((f) => relative(dir, f)).sort();
console.log(`page ${label.padEnd(10)} ${String(total).padStart(8)} B gzip  (${files.length} files: ${files.join(', ')})`);
