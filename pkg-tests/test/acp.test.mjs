// subagent-tree/acp against the real ACP SDK (`@agentclientprotocol/sdk`, its
// `unstable` entry): the SDK's client app over an in-memory ndjson stream pair.
// A prompt that makes reviewer and reviewer/checker announces each on its
// creator's session before any traffic under its id, with names and states;
// a cancel of checker interrupts it alone; a client without the capability
// gets no subagent update and nothing under a child's id; session/load after a
// restart announces the tree before its history. Every line the agent writes
// is counted on the wire and must reach the client's handlers, which parse it
// with the SDK's zod schemas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk/unstable';
import { SubagentRuntime, MemoryStore, listDescendants } from 'subagent-tree';
import { FileStore } from 'subagent-tree/file-store';
import { scriptedHost } from 'subagent-tree/testing';
import { acpAgent } from 'subagent-tree/acp';
import { acpClient, transcript } from './acp-helpers.mjs';

const spawn = (name, description, prompt) => ({ call: 'spawn_agent', input: { name, description, prompt } });

/** The agent and the test client over an in-memory ndjson pair. */
function connect(agent, { subagents }) {
  const toClient = new TransformStream();
  const toAgent = new TransformStream();
  agent.connect(ndJsonStream(toClient.writable, toAgent.readable));
  return acpClient({ toAgent: toAgent.writable, fromAgent: toClient.readable, subagents });
}

const SCRIPT = {
  lead: [
    { steps: [{ emit: { type: 'text-delta', text: 'Starting the review.' } }, spawn('reviewer', 'Review the release', 'Review the release.')], reply: 'Started reviewer.', usage: { inputTokens: 120, outputTokens: 30 } },
    { reply: 'The release is reviewed.', usage: { inputTokens: 200, outputTokens: 20 } },
  ],
  reviewer: [
    { steps: [spawn('checker', 'Run the checks', 'Run the checks.')], reply: 'Checking.', usage: { inputTokens: 80, outputTokens: 10 } },
    { reply: 'Reviewed: the checks were stopped.' },
  ],
  // Works until the client cancels it (however quiet the rest of the tree is).
  'reviewer/checker': [(turn) => new Promise((resolve) => turn.signal.addEventListener('abort', () => resolve({ stopReason: 'aborted' }), { once: true }))],
};

