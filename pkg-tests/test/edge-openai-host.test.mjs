// OpenAIHost in Node against a mock OpenAI-compatible server on 127.0.0.1:
// a live runtime whose model delegates by name, messages by full name and
// lists agents; finish-reason mapping; steering at each step; abort;
// failures whose diagnostics never hold the key or the request body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentRuntime, MemoryStore, SubagentError } from 'subagent-tree';
import { OpenAIHost, createOpenAIHost } from 'subagent-tree/openai-host';
import { mockOpenAI, toolCall, say, agentOf, until } from './edge-helpers.mjs';

const KEY = 'sk-test-DO-NOT-LEAK-9f8e7d6c5b4a';
const SECRET_PROMPT = 'the-secret-prompt-text-42';

function fakeTurn({ inputText = ['hi'], tools = [], steered = [], signal, outputSchema, name = 'lead' } = {}) {
  let step = 0;
  return {
    sessionId: 's-1',
    rootId: 's-1',
    name,
    context: `You are agent ${name}, the root of a subagent tree.`,
    first: true,
    cwd: '/',
    signal: signal ?? new AbortController().signal,
    input: [],
    inputText,
    tools,
    outputSchema,
    takeSteered: () => (steered[step++] ?? []).map((text) => ({ id: `m${step}`, text })),
  };
}

function echoTool(calls) {
  return {
    name: 'echo',
    description: 'Echoes',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    async call(input, options) {
      calls.push({ input, signal: options?.signal });
      return { content: `echo: ${input.text}`, isError: false };
    },
  };
}

test('a live runtime driven by the model: delegation by name, send_message by full name, list_agents', async () => {
  const mock = await mockOpenAI((body) => {
    const agent = agentOf(body);
    const tools = body.messages.filter((m) => m.role === 'tool');
    const last = body.messages.at(-1);
    if (agent === 'lead') {
      if (tools.length === 0 && last.content.includes('Build the docs')) return toolCall('spawn_agent', { name: 'writer', description: 'Write docs', prompt: 'Write the guide.' });
      if (tools.length === 1) return toolCall('spawn_agent', { name: 'editor', description: 'Edit docs', prompt: 'Edit what writer writes.' });
      if (tools.length === 2) return toolCall('list_agents', {});
      return say(`lead saw ${tools.length} tool results`);
    }
    if (agent === 'editor' && tools.length === 0 && last.role === 'user' && last.content.startsWith('Edit')) {
      return toolCall('send_message', { agent: 'writer', message: 'use short sentences' });
    }
    return say(`${agent} done`);
  });
  try {
    const store = new MemoryStore();
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, apiKey: KEY, model: 'mock-1', store, retries: 0 });
    const runtime = new SubagentRuntime({ store, host, maxDepth: 2 });
    const root = await runtime.openRoot({ sessionId: 'root' });
    await runtime.prompt(root, 'root', 'Build the docs, please.', { delivery: 'queue' });
    const rows = await until(async () => {
      const r = await runtime.listDescendants('root', {});
      const writerHeard = mock.requests.some((q) => agentOf(q.body) === 'writer' && JSON.stringify(q.body.messages).includes('use short sentences'));
      return r.length === 2 && r.every((x) => x.activity === 'inactive') && writerHeard && r;
    }, 'the tree to settle');
    assert.deepEqual(rows.map((r) => [r.path, r.label]), [['writer', 'Write docs'], ['editor', 'Edit docs']]);
    const leadRequests = mock.requests.filter((q) => agentOf(q.body) === 'lead');
    const results = leadRequests[3].body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    assert.match(results[0], /writer/);
    assert.match(results[2], /writer/);
    assert.match(results[2], /editor/);
    // The assistant turn before each result carries the call; ids pair up.
    const assistant = leadRequests[3].body.messages.filter((m) => m.role === 'assistant');
    assert.deepEqual(assistant.map((m) => m.tool_calls[0].function.name), ['spawn_agent', 'spawn_agent', 'list_agents']);
    const toolIds = leadRequests[3].body.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    assert.deepEqual(toolIds, assistant.map((m) => m.tool_calls[0].id));
    // Function tools are the member's tools.
    assert.deepEqual(leadRequests[0].body.tools.map((t) => t.function.name), ['spawn_agent', 'fork_agent', 'send_message', 'interrupt_agent', 'list_agents', 'task_create', 'task_list', 'task_update']);
    // The writer was messaged by the editor, framed with the sender's full name.
    const writerReq = mock.requests.find((q) => agentOf(q.body) === 'writer' && JSON.stringify(q.body.messages).includes('use short sentences'));
    assert.match(JSON.stringify(writerReq.body.messages), /agent-message from=\\"editor\\"/);
    // A child's system message names itself and its creator.
    assert.match(writerReq.body.messages[0].content, /You are agent writer .*Your creator is lead/);
    // Second lead turn (the settlement notices) sees the first turn as history from the store.
    await until(async () => mock.requests.filter((q) => agentOf(q.body) === 'lead').length >= 5, 'the lead to hear from its children');
    const later = mock.requests.filter((q) => agentOf(q.body) === 'lead').at(-1).body.messages;
    assert.equal(later[1].role, 'user');
    assert.match(later[1].content, /^Build the docs, please\./);
    assert.equal(later[2].role, 'assistant');
    assert.match(later[2].content, /lead saw 3 tool results/);
    for (const q of mock.requests) assert.equal(q.headers.authorization, `Bearer ${KEY}`);
  } finally {
    await mock.close();
  }
});

