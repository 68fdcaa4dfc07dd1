// Types of the edge and Node modules, checked with tsc --strict.
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import type { SessionStore, AgentHost, SessionEvent } from 'subagent-tree';
import { DurableObjectStore, DEFAULT_INDEXED_TYPES } from 'subagent-tree/durable-object-store';
import type { DurableObjectStorageLike } from 'subagent-tree/durable-object-store';
import { OpenAIHost, createOpenAIHost } from 'subagent-tree/openai-host';
import type { OpenAIHostOptions, OpenAIHostUsage } from 'subagent-tree/openai-host';
import { FileStore, fileNameFor } from 'subagent-tree/file-store';
import type { CorruptTail } from 'subagent-tree/file-store';

declare const storage: DurableObjectStorageLike;

export async function tour(): Promise<number> {
  const doStore: SessionStore = new DurableObjectStore(storage, { prefix: 'log/' });
  const viaState = new DurableObjectStore({ storage }, { indexedTypes: [...DEFAULT_INDEXED_TYPES] });
  const len: number | null = await viaState.length('s');
  const options: OpenAIHostOptions = { baseUrl: 'https://api.deepseek.com', apiKey: 'k', model: 'deepseek-chat', store: doStore, maxSteps: 8 };
  const host: AgentHost = new OpenAIHost(options);
  const other = createOpenAIHost({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', fetch: (input, init) => fetch(input, init) });
  const endpoint: string = other.endpoint;
  const runtime = new SubagentRuntime({ store: doStore, host, maxDepth: 3 });
  const root = await runtime.openRoot({ sessionId: 'root' });
  const seen: CorruptTail[] = [];
  const files = await FileStore.open('/tmp/x', { fsync: 'append', onCorruptTail: (info) => seen.push(info) });
  const events: SessionEvent[] | null = await files.read('s', { types: ['subagent/catalog'] });
  const many = await files.readMany(['a', 'b'], {});
  const fileStore: SessionStore = files;
  const memory: SessionStore = new MemoryStore();
  // @ts-expect-error fsync takes 'flush' or 'append'
  await FileStore.open('/tmp/x', { fsync: 'never' });
  // @ts-expect-error model is required
  new OpenAIHost({ baseUrl: 'x' });
  const usage: OpenAIHostUsage | undefined = undefined;
  void [root, events, many, fileStore, memory, endpoint, usage, fileNameFor('s'), len];
  return seen.length;
}