test('a prompt that spawns reviewer and reviewer/checker: announced on their creators\' sessions first; cancel stops checker alone', async () => {
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost(SCRIPT), maxDepth: 2 });
  const acp = connect(acpAgent({ runtime }), { subagents: true });
  const names = new Map();
  await acp.run(async (ctx, init) => {
    assert.equal(init.protocolVersion, PROTOCOL_VERSION);
    assert.equal(init.agentCapabilities.loadSession, true, 'logs are read through the runtime: no store needed');
    const { sessionId: root } = await ctx.request(methods.agent.session.new, { cwd: '/work', mcpServers: [] });
    names.set(root, 'lead');
    const response = await ctx.request(methods.agent.session.prompt, { sessionId: root, prompt: [{ type: 'text', text: 'Ship the release.' }] });
    assert.equal(response.stopReason, 'end_turn');
    assert.deepEqual(response.usage, { inputTokens: 120, outputTokens: 30, totalTokens: 150 });
    // checker runs until cancelled: wait for its announcement, then cancel it.
    const announced = (u) => u.update.sessionUpdate === 'subagent_update' && u.update.title === 'checker';
    await acp.until((us) => us.some(announced), 'checker to be announced');
    const checker = acp.updates.find(announced).update.sessionId;
    await ctx.notify(methods.agent.session.cancel, { sessionId: checker });
    await acp.until((us) => us.filter((u) => u.sessionId === root && u.update.sessionUpdate === 'usage_update').length === 2, 'lead\'s second turn');
  });
  const root = [...names.keys()][0];
  const updates = acp.updates;
  const subagentUpdates = updates.filter((u) => u.update.sessionUpdate === 'subagent_update');
  const first = (id) => subagentUpdates.find((u) => u.update.sessionId === id);
  const reviewer = subagentUpdates.find((u) => u.update.title === 'reviewer').update.sessionId;
  const checker = subagentUpdates.find((u) => u.update.title === 'checker').update.sessionId;
  names.set(reviewer, 'reviewer').set(checker, 'reviewer/checker');
  const lines = transcript(updates, names);
  console.log(lines.join('\n'));
  // Announced on the creator's session, with name, label, full name, provider, cancel and state.
  assert.equal(first(reviewer).sessionId, root);
  assert.deepEqual(first(reviewer).update, {
    sessionUpdate: 'subagent_update',
    sessionId: reviewer,
    title: 'reviewer',
    description: 'Review the release',
    capabilities: { cancel: {} },
    state: { state: 'running' },
    _meta: { 'subagent-tree': { fullName: 'reviewer', provider: 'spawn' } },
  });
  assert.equal(first(checker).sessionId, reviewer);
  assert.equal(first(checker).update._meta['subagent-tree'].fullName, 'reviewer/checker');
  // Before any traffic under the child's id, and before any message naming it.
  for (const id of [reviewer, checker]) {
    const announcedAt = updates.indexOf(first(id));
    const traffic = updates.findIndex((u) => u.sessionId === id || u.update.senderSessionId === id || u.update.recipientSessionId === id);
    assert.ok(announcedAt < traffic, `${names.get(id)} announced (${announcedAt}) before its traffic (${traffic})`);
  }
  // States: checker cancelled; reviewer ran on and ended its turn.
  const states = (id) => subagentUpdates.filter((u) => u.update.sessionId === id).map((u) => [u.update.state.state, u.update.state.stopReason].filter(Boolean).join(' '));
  assert.ok(states(checker).includes('idle cancelled'), states(checker).join(', '));
  assert.ok(!states(reviewer).includes('idle cancelled'), states(reviewer).join(', '));
  assert.equal(states(reviewer).at(-1), 'idle end_turn');
  // Lead's stream, tool calls under each member's own id, usage, and the notices as session messages.
  assert.ok(lines.includes('lead: agent_message_chunk Starting the review.'));
  assert.ok(lines.includes('lead: tool_call spawn_agent'));
  assert.ok(lines.includes('reviewer: tool_call spawn_agent'));
  assert.ok(lines.includes('lead: session_message from reviewer'), 'reviewer\'s settlement notice reaches lead');
  assert.ok(lines.includes('reviewer: session_message from reviewer/checker'));
  assert.ok(updates.some((u) => u.sessionId === reviewer && u.update.sessionUpdate === 'usage_update' && u.update.used === 90));
  // Every session/update the agent wrote reached the client's handler, parsed by the SDK's schemas.
  const written = acp.wire.filter((m) => m.method === 'session/update');
  assert.equal(updates.length, written.length);
});

test('a client without the subagents capability gets no subagent update and nothing under a child\'s id: children are tool calls on the root\'s session', async () => {
  const script = {
    lead: [{ steps: [spawn('reviewer', 'Review the release', 'Review the release.')], reply: 'Started reviewer.' }, 'The release is reviewed.'],
    reviewer: [{ steps: [spawn('checker', 'Run the checks', 'Run the checks.')], reply: 'Checking.' }, 'Reviewed.'],
    'reviewer/checker': ['Checked.'],
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost(script), maxDepth: 2 });
  const acp = connect(acpAgent({ runtime }), { subagents: false });
  let root;
  await acp.run(async (ctx) => {
    root = (await ctx.request(methods.agent.session.new, { cwd: '/work', mcpServers: [] })).sessionId;
    await ctx.request(methods.agent.session.prompt, { sessionId: root, prompt: [{ type: 'text', text: 'Ship the release.' }] });
    // The tree settles: both children's tool calls complete and lead answers the last notice.
    const done = (us) => us.filter((u) => u.update.sessionUpdate === 'tool_call_update' && u.update.toolCallId?.startsWith('subagent-') && u.update.status === 'completed').length === 2 && us.some((u) => u.update.content?.text === 'The release is reviewed.');
    await acp.until(done, 'the tree to settle');
  });
  const updates = acp.updates;
  assert.equal(updates.filter((u) => u.update.sessionUpdate === 'subagent_update' || u.update.sessionUpdate === 'session_message').length, 0, 'no subagent update, no session message');
  assert.deepEqual([...new Set(updates.map((u) => u.sessionId))], [root], 'nothing under a child\'s id');
  const children = updates.filter((u) => u.update.sessionUpdate === 'tool_call' && u.update.toolCallId.startsWith('subagent-')).map((u) => u.update);
  assert.deepEqual(children.map((c) => [c.title, c.status, c._meta['subagent-tree'].fullName]), [
    ['reviewer: Review the release', 'in_progress', 'reviewer'],
    ['reviewer/checker: Run the checks', 'in_progress', 'reviewer/checker'],
  ]);
  assert.equal(updates.length, acp.wire.filter((m) => m.method === 'session/update').length);
});

