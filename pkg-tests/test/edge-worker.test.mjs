// The example edge worker (examples/edge-worker) in real workerd through
// miniflare, with Durable Object persistence on disk: a named three-level
// tree over HTTP, a restart over the same storage, a cold member resumed by a
// message, an interrupt, coded errors that write nothing, and the SSE stream
// (50 trees x 4 followers across a restart; a follower that stops reading);
// then the same worker driving the OpenAI-compatible host against a mock
// model server on 127.0.0.1, and exporting its spans to a mock OTLP collector.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { exampleWorker, mockOpenAI, mockCollector, otlpSpanTree, toolCall, say, agentOf, readSSE, until } from './edge-helpers.mjs';

// Bundled as wrangler bundles it (the worker imports the MCP SDK too), bound as its wrangler.toml says.
const example = await exampleWorker();
after(() => example.cleanup());
const start = (persist, bindings = {}) => example.start(persist, bindings);

function client(mf) {
  const call = async (method, url, body, raw) => {
    const init = { method };
    if (body !== undefined) init.body = raw ? body : JSON.stringify(body);
    const res = await mf.dispatchFetch(`http://edge${url}`, init);
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, body: json };
  };
  return {
    get: (url) => call('GET', url),
    post: (url, body, raw) => call('POST', url, body, raw),
  };
}

async function expectError(promise, status, code) {
  const r = await promise;
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.error.code, code);
  assert.equal(typeof r.body.error.message, 'string');
  assert.ok(r.body.error.message.length > 0);
  return r.body.error;
}

const paths = (rows) => rows.map((r) => r.path);
const turnsOf = async (api, tree, agent) => (await api.get(`/trees/${tree}/transcript?agent=${agent}`)).body.entries.filter((e) => e.type === 'turn/end');

