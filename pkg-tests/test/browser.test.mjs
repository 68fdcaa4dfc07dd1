// Smoke test in headless Chromium: the package's browser entry (resolved from
// its package.json `exports`), served from 127.0.0.1, lists a tree and throws
// coded errors. Uses Debian's chromium through playwright-core: no download.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runPage, skipWithoutChromium } from './chromium.mjs';

const PAGE = (entry) => `<!doctype html>
<meta charset="utf-8">
<script type="importmap">{ "imports": { "subagent-tree": "/pkg/${entry}" } }</script>
<script type="module">
import { MemoryStore, listDescendants, resolveName, validateName, SubagentError, errorCodes, init } from 'subagent-tree';
const out = {};
try {
  await init();
  const cat = (seq, childId, name, mode = 'one-shot') =>
    ({ seq, type: 'subagent/catalog', payload: { version: 3, childId, childCreatedAt: 1, mode, name } });
  const store = new MemoryStore();
  await store.append('root', [cat(0, 'r', 'reviewer'), cat(1, 'x', 'runner', 'external')]);
  await store.append('r', [cat(0, 'c', 'checker')]);
  await store.append('c', []);
  out.rows = await listDescendants(store, 'root');
  out.resolved = await resolveName(store, 'root', 'reviewer/checker');
  try { validateName('Lead'); } catch (e) {
    out.error = { instance: e instanceof SubagentError, isError: e instanceof Error, name: e.name, code: e.code, message: e.message };
  }
  const failing = await listDescendants({ read() { throw new TypeError('offline'); } }, 'root').catch((e) => e);
  out.storeError = { code: failing.code, cause: failing.cause instanceof TypeError };
  const aborted = await listDescendants(store, 'root', { signal: AbortSignal.abort('bye') }).catch((e) => e);
  out.abort = { code: aborted.code, cause: aborted.cause };
  out.codes = errorCodes.length;
} catch (e) {
  out.fatal = String(e && e.stack || e);
}
window.__result = out;
</script>`;

test('the browser entry works in headless Chromium', { skip: skipWithoutChromium }, async () => {
  const { result, consoleErrors, served, entry } = await runPage(PAGE);
  assert.equal(result.fatal, undefined, result.fatal);
  assert.deepEqual(result.rows, [
    { kind: 'child', id: 'r', parentId: 'root', depth: 1, mode: 'one-shot', name: 'reviewer', path: 'reviewer', hasChildren: true },
    { kind: 'child', id: 'c', parentId: 'r', depth: 2, mode: 'one-shot', name: 'checker', path: 'reviewer/checker', hasChildren: false },
    { kind: 'child', id: 'x', parentId: 'root', depth: 1, mode: 'external', name: 'runner', path: 'runner', hasChildren: false },
  ]);
  assert.equal(result.resolved, 'c');
  assert.deepEqual(result.error, {
    instance: true, isError: true, name: 'SubagentError', code: 'INVALID_NAME',
    message: 'agent name "Lead" must be 1-32 lower-case letters, digits or hyphens starting with a letter',
  });
  assert.deepEqual(result.storeError, { code: 'PERSISTENCE_UNAVAILABLE', cause: true });
  assert.deepEqual(result.abort, { code: 'CANCELLED', cause: 'bye' });
  assert.ok(result.codes > 20);
  assert.deepEqual(consoleErrors, []);
  assert.ok(served.includes(`/pkg/${entry}`) && served.includes('/pkg/subagent_tree_bg.wasm'), served.join(' '));
});
