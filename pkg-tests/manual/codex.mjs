// Codex as a child of a tree, through acpProvider.codex(), against a local mock of OpenAI's
// Responses API. Not part of `make test`: Codex's native binary is 233 MB. Run it by hand, in a
// scratch directory with the packed package (`make pkg && (cd pkg && npm pack)`):
//
//   mkdir /tmp/codex && cd /tmp/codex && npm init -y >/dev/null
//   npm install @zed-industries/codex-acp@0.16.0 @agentclientprotocol/sdk@2.4.0 <repo>/pkg/subagent-tree-0.1.0.tgz
//   cp <repo>/pkg-tests/manual/codex.mjs . && node codex.mjs
//
// It prints the child's answer, its deltas, its usage and how long each run took, then runs it
// again and interrupts it mid-answer; it exits 1 if anything is not as expected (or a process of
// Codex is left). Seen here (2026-12-08): the answer in ~150 ms, an interrupt aborted in ~14 ms.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { acpProvider } from 'subagent-tree/acp-provider';

let hold = false;
let asked = () => {};
const server = http.createServer(async (req, res) => {
  let text = '';
  for await (const chunk of req) text += chunk;
  if (req.method !== 'POST' || !req.url.startsWith('/v1/responses')) return void res.writeHead(404).end();
  const body = JSON.parse(text);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const item = { id: 'msg_1', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
  send('response.created', { response: { id: 'resp_1', object: 'response', status: 'in_progress', model: body.model, output: [] } });
  // Codex needs the item before any delta (else the text arrives as one chunk).
  send('response.output_item.added', { output_index: 0, item });
  send('response.content_part.added', { output_index: 0, item_id: 'msg_1', content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
  if (hold) return asked();
  for (const delta of ['Codex ', 'says ', 'hello.']) send('response.output_text.delta', { output_index: 0, item_id: 'msg_1', content_index: 0, delta });
  const done = { ...item, status: 'completed', content: [{ type: 'output_text', text: 'Codex says hello.', annotations: [] }] };
  send('response.output_item.done', { output_index: 0, item: done });
  const usage = { input_tokens: 321, output_tokens: 12, total_tokens: 333, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  send('response.completed', { response: { id: 'resp_1', object: 'response', status: 'completed', model: body.model, output: [done], usage } });
  res.end();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const home = mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
mkdirSync(path.join(home, 'codex'));
const base = `http://127.0.0.1:${server.address().port}/v1`;
const provider = acpProvider.codex({
  env: { OPENAI_API_KEY: 'sk-test', CODEX_HOME: path.join(home, 'codex'), HOME: home, TMPDIR: home },
  args: ['-c', 'model_provider=mock', '-c', 'model_providers.mock.name=mock', '-c', `model_providers.mock.base_url=${base}`, '-c', 'model_providers.mock.wire_api=responses', '-c', 'model_providers.mock.env_key=OPENAI_API_KEY', '-c', 'model=gpt-5.4'],
});
const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: () => ({ messages: [] }) }, defaultCwd: home });
runtime.registerProvider(provider);
const deltas = [];
runtime.on('subagent/delta', (e) => deltas.push(e.part.text));
const lead = await runtime.openRoot();
const left = () => execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n').filter((line) => line.includes('codex-acp'));
try {
  let t0 = Date.now();
  const result = await (await runtime.startActivation({ provider: 'codex', parent: lead, label: 'Greet', prompt: 'Say hello.', name: 'greeter' })).result;
  console.log(`answer in ${Date.now() - t0} ms: ${JSON.stringify(result.output)}, deltas ${JSON.stringify(deltas)}, usage ${JSON.stringify(result.usage)}`);
  assert.equal(result.stopReason, 'completed', result.diagnostic);
  assert.equal(deltas.join(''), 'Codex says hello.');
  hold = true;
  const asking = new Promise((resolve) => (asked = resolve));
  const run = await runtime.startActivation({ provider: 'codex', parent: lead, label: 'Think', prompt: 'Think it over.', name: 'thinker' });
  await asking;
  t0 = Date.now();
  runtime.interrupt('thinker', { kind: 'user', root: lead });
  const stopped = await run.result;
  console.log(`interrupted: ${stopped.stopReason} in ${Date.now() - t0} ms`);
  assert.equal(stopped.stopReason, 'aborted');
  assert.deepEqual(left(), [], 'no Codex process left');
} finally {
  server.close();
  rmSync(home, { recursive: true, force: true });
}