test('the example worker: a named tree over HTTP survives a restart; cold members resume; errors write nothing; SSE', async () => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-'));
  let mf = start(persist);
  try {
    let api = client(mf);
    const created = await api.post('/trees');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const tree = created.body.id;
    assert.match(tree, /^[0-9a-f]{64}$/);
    assert.deepEqual(created.body.root, { sessionId: tree, name: 'lead' });

    const stream = await mf.dispatchFetch(`http://edge/trees/${tree}/events`);
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type'), /^text\/event-stream/);
    const sse = readSSE(stream);
    await until(() => sse.events.some((e) => e.event === 'ready'), 'the SSE ready event');

    // reviewer holds its turn (scripted host: "[hold]"), so it stays running.
    const reviewer = await api.post(`/trees/${tree}/spawn`, { name: 'reviewer', label: 'Review', prompt: 'Review the patch [hold]' });
    assert.equal(reviewer.status, 201, JSON.stringify(reviewer.body));
    assert.equal(reviewer.body.name, 'reviewer');
    assert.equal(reviewer.body.parent, 'lead');
    const checker = await api.post(`/trees/${tree}/spawn`, { parent: 'reviewer', name: 'checker', label: 'Check', prompt: 'Check the tests' });
    assert.equal(checker.status, 201, JSON.stringify(checker.body));
    assert.equal(checker.body.name, 'reviewer/checker');
    // checker answers at once and settles: spawning under it wakes it first.
    await until(async () => (await turnsOf(api, tree, 'reviewer/checker')).length === 1, 'checker to finish its turn');
    await until(async () => (await api.get(`/trees/${tree}`)).body.rows.find((r) => r.path === 'reviewer/checker')?.activity === 'inactive', 'checker to settle');
    const probe = await api.post(`/trees/${tree}/spawn`, { parent: 'reviewer/checker', name: 'probe', label: 'Probe', prompt: 'Probe the edge cases' });
    assert.equal(probe.status, 201, JSON.stringify(probe.body));
    assert.equal(probe.body.name, 'reviewer/checker/probe');
    await until(async () => (await turnsOf(api, tree, 'reviewer/checker/probe')).length === 1, 'probe to finish');

    const listed = await api.get(`/trees/${tree}`);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.host, 'scripted');
    assert.deepEqual(paths(listed.body.rows), ['reviewer', 'reviewer/checker', 'reviewer/checker/probe']);
    assert.deepEqual(listed.body.rows.map((r) => r.depth), [1, 2, 3]);
    assert.equal(listed.body.rows[0].activity, 'running');
    assert.equal(listed.body.rows[0].label, 'Review');

    // Bad input: coded 4xx, and nothing written (logs and listing unchanged).
    const before = JSON.stringify((await api.get(`/trees/${tree}/transcript?agent=reviewer/checker`)).body);
    await expectError(api.post(`/trees/${tree}/spawn`, { name: 'Bad Name', label: 'x', prompt: 'x' }), 400, 'INVALID_NAME');
    await expectError(api.post(`/trees/${tree}/spawn`, { name: 'lead', label: 'x', prompt: 'x' }), 400, 'INVALID_NAME');
    await expectError(api.post(`/trees/${tree}/spawn`, { name: 'reviewer', label: 'x', prompt: 'x' }), 409, 'DUPLICATE_NAME');
    await expectError(api.post(`/trees/${tree}/spawn`, { parent: 'reviewer/checker', name: 'probe', label: 'x', prompt: 'x' }), 409, 'DUPLICATE_NAME');
    await expectError(api.post(`/trees/${tree}/spawn`, { parent: 'reviewer/checker/probe', label: 'x', prompt: 'x' }), 409, 'DEPTH_EXCEEDED');
    await expectError(api.post(`/trees/${tree}/spawn`, { parent: 'nobody', label: 'x', prompt: 'x' }), 404, 'UNKNOWN_AGENT');
    await expectError(api.post(`/trees/${tree}/spawn`, { parent: 'reviewer', label: '', prompt: 'x' }), 400, 'INVALID_ARGUMENT');
    await expectError(api.post(`/trees/${tree}/message`, { to: 'reviewer/nobody', message: 'hi' }), 404, 'UNKNOWN_AGENT');
    await expectError(api.post(`/trees/${tree}/message`, { to: 'not-a-member-id-0000', message: 'hi' }), 404, 'UNKNOWN_AGENT');
    await expectError(api.post(`/trees/${tree}/message`, { to: 'reviewer', message: 42 }), 400, 'INVALID_ARGUMENT');
    await expectError(api.post(`/trees/${tree}/interrupt`, { agent: 'ghost' }), 404, 'UNKNOWN_AGENT');
    await expectError(api.post(`/trees/${tree}/spawn`, '{"name": "x", ', true), 400, 'INVALID_ARGUMENT');
    await expectError(api.post(`/trees/${tree}/message`, '[1,2]', true), 400, 'INVALID_ARGUMENT');
    await expectError(api.get(`/trees/${'0'.repeat(63)}z`), 404, 'UNKNOWN_AGENT');
    await expectError(api.get('/trees/not-a-tree'), 404, 'UNKNOWN_AGENT');
    await expectError(api.get('/nowhere'), 404, 'NOT_FOUND');
    await expectError(api.get('/trees'), 405, 'METHOD_NOT_ALLOWED');
    assert.equal(JSON.stringify((await api.get(`/trees/${tree}/transcript?agent=reviewer/checker`)).body), before);
    assert.deepEqual(paths((await api.get(`/trees/${tree}`)).body.rows), ['reviewer', 'reviewer/checker', 'reviewer/checker/probe']);

    // Interrupt the running reviewer: its turn ends aborted, the member stays.
    const stopped = await api.post(`/trees/${tree}/interrupt`, { agent: 'reviewer' });
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.deepEqual(stopped.body, { agent: 'reviewer', id: reviewer.body.id, signalled: true });
    const reviewerTurns = await until(async () => {
      const t = await turnsOf(api, tree, 'reviewer');
      return t.length > 0 && t;
    }, 'the interrupted turn to end');
    assert.equal(reviewerTurns[0].stopReason, 'aborted');

    // The stream saw the tree grow and members settle.
    await until(() => sse.events.some((e) => e.event === 'subagent/end' && e.data.name === 'reviewer/checker/probe'), 'probe end on the stream');
    const started = sse.events.filter((e) => e.event === 'subagent/start').map((e) => e.data.name);
    // Created in this order; a cold member is resumed (reopened) for each spawn
    // under it that passes the worker's checks, and settles again: every start has its end.
    assert.deepEqual([...new Set(started)], ['reviewer', 'reviewer/checker', 'reviewer/checker/probe']);
    assert.ok(started.filter((n) => n === 'reviewer/checker').length >= 2, 'checker was resumed to take its child');
    const catalog = sse.events.filter((e) => e.event === 'subagent/catalog').map((e) => e.data.entry.name);
    assert.deepEqual(catalog, ['reviewer', 'checker', 'probe']);
    assert.ok(sse.events.every((e) => e.event === 'ready' || e.data.rootSessionId === tree));
    sse.cancel();

    // Restart: a new workerd over the same storage.
    await mf.dispose();
    mf = start(persist);
    api = client(mf);
    const again = await api.get(`/trees/${tree}`);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(paths(again.body.rows), ['reviewer', 'reviewer/checker', 'reviewer/checker/probe']);
    assert.deepEqual(again.body.rows.map((r) => r.activity), ['inactive', 'inactive', 'inactive']);

    // A message to a cold member resumes it under its full name.
    const sent = await api.post(`/trees/${tree}/message`, { to: 'reviewer/checker/probe', message: 'One more case, please.' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.equal(sent.body.to, 'reviewer/checker/probe');
    const probeTurns = await until(async () => {
      const t = await turnsOf(api, tree, 'reviewer/checker/probe');
      return t.length === 2 && t;
    }, 'the cold member to run a turn');
    assert.equal(probeTurns[1].stopReason, 'completed');
    assert.match(probeTurns[1].text, /^reviewer\/checker\/probe handled: /);
    // The interrupted reviewer wakes on a message too.
    await api.post(`/trees/${tree}/message`, { to: 'reviewer', message: 'Carry on.' });
    await until(async () => (await turnsOf(api, tree, 'reviewer')).at(-1)?.stopReason === 'completed', 'reviewer to resume');
    // And the tree still grows after the restart, under a cold member.
    const late = await api.post(`/trees/${tree}/spawn`, { parent: 'reviewer', name: 'second', label: 'Second look', prompt: 'Look again' });
    assert.equal(late.status, 201, JSON.stringify(late.body));
    assert.equal(late.body.name, 'reviewer/second');
    const final = await api.get(`/trees/${tree}`);
    assert.deepEqual(paths(final.body.rows), ['reviewer', 'reviewer/checker', 'reviewer/checker/probe', 'reviewer/second']);
    // Another tree is another object, with its own names.
    const other = (await api.post('/trees')).body.id;
    assert.notEqual(other, tree);
    assert.equal((await api.post(`/trees/${other}/spawn`, { name: 'reviewer', label: 'Own', prompt: 'p' })).status, 201);
  } finally {
    await mf.dispose();
    await rm(persist, { recursive: true, force: true });
  }
});

const utf8Bytes = (s) => Buffer.byteLength(s, 'utf8');

/**
 * POSTs `sent` bytes chunked (no Content-Length) with node:http and leaves the
 * body unfinished: only a worker that refuses it while reading can answer
 * (one that reads the whole body first would wait for the rest).
 * Resolves `{ status, text }`; the connection is then dropped.
 */
function postUnfinished(url, sent) {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode, text });
      });
      res.on('error', reject);
    });
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    req.write('{"to":"idler","message":"');
    req.write(Buffer.alloc(sent, 0x61));
  });
}