test('finish reasons map to stop reasons; usage is summed; output is the assistant text', async () => {
  const answers = [say('all good'), say('cut off', 'length'), say('', 'content_filter'), { message: { content: null, refusal: 'I will not.' } }];
  let i = 0;
  const mock = await mockOpenAI(() => answers[i++]);
  try {
    const host = createOpenAIHost({ baseUrl: `${mock.baseUrl}/`, apiKey: KEY, model: 'm' });
    assert.equal(host.endpoint, `${mock.baseUrl}/chat/completions`);
    const done = await host.runTurn(fakeTurn());
    assert.deepEqual({ stopReason: done.stopReason, messages: done.messages }, { stopReason: 'completed', messages: ['all good'] });
    assert.deepEqual(done.usage, { inputTokens: 10, outputTokens: 5 });
    assert.equal((await host.runTurn(fakeTurn())).stopReason, 'max-tokens');
    assert.equal((await host.runTurn(fakeTurn())).stopReason, 'refusal');
    const refused = await host.runTurn(fakeTurn());
    assert.deepEqual([refused.stopReason, refused.messages], ['refusal', ['I will not.']]);
    const body = mock.requests[0].body;
    assert.equal(body.model, 'm');
    assert.equal(body.stream, true, 'streamed by default');
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.tools, undefined, 'no tools: no tools field');
    assert.deepEqual(body.messages.map((m) => m.role), ['system', 'user']);
    assert.match(body.messages[0].content, /You are agent lead/);
  } finally {
    await mock.close();
  }
});

test('the tool loop: calls with the turn signal, bad arguments and unknown tools answered, steering at each step', async () => {
  const mock = await mockOpenAI((body) => {
    const n = body.messages.filter((m) => m.role === 'tool').length;
    if (n === 0) return toolCall('echo', { text: 'one' });
    if (n === 1) return { message: { content: 'thinking', tool_calls: [{ id: 'b', type: 'function', function: { name: 'echo', arguments: '{not json' } }, { id: 'c', type: 'function', function: { name: 'nope', arguments: '{}' } }] }, finish_reason: 'tool_calls' };
    return say('finished');
  });
  try {
    const calls = [];
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', systemPrompt: 'Be brief.' });
    const controller = new AbortController();
    const out = await host.runTurn(fakeTurn({ tools: [echoTool(calls)], steered: [[], ['steered one'], ['steered two']], signal: controller.signal }));
    assert.equal(out.stopReason, 'completed');
    assert.deepEqual(out.messages, ['thinking', 'finished']);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].signal, controller.signal);
    assert.equal(mock.requests[0].headers.authorization, undefined, 'no key, no header');
    assert.match(mock.requests[0].body.messages[0].content, /^Be brief\.\n\nYou are agent lead/);
    const second = mock.requests[1].body.messages;
    assert.deepEqual(second.slice(-2).map((m) => [m.role, m.content]), [['tool', 'echo: one'], ['user', 'steered one']]);
    const third = mock.requests[2].body.messages;
    const tools = third.filter((m) => m.role === 'tool').map((m) => m.content);
    assert.match(tools[1], /not valid JSON/);
    assert.match(tools[2], /no tool named "nope"/);
    assert.deepEqual(third.at(-1), { role: 'user', content: 'steered two' });
  } finally {
    await mock.close();
  }
});

