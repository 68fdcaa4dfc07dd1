// subagent-tree/acp-provider: children that are other agents. The provider drives the package's
// own `subagent-tree-acp` command (its turns over a local mock model) as a child of a scripted
// tree: the child is listed under its name, streams its text and tool calls as its own, counts
// its usage, and stops on an interrupt. Agents that crash, hang, fall silent or write what is not
// JSON-RPC end their run in error with a diagnostic that says which; a permission request is
// answered by the policy (deny by default). After every run, no process of it is left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SubagentRuntime, MemoryStore } from 'subagent-tree';
import { instrument } from 'subagent-tree/otel';
import { scriptedHost } from 'subagent-tree/testing';
import { acpProvider, DEFAULT_TIMEOUTS } from 'subagent-tree/acp-provider';
import { root as testRoot, mockOpenAI, say, toolCall, agentOf } from './edge-helpers.mjs';

const PKG = path.join(testRoot, 'node_modules', 'subagent-tree');
const BIN = path.join(PKG, JSON.parse(readFileSync(path.join(PKG, 'package.json'), 'utf8')).bin['subagent-tree-acp']);
const FIXTURE = fileURLToPath(new URL('./fixtures/acp-fixture-agent.mjs', import.meta.url));

/** Processes whose command line holds `marker` (none may be left once a run has ended). */
function processesWith(marker) {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

/** A tree whose lead is scripted, with `provider` registered, and what its listeners saw. */
async function treeWith(provider, script = {}) {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost(script), defaultCwd: os.tmpdir() });
  runtime.registerProvider(provider);
  const seen = [];
  for (const type of ['subagent/delta', 'subagent/tool', 'subagent/start', 'subagent/end']) runtime.on(type, (e) => seen.push({ type, ...e }));
  const lead = await runtime.openRoot({ sessionId: 'root' });
  return { runtime, lead, seen };
}

/** Starts a child on `provider` under lead and waits for its result. */
async function runChild(provider, prompt = 'What is the answer?') {
  const { runtime, lead, seen } = await treeWith(provider);
  const run = await runtime.startActivation({ provider: provider.name, parent: lead, label: 'Ask the agent', prompt, name: 'coder' });
  const result = await run.result;
  return { runtime, lead, seen, run, result };
}

