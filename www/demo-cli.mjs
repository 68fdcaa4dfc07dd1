#!/usr/bin/env node
// `make demo` (interim, until the Web client): loads the committed sample
// session logs into the package's MemoryStore and prints the agent tree with
// full names, labels, modes and diagnostics. Run after `make pkg`:
//   node www/demo-cli.mjs [path/to/store.json]
import { readFile } from 'node:fs/promises';

let lib;
try {
  lib = await import(new URL('../pkg/node.js', import.meta.url));
} catch (error) {
  console.error(`demo: cannot load the package from pkg/ (${error.message}); build it with 'make pkg'`);
  process.exit(1);
}
const { MemoryStore, listDescendants, resolveName, SubagentError } = lib;

const file = process.argv[2] ?? new URL('./sample/store.json', import.meta.url);
const sample = JSON.parse(await readFile(file, 'utf8'));
const store = new MemoryStore();
for (const [sessionId, events] of Object.entries(sample.sessions)) await store.append(sessionId, events);

const root = sample.rootSessionId;
const rows = await listDescendants(store, root);

const REASONS = {
  corrupt: 'corrupt: its catalog holds data that does not decode; branch not shown',
  unavailable: 'unavailable: its session is missing or could not be read; branch not shown',
  unsupported: 'unsupported: a historical child of unknown mode (listed, never continued)',
};

// Which rows are the last among their siblings, for the tree drawing.
const lastOf = new Map();
rows.forEach((row, i) => lastOf.set(row.parentId, i));
const open = []; // per depth: does the ancestor at that depth have later siblings?

console.log(`lead  (root session ${root})`);
rows.forEach((row, i) => {
  const last = lastOf.get(row.parentId) === i;
  open.length = row.depth - 1;
  const indent = open.map((more) => (more ? '│  ' : '   ')).join('');
  open.push(!last);
  const branch = last ? '└─ ' : '├─ ';
  let line;
  if (row.kind === 'diagnostic') {
    // A catalog entry that does not decode is a row of its own, with why (its id is '' when unreadable).
    const who = row.id === '' ? `entry ${row.seq}` : row.id;
    line = row.detail === undefined ? `✗ ${who}  ${REASONS[row.reason]}` : `✗ ${who}  corrupt entry: ${row.detail}`;
  } else {
    // The full name, or the Session id when this child or a creator above it has no name.
    const fullName = row.path ?? row.id;
    const parts = [fullName, row.mode];
    if (row.label !== undefined) parts.push(JSON.stringify(row.label));
    if (row.path === undefined && row.name !== undefined) parts.push(`(named "${row.name}" under an unnamed creator)`);
    if (row.path === undefined && row.name === undefined) parts.push('(historical, unnamed)');
    if (row.mode === 'external') parts.push('(external: a leaf, never read)');
    line = parts.join('  ');
  }
  console.log(indent + branch + line);
});

const children = rows.filter((r) => r.kind === 'child').length;
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
console.log(`\n${plural(rows.length, 'row')}: ${plural(children, 'member')}, ${plural(rows.length - children, 'diagnostic')}`);

for (const reference of ['lead', 'reviewer/checker/linter', 'summary']) {
  try {
    console.log(`resolveName(${JSON.stringify(reference)}) -> ${await resolveName(store, root, reference)}`);
  } catch (error) {
    if (!(error instanceof SubagentError)) throw error;
    console.log(`resolveName(${JSON.stringify(reference)}) -> ${error.code}: ${error.message}`);
  }
}
