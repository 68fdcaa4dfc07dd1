// `make demo` prints the sample tree with full names, labels, modes and diagnostics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('the demo prints the sample tree', () => {
  const script = fileURLToPath(new URL('../../www/demo-cli.mjs', import.meta.url));
  const out = execFileSync(process.execPath, [script], { encoding: 'utf8' });
  const lines = out.split('\n');
  assert.match(lines[0], /^lead {2}\(root session [0-9a-f-]{36}\)$/);
  for (const expected of [
    '├─ reviewer  continuable  "Review the pull request"',
    '│  ├─ reviewer/checker  one-shot  "Check the tests"',
    '│  │  └─ reviewer/checker/linter  one-shot',
    '├─ runner  external  "CI run on the build provider"  (external: a leaf, never read)',
    '10 rows: 9 members, 1 diagnostic',
    'resolveName("summary") -> UNKNOWN_AGENT: no agent named "summary" exists in this tree',
  ]) {
    assert.ok(lines.includes(expected), `missing line: ${expected}\n${out}`);
  }
  assert.ok(lines.some((l) => /^├─ [0-9a-f-]{36} {2}one-shot {2}\(historical, unnamed\)$/.test(l)), out);
  assert.ok(lines.some((l) => l.includes('(named "summary" under an unnamed creator)')), out);
  assert.ok(lines.some((l) => /^ {3}└─ ✗ x {2}corrupt entry: event \d+: catalog agent name "Not A Name" must be /.test(l)), out);
});