test('the example worker: what a POST reads follows the depth of the member it names, not the size of the tree', async () => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-reads-'));
  const mf = start(persist, { CAPACITY: '64' });
  try {
    const api = client(mf);
    const tree = (await api.post('/trees')).body.id;
    const spawn = async (parent, name) => {
      const made = await api.post(`/trees/${tree}/spawn`, { parent, name, label: name, prompt: 'p' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
    };
    const quiet = () => until(async () => (await api.get(`/trees/${tree}`)).body.rows.every((r) => r.activity === 'inactive'), 'the tree to settle');
    // Reads of requests naming `deep/inner` (depth 2) and lead's child `deep`: interrupts and a refused spawn.
    const reads = async () => {
      const counts = [];
      for (const [route, body, status] of [
        ['interrupt', { agent: 'deep/inner' }, 200],
        ['interrupt', { agent: 'deep' }, 200],
        ['spawn', { parent: 'deep', name: 'inner', label: 'again', prompt: 'p' }, 409],
      ]) {
        const res = await mf.dispatchFetch(`http://edge/trees/${tree}/${route}`, { method: 'POST', body: JSON.stringify(body) });
        assert.equal(res.status, status, await res.text());
        const header = res.headers.get('server-timing');
        const n = Number(/^store;desc="(\d+) reads"$/.exec(header ?? '')?.[1]);
        assert.ok(Number.isInteger(n) && n > 0, String(header));
        counts.push(n);
      }
      return counts;
    };
    await spawn('lead', 'deep');
    await spawn('deep', 'inner');
    await quiet();
    const small = await reads();
    for (let i = 0; i < 40; i++) await spawn('lead', `wide-${i}`);
    await quiet();
    assert.equal((await api.get(`/trees/${tree}`)).body.rows.length, 42);
    // Before, each of these listed the whole tree: 40 more members, 40 more reads each.
    assert.deepEqual(await reads(), small, `reads with 2 members: ${small}`);
  } finally {
    await mf.dispose();
  }
});

test('the example worker: limits in UTF-8 bytes while the body streams, bounded fields, public paths in errors, interrupt receipts, refused spawns write nothing', async () => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-limits-'));
  const mf = start(persist, { BODY_TIMEOUT_MS: '400' });
  try {
    const api = client(mf);
    const tree = (await api.post('/trees')).body.id;
    const made = await api.post(`/trees/${tree}/spawn`, { name: 'idler', label: 'Idle', prompt: 'Answer once' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    await until(async () => (await api.get(`/trees/${tree}`)).body.rows[0]?.activity === 'inactive' && (await turnsOf(api, tree, 'idler')).length === 1, 'idler to answer and settle');
    const snapshot = async () => JSON.stringify([
      (await api.get(`/trees/${tree}`)).body.rows,
      (await api.get(`/trees/${tree}/transcript?agent=idler`)).body,
      (await api.get(`/trees/${tree}/transcript?agent=lead`)).body,
    ]);
    const before = await snapshot();

    // 80 KB of 3-byte characters is 27,000 characters: under 64 Ki characters, over 64 KiB.
    const wide = 'あ'.repeat(27_000);
    assert.ok(wide.length < 64 * 1024 && utf8Bytes(JSON.stringify({ to: 'idler', message: wide })) > 64 * 1024);
    const e413 = await expectError(api.post(`/trees/${tree}/message`, { to: 'idler', message: wide }), 413, 'LIMIT_EXCEEDED');
    assert.match(e413.message, /65536 bytes/);

    // A 30 MB streamed body (no Content-Length) is refused while it streams: the
    // answer arrives before the client has produced the whole body.
    // A body streamed without Content-Length is refused while it streams: 256 KiB
    // are sent and the body never ends, so the answer cannot wait for the rest.
    const streamed = await postUnfinished(new URL(`/trees/${tree}/message`, await mf.ready), 256 * 1024);
    assert.equal(streamed.status, 413, streamed.text);
    assert.equal(JSON.parse(streamed.text).error.code, 'LIMIT_EXCEEDED');
    // A body that stops arriving is refused when its deadline passes (bodyMs, here 400 ms):
    // a client that sends 100 bytes and then nothing holds no request open.
    const stalled = await postUnfinished(new URL(`/trees/${tree}/message`, await mf.ready), 100);
    assert.equal(stalled.status, 408, stalled.text);
    assert.deepEqual(JSON.parse(stalled.text).error, { code: 'REQUEST_TIMEOUT', message: 'the request body did not arrive whole within 400 ms (bodyMs)' });
    // A declared Content-Length over the limit is refused too.
    await expectError(api.post(`/trees/${tree}/spawn`, 'x'.repeat(70 * 1024), true), 413, 'LIMIT_EXCEEDED');
    // Invalid UTF-8 is a coded 400.
    const bad = await mf.dispatchFetch(`http://edge/trees/${tree}/message`, { method: 'POST', body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.code, 'INVALID_ARGUMENT');

    // Bounded fields, in bytes: label 256, prompt and message 16 KiB, references 256.
    const label = await expectError(api.post(`/trees/${tree}/spawn`, { name: 'wide', label: 'L'.repeat(60_000), prompt: 'p' }), 413, 'LIMIT_EXCEEDED');
    assert.match(label.message, /label .*256 bytes \(labelBytes\)/);
    await expectError(api.post(`/trees/${tree}/spawn`, { name: 'wide', label: 'é'.repeat(129), prompt: 'p' }), 413, 'LIMIT_EXCEEDED');
    assert.equal((await api.post(`/trees/${tree}/spawn`, { parent: 'idler', name: 'fits', label: 'é'.repeat(128), prompt: 'p' })).status, 201);
    await until(async () => (await api.get(`/trees/${tree}`)).body.rows.every((r) => r.activity === 'inactive'), 'fits to settle');
    const settled = await snapshot();
    const idlerTurns = (await turnsOf(api, tree, 'idler')).length; // its prompt, then fits' notice
    assert.equal(idlerTurns, 2);
    await expectError(api.post(`/trees/${tree}/spawn`, { name: 'wide', label: 'x', prompt: 'あ'.repeat(5462) }), 413, 'LIMIT_EXCEEDED');
    await expectError(api.post(`/trees/${tree}/message`, { to: 'idler', message: 'm'.repeat(16 * 1024 + 1) }), 413, 'LIMIT_EXCEEDED');
    await expectError(api.post(`/trees/${tree}/message`, { to: 'a/'.repeat(200), message: 'm' }), 413, 'LIMIT_EXCEEDED');
    await expectError(api.post(`/trees/${tree}/spawn`, { name: 'n'.repeat(33), label: 'x', prompt: 'p' }), 400, 'INVALID_NAME');
    await expectError(api.get(`/trees/${tree}/transcript?agent=${'a'.repeat(300)}`), 413, 'LIMIT_EXCEEDED');

    // A refused spawn under a cold member writes nothing and runs no turn.
    await expectError(api.post(`/trees/${tree}/spawn`, { parent: 'idler', name: 'fits', label: 'x', prompt: 'p' }), 409, 'DUPLICATE_NAME');
    await expectError(api.post(`/trees/${tree}/spawn`, { parent: 'idler', name: 'Bad Name', label: 'x', prompt: 'p' }), 400, 'INVALID_NAME');
    await expectError(api.post(`/trees/${tree}/spawn`, { parent: 'idler', name: 'roomy', label: 'L'.repeat(300), prompt: 'p' }), 413, 'LIMIT_EXCEEDED');
    assert.equal(await snapshot(), settled, 'nothing was written by refused requests');
    assert.equal((await turnsOf(api, tree, 'idler')).length, idlerTurns, 'idler ran no turn for them');
    assert.notEqual(before, settled);

    // Interrupting an idle member answers with the receipt: nothing was stopped.
    const idle = await api.post(`/trees/${tree}/interrupt`, { agent: 'idler' });
    assert.equal(idle.status, 200, JSON.stringify(idle.body));
    assert.deepEqual(idle.body, { agent: 'idler', id: made.body.id, signalled: false });
    assert.equal(await snapshot(), settled, 'an interrupt of an idle member changes nothing');

    // No error body names the object's own paths.
    const errors = [];
    for (const [method, url] of [
      ['DELETE', `/trees/${tree}`],
      ['PUT', `/trees/${tree}/spawn`],
      ['POST', `/trees/${tree}`],
      ['GET', `/trees/${tree}/create`],
      ['POST', `/trees/${tree}/create`],
      ['GET', `/trees/${tree}/api`],
      ['GET', `/trees/${tree}/nowhere/deeper`],
      ['DELETE', `/trees/${'0'.repeat(64)}`],
    ]) {
      const r = await mf.dispatchFetch(`http://edge${url}`, { method, body: method === 'POST' || method === 'PUT' ? '{}' : undefined });
      const text = await r.text();
      assert.ok([404, 405].includes(r.status), `${method} ${url}: ${r.status} ${text}`);
      const { error } = JSON.parse(text);
      assert.ok(['NOT_FOUND', 'METHOD_NOT_ALLOWED', 'UNKNOWN_AGENT'].includes(error.code), text);
      // Every path it names is a public one (/trees/:id...): nothing else that looks like a path is left.
      const rest = error.message.replace(/\/trees\/[0-9a-f]{64}(\/[a-z]+)*/g, '');
      assert.doesNotMatch(rest, /https?:|\/|\bapi\b/, `${method} ${url} names an internal path: ${text}`);
      errors.push([method, url, r.status, error]);
    }
    const del = errors[0];
    assert.equal(del[2], 405);
    assert.equal(del[3].message, `DELETE is not allowed on /trees/${tree}; use GET`);
    assert.equal(errors[3][2], 404, 'the object\'s create route is not reachable from outside');
    assert.equal(errors[4][2], 404);
    assert.equal(await snapshot(), settled);
  } finally {
    await mf.dispose();
    await rm(persist, { recursive: true, force: true });
  }
});

test('a Durable Object restarted mid-turn: an alarm was set while the turn ran, and the lost turn is reported', async () => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-evict-'));
  let mf = start(persist);
  try {
    let api = client(mf);
    const tree = (await api.post('/trees')).body.id;
    const spawned = await api.post(`/trees/${tree}/spawn`, { name: 'worker', label: 'Long job', prompt: 'Work until stopped [hold]' });
    assert.equal(spawned.status, 201, JSON.stringify(spawned.body));
    await until(async () => {
      const body = (await api.get(`/trees/${tree}`)).body;
      return body.rows[0]?.activity === 'running' && body.recoveryAlarm === true;
    }, 'the turn to run with the recovery alarm set');
    // Eviction mid-turn: the whole workerd goes away; a new one opens the same storage.
    await mf.dispose();
    mf = start(persist);
    api = client(mf);
    const turns = await until(async () => {
      const t = await turnsOf(api, tree, 'worker');
      return t.length > 0 && t;
    }, 'the lost turn to be recorded');
    assert.deepEqual(turns.map((t) => t.stopReason), ['error'], 'recorded once, not run again');
    const told = await until(async () => {
      const entries = (await api.get(`/trees/${tree}/transcript?agent=lead`)).body.entries;
      return entries.find((e) => e.type === 'message/input' && /^Subagent worker failed\./.test(e.text));
    }, 'lead to be told');
    assert.match(told.text, /host stopped during this turn/);
    const after = (await api.get(`/trees/${tree}`)).body;
    assert.deepEqual(after.rows.map((r) => [r.path, r.activity]), [['worker', 'inactive']]);
  } finally {
    await mf.dispose();
    await rm(persist, { recursive: true, force: true });
  }
});

test('the example worker runs the OpenAI-compatible host against a mock model on 127.0.0.1', async () => {
  const KEY = 'sk-edge-test-0123456789abcdef';
  const mock = await mockOpenAI((body) => {
    const agent = agentOf(body);
    const last = body.messages.at(-1);
    const toolsSoFar = body.messages.filter((m) => m.role === 'tool').length;
    if (agent === 'lead') {
      if (last.role === 'user' && last.content.includes('assemble')) return toolCall('spawn_agent', { name: 'researcher', description: 'Research', prompt: 'Find three facts.' });
      if (last.role === 'tool' && toolsSoFar === 1) return toolCall('list_agents', { scope: 'descendants' });
      return say('lead: noted');
    }
    if (agent === 'researcher') {
      if (toolsSoFar === 0 && last.role === 'user' && last.content.includes('Find three facts')) return toolCall('spawn_agent', { name: 'checker', description: 'Check facts', prompt: 'Check the facts.' });
      return say('researcher: three facts');
    }
    if (agent === 'researcher/checker') {
      if (toolsSoFar === 0) return toolCall('send_message', { agent: 'researcher', message: 'fact two is shaky' });
      return say('checker: checked');
    }
    return say('ok');
  });
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-ai-'));
  const mf = start(persist, { OPENAI_BASE_URL: mock.baseUrl, OPENAI_API_KEY: KEY, OPENAI_MODEL: 'mock-model' });
  try {
    const api = client(mf);
    const tree = (await api.post('/trees')).body.id;
    assert.equal((await api.get(`/trees/${tree}`)).body.host, 'openai');
    const sent = await api.post(`/trees/${tree}/message`, { to: 'lead', message: 'Please assemble a team.' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const rows = await until(async () => {
      const r = (await api.get(`/trees/${tree}`)).body.rows;
      return r.length === 2 && r.every((x) => x.activity === 'inactive') && r;
    }, 'the model-built tree to settle', 8000).catch(async (e) => {
      console.log(JSON.stringify(mock.requests.map((r) => [agentOf(r.body), r.body?.messages?.at(-1)]), null, 1));
      console.log(JSON.stringify((await api.get(`/trees/${tree}`)).body, null, 1));
      throw e;
    });
    assert.deepEqual(paths(rows), ['researcher', 'researcher/checker']);
    assert.deepEqual(rows.map((r) => r.label), ['Research', 'Check facts']);
    // The checker's send_message by full name reached the researcher.
    const researcher = await api.get(`/trees/${tree}/transcript?agent=researcher`);
    assert.ok(researcher.body.entries.some((e) => e.type === 'message/input' && e.from === 'researcher/checker' && e.text === 'fact two is shaky'));
    // list_agents answered the lead with full names.
    const listedFor = mock.requests.find((r) => agentOf(r.body) === 'lead' && r.body.messages.filter((m) => m.role === 'tool').length === 2);
    const listResult = listedFor.body.messages.filter((m) => m.role === 'tool')[1].content;
    assert.match(listResult, /researcher/);
    for (const r of mock.requests) {
      assert.equal(r.url, '/v1/chat/completions');
      assert.equal(r.headers.authorization, `Bearer ${KEY}`);
      assert.equal(r.body.model, 'mock-model');
      assert.ok(r.body.tools.some((t) => t.type === 'function' && t.function.name === 'spawn_agent' && t.function.parameters.type === 'object'));
    }
  } finally {
    await mf.dispose();
    await mock.close();
    await rm(persist, { recursive: true, force: true });
  }
});

test('the example worker exports a three-level tree\'s spans over OTLP with fetch, one trace across a restart of its Durable Object', async () => {
  const usage = { prompt_tokens: 50, completion_tokens: 7, total_tokens: 57 };
  const mock = await mockOpenAI((body) => {
    const agent = agentOf(body);
    const last = body.messages.at(-1);
    if (agent === 'lead' && last.role === 'user' && last.content.includes('Please review')) {
      return { ...toolCall('spawn_agent', { name: 'reviewer', description: 'Review the release', prompt: 'Review it.' }), usage };
    }
    if (agent === 'reviewer' && last.role === 'user' && last.content.includes('Review it.')) {
      return { ...toolCall('spawn_agent', { name: 'checker', description: 'Run the checks', prompt: 'Check it.' }), usage };
    }
    return { ...say(`${agent}: done`), usage };
  });
  const collector = await mockCollector();
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-otel-'));
  const bindings = {
    OPENAI_BASE_URL: mock.baseUrl,
    OPENAI_API_KEY: 'sk-otel-test',
    OPENAI_MODEL: 'mock-model',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20otel-key',
    OTEL_SERVICE_NAME: 'trees-under-test',
  };
  const count = (spans, name) => spans.filter((s) => s.name === name).length;
  let mf = start(persist, bindings);
  try {
    let api = client(mf);
    const tree = (await api.post('/trees')).body.id;
    assert.equal((await api.post(`/trees/${tree}/message`, { to: 'lead', message: 'Please review the release.' })).status, 202);
    // lead spawns reviewer, reviewer spawns checker; each creator then takes its child's notice.
    const settled = (spans) => count(spans, 'invoke_agent lead') === 2 && count(spans, 'invoke_agent reviewer') === 2 && count(spans, 'invoke_agent reviewer/checker') === 1;
    await collector.waitFor(settled, 'the first run\'s spans');
    const first = [...collector.spans];
    console.log(otlpSpanTree(first));
    assert.equal(
      otlpSpanTree(first),
      [
        'create_agent lead',
        '  invoke_agent lead',
        '    execute_tool spawn_agent',
        '      create_agent reviewer',
        '        invoke_agent reviewer',
        '          execute_tool spawn_agent',
        '            create_agent reviewer/checker',
        '              invoke_agent reviewer/checker',
        '        invoke_agent reviewer',
        '  invoke_agent lead',
      ].join('\n'),
    );
    const traceId = first[0].traceId;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    assert.ok(first.every((s) => s.traceId === traceId), 'one trace');
    const turn = first.find((s) => s.name === 'invoke_agent reviewer/checker');
    assert.equal(turn.attributes['gen_ai.conversation.id'], tree);
    assert.equal(turn.attributes['gen_ai.usage.input_tokens'], 50);
    assert.equal(turn.resource['service.name'], 'trees-under-test');
    assert.ok(collector.requests.every((r) => r.url === '/v1/traces' && r.headers.authorization === 'Bearer otel-key' && r.headers['content-type'] === 'application/json'));

    // The object restarts (a deploy, an eviction): a message resumes the cold reviewer.
    await mf.dispose();
    mf = start(persist, bindings);
    api = client(mf);
    assert.equal((await api.post(`/trees/${tree}/message`, { to: 'reviewer', message: 'Once more.' })).status, 202);
    await collector.waitFor((spans) => count(spans, 'invoke_agent reviewer') === 3 && count(spans, 'invoke_agent lead') === 3, 'the second run\'s spans');
    const second = collector.spans.slice(first.length);
    assert.deepEqual([...new Set(second.map((s) => s.name))].sort(), ['invoke_agent lead', 'invoke_agent reviewer'], 'nothing is created again');
    assert.ok(second.every((s) => s.traceId === traceId), 'the restarted object\'s spans join the first trace');
    const created = (name) => first.find((s) => s.name === `create_agent ${name}`).spanId;
    assert.equal(second.find((s) => s.name === 'invoke_agent reviewer').parentSpanId, created('reviewer'));
    assert.equal(second.find((s) => s.name === 'invoke_agent lead').parentSpanId, created('lead'));
  } finally {
    await mf.dispose();
    await mock.close();
    await collector.close();
    await rm(persist, { recursive: true, force: true });
  }
});

test('the example worker serves a tree to the MCP SDK\'s Client over Streamable HTTP (/trees/:id/mcp)', async () => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-mcp-'));
  const mf = start(persist);
  try {
    const api = client(mf);
    const created = await api.post('/trees', {});
    assert.equal(created.status, 201);
    const tree = created.body.id;
    const connect = async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`http://edge/trees/${tree}/mcp`), { fetch: (url, init) => mf.dispatchFetch(String(url), init) });
      const mcp = new Client({ name: 'edge-test', version: '1.0.0' });
      await mcp.connect(transport);
      return mcp;
    };
    const mcp = await connect();
    assert.equal(mcp.getServerVersion().name, 'subagent-tree edge worker');
    const { tools } = await mcp.listTools();
    assert.ok(['spawn_agent', 'send_message', 'list_agents'].every((n) => tools.some((t) => t.name === n)), tools.map((t) => t.name).join(' '));
    const started = await mcp.callTool({ name: 'spawn_agent', arguments: { name: 'reviewer', description: 'Review the release', prompt: 'Review it.' } });
    assert.equal(started.isError, false, JSON.stringify(started));
    assert.match(started.content[0].text, /^Started agent reviewer/);
    // A refusal keeps isError and the tree's text; nothing is written for it.
    const refused = await mcp.callTool({ name: 'spawn_agent', arguments: { name: 'reviewer', description: 'Again', prompt: 'Again.' } });
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /reviewer/);
    await mcp.close();
    // Each request stands alone (stateless): a new client reads the same tree, also over the HTTP API.
    const again = await connect();
    const [read] = (await again.readResource({ uri: 'subagent-tree://tree' })).contents;
    const doc = JSON.parse(read.text);
    assert.deepEqual(doc.members.map((m) => [m.name, m.label]), [['reviewer', 'Review the release']]);
    assert.equal(doc.root.sessionId, tree);
    await again.close();
    assert.deepEqual(paths((await api.get(`/trees/${tree}`)).body.rows), ['reviewer']);
    // The worker's limits hold on this route too.
    await expectError(api.post(`/trees/${tree}/mcp`, 'x'.repeat(70 * 1024), true), 413, 'LIMIT_EXCEEDED');
    await expectError(api.get(`/trees/${tree}/mcp`), 405, 'METHOD_NOT_ALLOWED');
  } finally {
    await mf.dispose();
    await rm(persist, { recursive: true, force: true });
  }
});