test('a message steered in while the model answers gets one more step', async () => {
  const mock = await mockOpenAI((body) => say(body.messages.at(-1).content === 'late news' ? 'updated' : 'first answer'));
  try {
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm' });
    const out = await host.runTurn(fakeTurn({ steered: [[], ['late news']] }));
    assert.deepEqual([out.stopReason, out.messages], ['completed', ['first answer', 'updated']]);
    assert.equal(mock.requests.length, 2);
  } finally {
    await mock.close();
  }
});

test('abort: a request in flight and a tool call in flight end the turn as aborted', async () => {
  const mock = await mockOpenAI((body) => (body.messages.some((m) => m.role === 'tool') ? { ...say('late'), delayMs: 5000 } : toolCall('slow', {})));
  try {
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm' });
    const controller = new AbortController();
    const t0 = Date.now();
    setTimeout(() => controller.abort(new Error('interrupt')), 100);
    const quick = { name: 'slow', description: 's', inputSchema: { type: 'object' }, call: async () => ({ content: 'ok', isError: false }) };
    const out = await host.runTurn(fakeTurn({ tools: [quick], signal: controller.signal }));
    assert.equal(out.stopReason, 'aborted');
    assert.ok(Date.now() - t0 < 2000, 'the fetch was aborted, not awaited');
    const c2 = new AbortController();
    const hanging = {
      name: 'slow',
      description: 's',
      inputSchema: { type: 'object' },
      call: (_input, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ content: 'stopped', isError: true }))),
    };
    setTimeout(() => c2.abort(), 100);
    const out2 = await host.runTurn(fakeTurn({ tools: [hanging], signal: c2.signal }));
    assert.equal(out2.stopReason, 'aborted');
    assert.equal((await host.runTurn(fakeTurn({ signal: AbortSignal.abort() }))).stopReason, 'aborted');
  } finally {
    await mock.close();
  }
});

test('failures end with error and a diagnostic free of the key and the request body', async () => {
  const leaky = [
    { status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}. Authorization: Bearer ${KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } } },
    (record) => ({ status: 500, raw: `internal error while handling ${record.text} with ${record.headers.authorization}` }),
    { status: 400, body: { error: { message: `bad request near ${'x'.repeat(2000)}` } } },
    { status: 200, raw: 'not json at all' },
    { status: 200, body: { choices: [] } },
  ];
  let i = 0;
  const mock = await mockOpenAI((_body, record) => {
    const a = leaky[i++];
    return typeof a === 'function' ? a(record) : a;
  });
  try {
    // Non-streamed requests: these are the JSON answers' failures (streams have their own tests).
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, apiKey: KEY, model: 'm', retries: 0, stream: false });
    const diagnostics = [];
    for (let k = 0; k < leaky.length; k++) {
      const out = await host.runTurn(fakeTurn({ inputText: [SECRET_PROMPT] }));
      assert.equal(out.stopReason, 'error');
      diagnostics.push(out.diagnostic);
    }
    const unreachable = new OpenAIHost({ baseUrl: `http://127.0.0.1:${mock.port}/v1?key=${KEY}`, apiKey: KEY, model: 'm', retries: 0 });
    await mock.close();
    const down = await unreachable.runTurn(fakeTurn({ inputText: [SECRET_PROMPT] }));
    assert.equal(down.stopReason, 'error');
    diagnostics.push(down.diagnostic);
    for (const d of diagnostics) {
      assert.equal(typeof d, 'string');
      assert.ok(!d.includes(KEY), `key leaked: ${d}`);
      assert.ok(!d.includes(KEY.slice(3, 20)), `part of the key leaked: ${d}`);
      assert.ok(!d.includes(SECRET_PROMPT), `request body leaked: ${d}`);
      assert.ok(Buffer.byteLength(d) <= 4096);
    }
    assert.equal(diagnostics[0], 'the model endpoint answered HTTP 401: the API key or its permissions were refused');
    assert.equal(diagnostics[1], 'the model endpoint answered HTTP 500: the endpoint failed on its side');
    for (const d of diagnostics) assert.ok(!/Incorrect|internal error|bad request/.test(d), `a response body was quoted: ${d}`);
    assert.ok(diagnostics[2].length < 500, 'endpoint messages are shortened');
    assert.match(diagnostics[3], /not JSON/);
    assert.match(diagnostics[4], /without a chat completion choice/);
    assert.match(diagnostics[5], /could not be reached/);
  } finally {
    await mock.close();
  }
});

