// `subagent-tree/lite` (issue 15): the listing core as its own small wasm.
// Same behaviour and the same SubagentError class as the full entry, no
// runtime, and stores of either module work with the other's listing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as lite from 'subagent-tree/lite';
import * as full from 'subagent-tree';
import { c0, c3, log, note } from './helpers.mjs';

const logs = () => ({
  root: log([c3('rev', 'reviewer', 'continuable', 'Review'), note(), c0('old'), c3('gone', 'gone')]),
  rev: log([c3('chk', 'checker')]),
  chk: [],
  old: [],
});

test('lite exports the listing surface and no runtime', () => {
  for (const name of ['isValidName', 'validateName', 'defaultName', 'parseAgentRef', 'decodeCatalogPayload', 'projectCatalog', 'listDescendants', 'resolveName', 'MemoryStore', 'SubagentError', 'errorCodes', 'init']) {
    assert.ok(name in lite, `lite exports ${name}`);
  }
  for (const name of ['SubagentRuntime', 'Agent', 'Job']) assert.ok(!(name in lite), `lite does not export ${name}`);
  assert.deepEqual(lite.errorCodes, full.errorCodes);
  assert.equal(lite.SubagentError, full.SubagentError, 'one error class for both entries');
});

test('lite lists and resolves like the full entry, over either MemoryStore', async () => {
  for (const Store of [lite.MemoryStore, full.MemoryStore]) {
    const store = new Store();
    for (const [id, events] of Object.entries(logs())) await store.append(id, events);
    const rows = await lite.listDescendants(store, 'root');
    assert.deepEqual(rows, await full.listDescendants(store, 'root'));
    assert.deepEqual(rows.map((r) => r.path ?? r.reason ?? '-'), ['reviewer', 'reviewer/checker', '-', 'unavailable']);
    assert.equal(await lite.resolveName(store, 'root', 'reviewer/checker'), 'chk');
    const e = await lite.resolveName(store, 'root', 'nobody').catch((x) => x);
    assert.ok(e instanceof full.SubagentError);
    assert.equal(e.code, 'UNKNOWN_AGENT');
  }
  assert.equal(lite.isValidName('reviewer'), true);
  assert.throws(() => lite.validateName('lead'), (e) => e instanceof lite.SubagentError && e.code === 'INVALID_NAME');
  assert.deepEqual(lite.projectCatalog(logs().root), full.projectCatalog(logs().root));
});

test('the package maps subagent-tree/lite for node, browser and workerd', () => {
  const require = createRequire(import.meta.url);
  const pkg = JSON.parse(readFileSync(require.resolve('subagent-tree/package.json'), 'utf8'));
  const entry = pkg.exports['./lite'];
  assert.deepEqual(Object.keys(entry), ['types', 'workerd', 'node', 'browser', 'default']);
  for (const file of Object.values(entry)) assert.ok(pkg.files.includes(file.replace(/^\.\//, '')), `${file} is packed`);
});
