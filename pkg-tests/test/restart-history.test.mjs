// A reopened root keeps its conversation (issue 41): after a restart over a
// FileStore, the root's next turn is not `first`, and OpenAIHost sends the
// model every earlier user and assistant message of it. The test kit's
// scripted host sees `first` read from the log, over MemoryStore and FileStore.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { FileStore } from 'subagent-tree/file-store';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { scriptedHost } from 'subagent-tree/testing';
import { mockOpenAI, say } from './edge-helpers.mjs';

async function tempDir(t) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'restart-history-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const chat = (body) => body.messages.filter((m) => m.role === 'user' || m.role === 'assistant').map((m) => [m.role, m.content]);

test('after a restart over FileStore, OpenAIHost sends the root its whole earlier conversation', async (t) => {
  const dir = await tempDir(t);
  let n = 0;
  const mock = await mockOpenAI(() => say(`answer ${++n}`));
  t.after(() => mock.close());
  const session = async () => {
    const store = await FileStore.open(dir);
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'mock-1', store, retries: 0 });
    const runtime = new SubagentRuntime({ store, host });
    const lead = await runtime.openRoot({ sessionId: 'root' });
    return { store, runtime, lead };
  };
  const first = await session();
  for (const text of ['plan the release', 'write the notes']) {
    const { answer } = await first.runtime.ask(first.lead, 'lead', text);
    assert.equal((await answer).stopReason, 'completed');
  }
  await first.runtime.closeRoot(first.lead);
  await first.store.close();

  const second = await session();
  const { answer } = await second.runtime.ask(second.lead, 'lead', 'and tag it');
  assert.equal((await answer).stopReason, 'completed');
  assert.equal(mock.requests.length, 3);
  assert.deepEqual(chat(mock.requests[2].body), [
    ['user', 'plan the release'],
    ['assistant', 'answer 1'],
    ['user', 'write the notes'],
    ['assistant', 'answer 2'],
    ['user', 'and tag it'],
  ]);
  await second.runtime.closeRoot(second.lead);
  await second.store.close();
});

for (const kind of ['MemoryStore', 'FileStore']) {
  test(`the scripted host sees first from the log after a reopen (${kind})`, async (t) => {
    const dir = kind === 'FileStore' ? await tempDir(t) : undefined;
    const memory = new MemoryStore();
    const open = async () => (kind === 'FileStore' ? FileStore.open(dir) : memory);
    const firsts = async (sessionId, texts) => {
      const store = await open();
      const seen = [];
      const turn = (t) => {
        seen.push(t.first);
        return { messages: ['ok'] };
      };
      const host = scriptedHost({ lead: texts.map(() => turn) });
      const runtime = new SubagentRuntime({ store, host });
      const lead = await runtime.openRoot({ sessionId });
      for (const text of texts) assert.equal((await (await runtime.ask(lead, 'lead', text)).answer).stopReason, 'completed');
      await runtime.closeRoot(lead);
      if (kind === 'FileStore') await store.close();
      host.check();
      return seen;
    };
    assert.deepEqual(await firsts('ran', ['one', 'two']), [true, false]);
    assert.deepEqual(await firsts('ran', ['three']), [false], 'a reopened root that ran turns');
    assert.deepEqual(await firsts('never', []), []);
    assert.deepEqual(await firsts('never', ['one', 'two']), [true, false], 'a reopened root that never ran');
  });
}