test('retries 429/5xx, then succeeds; too many steps is an error; structured output is parsed', async () => {
  let n = 0;
  const mock = await mockOpenAI((body) => {
    n++;
    if (body.messages[0].content.includes('JSON Schema')) return say('```json\n{"verdict":"pass"}\n```');
    if (n === 1) return { status: 503, body: { error: { message: 'busy' } } };
    if (n === 2) return { status: 429, body: {}, headers: { 'retry-after': '0' } };
    if (body.messages.at(-1).content === 'loop') return toolCall('echo', { text: 'again' });
    if (body.messages.some((m) => m.role === 'tool')) return toolCall('echo', { text: 'again' });
    return say('recovered');
  });
  try {
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', retryDelayMs: 1, maxSteps: 3 });
    const out = await host.runTurn(fakeTurn());
    assert.deepEqual([out.stopReason, out.messages, out.usage], ['completed', ['recovered'], { inputTokens: 10, outputTokens: 5 }]);
    assert.equal(mock.requests.length, 3);
    const looping = await host.runTurn(fakeTurn({ inputText: ['loop'], tools: [echoTool([])] }));
    assert.equal(looping.stopReason, 'error');
    assert.match(looping.diagnostic, /within 3 steps/);
    const judged = await host.runTurn(fakeTurn({ outputSchema: { type: 'object', properties: { verdict: { type: 'string' } } } }));
    assert.deepEqual(judged.structured, { verdict: 'pass' });
  } finally {
    await mock.close();
  }
});

test('a key echoed back masked or upper-cased, or a hostile reason phrase, never reaches a diagnostic', async () => {
  const key = 'gsk_live_4f9a1b2c3d4e5f60718e6f';
  const echoes = [
    { status: 401, body: { error: { message: `Invalid API Key gsk_live_4f9****8e6f` } } },
    { status: 403, body: { error: { message: `key ${key.toUpperCase()} is not allowed` } } },
    { status: 400, raw: `${key.split('').reverse().join('')} ${key.slice(0, 12)}…` },
    { status: 418, headers: {}, raw: 'teapot', reason: `I am ${key}` },
  ];
  let i = 0;
  const mock = await mockOpenAI(() => echoes[i++]);
  try {
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, apiKey: key, model: 'm', retries: 0, stream: false });
    for (let k = 0; k < echoes.length; k++) {
      const out = await host.runTurn(fakeTurn());
      assert.equal(out.stopReason, 'error');
      assert.match(out.diagnostic, /^the model endpoint answered HTTP \d{3}: [A-Za-z ,]+$/, out.diagnostic);
      for (const part of ['gsk', '4f9', '8e6f', 'GSK', 'LIVE', 'teapot']) assert.ok(!out.diagnostic.includes(part), out.diagnostic);
    }
  } finally {
    await mock.close();
  }
});

test('one reply asking for thousands of tool calls runs none and ends the turn; the bound is configurable', async () => {
  const many = (n) => ({
    message: {
      content: null,
      tool_calls: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, type: 'function', function: { name: 'echo', arguments: JSON.stringify({ text: String(i) }) } })),
    },
    finish_reason: 'tool_calls',
  });
  let n = 0;
  const mock = await mockOpenAI((body) => (body.messages.some((m) => m.role === 'tool') ? say('done') : many(n++ === 0 ? 3000 : 3)));
  try {
    const calls = [];
    const host = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', retries: 0 });
    const out = await host.runTurn(fakeTurn({ tools: [echoTool(calls)] }));
    assert.equal(out.stopReason, 'error');
    assert.match(out.diagnostic, /3000 tool calls in one reply; the limit toolCallsPerReply is 64/);
    assert.equal(calls.length, 0, 'no tool ran');
    const ok = await host.runTurn(fakeTurn({ tools: [echoTool(calls)] }));
    assert.equal(ok.stopReason, 'completed');
    assert.equal(calls.length, 3);
    const tight = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', maxToolCallsPerReply: 2 });
    assert.equal((await tight.runTurn(fakeTurn({ tools: [echoTool(calls)] }))).stopReason, 'error');
    for (const bad of [0, 1025, 1.5, 'x']) {
      assert.throws(() => new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', maxToolCallsPerReply: bad }), (e) => e.code === 'INVALID_ARGUMENT');
    }
    // Unset, the turn's own limit applies; set, the host's wins.
    const turnLimited = await host.runTurn({ ...fakeTurn({ tools: [echoTool(calls)] }), toolCallsPerReply: 2 });
    assert.match(turnLimited.diagnostic, /3 tool calls in one reply; the limit toolCallsPerReply is 2/);
    const hostWins = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', maxToolCallsPerReply: 5 });
    assert.equal((await hostWins.runTurn({ ...fakeTurn({ tools: [echoTool(calls)] }), toolCallsPerReply: 2 })).stopReason, 'completed');
  } finally {
    await mock.close();
  }
});

