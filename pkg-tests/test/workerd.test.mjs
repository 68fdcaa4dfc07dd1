// Smoke test in real workerd (through miniflare): the package's `workerd`
// entry (resolved from its package.json `exports`) instantiates from an
// imported WebAssembly.Module, lists a tree and reports coded errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const pkgDir = path.join(root, 'node_modules', 'subagent-tree');

const WORKER = (entry) => `
import { MemoryStore, listDescendants, resolveName, validateName, SubagentError, errorCodes } from './node_modules/subagent-tree/${entry}';

const cat = (seq, childId, name, mode = 'one-shot', version = 3) =>
  ({ seq, type: 'subagent/catalog', payload: version === 3
    ? { version, childId, childCreatedAt: 1, mode, name }
    : { version, childId, childCreatedAt: 1, mode } });

export default {
  async fetch() {
    const store = new MemoryStore();
    await store.append('root', [cat(0, 'r', 'reviewer'), cat(1, 'old', '', 'one-shot', 0), cat(2, 'gone', 'gone')]);
    await store.append('r', [cat(0, 'c', 'checker')]);
    await store.append('c', []);
    await store.append('old', []);
    const rows = await listDescendants(store, 'root');
    const resolved = await resolveName(store, 'root', 'reviewer/checker');
    let error;
    try { validateName('lead'); } catch (e) {
      error = { instance: e instanceof SubagentError, isError: e instanceof Error, name: e.name, code: e.code };
    }
    const unknown = await resolveName(store, 'root', 'reviewer/nobody').catch((e) => e.code);
    const jsStore = { read: async (id) => (id === 'root' ? [cat(0, 'k', 'kid')] : null), readMany: async (ids) => ids.map(() => new Error('down')) };
    const viaJs = await listDescendants(jsStore, 'root');
    return Response.json({ rows, resolved, error, unknown, viaJs, codes: errorCodes.length });
  },
};
`;

for (const exportKey of ['.', './lite']) test(`the workerd entry of '${exportKey}' works in real workerd`, async () => {
  const pkgJson = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8'));
  const entry = pkgJson.exports[exportKey].workerd.replace(/^\.\//, '');
  const pkgFiles = await readdir(pkgDir, { recursive: true });
  const modules = [{ type: 'ESModule', path: path.join(root, 'worker.mjs'), contents: WORKER(entry) }];
  for (const file of pkgFiles) {
    const full = path.join(pkgDir, file);
    if (file.endsWith('.js')) modules.push({ type: 'ESModule', path: full });
    if (file.endsWith('.wasm')) modules.push({ type: 'CompiledWasm', path: full });
  }
  const mf = new Miniflare({ modules, modulesRoot: root, compatibilityDate: '2025-01-01' });
  try {
    const response = await mf.dispatchFetch('http://localhost/');
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const body = JSON.parse(text);
    assert.deepEqual(body.rows, [
      { kind: 'child', id: 'r', parentId: 'root', depth: 1, mode: 'one-shot', name: 'reviewer', path: 'reviewer', hasChildren: true },
      { kind: 'child', id: 'c', parentId: 'r', depth: 2, mode: 'one-shot', name: 'checker', path: 'reviewer/checker', hasChildren: false },
      { kind: 'child', id: 'old', parentId: 'root', depth: 1, mode: 'one-shot', hasChildren: false },
      { kind: 'diagnostic', id: 'gone', parentId: 'root', depth: 1, reason: 'unavailable' },
    ]);
    assert.equal(body.resolved, 'c');
    assert.deepEqual(body.error, { instance: true, isError: true, name: 'SubagentError', code: 'INVALID_NAME' });
    assert.equal(body.unknown, 'UNKNOWN_AGENT');
    assert.deepEqual(body.viaJs, [{ kind: 'diagnostic', id: 'k', parentId: 'root', depth: 1, reason: 'unavailable' }]);
    assert.ok(body.codes > 20);
  } finally {
    await mf.dispose();
  }
});