/**
 * Follows a tree's events as an EventSource does: whenever its stream ends or
 * fails it connects again, to the Miniflare `current()` answers, sending
 * `Last-Event-ID` (the last id it was given), until `stop()`. Records every
 * durable frame and counts deltas, exactly as they arrive (no deduplication).
 */
function follower(current, tree) {
  const state = { durable: [], deltas: 0, ready: null, connections: 0, last: undefined, stopped: false, reader: null };
  state.done = (async () => {
    while (!state.stopped) {
      const mf = await current();
      if (state.stopped) break;
      try {
        const headers = state.last === undefined ? {} : { 'last-event-id': String(state.last) };
        const res = await mf.dispatchFetch(`http://edge/trees/${tree}/events`, { headers });
        assert.equal(res.status, 200, await (res.status === 200 ? '' : res.text()));
        state.connections += 1;
        const sse = readSSE(res);
        state.reader = sse;
        let seen = 0;
        const take = () => {
          for (; seen < sse.events.length; seen++) {
            const e = sse.events[seen];
            if (e.event === 'ready') {
              state.ready ??= e.data;
              state.last ??= e.data.lastEventId;
            } else if (e.event === 'subagent/delta') state.deltas += 1;
            else {
              assert.equal(typeof e.id, 'number', `${e.event} carries an id`);
              state.durable.push(e);
              state.last = e.id;
            }
          }
        };
        // Drained as it arrives; the stream's end (a restart, a drop) sends us round again.
        const pump = setInterval(take, 5);
        await sse.done;
        clearInterval(pump);
        take();
      } catch (e) {
        if (e?.code === 'ERR_ASSERTION') throw e;
        // The object was being disposed: connect again.
      }
    }
  })();
  state.stop = async () => {
    state.stopped = true;
    await state.reader?.cancel();
    await state.done;
  };
  return state;
}