test("the runtime's limits.toolCallsPerReply reaches each turn, and OpenAIHost applies it", async () => {
  const three = {
    message: {
      content: null,
      tool_calls: Array.from({ length: 3 }, (_, i) => ({ id: `c${i}`, type: 'function', function: { name: 'task_list', arguments: '{}' } })),
    },
    finish_reason: 'tool_calls',
  };
  const mock = await mockOpenAI(() => three);
  try {
    const store = new MemoryStore();
    const model = new OpenAIHost({ baseUrl: mock.baseUrl, model: 'm', retries: 0 });
    const seen = [];
    const host = { runTurn: (turn) => (seen.push(turn.toolCallsPerReply), model.runTurn(turn)) };
    const runtime = new SubagentRuntime({ store, host, limits: { toolCallsPerReply: 2 } });
    const root = await runtime.openRoot({ sessionId: 'root' });
    const { answer } = await runtime.ask(root, 'lead', 'list the tasks three times');
    const result = await answer;
    assert.deepEqual(seen, [2]);
    assert.equal(result.stopReason, 'error');
    assert.match(result.diagnostic, /3 tool calls in one reply; the limit toolCallsPerReply is 2, so none ran/);
    await runtime.closeRoot(root);
  } finally {
    await mock.close();
  }
});

test('Tool.call never throws or rejects on bad options or a dead agent: it resolves with isError', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: { runTurn: async () => ({ stopReason: 'completed' }) } });
  const root = await runtime.openRoot({});
  const tool = runtime.toolsFor(root).find((t) => t.name === 'list_agents');
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  for (const options of [5, 'x', { signal: 5 }, { signal: {} }, revoked.proxy, Object.defineProperty({}, 'signal', { get() { throw new Error('g'); } })]) {
    let out;
    try {
      out = await tool.call({}, options);
    } catch (e) {
      assert.fail(`call rejected with ${e}`);
    }
    assert.equal(out.isError, true);
    assert.equal(typeof out.content, 'string');
  }
  await runtime.closeRoot(root);
  const dead = await tool.call({});
  assert.equal(dead.isError, true);
  assert.match(dead.content, /dead|not a live/);
});

test('configuration errors are SubagentErrors', () => {
  const bad = [undefined, {}, { baseUrl: 'ftp://x', model: 'm' }, { baseUrl: 'http://x', model: '' }, { baseUrl: 'http://x', model: 'm', maxSteps: 0 }, { baseUrl: 'http://x', model: 'm', store: {} }, { baseUrl: 'http://x', model: 'm', apiKey: 5 }];
  for (const options of bad) {
    assert.throws(() => new OpenAIHost(options), (e) => e instanceof SubagentError && e.code === 'INVALID_ARGUMENT', JSON.stringify(options));
  }
});

test('OpenAIHost without a store still remembers by default: a later turn reads the member\'s earlier turns through the turn', async () => {
  const model = await mockOpenAI(() => say(model.requests.length === 1 ? 'Release shipped.' : 'It was the release.'));
  try {
    // A new host for each turn, as after a restart: nothing in any process's memory.
    const store = new MemoryStore();
    const host = () => new OpenAIHost({ baseUrl: model.baseUrl, model: 'm', retries: 0 });
    const first = new SubagentRuntime({ store, host: host() });
    const lead = await first.openRoot({ sessionId: 'root' });
    await (await first.ask(lead, 'lead', 'Ship the release.')).answer;
    await first.closeRoot(lead);
    const second = new SubagentRuntime({ store, host: host() });
    await (await second.ask(await second.openRoot({ sessionId: 'root' }), 'lead', 'What did you ship?')).answer;
    const messages = JSON.stringify(model.requests[1].body.messages);
    assert.ok(messages.includes('Ship the release.') && messages.includes('Release shipped.'), messages);
  } finally {
    await model.close();
  }
});
