// The stdio command (`subagent-tree-acp`, the package's bin) driven by the ACP
// SDK's client app over the child process's stdio, its turns over an
// OpenAI-compatible API (a local mock): a prompt that makes reviewer and
// reviewer/checker announces them on their creators' sessions; a cancel of
// checker stops it alone (its model request aborted); after a restart of the
// command, session/load announces the tree before its history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { methods } from '@agentclientprotocol/sdk/unstable';
import { root as testRoot, mockOpenAI, say, toolCall, agentOf } from './edge-helpers.mjs';
import { acpClient, transcript } from './acp-helpers.mjs';

const PKG = path.join(testRoot, 'node_modules', 'subagent-tree');
const manifest = JSON.parse(readFileSync(path.join(PKG, 'package.json'), 'utf8'));
const BIN = path.join(PKG, manifest.bin['subagent-tree-acp']);

/** The command as an editor launches it, and the test client on its stdio. */
function launch(dir, env) {
  const child = spawn(process.execPath, [BIN, '--dir', dir], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const acp = acpClient({ toAgent: Writable.toWeb(child.stdin), fromAgent: Readable.toWeb(child.stdout), subagents: true });
  // Done, the editor closes the command's input, and the command exits.
  const run = (op) => acp.run(op).finally(() => child.stdin.end());
  return { ...acp, run, exited, stderr: () => stderr };
}

const lastUser = (body) => [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

test('subagent-tree-acp --dir: an ACP client sees the named tree, cancels one member, and loads the tree after a restart', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'subagent-tree-acp-'));
  let checkerAsked;
  const checkerAsking = new Promise((resolve) => (checkerAsked = resolve));
  const model = await mockOpenAI((body) => {
    const agent = agentOf(body);
    const last = body.messages.at(-1);
    if (agent === 'lead') return last.role === 'user' && last.content.includes('Ship the release') ? toolCall('spawn_agent', { name: 'reviewer', description: 'Review the release', prompt: 'Review the release.' }) : say(last.role === 'tool' ? 'Started reviewer.' : 'Noted.');
    if (agent === 'reviewer') return last.role === 'user' && last.content.includes('Review the release') ? toolCall('spawn_agent', { name: 'checker', description: 'Run the checks', prompt: 'Run the checks.' }) : say(last.role === 'tool' ? 'Checking.' : 'Reviewed: the checks were stopped.');
    // checker: its model is slow; the client cancels it meanwhile (the request is aborted).
    if (agent === 'reviewer/checker' && lastUser(body).includes('Run the checks')) {
      checkerAsked();
      return { ...say('too late'), delayMs: 60_000 };
    }
    return say('ok');
  });
  const env = { OPENAI_BASE_URL: model.baseUrl, OPENAI_MODEL: 'mock-model', OPENAI_API_KEY: 'sk-test' };
  const names = new Map();
  let rootId;
  try {
    const first = launch(dir, env);
    await first.run(async (ctx) => {
      rootId = (await ctx.request(methods.agent.session.new, { cwd: dir, mcpServers: [] })).sessionId;
      names.set(rootId, 'lead');
      const response = await ctx.request(methods.agent.session.prompt, { sessionId: rootId, prompt: [{ type: 'text', text: 'Ship the release.' }] });
      assert.equal(response.stopReason, 'end_turn');
      const announced = (title) => (u) => u.update.sessionUpdate === 'subagent_update' && u.update.title === title;
      await first.until((us) => us.some(announced('checker')), 'checker to be announced');
      const checker = first.updates.find(announced('checker')).update.sessionId;
      await checkerAsking; // its turn runs: its model request is in flight
      await ctx.notify(methods.agent.session.cancel, { sessionId: checker });
      // reviewer takes checker's notice, then lead reviewer's, in a second turn: then the tree is quiet.
      await first.until((us) => us.filter((u) => u.sessionId === rootId && u.update.sessionUpdate === 'usage_update').length === 2, 'lead to take reviewer\'s report');
    });
    assert.equal(await first.exited, 0, first.stderr());
    const subagentUpdates = first.updates.filter((u) => u.update.sessionUpdate === 'subagent_update');
    const idOf = (title) => subagentUpdates.find((u) => u.update.title === title).update.sessionId;
    const [reviewer, checker] = [idOf('reviewer'), idOf('checker')];
    names.set(reviewer, 'reviewer').set(checker, 'reviewer/checker');
    console.log(transcript(first.updates, names).join('\n'));
    const announcement = (id) => subagentUpdates.find((u) => u.update.sessionId === id);
    assert.deepEqual([announcement(reviewer).sessionId, announcement(reviewer).update._meta['subagent-tree']], [rootId, { fullName: 'reviewer', provider: 'spawn' }]);
    assert.deepEqual([announcement(checker).sessionId, announcement(checker).update._meta['subagent-tree']], [reviewer, { fullName: 'reviewer/checker', provider: 'spawn' }]);
    const states = (id) => subagentUpdates.filter((u) => u.update.sessionId === id).map((u) => `${u.update.state?.state} ${u.update.state?.stopReason ?? ''}`.trim());
    assert.ok(states(checker).includes('idle cancelled'), states(checker).join(', '));
    assert.ok(!states(reviewer).includes('idle cancelled'), states(reviewer).join(', '));
    assert.equal(first.updates.length, first.wire.filter((m) => m.method === 'session/update').length, 'every update parsed by the SDK');

    // Restarted: the client loads the session; the tree is announced before its history.
    const second = launch(dir, env);
    await second.run(async (ctx, init) => {
      assert.equal(init.agentCapabilities.loadSession, true);
      assert.deepEqual(await ctx.request(methods.agent.session.load, { sessionId: rootId, cwd: dir, mcpServers: [] }), {});
    });
    assert.equal(await second.exited, 0, second.stderr());
    const lines = transcript(second.updates, names);
    console.log(lines.join('\n'));
    assert.deepEqual(lines.filter((l) => l.includes('subagent_update')), [
      'lead: subagent_update reviewer idle end_turn title=reviewer',
      'reviewer: subagent_update reviewer/checker idle cancelled title=checker',
    ]);
    const firstTraffic = (id) => second.updates.findIndex((u) => u.sessionId === id || u.update.senderSessionId === id);
    assert.ok(lines.indexOf('reviewer: subagent_update reviewer/checker idle cancelled title=checker') < firstTraffic(checker));
    assert.ok(lines.indexOf('lead: subagent_update reviewer idle end_turn title=reviewer') < firstTraffic(reviewer));
    for (const line of ['lead: user_message_chunk Ship the release.', 'lead: agent_message_chunk Started reviewer.', 'reviewer: session_message from reviewer/checker', 'reviewer/checker: user_message_chunk Run the checks.']) {
      assert.ok(lines.includes(line), `${line} in the replay`);
    }
    assert.ok(model.requests.every((r) => r.headers.authorization === 'Bearer sk-test' && r.body.model === 'mock-model'));
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
