// One scenario of subagent-tree/ai-sdk run in Node, Chromium and workerd
// (bundled with the AI SDK for the last two): aiSdkHost over the SDK's mock
// model runs a three-level tree. `lead` starts `reviewer`, which starts
// `checker`; each reports; the runtime's deltas, listing and usage are
// returned for the test to check.
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { aiSdkHost } from 'subagent-tree/ai-sdk';

const usage = { inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 20, text: 20, reasoning: undefined } };
const answer = (parts, unified = 'stop') => ({
  stream: convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, ...parts, { type: 'finish', finishReason: { unified, raw: undefined }, usage }]),
});
const spawn = (name, prompt) =>
  answer([{ type: 'tool-call', toolCallId: `spawn-${name}`, toolName: 'spawn_agent', input: JSON.stringify({ name, description: `Task of ${name}`, prompt }) }], 'tool-calls');
const say = (text) => answer([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: text.slice(0, 4) }, { type: 'text-delta', id: 't', delta: text.slice(4) }, { type: 'text-end', id: 't' }]);

/** What the shared scenario (Node here; Chromium and workerd in their own tests) must return. */
export const THREE_LEVELS = {
  stop: 'completed',
  paths: ['reviewer', 'reviewer/checker'],
  deltas: { 'reviewer/checker': 'reviewer/checker done', reviewer: 'reviewer donereviewer done', lead: 'lead donelead done' },
};

export async function threeLevelTree({ SubagentRuntime, MemoryStore }) {
  const model = new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const system = String(prompt.find((m) => m.role === 'system')?.content ?? '');
      const name = /You are agent ([\w/-]+)/.exec(system)?.[1] ?? '?';
      const called = prompt.some((m) => m.role === 'tool');
      const last = prompt.filter((m) => m.role === 'user').at(-1);
      const asked = JSON.stringify(last?.content ?? '');
      // Each delegates its task once; a notice of a finished child is only read.
      if (name === 'lead' && !called && asked.includes('Ship the release')) return spawn('reviewer', 'Review the release.');
      if (name === 'reviewer' && !called && asked.includes('Review the release')) return spawn('checker', 'Run the checks.');
      return say(`${name} done`);
    },
  });
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host: aiSdkHost({ model, store }), maxDepth: 2 });
  const deltas = {};
  runtime.on('subagent/delta', (e) => (deltas[e.name] = (deltas[e.name] ?? '') + e.part.text));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  const answered = await (await runtime.ask(lead, 'lead', 'Ship the release.')).answer;
  await runtime.waitForQuiescence(lead);
  const rows = await runtime.listDescendants('root');
  const total = await runtime.usage(lead);
  return {
    stop: answered.stopReason,
    paths: rows.map((r) => r.path),
    deltas,
    turns: total.subtree.turns,
    inputTokens: total.subtree.inputTokens,
  };
}