test('the example worker streams each tree as Server-Sent Events: 50 trees, 4 followers each, turns streaming, the objects restarted mid-turn; every follower gets every durable event once, in order, and Last-Event-ID resumes with nothing lost', async (t) => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-sse-'));
  const bindings = { SSE_HEARTBEAT_MS: '200' };
  let mf = start(persist, bindings);
  let live = Promise.resolve(mf);
  const current = () => live;
  const api = { get: (url) => client(mf).get(url), post: (url, body) => client(mf).post(url, body) };
  const followers = [];
  const began = Date.now();
  try {
    const trees = await Promise.all(Array.from({ length: 50 }, async () => (await api.post('/trees')).body.id));
    for (const tree of trees) for (let i = 0; i < 4; i++) followers.push({ tree, f: follower(current, tree) });
    await until(() => followers.every(({ f }) => f.ready), 'every follower to be ready', 30_000);
    const first = new Map(followers.map(({ tree, f }) => [f, f.ready.lastEventId]));
    // Each tree: a writer that answers (streaming its reply), a holder whose turn runs until the restart.
    await Promise.all(trees.map(async (tree) => {
      assert.equal((await api.post(`/trees/${tree}/spawn`, { name: 'writer', label: 'Write', prompt: 'Draft the notes' })).status, 201);
      assert.equal((await api.post(`/trees/${tree}/spawn`, { name: 'holder', label: 'Hold', prompt: 'Wait for it [hold]' })).status, 201);
    }));
    const rowsOf = async (tree) => (await api.get(`/trees/${tree}`)).body.rows;
    await until(async () => {
      for (const tree of trees) {
        const rows = await rowsOf(tree);
        if (rows.find((r) => r.path === 'writer')?.activity !== 'inactive' || rows.find((r) => r.path === 'holder')?.activity !== 'running') return false;
      }
      return true;
    }, 'every writer to answer while every holder works', 60_000);
    // Restart every object mid-turn (the holders'): the followers' streams break and they reconnect.
    let swap;
    live = new Promise((resolve) => (swap = resolve));
    await mf.dispose();
    mf = start(persist, bindings);
    await mf.ready;
    swap(mf);
    // After the restart: the lost turns are reported as the trees reopen, and each writer works again.
    await Promise.all(trees.map(async (tree) => {
      const sent = await api.post(`/trees/${tree}/message`, { to: 'writer', message: 'Once more, with the changelog' });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
    }));
    const lastIds = new Map();
    await until(async () => {
      for (const tree of trees) {
        const { rows, events } = (await api.get(`/trees/${tree}`)).body;
        if (rows.some((r) => r.activity === 'running')) return false;
        lastIds.set(tree, events.lastEventId);
      }
      return followers.every(({ tree, f }) => f.last === lastIds.get(tree));
    }, 'every follower to have every event of its quiet tree', 60_000);
    const seconds = (Date.now() - began) / 1000;
    await Promise.all(followers.map(({ f }) => f.stop()));

    // The journal of each tree, replayed from the start (Last-Event-ID 0) by one more follower.
    let delivered = 0;
    let deltas = 0;
    for (const tree of trees) {
      const journal = follower(() => Promise.resolve(mf), tree);
      journal.last = 0;
      await until(() => journal.last === lastIds.get(tree), 'the replay of the journal');
      await journal.stop();
      assert.deepEqual(journal.durable.map((e) => e.id), Array.from({ length: lastIds.get(tree) }, (_, i) => i + 1), 'the journal holds ids 1..N');
      const types = new Set(journal.durable.map((e) => e.event));
      for (const type of ['subagent/start', 'subagent/catalog', 'subagent/message', 'subagent/turn', 'subagent/end']) assert.ok(types.has(type), `${type} in ${[...types]}`);
      for (const { f } of followers.filter((x) => x.tree === tree)) {
        const from = first.get(f);
        // Exactly once, in order: each id after the one `ready` named, none missing, none repeated.
        assert.deepEqual(f.durable.map((e) => e.id), Array.from({ length: lastIds.get(tree) - from }, (_, i) => from + i + 1));
        assert.deepEqual(f.durable, journal.durable.slice(from), 'the same events as the journal');
        assert.ok(f.connections >= 2, 'the follower reconnected after the restart');
        delivered += f.durable.length;
        deltas += f.deltas;
      }
    }
    assert.ok(deltas > 0, 'turns streamed deltas to the followers');
    // A follower resuming from the middle of the journal gets exactly the rest.
    const tree = trees[0];
    const middle = Math.floor(lastIds.get(tree) / 2);
    const resumed = follower(() => Promise.resolve(mf), tree);
    resumed.last = middle;
    await until(() => resumed.last === lastIds.get(tree), 'the resumed follower');
    await resumed.stop();
    assert.deepEqual(resumed.durable.map((e) => e.id), Array.from({ length: lastIds.get(tree) - middle }, (_, i) => middle + i + 1));
    // A follower that went away is forgotten once its connection closes.
    await until(async () => (await api.get(`/trees/${tree}`)).body.events.followers.count === 0, 'closed followers to be forgotten');
    t.diagnostic(`${followers.length} followers of ${trees.length} trees: ${delivered} durable events and ${deltas} deltas delivered in ${seconds.toFixed(1)} s (${Math.round(delivered / seconds)} durable events/s), one restart`);
  } finally {
    await Promise.all(followers.map(({ f }) => f.stop().catch(() => {})));
    await mf.dispose();
  }
});

