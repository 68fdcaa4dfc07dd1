// The browser modules' .d.ts files type-check strictly with the package's own types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

test('element, IndexedDB store and TreeLock declarations pass tsc --strict', () => {
  const tsc = path.join(ROOT, 'pkg-tests/node_modules/.bin/tsc');
  const r = spawnSync(tsc, ['-p', path.join(ROOT, 'pkg-tests/web/types')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});
