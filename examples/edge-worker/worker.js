// An edge worker hosting subagent trees: one Durable Object (TreeDO) per tree
// root, its logs in the object's storage (DurableObjectStore), its agents run
// by a real model loop (OpenAIHost) when OPENAI_BASE_URL and OPENAI_MODEL are
// set, or by a deterministic scripted host otherwise.
//
// HTTP API (JSON; errors are 4xx/5xx `{ error: { code, message } }` with the
// library's error code, and a failed request writes nothing):
//   POST /trees                        create a tree -> 201 { id, root }
//   GET  /trees/:id                    rows: names, paths, activity
//   POST /trees/:id/spawn              { parent?: fullName (default lead), name?, label, prompt } -> 201
//   POST /trees/:id/message            { to: fullName, message, delivery?: 'steer'|'queue' } -> 202
//   POST /trees/:id/interrupt          { agent: fullName } -> 200 { agent, id, signalled }
// Limits (UTF-8 bytes, see LIMITS): a body over 64 KiB is refused 413 while it
// is read, one not whole within 10 s (BODY_TIMEOUT_MS) 408; label 256 B,
// prompt and message 16 KiB, member references 256 B.
//   GET  /trees/:id/transcript?agent=  one member's messages and turn results
//   GET  /trees/:id/events             Server-Sent Events of the tree (events.js): durable events with ids,
//                                      resumed after Last-Event-ID (or ?lastEventId=); deltas best-effort
//   POST /trees/:id/mcp                the tree as an MCP server (Streamable HTTP, stateless, JSON
//                                      responses): lead's tree tools and the subagent-tree://tree resource
// Tracing: with OTEL_EXPORTER_OTLP_ENDPOINT set, every tree's work is exported
// as OpenTelemetry GenAI spans (subagent-tree/otel) over OTLP/HTTP JSON with
// fetch, one trace per tree across restarts of its Durable Object.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SubagentRuntime, SubagentError, projectCatalog, validateName } from 'subagent-tree';
import { DurableObjectStore } from 'subagent-tree/durable-object-store';
import { mcpServer } from 'subagent-tree/mcp';
import { instrument } from 'subagent-tree/otel';
import { OpenAIHost } from 'subagent-tree/openai-host';
import { STREAM_LIMITS, TreeEvents } from './events.js';

/** Deeper than any tree a runtime may hold (maxDepth is at most 64): a longer chain of records is not a member's. */
const MAX_DEPTH_READ = 64;

/** The worker's documented limits, in UTF-8 bytes (README: "Limits"). */
const LIMITS = Object.freeze({
  bodyBytes: 64 * 1024,
  /** Milliseconds a request body has to arrive whole (env BODY_TIMEOUT_MS). */
  bodyMs: 10_000,
  labelBytes: 256,
  promptBytes: 16 * 1024,
  messageBytes: 16 * 1024,
  refBytes: 256,
});
const utf8 = new TextEncoder();
const byteLength = (s) => utf8.encode(s).byteLength;

/** HTTP status of each library error code (anything else is a 500). */
const STATUS = {
  INVALID_ARGUMENT: 400,
  INVALID_NAME: 400,
  UNSUPPORTED_CAPABILITY: 400,
  NO_PROVIDER: 400,
  UNAUTHORIZED: 403,
  UNKNOWN_AGENT: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  DUPLICATE_NAME: 409,
  DUPLICATE_CHILD: 409,
  DEPTH_EXCEEDED: 409,
  NOT_CONTINUABLE: 409,
  NOT_RESUMABLE: 409,
  INPUT_CLOSED: 409,
  PARENT_UNAVAILABLE: 409,
  DRAINING: 409,
  ACTIVATION_CLOSING: 409,
  APPEND_CONFLICT: 409,
  REQUEST_TIMEOUT: 408,
  LIMIT_EXCEEDED: 413,
  ACTIVATION_LIMIT_REACHED: 429,
  TOO_MANY_FOLLOWERS: 429,
  CANCELLED: 503,
  PERSISTENCE_UNAVAILABLE: 503,
  CONTINUATION_UNAVAILABLE: 503,
};

function json(body, status = 200, headers = {}) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

function fail(code, message) {
  return new SubagentError(code, message);
}

