// Type-checks the browser modules' declarations as a TypeScript user would
// use them together with the package (strict, DOM lib). Never executed.
import { SubagentTreeElement } from '../../../pkg/web/subagent-tree-element.js';
import type { SubagentTreeNodeInfo, SubagentTreeSelectDetail } from '../../../pkg/web/subagent-tree-element.js';
import { IndexedDBStore, TreeLock } from '../../../pkg/web/indexeddb-store.js';
import type { TreeLockRole } from '../../../pkg/web/tree-lock.js';
import { MemoryStore, SubagentRuntime } from '../../../pkg/index.js';
import type { SessionEvent } from '../../../pkg/index.js';

export async function consumer(runtime: SubagentRuntime): Promise<void> {
  const el = document.createElement('subagent-tree');
  const typed: SubagentTreeElement = el;
  el.store = new MemoryStore();
  el.rootId = 'root';
  el.initialDepth = 3;
  el.runtime = runtime;
  el.root = await runtime.openRoot({});
  el.addEventListener('select', (e) => {
    const detail: SubagentTreeSelectDetail = e.detail;
    console.log(detail.sessionId, detail.name);
  });
  el.addEventListener('load', (e) => console.log(e.detail.count));
  await el.ready;
  await el.refresh();
  await el.expand('x');
  el.collapse('x');
  el.applyEvent('subagent/start', { id: 'x' });
  el.setActivity('x', 'running');
  const ok: boolean = el.select('x', { emit: false });
  const info: SubagentTreeNodeInfo | null = el.nodeInfo('x');

  const store = await IndexedDBStore.open('db', { durability: 'relaxed' });
  const events: SessionEvent[] | null = await store.read('s', { types: ['subagent/catalog'], fromSeq: 1 });
  await store.append('s', [{ seq: 0, type: 'session/start', payload: { cwd: '/' } }]);
  const many = await store.readMany(['a', 'b'], {});
  const flushed: boolean = await store.flush('s');
  el.store = store;
  store.close();
  await IndexedDBStore.deleteDatabase('db');

  const lock = new TreeLock('tree', { takeover: false });
  lock.addEventListener('rolechange', (e) => console.log(e.detail.role));
  lock.addEventListener('message', (e) => console.log(e.detail));
  const role: TreeLockRole = await lock.acquire();
  lock.post({ type: 'hello' });
  lock.close();
  console.log(typed, ok, info, events, many, flushed, role);
}