test('the package\'s own ACP agent as a child: listed by name, its text and tool calls streamed as its own, its answer and usage counted', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'acp-provider-'));
  const model = await mockOpenAI((body) => {
    const agent = agentOf(body);
    const last = body.messages.at(-1);
    if (agent === 'lead') return last.role === 'tool' ? say('The answer is 42.') : toolCall('spawn_agent', { name: 'helper', description: 'Look it up', prompt: 'Look up the answer.' });
    return say('Looked it up.');
  });
  try {
    const provider = acpProvider({
      command: process.execPath,
      args: [BIN, '--dir', dir],
      env: { OPENAI_BASE_URL: model.baseUrl, OPENAI_MODEL: 'mock-model', OPENAI_API_KEY: 'sk-test' },
    });
    assert.equal(provider.name, 'acp');
    // The outer lead starts the child with the provider's own delegation tool.
    const { runtime, lead, seen } = await treeWith(provider, {
      lead: [{ steps: [{ call: 'acp_agent', input: { name: 'coder', description: 'Ask the agent', prompt: 'What is the answer?' } }], reply: 'Asked.' }, 'Heard back.'],
    });
    assert.ok(runtime.toolsFor(lead).some((t) => t.name === 'acp_agent'), 'a model chooses the provider by its tool');
    const exporter = new InMemorySpanExporter();
    instrument(runtime, { tracer: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test') });
    await runtime.prompt(lead, 'lead', 'Find the answer.');
    await runtime.waitForQuiescence(lead);
    const rows = await runtime.listDescendants('root');
    assert.deepEqual(rows.map((r) => [r.path, r.mode, r.label]), [['coder', 'external', 'Ask the agent']]);
    const coderId = rows[0].id;
    const ended = seen.find((e) => e.type === 'subagent/end' && e.name === 'coder');
    assert.equal(ended?.stopReason, 'completed');
    // Its text as deltas of coder, in order; its last message is its result (lead's notice quotes it).
    const text = seen.filter((e) => e.type === 'subagent/delta' && e.sessionId === coderId).map((e) => e.part.text).join('');
    assert.equal(text, 'The answer is 42.');
    // Its tool calls (the agent's lead spawning helper) as coder's tool events, begun and ended.
    const tools = seen.filter((e) => e.type === 'subagent/tool' && e.sessionId === coderId);
    // (The agent shows its own child, helper, as a tool call too: it was still running when the
    // agent answered, so its end never came before the process ended.)
    assert.deepEqual(tools.map((e) => [e.phase, e.tool, e.isError ?? null]), [['start', 'spawn_agent', null], ['start', 'helper: Look it up', null], ['end', 'spawn_agent', false]]);
    assert.deepEqual(tools[0].input, { name: 'helper', description: 'Look it up', prompt: 'Look up the answer.' });
    // ... and as spans under coder's create_agent.
    const spans = exporter.getFinishedSpans();
    const created = spans.find((span) => span.name === 'create_agent coder');
    const call = spans.find((span) => span.name === 'execute_tool spawn_agent' && span.parentSpanContext?.spanId === created?.spanContext().spanId);
    assert.ok(call, spans.map((span) => span.name).join(', '));
    // Its usage (two model calls of 10 + 5 tokens) counts in coder's and the tree's totals.
    const usage = await runtime.usage(lead, 'coder');
    assert.deepEqual([usage.own.inputTokens, usage.own.outputTokens], [20, 10]);
    const tree = await runtime.usage(lead);
    assert.ok(tree.subtree.inputTokens >= 20, JSON.stringify(tree));
    assert.deepEqual(processesWith(dir), [], 'no agent process left');
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the package\'s own command on a scripted host (--script): a deterministic child, no model at all', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'acp-provider-'));
  const script = path.join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ lead: [{ reply: 'Scripted answer.', usage: { inputTokens: 7, outputTokens: 3 } }] }));
  try {
    const { result, seen, runtime, lead } = await runChild(acpProvider({ command: process.execPath, args: [BIN, '--dir', path.join(dir, 'sessions'), '--script', script] }));
    assert.equal(result.stopReason, 'completed', result.diagnostic);
    assert.deepEqual(result.output, [{ type: 'text', text: 'Scripted answer.' }]);
    assert.equal(seen.filter((e) => e.type === 'subagent/delta').map((e) => e.part.text).join(''), 'Scripted answer.');
    const usage = await runtime.usage(lead, 'coder');
    assert.deepEqual([usage.own.inputTokens, usage.own.outputTokens], [7, 3]);
    assert.deepEqual(processesWith(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an interrupt sends session/cancel: the child ends aborted and its process ends', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'acp-provider-'));
  let asked;
  const asking = new Promise((resolve) => (asked = resolve));
  const model = await mockOpenAI(() => {
    asked();
    return { ...say('too late'), delayMs: 60_000 };
  });
  try {
    const provider = acpProvider({ command: process.execPath, args: [BIN, '--dir', dir], env: { OPENAI_BASE_URL: model.baseUrl, OPENAI_MODEL: 'mock-model', OPENAI_API_KEY: 'sk-test' } });
    const { runtime, lead } = await treeWith(provider);
    const run = await runtime.startActivation({ provider: 'acp', parent: lead, label: 'Slow', prompt: 'Take your time.', name: 'slow' });
    await asking;
    assert.equal(processesWith(dir).length, 1, 'its process runs');
    assert.deepEqual(runtime.interrupt('slow', { kind: 'user', root: lead }), { signalled: true });
    const result = await run.result;
    assert.equal(result.stopReason, 'aborted');
    assert.deepEqual(processesWith(dir), [], 'no agent process left');
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('dispose() cancels a run and resolves once its process is gone', async () => {
  const marker = `acp-dispose-${process.pid}`;
  const provider = acpProvider({ command: process.execPath, args: [FIXTURE, 'silent', marker], timeouts: { idleMs: 3_600_000 } });
  const { runtime, lead } = await treeWith(provider);
  // The agent never answers the prompt: only dispose() can end this run before the hour is out.
  const run = await runtime.startActivation({ provider: 'acp', parent: lead, label: 'Silent', prompt: 'Anything?', name: 'quiet' });
  await run.dispose();
  assert.equal((await run.result).stopReason, 'aborted');
  assert.deepEqual(processesWith(marker), []);
});

for (const [what, options, diagnostic] of [
  ['a command that cannot start', { command: path.join(os.tmpdir(), 'no-such-agent-here') }, /^the acp agent could not be started \(ENOENT\)$/],
  ['an agent that crashes', { command: process.execPath, args: ['-e', 'process.exit(3) /* acp-crash */'] }, /^the acp agent exited \(code 3\) before it answered$/],
  [
    'an agent that never answers initialize',
    { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000) /* acp-hang */'], timeouts: { startMs: 300 } },
    /^the acp agent did not start within 300 ms$/,
  ],
  [
    'an agent that writes what is not JSON-RPC',
    { command: process.execPath, args: ['-e', 'console.log("hello, I am not JSON-RPC"); setInterval(() => {}, 1000) /* acp-garbage */'] },
    /^the acp agent wrote a line that is not JSON-RPC \(24 bytes\)$/,
  ],
  ['an agent that falls silent while prompted', { command: process.execPath, args: [FIXTURE, 'silent', 'acp-silent'], timeouts: { idleMs: 300 } }, /^the acp agent sent nothing for 300 ms$/],
]) {
  test(`${what}: the run ends in error, its diagnostic says so (and nothing the agent wrote), no process is left`, async () => {
    const { result } = await runChild(acpProvider(options));
    assert.equal(result.stopReason, 'error');
    assert.match(result.diagnostic, diagnostic);
    const marker = /acp-\w+/.exec(options.args?.join(' ') ?? '')?.[0];
    if (marker) assert.deepEqual(processesWith(marker), []);
  });
}

test('session/request_permission: denied by default, allowed or chosen by the policy', async () => {
  const run = async (permission) => (await runChild(acpProvider({ command: process.execPath, args: [FIXTURE, 'permission', 'acp-permission'], permission }))).result;
  assert.match((await run(undefined)).output[0].text, /chose no$/);
  assert.match((await run('allow')).output[0].text, /chose yes$/);
  let asked;
  assert.match(
    (await run((request) => ((asked = request), 'no'))).output[0].text,
    /chose no$/,
  );
  assert.deepEqual([asked.tool, asked.kind, asked.options.map((o) => o.kind)], ['Write notes.md', 'edit', ['allow_once', 'reject_once']]);
  assert.match((await run(() => 'maybe')).output[0].text, /chose nothing$/, 'no such option: cancelled');
  assert.deepEqual(processesWith('acp-permission'), []);
});

test('options are checked: a bad one is INVALID_ARGUMENT naming it; the presets name the package to install', () => {
  const bad = (options, message) => assert.throws(() => acpProvider(options), (e) => e.code === 'INVALID_ARGUMENT' && message.test(e.message));
  bad({}, /command must be/);
  bad({ command: 'x', comand: 'y' }, /no option "comand"/);
  bad({ command: 'x', name: 'Bad Name' }, /name must be/);
  bad({ command: 'x', timeouts: { startMS: 5 } }, /timeouts has no option "startMS"/);
  bad({ command: 'x', permission: 'maybe' }, /permission must be/);
  assert.equal(DEFAULT_TIMEOUTS.cancelMs, 5000);
  // Installed here only where the real-agent test installs them: each preset names its package.
  for (const [preset, pkg] of [['claudeCode', '@agentclientprotocol/claude-agent-acp'], ['codex', '@zed-industries/codex-acp']]) {
    try {
      assert.equal(acpProvider[preset]().name, preset === 'codex' ? 'codex' : 'claude-code');
    } catch (e) {
      assert.equal(e.code, 'NO_PROVIDER');
      assert.match(e.message, new RegExp(`npm install ${pkg.replace('/', '\\/')}`));
    }
  }
});
