// Shared by the edge-* suites: the installed package's modules for miniflare,
// a mock OpenAI-compatible server on 127.0.0.1, an SSE reader, polling.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.join(here, '..');
export const pkgDir = path.join(root, 'node_modules', 'subagent-tree');
/** The repository (examples/ lives there); EDGE_REPO overrides it for runs outside the tree. */
export const repo = process.env.EDGE_REPO ?? path.join(root, '..');

/**
 * Miniflare modules for a worker whose source imports `subagent-tree` and
 * its subpaths by name: the names are resolved through the installed
 * package's `exports` (the `workerd` condition), as wrangler would.
 */
export async function workerModules(source, workerPath = path.join(root, 'edge-worker.mjs')) {
  const pkg = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8'));
  const target = (spec) => {
    const entry = pkg.exports[spec];
    if (entry === undefined) throw new Error(`subagent-tree does not export ${spec}`);
    const file = typeof entry === 'string' ? entry : (entry.workerd ?? entry.default);
    return path.relative(path.dirname(workerPath), path.join(pkgDir, file)).split(path.sep).join('/');
  };
  const rewritten = source.replace(/from\s+'subagent-tree(\/[a-z-]+)?'/g, (_, sub) => {
    const rel = target(sub ? `.${sub}` : '.');
    return `from '${rel.startsWith('.') ? rel : `./${rel}`}'`;
  });
  const modules = [{ type: 'ESModule', path: workerPath, contents: rewritten }];
  for (const file of await readdir(pkgDir, { recursive: true })) {
    const full = path.join(pkgDir, file);
    if (file.startsWith(`node${path.sep}`) || file.startsWith(`web${path.sep}`)) continue;
    if (file.endsWith('.js')) modules.push({ type: 'ESModule', path: full });
    if (file.endsWith('.wasm')) modules.push({ type: 'CompiledWasm', path: full });
  }
  return modules;
}

/**
 * The example worker (examples/edge-worker) bundled as wrangler bundles it,
 * and `start(persist, bindings, options?)`: a Miniflare running it with its Durable
 * Object bound as its wrangler.toml declares (read from the file, so a test
 * runs what users deploy), storage persisted under `persist`.
 */