function errorResponse(e) {
  if (e instanceof SubagentError || (e?.name === 'SubagentError' && typeof e.code === 'string')) {
    return json({ error: { code: e.code, message: e.message } }, STATUS[e.code] ?? 500);
  }
  console.error('edge-worker: unexpected failure', e);
  return json({ error: { code: 'INTERNAL', message: 'the worker failed unexpectedly' } }, 500);
}

function withCors(response, env) {
  if (!env.CORS_ORIGIN) return response;
  const r = new Response(response.body, response);
  r.headers.set('access-control-allow-origin', env.CORS_ORIGIN);
  return r;
}

/** The stateless front: routes each tree's requests to its Durable Object. */
export default {
  async fetch(request, env) {
    if (request.method === 'OPTIONS' && env.CORS_ORIGIN) {
      return new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': env.CORS_ORIGIN,
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': 'content-type',
        },
      });
    }
    try {
      return withCors(await route(request, env), env);
    } catch (e) {
      return withCors(errorResponse(e), env);
    }
  },
};

async function route(request, env) {
  const url = new URL(request.url);
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts.length === 0) {
    return json({ name: 'subagent-tree edge worker', trees: 'POST /trees' });
  }
  if (parts[0] !== 'trees') throw fail('NOT_FOUND', `there is no route ${JSON.stringify(url.pathname)}`);
  if (parts.length === 1) {
    if (request.method !== 'POST') throw fail('METHOD_NOT_ALLOWED', 'use POST /trees to create a tree');
    const id = env.TREES.newUniqueId();
    return env.TREES.get(id).fetch(new Request('https://tree/create', { method: 'POST' }));
  }
  const rest = parts.slice(2).join('/');
  let id;
  try {
    id = env.TREES.idFromString(parts[1]);
  } catch {
    throw fail('UNKNOWN_AGENT', `there is no tree ${JSON.stringify(parts[1].slice(0, 80))}`);
  }
  // Public routes live under /api/ inside the object; its own routes (create) are not reachable from outside.
  const inner = new URL(`https://tree/api/${rest}`);
  inner.search = url.search;
  if (request.method !== 'POST') return env.TREES.get(id).fetch(new Request(inner, request));
  // A body is read here, bounded while it streams, so an oversized one never reaches the object.
  const text = await readBody(request, intEnv(env.BODY_TIMEOUT_MS, LIMITS.bodyMs));
  const headers = { 'content-type': 'application/json' };
  // MCP's Streamable HTTP reads what the client accepts and the protocol version it speaks.
  for (const name of ['accept', 'mcp-protocol-version']) {
    const value = request.headers.get(name);
    if (rest === 'mcp' && value !== null) headers[name] = value;
  }
  return env.TREES.get(id).fetch(new Request(inner, { method: 'POST', headers, body: text }));
}

function tooLarge() {
  return fail('LIMIT_EXCEEDED', `the request body is larger than ${LIMITS.bodyBytes} bytes (bodyBytes)`);
}

/**
 * The request body as text, refused with 413 as soon as it passes
 * `LIMITS.bodyBytes` (a declared Content-Length over it is refused before
 * reading; a streamed body is cancelled at the first chunk over it), and with
 * 408 when it has not arrived whole within `deadlineMs`: a client that stops
 * sending holds no request open.
 */
async function readBody(request, deadlineMs = LIMITS.bodyMs) {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > LIMITS.bodyBytes) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  let timer;
  const expired = new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs, null)));
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === null) {
        await reader.cancel().catch(() => {});
        throw fail('REQUEST_TIMEOUT', `the request body did not arrive whole within ${deadlineMs} ms (bodyMs)`);
      }
      if (next.done) break;
      size += next.value.byteLength;
      if (size > LIMITS.bodyBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw fail('INVALID_ARGUMENT', 'the request body is not valid UTF-8');
  }
}

/** A string field within its byte limit (`LIMIT_EXCEEDED` names the limit). */
function bounded(value, field, limit, key) {
  if (typeof value === 'string' && byteLength(value) > limit) {
    throw fail('LIMIT_EXCEEDED', `${field} is larger than ${limit} bytes (${key})`);
  }
  return value;
}

/**
 * A deterministic stand-in for a model: a turn answers "<name> handled:
 * <first line of its input>". A turn whose input contains `[hold]` keeps
 * running until it is interrupted (so a tree can be watched while busy).
 */