test('the example worker drops a follower that stops reading once its buffer (SSE_BUFFER_BYTES) is full; it resumes with Last-Event-ID and loses nothing', async (t) => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-sse-lag-'));
  // A replay window wide enough for the whole journal (its default, 1 MiB, would answer `reset`).
  const mf = start(persist, { SSE_BUFFER_BYTES: '16384', SSE_HEARTBEAT_MS: '200', SSE_REPLAY_BYTES: String(64 << 20) });
  try {
    const api = client(mf);
    const tree = (await api.post('/trees')).body.id;
    const stalled = await mf.dispatchFetch(`http://edge/trees/${tree}/events`);
    assert.equal(stalled.status, 200);
    // Nothing reads `stalled` while the tree takes 300 messages of 15,000 characters (about 4.5 MB of events).
    let queuedMax = 0;
    let dropped = false;
    for (let i = 0; i < 300 && !dropped; i++) {
      assert.equal((await api.post(`/trees/${tree}/message`, { to: 'lead', message: `${i} ${'x'.repeat(15_000)}` })).status, 202);
      const { followers } = (await api.get(`/trees/${tree}`)).body.events;
      queuedMax = Math.max(queuedMax, followers.queuedBytes);
      dropped = followers.count === 0;
    }
    assert.ok(dropped, 'the follower that stopped reading was dropped');
    assert.ok(queuedMax <= 16384 + 32 * 1024, `what waited for it stayed within its buffer and one event: ${queuedMax} bytes`);
    await until(async () => !(await api.get(`/trees/${tree}`)).body.rows.some((r) => r.activity === 'running') && (await api.get(`/trees/${tree}`)).body.rows.length === 0, 'lead to finish its turns');
    await until(async () => (await turnsOf(api, tree, 'lead')).length > 0, 'lead to answer');
    // Its stream ended early; what it holds is a prefix of the journal. Resuming after it gives the rest.
    const sse = readSSE(stalled);
    await sse.done;
    const ids = sse.events.filter((e) => e.id !== undefined).map((e) => e.id);
    assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i + 1), 'a prefix, in order');
    const last = (await api.get(`/trees/${tree}`)).body.events.lastEventId;
    assert.ok(ids.length < last, `${ids.length} of ${last} events reached it before it was dropped`);
    const resumed = await mf.dispatchFetch(`http://edge/trees/${tree}/events`, { headers: { 'last-event-id': String(ids.at(-1) ?? 0) } });
    const rest = readSSE(resumed);
    await until(() => rest.events.some((e) => e.id === last), 'the rest of the journal');
    await rest.cancel();
    assert.deepEqual(rest.events.filter((e) => e.id !== undefined).map((e) => e.id), Array.from({ length: last - ids.length }, (_, i) => ids.length + i + 1));
    // The whole journal (about 4.5 MB) replayed through a 16 KiB buffer: at the reader's pace, all of it.
    const whole = await mf.dispatchFetch(`http://edge/trees/${tree}/events`, { headers: { 'last-event-id': '0' } });
    const all = readSSE(whole);
    await until(() => all.events.some((e) => e.id === last), 'the whole journal', 20_000);
    await all.cancel();
    assert.deepEqual(all.events.filter((e) => e.id !== undefined).map((e) => e.id), Array.from({ length: last }, (_, i) => i + 1));
    t.diagnostic(`dropped after ${ids.length} of ${last} events; at most ${queuedMax} bytes waited for it (buffer 16384)`);
    // A bad Last-Event-ID is a coded 400; the follower limit holds.
    const bad = await mf.dispatchFetch(`http://edge/trees/${tree}/events`, { headers: { 'last-event-id': 'yesterday' } });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.code, 'INVALID_ARGUMENT');
  } finally {
    await mf.dispose();
  }
});

