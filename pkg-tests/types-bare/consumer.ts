// A consumer with neither the DOM lib nor @types/node (issue 42): every
// non-browser entry's types compile, and a signal is whatever the platform
// calls an AbortSignal, or (as here, with none declared) any object that
// has the part of one the package reads.
import { SubagentRuntime, MemoryStore, listDescendants, resolveName, init } from 'subagent-tree';
import type { AgentHost, AbortSignalLike, SessionStore } from 'subagent-tree';
import * as lite from 'subagent-tree/lite';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { DurableObjectStore } from 'subagent-tree/durable-object-store';
import { FileStore } from 'subagent-tree/file-store';
import { scriptedHost, settle } from 'subagent-tree/testing';

const signal: AbortSignalLike = {
  aborted: false,
  reason: undefined,
  addEventListener() {},
  removeEventListener() {},
};

export async function bare(storage: ConstructorParameters<typeof DurableObjectStore>[0]): Promise<void> {
  await init();
  const store: SessionStore = new MemoryStore();
  const host: AgentHost = scriptedHost({ lead: ['ok'] });
  const runtime = new SubagentRuntime({ store, host, limits: { promptBytes: 2048 } });
  const lead = await runtime.openRoot();
  await runtime.prompt(lead, 'lead', 'hi', { signal });
  await settle(runtime, lead, { signal });
  const rows = await listDescendants(store, lead.sessionId, { signal });
  const id: string = await resolveName(store, lead.sessionId, 'lead', { signal });
  const liteRows = await lite.listDescendants(store, lead.sessionId, { signal });
  void [rows, id, liteRows];
  new OpenAIHost({ baseUrl: 'http://127.0.0.1/v1', model: 'm', store });
  new DurableObjectStore(storage);
  const files = await FileStore.open('/tmp/x');
  await files.close();
}