export function scriptedHost() {
  return {
    kind: 'scripted',
    async runTurn(turn) {
      const text = turn.inputText.join('\n');
      if (text.includes('[hold]')) {
        await new Promise((resolve) => {
          if (turn.signal.aborted) resolve();
          else turn.signal.addEventListener('abort', resolve, { once: true });
        });
        return { stopReason: 'aborted' };
      }
      const first = (turn.input[0]?.text ?? '').split('\n')[0].slice(0, 120);
      const reply = `${turn.name} handled: ${first}`;
      // Streamed word by word, as a model's answer is (subagent/delta).
      for (const word of reply.split(/(?= )/)) turn.emit({ type: 'text-delta', text: word });
      return { stopReason: 'completed', messages: [reply] };
    },
  };
}

/** How soon the recovery alarm fires while turns run (an evicted object restarts then). */
const ALARM_MS = 5_000;

/**
 * The tracer of an object whose env names an OTLP endpoint (the standard
 * variables: OTEL_EXPORTER_OTLP_ENDPOINT, its /v1/traces; OTEL_EXPORTER_OTLP_HEADERS
 * as `key=value,...`, values URL-encoded; OTEL_SERVICE_NAME), or null. Each
 * span is exported as it ends (SimpleSpanProcessor), so an evicted object
 * leaves nothing unsent in memory; the exporter posts with fetch.
 */