export async function exampleWorker() {
  const dir = path.join(repo, 'examples', 'edge-worker');
  const source = await readFile(path.join(dir, 'worker.js'), 'utf8');
  const toml = await readFile(path.join(dir, 'wrangler.toml'), 'utf8');
  const binding = /\[\[durable_objects\.bindings\]\]\s*name\s*=\s*"([^"]+)"\s*class_name\s*=\s*"([^"]+)"/.exec(toml);
  const migration = /\[\[migrations\]\]\s*tag\s*=\s*"[^"]+"\s*(new_sqlite_classes|new_classes)\s*=\s*\[\s*"([^"]+)"\s*\]/.exec(toml);
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  const main = /^main\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  assert.ok(binding && migration && date, 'wrangler.toml declares the Durable Object binding, a migration and a compatibility date');
  assert.equal(main, 'worker.js');
  assert.equal(migration[2], binding[2], 'the migration creates the bound class');
  assert.match(source, new RegExp(`export class ${binding[2]}\\b`));
  const { modules, modulesRoot, cleanup } = await bundledWorker(source, { resolveDir: dir });
  const { Miniflare } = await import('miniflare');
  return {
    cleanup,
    start: (persist, bindings = {}, options = {}) =>
      new Miniflare({
        ...options,
        modules,
        modulesRoot,
        compatibilityDate: date,
        durableObjects: { [binding[1]]: { className: binding[2], useSQLite: migration[1] === 'new_sqlite_classes' } },
        durableObjectsPersist: persist,
        bindings,
      }),
  };
}

/**
 * Miniflare modules for a worker that imports other packages too (the MCP
 * SDK): bundled by esbuild as wrangler bundles it (the `workerd` condition,
 * each `.wasm` kept as a module of its own), `subagent-tree` resolved to the
 * installed package. The main module comes first.
 */
export async function bundledWorker(source, { resolveDir } = {}) {
  const { build } = await import('esbuild');
  const dir = await mkdtemp(path.join(root, '.edge-bundle-'));
  const entry = path.join(dir, 'worker.mjs');
  await writeFile(entry, source);
  const out = path.join(dir, 'out');
  const result = await build({
    // From its own folder when it has one (its relative imports resolve there).
    ...(resolveDir ? { stdin: { contents: source, resolveDir, sourcefile: 'worker.js' } } : { entryPoints: [entry] }),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    loader: { '.wasm': 'copy' },
    nodePaths: [path.join(root, 'node_modules')],
    outdir: out,
    metafile: true,
    logLevel: 'silent',
  });
  const files = Object.keys(result.metafile.outputs).map((f) => path.resolve(f));
  const main = files.filter((f) => f.endsWith('.js'));
  const modules = [...main.map((f) => ({ type: 'ESModule', path: f })), ...files.filter((f) => f.endsWith('.wasm')).map((f) => ({ type: 'CompiledWasm', path: f }))];
  return { modules, modulesRoot: out, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A mock chat-completions server on 127.0.0.1 (random port). `respond(body,
 * request)` returns `{ message, finish_reason?, usage? }` for a choice, or
 * `{ status, body, headers?, raw? }` for anything else, optionally
 * `{ delayMs }`; it may return a Promise. Every request is recorded.
 */
export async function mockOpenAI(respond) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const record = { method: req.method, url: req.url, headers: req.headers, body, text };
    requests.push(record);
    let answer;
    try {
      answer = await respond(body, record);
    } catch (e) {
      answer = { status: 500, body: { error: { message: `mock failed: ${e.message}` } } };
    }
    if (answer?.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs).unref());
    if (res.destroyed) return;
    if (answer?.status !== undefined) {
      const headers = { 'content-type': answer.raw ? 'text/plain' : 'application/json', ...(answer.headers ?? {}) };
      if (answer.reason) res.writeHead(answer.status, answer.reason, headers); // a reason phrase of the mock's choosing
      else res.writeHead(answer.status, headers);
      res.end(answer.raw ?? JSON.stringify(answer.body ?? {}));
      return;
    }
    if (body?.stream === true && !answer?.json) {
      // Server-Sent Events: the answer's chunks (or `sse`, as given), then `[DONE]`
      // unless `done: false`; `stall` keeps the connection open after them.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // Resolves when the client's connection closes: `true` when that was before the stream's end.
      record.closed = new Promise((resolve) => res.on('close', () => resolve(!res.writableFinished)));
      const events = answer?.sse ?? streamed(answer, body);
      for (const e of events) {
        if (res.destroyed) return;
        res.write(typeof e === 'string' ? e : `data: ${JSON.stringify(e)}\n\n`);
        if (answer?.gapMs) await new Promise((r) => setTimeout(r, answer.gapMs).unref());
      }
      if (answer?.stall) return;
      if (answer?.done !== false) res.write('data: [DONE]\n\n');
      res.end();
      return;
    }
    const choice = { index: 0, message: { role: 'assistant', content: null, ...answer.message }, finish_reason: answer.finish_reason ?? 'stop' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: `cmpl-${requests.length}`, object: 'chat.completion', model: body?.model, choices: [choice], usage: answer.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    requests,
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * A mock answer `{ message, finish_reason?, usage? }` as the chunks a
 * streaming server sends: the role, the content in two deltas, each tool
 * call (its arguments in two pieces), the finish reason, then the usage.
 */
export function streamed(answer, body) {
  const id = 'cmpl-stream';
  const chunk = (delta, finish_reason = null) => ({ id, object: 'chat.completion.chunk', model: body?.model, choices: [{ index: 0, delta, finish_reason }] });
  const out = [chunk({ role: 'assistant', content: '' })];
  if (typeof answer?.message?.refusal === 'string') out.push(chunk({ refusal: answer.message.refusal }));
  const content = answer?.message?.content;
  if (typeof content === 'string' && content !== '') {
    const half = Math.ceil(content.length / 2);
    out.push(chunk({ content: content.slice(0, half) }));
    if (content.length > half) out.push(chunk({ content: content.slice(half) }));
  }
  for (const [index, call] of (answer?.message?.tool_calls ?? []).entries()) {
    const args = call.function.arguments;
    const half = Math.ceil(args.length / 2);
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: args.slice(0, half) } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  }
  out.push(chunk({}, answer?.finish_reason ?? 'stop'));
  out.push({ id, object: 'chat.completion.chunk', model: body?.model, choices: [], usage: answer?.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  return out;
}

/** A tool call as a mock model answer. */
export function toolCall(name, args, id = `call-${name}-${Math.random().toString(16).slice(2, 8)}`) {
  return { message: { content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, finish_reason: 'tool_calls' };
}

export function say(text, finish_reason = 'stop') {
  return { message: { content: text }, finish_reason };
}

/** The agent a chat request is for, from the identity context in its system message. */
export function agentOf(body) {
  const system = body?.messages?.find((m) => m.role === 'system')?.content ?? '';
  return /You are agent (\S+?)[,\s]/.exec(system)?.[1];
}

/** Reads a server-sent-event stream into `events` (`{ event, data, id? }`) until it ends or is cancelled. */
export function readSSE(response) {
  const events = [];
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const done = (async () => {
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data === undefined) continue; // a field-only block (retry:) dispatches nothing
          const id = /^id: (.*)$/m.exec(block)?.[1];
          events.push({ event, data: JSON.parse(data), ...(id === undefined ? {} : { id: Number(id) }) });
        }
      }
    } catch {
      // cancelled
    }
  })();
  return { events, cancel: () => reader.cancel().catch(() => {}), done };
}

/** Polls `fn` until it returns a truthy value (returned), or fails after `ms`. */
export async function until(fn, what, ms = 5000, every = 20) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * A mock OTLP/HTTP collector on 127.0.0.1 (random port) that takes OTLP JSON
 * trace exports: `spans` (flattened, each with its resource's attributes),
 * `requests` (url and headers), and `waitFor(test, what)`, which resolves
 * once `test(spans)` holds after an export arrived (no polling).
 */
export async function mockCollector() {
  const spans = [];
  const requests = [];
  const waiters = new Set();
  const plain = (attrs = []) => Object.fromEntries(attrs.map((a) => [a.key, Object.values(a.value ?? {})[0]]));
  const server = http.createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    requests.push({ url: req.url, headers: req.headers });
    for (const rs of JSON.parse(text).resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) spans.push({ ...s, attributes: plain(s.attributes), resource: plain(rs.resource?.attributes) });
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
    for (const w of [...waiters]) if (w.test(spans)) (waiters.delete(w), w.resolve(spans));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    spans,
    requests,
    waitFor(test, what, ms = 10000) {
      if (test(spans)) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const w = { test, resolve };
        waiters.add(w);
        setTimeout(() => waiters.delete(w) && reject(new Error(`timed out waiting for ${what}: got ${spans.map((s) => s.name).join(', ')}`)), ms).unref();
      });
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** OTLP spans as an indented tree of names (children in start order; `[ERROR]` on status code 2). */
export function otlpSpanTree(spans) {
  const ids = new Set(spans.map((s) => s.spanId));
  const byStart = (a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : BigInt(a.startTimeUnixNano) > BigInt(b.startTimeUnixNano) ? 1 : 0);
  const lines = [];
  const walk = (s, depth) => {
    lines.push(`${'  '.repeat(depth)}${s.name}${s.status?.code === 2 ? ' [ERROR]' : ''}`);
    for (const c of spans.filter((x) => x.parentSpanId === s.spanId).sort(byStart)) walk(c, depth + 1);
  };
  for (const root of spans.filter((s) => !ids.has(s.parentSpanId)).sort(byStart)) walk(root, 0);
  return lines.join('\n');
}
