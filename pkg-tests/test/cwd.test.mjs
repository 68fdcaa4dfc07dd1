// Issue 69, point 2: a directory that moves. turn.setCwd(path) resolves against the member's current
// directory, is confined to the root's, is logged (session/cwd) before it resolves, and later
// turns, children started after it and a cold resume after a restart use it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';

test('turn.setCwd moves a member\'s directory for its next turns, its new children and a resume', async () => {
  const store = new MemoryStore();
  const seen = [];
  const refusals = [];
  const host = {
    async runTurn(turn) {
      seen.push([turn.name, turn.cwd]);
      if (turn.name === 'reviewer' && turn.first) {
        assert.equal(await turn.setCwd('src/core'), '/work/src/core');
        assert.equal(await turn.setCwd('../runtime'), '/work/src/runtime');
        await turn.setCwd('/etc').catch((e) => refusals.push(e.code));
        await turn.setCwd(42).catch((e) => refusals.push(e.code));
        await runtimeRef.startActivation({ parent: turn.agent, label: 'Check', prompt: 'Check.', name: 'checker' });
      }
      return { messages: ['ok'] };
    },
  };
  let runtimeRef;
  const runtime = (runtimeRef = new SubagentRuntime({ store, host, maxDepth: 2 }));
  const lead = await runtime.openRoot({ sessionId: 'root', cwd: '/work' });
  const reviewer = await runtime.startActivation({ parent: lead, label: 'Review', prompt: 'Review.', name: 'reviewer' });
  await reviewer.result;
  await runtime.waitForQuiescence(lead);
  assert.deepEqual(refusals, ['UNAUTHORIZED', 'INVALID_ARGUMENT']);
  assert.deepEqual(seen.find(([name]) => name === 'reviewer/checker'), ['reviewer/checker', '/work/src/runtime']);
  const moves = (await store.read(reviewer.childId, {})).filter((e) => e.type === 'session/cwd').map((e) => e.payload.cwd);
  assert.deepEqual(moves, ['/work/src/core', '/work/src/runtime']);
  // A restart: the cold member's next turn runs where it moved.
  const again = [];
  const runtime2 = new SubagentRuntime({ store, host: { runTurn: (turn) => (again.push([turn.name, turn.cwd]), { messages: ['ok'] }) }, maxDepth: 2 });
  const lead2 = await runtime2.openRoot({ sessionId: 'root' });
  await (await runtime2.ask(lead2, 'reviewer', 'Again.')).answer;
  assert.deepEqual(again, [['reviewer', '/work/src/runtime']]);
});