test('session/load after a restart over FileStore announces the tree, creators first, before replaying its history', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'acp-load-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const script = {
    lead: [{ steps: [spawn('reviewer', 'Review the release', 'Review the release.'), spawn('writer', 'Write the notes', 'Write the notes.')], reply: 'Started both.' }, 'Reviewed.', 'Written.'],
    reviewer: [{ steps: [spawn('checker', 'Run the checks', 'Run the checks.')], reply: 'Checking.' }, 'Reviewed: all checks pass.'],
    writer: ['Notes written.'],
    'reviewer/checker': ['Checked.'],
  };
  let root;
  {
    const store = await FileStore.open(dir);
    const runtime = new SubagentRuntime({ store, host: scriptedHost(script), maxDepth: 2 });
    const acp = connect(acpAgent({ runtime, store }), { subagents: true });
    await acp.run(async (ctx) => {
      root = (await ctx.request(methods.agent.session.new, { cwd: '/work', mcpServers: [] })).sessionId;
      await ctx.request(methods.agent.session.prompt, { sessionId: root, prompt: [{ type: 'text', text: 'Ship the release.' }] });
      await acp.until((us) => us.filter((u) => u.sessionId === root && u.update.sessionUpdate === 'agent_message_chunk').length === 3, 'lead to answer both notices');
    });
    await store.close();
  }
  // A new process: a new store, runtime and agent (given no store: it reads the logs through the
  // runtime); the client loads the session.
  const store = await FileStore.open(dir);
  t.after(() => store.close());
  const runtime = new SubagentRuntime({ store, host: scriptedHost({}), maxDepth: 2 });
  const acp = connect(acpAgent({ runtime }), { subagents: true });
  await acp.run(async (ctx, init) => {
    assert.equal(init.agentCapabilities.loadSession, true);
    assert.deepEqual(await ctx.request(methods.agent.session.load, { sessionId: root, cwd: '/work', mcpServers: [] }), {});
    await assert.rejects(ctx.request(methods.agent.session.load, { sessionId: 'no-such-session', cwd: '/work', mcpServers: [] }), (e) => e.code === -32002);
  });
  const updates = acp.updates;
  const announcements = updates.filter((u) => u.update.sessionUpdate === 'subagent_update');
  const names = new Map([[root, 'lead'], ...announcements.map((u) => [u.update.sessionId, u.update._meta['subagent-tree'].fullName])]);
  const lines = transcript(updates, names);
  console.log(lines.join('\n'));
  // Creators first (the listing's order: each member before its children), siblings in creation
  // order, each on its creator's session, with its last state.
  assert.deepEqual(
    announcements.map((u) => [names.get(u.sessionId), u.update._meta['subagent-tree'].fullName, u.update.state.state, u.update.state.stopReason]),
    [
      ['lead', 'reviewer', 'idle', 'end_turn'],
      ['reviewer', 'reviewer/checker', 'idle', 'end_turn'],
      ['lead', 'writer', 'idle', 'end_turn'],
    ],
  );
  assert.ok(announcements.every((u) => u.update._meta['subagent-tree'].provider === 'spawn'));
  // Every announcement comes before any replayed traffic that carries its id.
  for (const a of announcements) {
    const id = a.update.sessionId;
    const traffic = updates.findIndex((u) => u.sessionId === id || u.update.senderSessionId === id);
    assert.ok(updates.indexOf(a) < traffic, `${names.get(id)} announced before its history`);
  }
  // The history: lead's prompt and answers, the children's prompts, outputs and notices.
  for (const line of [
    'lead: user_message_chunk Ship the release.',
    'lead: agent_message_chunk Started both.',
    'lead: session_message from reviewer',
    'reviewer: user_message_chunk Review the release.',
    'reviewer: session_message from reviewer/checker',
    'reviewer: agent_message_chunk Reviewed: all checks pass.',
    'reviewer/checker: agent_message_chunk Checked.',
    'writer: agent_message_chunk Notes written.',
  ]) {
    assert.ok(lines.includes(line), `${line} in the replay`);
  }
  assert.equal(updates.length, acp.wire.filter((m) => m.method === 'session/update').length);
});

