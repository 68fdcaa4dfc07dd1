// A page that only reads a tree (the README's follower recipe) in headless
// Chromium: it imports subagent-tree/element and subagent-tree/indexeddb
// alone, downloads no runtime (requests counted: only the small lite wasm
// that lists), and stays current as the tree changes, in another tab or in
// the same page, with no relaying code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, openFixture, watchedPage } from './helpers.mjs';

const env = browserSuite();

// The full entry and its wasm (the lite listing module is what the element reads a store with).
const RUNTIME = /\/pkg\/(subagent_tree_bg\.wasm|subagent_tree\.js|web\.js|node\.js|workerd\.js)$/;

test('a reader page loads only the element and the store, and follows the tree live from another tab and its own', async () => {
  // The writing tab: a runtime over IndexedDB.
  const writer = await openFixture(env.context, env.site.url);
  await writer.evaluate(async () => {
    await window.lib.IndexedDBStore.deleteDatabase('follow-db');
    const store = await window.lib.IndexedDBStore.open('follow-db');
    const host = { runTurn: (turn) => ({ messages: [`${turn.name} done`] }) };
    window.runtime = new window.lib.SubagentRuntime({ store, host });
    window.lead = await window.runtime.openRoot({ sessionId: 'root-f' });
    await window.runtime.startActivation({ parent: window.lead, name: 'reviewer', label: 'Review', prompt: 'go' });
    await window.runtime.waitForQuiescence(window.lead);
  });

  // The reading tab: the README's recipe, and every request it makes.
  const reader = await watchedPage(env.context);
  const requests = [];
  reader.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await reader.goto(`${env.site.url}test/reader.html`);
  await reader.waitForFunction(() => window.readerReady === true);
  await reader.evaluate(async () => {
    const tree = document.createElement('subagent-tree');
    tree.store = await window.IndexedDBStore.open('follow-db');
    tree.rootId = 'root-f';
    document.body.append(tree);
    window.tree = tree;
    await tree.ready;
  });
  const names = () => reader.evaluate(() => window.items(window.tree).map((r) => r.name));
  assert.deepEqual(await names(), ['lead', 'reviewer']);
  const runtimeRequests = requests.filter((p) => RUNTIME.test(p));
  assert.deepEqual(runtimeRequests, [], `the reader page downloaded the runtime: ${runtimeRequests.join(', ')}`);
  assert.ok(requests.some((p) => p.endsWith('/pkg/web/indexeddb-store.js')) && requests.some((p) => p.endsWith('/pkg/web/subagent-tree-element.js')), requests.join('\n'));
  assert.ok(requests.some((p) => p.endsWith('/pkg/subagent_tree_lite_bg.wasm')), 'the element lists with the lite module');

  // Another tab grows the tree: the reader shows it without a reload or relaying code.
  await writer.evaluate(async () => {
    await window.runtime.startActivation({ parent: window.lead, name: 'writer', label: 'Write', prompt: 'go' });
    await window.runtime.waitForQuiescence(window.lead);
  });
  await reader.waitForFunction(() => window.items(window.tree).some((r) => r.name === 'writer'));
  assert.deepEqual(await names(), ['lead', 'reviewer', 'writer']);

  // The same page writes through its own store: shown too.
  await reader.evaluate(async () => {
    const store = window.tree.store;
    const seq = await store.length('root-f');
    const payload = { version: 3, childId: 'ext-1', childCreatedAt: 1, mode: 'external', label: 'Build', name: 'builder' };
    await store.append('root-f', [{ seq, type: 'subagent/catalog', payload }]);
  });
  await reader.waitForFunction(() => window.items(window.tree).some((r) => r.name === 'builder'));
  assert.deepEqual(await names(), ['lead', 'reviewer', 'writer', 'builder']);
  assert.deepEqual(requests.filter((p) => RUNTIME.test(p)), [], 'following never loads the runtime either');
  reader.check();
  writer.check();
  await reader.close();
  await writer.close();
});