export function otlpTracing(env) {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return null;
  const headers = {};
  for (const pair of (env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces`, headers });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'subagent-tree-edge' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { provider, tracer: provider.getTracer('subagent-tree-edge-worker') };
}

function intEnv(value, fallback) {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

/** The tree's store, counting the logs read (each answer's `Server-Timing` says how many it took). */
class CountedStore extends DurableObjectStore {
  reads = 0;
  read(...args) {
    this.reads += 1;
    return super.read(...args);
  }
  readMany(ids, ...rest) {
    this.reads += Array.isArray(ids) ? ids.length : 1;
    return super.readMany(ids, ...rest);
  }
  length(...args) {
    this.reads += 1;
    return super.length(...args);
  }
}

/**
 * `Server-Timing: store;desc="N reads"`: the logs a request read (work of the
 * tree running meanwhile counts too). A POST's count follows the depth of the
 * member it names, not the size of the tree.
 */
function serverTiming(response, reads) {
  try {
    response.headers.set('server-timing', `store;desc="${reads} reads"`);
    return response;
  } catch {
    return response; // a response with immutable headers goes as it is
  }
}

/** One tree: its root session id is this object's id. */
export class TreeDO {
  constructor(state, env) {
    this.state = state;
    this.env = env;
    this.rootId = state.id.toString();
    this.store = new CountedStore(state.storage, { prefix: 'log/' });
    this.maxDepth = intEnv(env.MAX_DEPTH, 3);
    this.capacity = intEnv(env.CAPACITY, 16);
    this.live = null; // Promise<{ runtime, root }>
    this.queue = Promise.resolve();
    this.running = new Set(); // members whose turn is running now
    this.tracing = otlpTracing(env);
    this.journal = new TreeEvents(state.storage, {
      bufferBytes: intEnv(env.SSE_BUFFER_BYTES, STREAM_LIMITS.bufferBytes),
      followers: intEnv(env.SSE_FOLLOWERS, STREAM_LIMITS.followers),
      heartbeatMs: intEnv(env.SSE_HEARTBEAT_MS, STREAM_LIMITS.heartbeatMs),
      replayEvents: intEnv(env.SSE_REPLAY_EVENTS, STREAM_LIMITS.replayEvents),
      replayBytes: intEnv(env.SSE_REPLAY_BYTES, STREAM_LIMITS.replayBytes),
    });
  }

  /** Sets the recovery alarm unless one is pending. */
  arm() {
    this.arming ??= (async () => {
      try {
        if ((await this.state.storage.getAlarm()) === null) await this.state.storage.setAlarm(Date.now() + ALARM_MS);
      } finally {
        this.arming = null;
      }
    })().catch(() => {});
  }

  /**
   * The recovery alarm: after an eviction it starts this object again, and
   * opening the tree recovers what the evicted instance left running. While
   * turns still run, it is set again.
   */
  async alarm() {
    if ((await this.store.length(this.rootId)) === null) return;
    const { runtime, root } = await this.open();
    // Recovery runs in the background of openRoot; give it (and what it resumed) time to finish.
    await runtime.waitForQuiescence(root, { signal: AbortSignal.timeout(ALARM_MS) }).catch(() => {});
    if (this.running.size > 0) this.arm();
  }

  async fetch(request) {
    const before = this.store.reads;
    try {
      return serverTiming(await this.handle(request), this.store.reads - before);
    } catch (e) {
      return serverTiming(errorResponse(e), this.store.reads - before);
    } finally {
      // Spans of this request still being posted finish after its response.
      if (this.tracing) this.state.waitUntil?.(this.tracing.provider.forceFlush());
    }
  }

  /** The runtime over this object's storage and the tree's live root (opened once per instance). */
  open() {
    this.live ??= (async () => {
      const env = this.env;
      const model = env.OPENAI_BASE_URL && env.OPENAI_MODEL
        ? new OpenAIHost({
            baseUrl: env.OPENAI_BASE_URL,
            apiKey: env.OPENAI_API_KEY,
            model: env.OPENAI_MODEL,
            store: this.store,
            systemPrompt: env.SYSTEM_PROMPT,
            maxSteps: intEnv(env.OPENAI_MAX_STEPS, 16),
          })
        : scriptedHost();
      const host = {
        runTurn: (turn) => model.runTurn(turn),
        release: (sessionId) => model.release?.(sessionId),
      };
      const recovery = env.RECOVERY === 'rerun' ? 'rerun' : 'report';
      // The runtime's own limits back the worker's (model-made children included).
      const limits = { labelBytes: 2 * LIMITS.labelBytes, promptBytes: 2 * LIMITS.promptBytes, messageBytes: 2 * LIMITS.messageBytes };
      const runtime = new SubagentRuntime({ store: this.store, host, maxDepth: this.maxDepth, capacity: this.capacity, recovery, limits });
      // Before the root opens: a new root's trace context is written with it.
      if (this.tracing) instrument(runtime, { tracer: this.tracing.tracer, recordContent: env.OTEL_RECORD_CONTENT === 'true' });
      // While any turn runs, an alarm is set: an object evicted mid-turn is
      // started again by it, and opening the root records (or reruns) the lost turn.
      runtime.on('subagent/turn', (e) => {
        if (e.phase === 'start') this.running.add(e.sessionId);
        else this.running.delete(e.sessionId);
        if (this.running.size > 0) this.arm();
      });
      // Journaled from the first event on, recovery's included.
      await this.journal.load();
      this.journal.attach(runtime, this.rootId);
      const root = await runtime.openRoot({ sessionId: this.rootId });
      return { runtime, root, hostKind: model instanceof OpenAIHost ? 'openai' : 'scripted' };
    })();
    this.live.catch(() => (this.live = null));
    return this.live;
  }

  /** Runs mutating requests one at a time, so checks and writes do not interleave. */
  exclusive(fn) {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => {});
    return run;
  }

  async handle(request) {
    const url = new URL(request.url);
    if (request.method === 'POST' && url.pathname === '/create') return this.create();
    if (!url.pathname.startsWith('/api/')) throw fail('NOT_FOUND', 'there is no such route');
    // Errors name the public path (/trees/:id/...), never the object's own.
    const sub = url.pathname.slice('/api'.length).replace(/\/+$/, '') || '/';
    const shown = `/trees/${this.rootId}${sub === '/' ? '' : sub}`;
    const allowed = { '/': 'GET', '/events': 'GET', '/transcript': 'GET', '/spawn': 'POST', '/message': 'POST', '/interrupt': 'POST', '/mcp': 'POST' }[sub];
    if (!allowed) throw fail('NOT_FOUND', `there is no route ${JSON.stringify(shown.slice(0, 200))}`);
    if (request.method !== allowed) throw fail('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${shown}; use ${allowed}`);
    if ((await this.store.length(this.rootId)) === null) {
      throw fail('UNKNOWN_AGENT', `there is no tree ${JSON.stringify(this.rootId)}`);
    }
    switch (sub) {
      case '/':
        return this.list();
      case '/events':
        return this.events(request, url);
      case '/transcript':
        return this.transcript(url.searchParams.get('agent') ?? 'lead');
      case '/spawn': {
        const input = await body(request);
        return this.exclusive(() => this.spawn(input));
      }
      case '/message': {
        const input = await body(request);
        return this.exclusive(() => this.message(input));
      }
      case '/mcp':
        return this.exclusive(() => this.mcp(request));
      default: {
        const input = await body(request);
        return this.exclusive(() => this.interrupt(input));
      }
    }
  }

  /**
   * One MCP request (Streamable HTTP, stateless: a server and transport per
   * request, answered as JSON): lead's tree tools, and the tree resource.
   */
  async mcp(request) {
    const { runtime, root } = await this.open();
    const server = mcpServer({ runtime, agent: root, name: 'subagent-tree edge worker' });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  }

  async create() {
    if ((await this.store.length(this.rootId)) === null) await this.store.append(this.rootId, []);
    await this.open();
    return json({ id: this.rootId, root: { sessionId: this.rootId, name: 'lead' } }, 201);
  }

  async list() {
    const { runtime, hostKind } = await this.open();
    const rows = await runtime.listDescendants(this.rootId, {});
    const alarm = (await this.state.storage.getAlarm()) !== null;
    const events = { lastEventId: this.journal.lastEventId, followers: this.journal.stats() };
    return json({ id: this.rootId, host: hostKind, root: { sessionId: this.rootId, name: 'lead' }, rows, recoveryAlarm: alarm, events });
  }

  /**
   * A member by reference (`lead`, a full name, or a Session id of this tree):
   * `{ id, name, depth }`. What it costs follows the member's depth, never the
   * tree's size: the runtime resolves the reference along its path, and the
   * full name is read back up the members' own `session/start` records.
   */
  async member(runtime, root, ref, field) {
    if (typeof ref !== 'string' || ref === '') throw fail('INVALID_ARGUMENT', `${field} must be a full name such as reviewer/checker`);
    bounded(ref, field, LIMITS.refBytes, 'refBytes');
    const id = await runtime.resolveName(root, ref, {});
    const names = [];
    for (let at = id; at !== this.rootId; ) {
      const start = await this.ownStart(at);
      if (!start || typeof start.parentId !== 'string' || names.length > MAX_DEPTH_READ) {
        throw fail('UNKNOWN_AGENT', `${JSON.stringify(ref.slice(0, 100))} is not a member of this tree`);
      }
      names.unshift(typeof start.name === 'string' ? start.name : at);
      at = start.parentId;
    }
    return { id, name: names.length ? names.join('/') : 'lead', depth: names.length };
  }

  /** A member's own `session/start` payload. */
  async ownStart(id) {
    return ownStart((await this.store.read(id, { types: ['session/start'] })) ?? [])?.payload;
  }

  /** The names of a member's children, from its own catalog (not its whole tree). */
  async childNames(id) {
    const events = (await this.store.read(id, { types: ['session/start', 'subagent/catalog'] })) ?? [];
    const entries = projectCatalog(events, { inheritedEventCount: ownStart(events)?.payload.inheritedEventCount ?? 0 });
    return new Set(entries.map((e) => e.name));
  }

  async spawn(input) {
    const { runtime, root } = await this.open();
    const { parent = 'lead', name, label, prompt } = input;
    if (typeof label !== 'string' || label.trim() === '') throw fail('INVALID_ARGUMENT', 'label must be a non-empty string');
    if (typeof prompt !== 'string' || prompt.trim() === '') throw fail('INVALID_ARGUMENT', 'prompt must be a non-empty string');
    if (name !== undefined && typeof name !== 'string') throw fail('INVALID_ARGUMENT', 'name must be a string when given');
    if (name !== undefined) validateName(name);
    bounded(label, 'label', LIMITS.labelBytes, 'labelBytes');
    bounded(prompt, 'prompt', LIMITS.promptBytes, 'promptBytes');
    const spec = { provider: 'spawn', label, prompt, delivery: 'parent' };
    if (name !== undefined) spec.name = name;
    const target = await this.member(runtime, root, parent, 'parent');
    // What can refuse the spawn is checked before the parent is reopened: a
    // cold parent reopened and released without a new child settles again and
    // tells its creator it "was stopped before it finished" (a write and a model turn).
    if (target.depth + 1 > this.maxDepth) {
      throw fail('DEPTH_EXCEEDED', `${target.name} is at depth ${target.depth}; this tree has children down to depth ${this.maxDepth}`);
    }
    if (name !== undefined && (await this.childNames(target.id)).has(name)) {
      throw fail('DUPLICATE_NAME', `${target.name} already has a child named ${JSON.stringify(name)}`);
    }
    // The parent's live handle under the root's authority: a cold member is resumed
    // without a message, so a refused spawn writes nothing and costs no model turn.
    const held = await runtime.reopen(root, target.id);
    let activation;
    try {
      activation = await runtime.startActivation({ ...spec, parent: held.agent });
    } finally {
      held.release();
    }
    activation.result.catch(() => {});
    return json({ id: activation.childId, name: activation.name, parent: target.name, messageId: activation.messageId }, 201);
  }

  async message(input) {
    const { runtime, root } = await this.open();
    const { to, message, delivery = 'steer' } = input;
    if (typeof message !== 'string' || message.trim() === '') throw fail('INVALID_ARGUMENT', 'message must be a non-empty string');
    if (delivery !== 'steer' && delivery !== 'queue') throw fail('INVALID_ARGUMENT', "delivery must be 'steer' or 'queue'");
    bounded(message, 'message', LIMITS.messageBytes, 'messageBytes');
    const target = await this.member(runtime, root, to, 'to');
    const messageId = await runtime.prompt(root, target.id, message, { delivery });
    return json({ messageId, to: target.name, id: target.id }, 202);
  }

  async interrupt(input) {
    const { runtime, root } = await this.open();
    const target = await this.member(runtime, root, input.agent, 'agent');
    // The receipt as is: `signalled: false` says nothing was running, so nothing was stopped.
    const { signalled } = runtime.interrupt(target.id, { kind: 'user', root });
    return json({ agent: target.name, id: target.id, signalled });
  }

  async transcript(ref) {
    const { runtime, root } = await this.open();
    const target = await this.member(runtime, root, ref, 'agent');
    const events = (await this.store.read(target.id, { types: ['message/input', 'turn/end'] })) ?? [];
    const text = (blocks) => (Array.isArray(blocks) ? blocks.filter((b) => b?.type === 'text').map((b) => b.text).join('\n') : '');
    const entries = events.map((e) =>
      e.type === 'message/input'
        ? { seq: e.seq, type: e.type, from: e.payload?.source?.senderName ?? e.payload?.source?.kind, text: text(e.payload?.content) }
        : { seq: e.seq, type: e.type, stopReason: e.payload?.stopReason, text: text(e.payload?.output) },
    );
    return json({ agent: target.name, id: target.id, entries });
  }

  /**
   * `GET /trees/:id/events`: the tree's Server-Sent Events (events.js), from
   * the `Last-Event-ID` an EventSource reconnects with (or `?lastEventId=`),
   * else from now after a `ready` event with the rows.
   */
  async events(request, url) {
    const { runtime } = await this.open();
    const raw = request.headers.get('last-event-id') ?? url.searchParams.get('lastEventId');
    let after = null;
    if (raw !== null && raw !== '') {
      if (!/^\d{1,15}$/.test(raw)) throw fail('INVALID_ARGUMENT', `Last-Event-ID must be an event id (a whole number), not ${JSON.stringify(raw.slice(0, 40))}`);
      after = Number(raw);
    }
    const follower = await this.journal.follow(this.rootId, after, () => runtime.listDescendants(this.rootId, {}));
    if (!follower) throw fail('TOO_MANY_FOLLOWERS', `this tree has as many followers as it may (${this.journal.limits.followers}, SSE_FOLLOWERS)`);
    request.signal?.addEventListener?.('abort', () => follower.close());
    return new Response(follower.readable, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    });
  }
}

/**
 * A log's own `session/start` event: the last one at the position it names (a
 * fork's log also holds those it inherited, earlier).
 */
function ownStart(events) {
  return events.filter((e) => e.type === 'session/start' && e.seq === (e.payload?.inheritedEventCount ?? 0)).at(-1);
}

/** The JSON object of a request the front already bounded (readBody); bounded again here. */
async function body(request) {
  const text = await readBody(request);
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw fail('INVALID_ARGUMENT', 'the request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw fail('INVALID_ARGUMENT', 'the request body must be a JSON object');
  }
  return value;
}
