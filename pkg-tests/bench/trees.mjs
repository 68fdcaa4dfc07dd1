// The cold tree the usage and budget benchmarks read: fan-out 10, depth 3
// (1,111 members), each member's log a start, three recorded turns that
// carry usage, then its catalog.

/**
 * Writes the tree into `store` under the root `root`; `rootEvents` (without
 * seq) follow the root's start, `output` is each turn's answer text and
 * `inputTokens(t)` turn t's input tokens. Resolves the member count.
 */
export async function writeColdTree(store, { rootEvents = [], output = 'done', inputTokens = () => 1000 } = {}) {
  let members = 1;
  const write = async (id, parent, depth) => {
    const events = [{ seq: 0, type: 'session/start', payload: { inheritedEventCount: 0, parentId: parent, rootId: 'root' } }];
    if (id === 'root') for (const e of rootEvents) events.push({ seq: events.length, ...e });
    for (let t = 0; t < 3; t++) {
      events.push({ seq: events.length, type: 'message/input', payload: { messageId: `m${t}`, source: { kind: 'user' }, content: [{ type: 'text', text: 'go' }], delivery: 'queue' } });
      events.push({ seq: events.length, type: 'turn/start', payload: { input: [`m${t}`] } });
      events.push({ seq: events.length, type: 'turn/end', payload: { stopReason: 'completed', output: [{ type: 'text', text: output }], consumed: [`m${t}`], usage: { inputTokens: inputTokens(t), outputTokens: 200 } } });
    }
    const kids = depth < 3 ? Array.from({ length: 10 }, (_, i) => `${id}.${i}`) : [];
    for (const [i, kid] of kids.entries()) {
      events.push({ seq: events.length, type: 'subagent/catalog', payload: { version: 3, childId: kid, childCreatedAt: 1, mode: 'continuable', label: 'task', name: `agent-${i + 1}` } });
    }
    await store.append(id, events);
    for (const kid of kids) {
      members += 1;
      await write(kid, id, depth + 1);
    }
  };
  await write('root', undefined, 0);
  return members;
}