test('the example worker replays a bounded window: a resume from further back (SSE_REPLAY_EVENTS, SSE_REPLAY_BYTES) gets a reset with the tree listed, not the journal', async (t) => {
  const persist = await mkdtemp(path.join(os.tmpdir(), 'edge-worker-sse-window-'));
  let mf = start(persist, { SSE_HEARTBEAT_MS: '200', SSE_REPLAY_EVENTS: '6', SSE_REPLAY_BYTES: '20000' });
  try {
    let api = client(mf);
    const tree = (await api.post('/trees')).body.id;
    // Small messages first, then two large ones (each about 8 KB of events).
    for (let i = 0; i < 4; i++) assert.equal((await api.post(`/trees/${tree}/message`, { to: 'lead', message: `note ${i}` })).status, 202);
    await until(async () => !(await api.get(`/trees/${tree}`)).body.rows.some((r) => r.activity === 'running') && (await turnsOf(api, tree, 'lead')).length >= 1, 'lead to answer');
    const resume = async (after, until_) => {
      const res = await mf.dispatchFetch(`http://edge/trees/${tree}/events`, { headers: { 'last-event-id': String(after) } });
      assert.equal(res.status, 200);
      const sse = readSSE(res);
      await until(() => sse.events.some(until_), 'the resume to answer');
      await sse.cancel();
      return sse.events;
    };
    let last = (await api.get(`/trees/${tree}`)).body.events.lastEventId;
    assert.ok(last > 6, `${last} events journaled`);
    // Within the window: exactly the events after it.
    const near = await resume(last - 3, (e) => e.id === last);
    assert.deepEqual(near.filter((e) => e.id !== undefined).map((e) => e.id), [last - 2, last - 1, last]);
    assert.ok(!near.some((e) => e.event === 'reset'));
    // From the start, past SSE_REPLAY_EVENTS: a reset naming what it missed, with the tree listed; nothing replayed.
    const far = await resume(0, (e) => e.event === 'reset');
    const reset = far.find((e) => e.event === 'reset');
    assert.equal(reset.data.missed, last);
    assert.equal(reset.data.lastEventId, last);
    assert.ok(Array.isArray(reset.data.rows));
    assert.deepEqual(far.filter((e) => e.id !== undefined), [], 'no journaled event replayed');
    // Past SSE_REPLAY_BYTES: two messages of 12,000 characters are more than 20,000 bytes of events.
    const before = last;
    for (let i = 0; i < 2; i++) assert.equal((await api.post(`/trees/${tree}/message`, { to: 'lead', message: `${i} ${'x'.repeat(12_000)}` })).status, 202);
    await until(async () => !(await api.get(`/trees/${tree}`)).body.rows.some((r) => r.activity === 'running') && (await api.get(`/trees/${tree}`)).body.events.lastEventId > before + 2, 'the large messages to be journaled');
    last = (await api.get(`/trees/${tree}`)).body.events.lastEventId;
    assert.ok(last - before <= 6, `within the event window (${last - before} events)`);
    const heavy = await resume(before, (e) => e.event === 'reset' || e.id === last);
    assert.ok(heavy.some((e) => e.event === 'reset' && e.data.missed === last - before), JSON.stringify(heavy.map((e) => e.event)));
    // The window holds across a restart (the journal's byte count is stored with it).
    await mf.dispose();
    mf = start(persist, { SSE_HEARTBEAT_MS: '200', SSE_REPLAY_EVENTS: '6', SSE_REPLAY_BYTES: '20000' });
    api = client(mf);
    const again = await resume(before, (e) => e.event === 'reset' || e.id === last);
    assert.ok(again.some((e) => e.event === 'reset'), 'still past the byte window after a restart');
    t.diagnostic(`${last} events journaled; a resume from 0 answered with one reset`);
  } finally {
    await mf.dispose();
  }
});