test('session/cancel on the root\'s session stops lead\'s turn: the prompt answers cancelled', async () => {
  let started;
  const running = new Promise((resolve) => (started = resolve));
  const script = {
    lead: [(turn) => new Promise((resolve) => {
      started();
      turn.signal.addEventListener('abort', () => resolve({ stopReason: 'aborted' }), { once: true });
    })],
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host: scriptedHost(script) });
  const acp = connect(acpAgent({ runtime }), { subagents: true });
  await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: '/work', mcpServers: [] });
    const answered = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Work until I stop you.' }] });
    await running;
    await ctx.notify(methods.agent.session.cancel, { sessionId });
    const response = await answered;
    assert.equal(response.stopReason, 'cancelled');
    assert.deepEqual(response._meta, { 'subagent-tree': { stopReason: 'aborted' } });
    // A prompt to a session nobody opened is refused with the protocol's code.
    await assert.rejects(ctx.request(methods.agent.session.prompt, { sessionId: 'nobody', prompt: [{ type: 'text', text: 'hi' }] }), (e) => e.code === -32002);
  });
});

// Issue 66, point 1: only a root loads. session/load of a child's session id, of an open tree or
// after a restart (a second runtime over the same store), is refused as invalid params (code
// UNAUTHORIZED, saying how to reach the member) and writes nothing; the child never becomes
// promptable: session/prompt to it is refused after the load.
test('session/load of a child\'s session is refused, writes nothing, and never makes the child promptable', async () => {
  const store = new MemoryStore();
  const script = {
    lead: [{ steps: [spawn('reviewer', 'Review the release', 'Review the release.')], reply: 'Started reviewer.' }, 'Reviewed.'],
    reviewer: [{ steps: [spawn('checker', 'Run the checks', 'Run the checks.')], reply: 'Checking.' }, 'Reviewed: all checks pass.'],
    'reviewer/checker': ['Checked.'],
  };
  const lengths = async (ids) => Promise.all(ids.map(async (id) => (await store.read(id, {}))?.length ?? null));
  const refusedAsChild = (e) => e.code === -32602 && e.data?.code === 'UNAUTHORIZED' && e.message.includes("reopen(root, 'reviewer/checker')");
  const load = (ctx, sessionId) => ctx.request(methods.agent.session.load, { sessionId, cwd: '/work', mcpServers: [] });
  const prompt = (ctx, sessionId) => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Take over.' }] });
  let root;
  let ids;
  let before;
  const first = connect(acpAgent({ runtime: new SubagentRuntime({ store, host: scriptedHost(script), maxDepth: 2 }), store }), { subagents: true });
  await first.run(async (ctx) => {
    root = (await ctx.request(methods.agent.session.new, { cwd: '/work', mcpServers: [] })).sessionId;
    await ctx.request(methods.agent.session.prompt, { sessionId: root, prompt: [{ type: 'text', text: 'Ship the release.' }] });
    const idOf = (us, name) => us.find((u) => u.update.sessionUpdate === 'subagent_update' && u.update._meta?.['subagent-tree']?.fullName === name)?.update.sessionId;
    const idle = (name) => (us) => us.some((u) => u.update.sessionUpdate === 'subagent_update' && u.update.sessionId === idOf(us, name) && u.update.state?.state === 'idle');
    await first.until((us) => idle('reviewer')(us) && idle('reviewer/checker')(us), 'reviewer and checker to finish');
    const rows = await listDescendants(store, root);
    ids = Object.fromEntries(rows.map((r) => [r.path, r.id]));
    before = await lengths([root, ids.reviewer, ids['reviewer/checker']]);
    await assert.rejects(load(ctx, ids['reviewer/checker']), refusedAsChild, 'a child of the open tree');
    await assert.rejects(prompt(ctx, ids['reviewer/checker']), (e) => e.code === -32602, 'still not promptable');
  });
  // After a restart: a new runtime and agent over the same store.
  const second = connect(acpAgent({ runtime: new SubagentRuntime({ store, host: scriptedHost({}), maxDepth: 2 }), store }), { subagents: true });
  await second.run(async (ctx) => {
    await assert.rejects(load(ctx, ids['reviewer/checker']), refusedAsChild, 'a child, its tree not open');
    await assert.rejects(prompt(ctx, ids['reviewer/checker']), (e) => e.code === -32002, 'no session: nothing was opened');
    await assert.rejects(load(ctx, ids.reviewer), (e) => e.code === -32602 && e.data?.code === 'UNAUTHORIZED' && e.message.includes("reopen(root, 'reviewer')"));
    await assert.rejects(ctx.request(methods.agent.session.resume, { sessionId: ids.reviewer, cwd: '/work', mcpServers: [] }), (e) => e.code === -32601, 'no session/resume: nothing to make promptable');
    // The root still loads, and its tree answers as before.
    assert.deepEqual(await load(ctx, root), {});
  });
  assert.deepEqual(await lengths([root, ids.reviewer, ids['reviewer/checker']]), before, 'the refusals wrote nothing');
});
