// subagent-tree/openai-host: an agent host whose turns run a real model loop
// against any OpenAI-compatible chat-completions endpoint (OpenAI, DeepSeek,
// vLLM, Ollama, ...). Works wherever `fetch` does: workerd, Node, browsers.
//
// One turn: system (systemPrompt + the member's identity context) + prior
// turns (from the store's `message/input` and `turn/end` events, or kept in
// memory) + this turn's input as one user message. Then, up to `maxSteps`
// times: take steered messages (as user messages), ask the model with the
// member's tools as function tools, run each tool call with the turn's
// signal and append its result as a `tool` message, until the model answers
// without tool calls. Finish reasons map to stop reasons (`stop` ->
// completed, `length` -> max-tokens, `content_filter` -> refusal); transport
// and endpoint failures end the turn with `error` and a diagnostic made of the
// HTTP status and a fixed sentence: never the API key, the request body or
// any part of a response body or reason phrase (a provider that echoes the key
// back masked, upper-cased or otherwise cannot have it stored). One reply may
// ask for at most `maxToolCallsPerReply` tool calls (unset: the turn's
// `toolCallsPerReply`, the runtime's `limits.toolCallsPerReply`, default 64):
// a reply asking for more runs none of them and ends the turn with `error`.
//
// Requests stream by default (`stream: true`, `stream_options.include_usage`):
// the Server-Sent Events are parsed as they arrive, each text (and reasoning)
// delta goes to `turn.emit` in order, and the step's text is their
// concatenation; the last chunk's `usage` is the step's. A stream cut before
// its end, or an event that is not JSON, fails the step (its unfinished text
// is never output); a server that answers JSON anyway is read as JSON; one
// that refuses a streamed request (HTTP 400) gets that request once more
// without streaming, and this host stops asking it to stream. No progress
// for `timeoutMs` fails the request (a streamed answer progresses by its
// `data` lines: keep-alive comments do not count), so does a request not
// finished within `requestTimeoutMs` (however it trickles), and an answer
// over `maxResponseBytes` is "too large", never read whole. A stream is read
// up to its `[DONE]` and no further; an answer whose finish reason came is
// kept when the stream then stalls or runs past the deadline.
import { blocksText, configError, describe, inputImages, parseStructured, priorTurns } from './host-shared.js';

const DEFAULT_MAX_STEPS = 16;
const DEFAULT_MAX_TOOL_CALLS = 64; // the runtime's documented toolCallsPerReply
const MAX_TOOL_CALLS_CEILING = 1024;
/** The runtime's limit a turn carries (a hand-made turn without one gets the default). */
function turnToolCalls(turn) {
  const n = turn.toolCallsPerReply;
  return Number.isSafeInteger(n) && n >= 1 && n <= MAX_TOOL_CALLS_CEILING ? n : DEFAULT_MAX_TOOL_CALLS;
}

/** What an HTTP status means, in our own words (the provider's are never quoted). */
function statusSentence(status) {
  if (status === 401 || status === 403) return 'the API key or its permissions were refused';
  if (status === 404) return 'the endpoint or model was not found';
  if (status === 408 || status === 504) return 'the request timed out';
  if (status === 413) return 'the request was too large';
  if (status === 429) return 'the endpoint is rate limiting or out of quota';
  if (status >= 500) return 'the endpoint failed on its side';
  if (status >= 400) return 'the endpoint refused the request';
  return 'the endpoint gave an unexpected answer';
}
const DEFAULT_HISTORY_TURNS = 20;
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** The most one request may take, whatever it sends meanwhile (10 minutes). */
const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
const DETAIL_LIMIT = 300;

/** A count the server reported, or 0 for anything that is not a non-negative safe integer. */
const count = (n) => (Number.isSafeInteger(n) && n >= 0 ? n : 0);

/**
 * Adds one response's `usage` to a turn's, in the runtime's `Usage` shape:
 * prompt and completion tokens, and the cached-prompt and reasoning details
 * where the server gives them (a field appears once some response had it).
 */
function addUsage(usage, u) {
  if (!u || typeof u !== 'object') return;
  usage.inputTokens += count(u.prompt_tokens);
  usage.outputTokens += count(u.completion_tokens);
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (cached !== undefined) usage.cacheReadTokens = (usage.cacheReadTokens ?? 0) + count(cached);
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined) usage.reasoningTokens = (usage.reasoningTokens ?? 0) + count(reasoning);
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Thrown inside the loop for a failure that ends the turn with `error`. */
class Failure {
  constructor(diagnostic) {
    this.diagnostic = diagnostic;
  }
}

/**
 * An `AgentHost` over an OpenAI-compatible chat-completions endpoint.
 * `new OpenAIHost({ baseUrl, apiKey, model, ... })`; pass it as the
 * runtime's `host`.
 */
export class OpenAIHost {
  #endpoint;
  #model;
  #redact;
  #headers;
  #fetch;
  #maxSteps;
  #maxToolCalls;
  #systemPrompt;
  #store;
  #history;
  #historyTurns;
  #params;
  #retries;
  #retryDelayMs;
  #stream;
  #treeTools;
  #timeoutMs;
  #requestTimeoutMs;
  #maxResponseBytes;
  #memory = new Map(); // sessionId -> [{ role, content }] (history: 'memory')

  constructor(options) {
    const o = options ?? {};
    if (typeof o.baseUrl !== 'string' || !/^https?:\/\//i.test(o.baseUrl)) {
      throw configError('baseUrl must be an http(s) URL such as https://api.openai.com/v1');
    }
    if (typeof o.model !== 'string' || o.model === '') throw configError('model must be a non-empty string');
    if (o.apiKey !== undefined && typeof o.apiKey !== 'string') throw configError('apiKey must be a string');
    if (o.fetch !== undefined && typeof o.fetch !== 'function') throw configError('fetch must be a function');
    const maxSteps = o.maxSteps ?? DEFAULT_MAX_STEPS;
    if (!Number.isSafeInteger(maxSteps) || maxSteps < 1) throw configError('maxSteps must be a positive integer');
    // Unset, each turn's own `toolCallsPerReply` (the runtime's limit) applies.
    const maxToolCalls = o.maxToolCallsPerReply ?? DEFAULT_MAX_TOOL_CALLS;
    if (!Number.isSafeInteger(maxToolCalls) || maxToolCalls < 1 || maxToolCalls > MAX_TOOL_CALLS_CEILING) {
      throw configError(`maxToolCallsPerReply must be an integer from 1 to ${MAX_TOOL_CALLS_CEILING}`);
    }
    // 'store': the member's log, from `store` when given, else read through the turn (`turn.readLog`).
    const history = o.history ?? 'store';
    if (!['store', 'memory', 'none'].includes(history)) throw configError("history must be 'store', 'memory' or 'none'");
    if (o.store !== undefined && typeof o.store?.read !== 'function') throw configError("store must be the runtime's store (with read)");
    this.#endpoint = `${o.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.#model = o.model;
    const key = o.apiKey ?? '';
    this.#redact = (text) => {
      let out = String(text);
      if (key.length >= 4) out = out.split(key).join('[redacted]');
      out = out
        .replace(/\b(sk|pk|rk|key)-[A-Za-z0-9_*.-]{6,}/gi, '$1-[redacted]')
        .replace(/\bBearer\s+[^\s"',]+/gi, 'Bearer [redacted]');
      return out.length > DETAIL_LIMIT ? `${out.slice(0, DETAIL_LIMIT)}…` : out;
    };
    this.#headers = { 'content-type': 'application/json', ...(o.headers ?? {}) };
    if (key !== '') this.#headers.authorization = `Bearer ${key}`;
    // Called as a plain function: workerd's fetch throws "Illegal invocation" on another `this`.
    const f = o.fetch ?? ((input, init) => fetch(input, init));
    this.#fetch = (input, init) => f(input, init);
    this.#maxSteps = maxSteps;
    this.#maxToolCalls = o.maxToolCallsPerReply === undefined ? null : maxToolCalls;
    this.#systemPrompt = typeof o.systemPrompt === 'string' ? o.systemPrompt : '';
    this.#store = o.store;
    this.#history = history;
    this.#historyTurns = o.historyTurns ?? DEFAULT_HISTORY_TURNS;
    const params = { ...(o.params ?? {}) };
    if (o.temperature !== undefined) params.temperature = o.temperature;
    if (o.maxTokens !== undefined) params.max_tokens = o.maxTokens;
    for (const reserved of ['model', 'messages', 'tools', 'stream', 'stream_options']) delete params[reserved];
    this.#params = params;
    this.#retries = o.retries ?? 2;
    this.#retryDelayMs = o.retryDelayMs ?? 500;
    if (o.stream !== undefined && typeof o.stream !== 'boolean') throw configError('stream must be a boolean');
    this.#stream = o.stream ?? true;
    if (o.treeTools !== undefined && (o.treeTools === null || typeof o.treeTools !== 'object')) {
      throw configError('treeTools must be an object { only?, except? } of tool names');
    }
    this.#treeTools = o.treeTools;
    const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) throw configError('timeoutMs must be a positive integer (milliseconds)');
    this.#timeoutMs = timeoutMs;
    const requestTimeoutMs = o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (!Number.isSafeInteger(requestTimeoutMs) || requestTimeoutMs < 1) throw configError('requestTimeoutMs must be a positive integer (milliseconds)');
    this.#requestTimeoutMs = requestTimeoutMs;
    const maxBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1024) throw configError('maxResponseBytes must be an integer of at least 1024');
    this.#maxResponseBytes = maxBytes;
  }

  /** The endpoint turns are sent to (`<baseUrl>/chat/completions`). */
  get endpoint() {
    return this.#endpoint;
  }

  get model() {
    return this.#model;
  }

  /** Forgets a member's in-memory history when it leaves residency. */
  release(sessionId) {
    this.#memory.delete(sessionId);
  }

  async runTurn(turn) {
    const signal = turn.signal ?? new AbortController().signal;
    const outputs = [];
    const usage = { inputTokens: 0, outputTokens: 0 };
    const end = (stopReason, extra = {}) => ({ stopReason, messages: outputs, usage, ...extra });
    const system = [this.#systemPrompt, turn.context];
    if (turn.outputSchema !== undefined && turn.outputSchema !== null) {
      system.push(
        `When you finish, reply with only a JSON object (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(turn.outputSchema)}`,
      );
    }
    const userText = (turn.inputText ?? []).join('\n\n');
    // Images in the input go beside its text, as data URLs.
    const images = inputImages(turn).map((b) => ({ type: 'image_url', image_url: { url: `data:${b.mimeType};base64,${b.data}` } }));
    const userContent = images.length === 0 ? userText : [{ type: 'text', text: userText }, ...images];
    let messages;
    try {
      messages = [
        { role: 'system', content: system.filter((s) => s).join('\n\n') },
        ...(await this.#priorTurns(turn, signal)),
        { role: 'user', content: userContent },
      ];
    } catch (e) {
      if (signal.aborted) return end('aborted');
      return end('error', { diagnostic: `the conversation history could not be read (${this.#redact(describe(e))})` });
    }
    let tools;
    try {
      tools = Array.from((this.#treeTools && turn.toolsFor ? turn.toolsFor(this.#treeTools) : turn.tools) ?? []);
    } catch (e) {
      return end('error', { diagnostic: `the member's tools could not be chosen (${this.#redact(describe(e))})` });
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    const toolSpecs = tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
    const remember = (finalText) => {
      if (this.#history !== 'memory') return;
      const kept = this.#memory.get(turn.sessionId) ?? [];
      kept.push({ role: 'user', content: userText }, { role: 'assistant', content: finalText });
      this.#memory.set(turn.sessionId, kept.slice(-2 * this.#historyTurns));
    };

    // A budget's allowance bounds the whole turn: each request's output
    // tokens are capped to what the turn's earlier steps left of it.
    const allowance = Number.isSafeInteger(turn.budget?.tokens) ? turn.budget.tokens : undefined;
    for (let step = 0; step < this.#maxSteps; step++) {
      for (const m of turn.takeSteered?.() ?? []) messages.push({ role: 'user', content: m.text });
      if (signal.aborted) return end('aborted');
      let cap;
      if (allowance !== undefined) {
        cap = allowance - usage.inputTokens - usage.outputTokens;
        if (cap <= 0) {
          return end('max-tokens', { diagnostic: `the turn used its budget allowance of ${allowance} tokens` });
        }
      }
      let reply;
      try {
        reply = await this.#complete(messages, toolSpecs, signal, usage, cap, turn);
      } catch (e) {
        if (signal.aborted) return end('aborted');
        if (e instanceof Failure) return end('error', { diagnostic: e.diagnostic });
        throw e;
      }
      const { message, finish } = reply;
      const content = typeof message.content === 'string' ? message.content : blocksText(message.content);
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      const maxCalls = this.#maxToolCalls ?? turnToolCalls(turn);
      if (calls.length > maxCalls) {
        return end('error', {
          diagnostic: `the model asked for ${calls.length} tool calls in one reply; the limit toolCallsPerReply is ${maxCalls}, so none ran`,
        });
      }
      if (content.trim() !== '') outputs.push(content);
      if (typeof message.refusal === 'string' && message.refusal !== '') {
        outputs.push(message.refusal);
        return end('refusal');
      }
      if (finish === 'length') return end('max-tokens');
      if (finish === 'content_filter') return end('refusal');
      if (finish === 'insufficient_system_resource') {
        return end('error', { diagnostic: 'the model endpoint ran out of resources for this request' });
      }
      if (calls.length === 0) {
        // Messages steered in while the model was answering get their own step.
        const late = turn.takeSteered?.() ?? [];
        if (late.length > 0) {
          messages.push({ role: 'assistant', content });
          for (const m of late) messages.push({ role: 'user', content: m.text });
          continue;
        }
        remember(content);
        const extra = {};
        if (turn.outputSchema !== undefined && turn.outputSchema !== null) {
          const structured = parseStructured(content);
          if (structured !== undefined) extra.structured = structured;
        }
        return end('completed', extra);
      }
      messages.push({
        role: 'assistant',
        content: content === '' ? null : content,
        tool_calls: calls.map((c, i) => ({
          id: typeof c.id === 'string' && c.id !== '' ? c.id : `call_${step}_${i}`,
          type: 'function',
          function: { name: String(c.function?.name ?? ''), arguments: String(c.function?.arguments ?? '{}') },
        })),
      });
      for (const call of messages.at(-1).tool_calls) {
        if (signal.aborted) return end('aborted');
        messages.push({ role: 'tool', tool_call_id: call.id, content: await runTool(byName, call, signal) });
      }
      if (signal.aborted) return end('aborted');
    }
    return end('error', {
      diagnostic: `the model did not finish within ${this.#maxSteps} steps (raise maxSteps to allow longer tool loops)`,
    });
  }

  /** Earlier turns of this member as chat messages (oldest first, at most `historyTurns`). */
  async #priorTurns(turn, signal) {
    // The log says what this member heard and answered (nothing on its first
    // turn; a fork's inherited turns too): no other signal drops history.
    if (this.#history === 'none') return [];
    if (this.#history === 'memory') return [...(this.#memory.get(turn.sessionId) ?? [])];
    return priorTurns(this.#store, turn, this.#historyTurns, signal);
  }

  /**
   * One chat completion, with retries of 429/5xx and network failures:
   * streamed (its deltas emitted on `turn`) unless this host does not stream.
   */
  async #complete(messages, toolSpecs, signal, usage, cap, turn) {
    // The member's agent options (its log's) choose the model and its settings over this host's.
    const options = turn.agentOptions ?? {};
    const base = { ...this.#params, model: options.model ?? this.#model, messages };
    if (options.reasoningEffort !== undefined) base.reasoning_effort = options.reasoningEffort;
    for (const limit of [options.maxOutputTokens, cap]) {
      if (limit !== undefined) base.max_tokens = typeof base.max_tokens === 'number' ? Math.min(base.max_tokens, limit) : limit;
    }
    if (toolSpecs.length > 0) base.tools = toolSpecs;
    let streaming = this.#stream;
    let refused = false;
    for (let attempt = 0; ; attempt++) {
      const body = streaming ? { ...base, stream: true, stream_options: { include_usage: true } } : { ...base, stream: false };
      const watch = new Watch(signal, this.#timeoutMs, this.#requestTimeoutMs);
      let response;
      try {
        response = await this.#fetch(this.#endpoint, { method: 'POST', headers: this.#headers, body: JSON.stringify(body), signal: watch.signal });
      } catch (e) {
        watch.stop();
        if (signal.aborted) throw e;
        if (watch.overdue) throw this.#overdue();
        if (watch.timedOut) throw new Failure(`the model endpoint sent nothing for ${this.#timeoutMs} ms (timeoutMs)`);
        if (attempt < this.#retries) {
          await sleep(this.#retryDelayMs * 2 ** attempt, signal);
          continue;
        }
        throw new Failure(`the model endpoint could not be reached (${errorName(e)})`);
      }
      if (!response.ok) {
        watch.stop();
        // The body is never read into a diagnostic: free the connection.
        try {
          await response.body?.cancel?.();
        } catch {
          // nothing to free
        }
        // A server that refuses to stream gets this request once more, not streamed
        // (and, once that is answered, this host no longer asks it to stream).
        if (streaming && response.status === 400) {
          streaming = false;
          refused = true;
          continue;
        }
        const retryable = response.status === 429 || response.status >= 500;
        if (retryable && attempt < this.#retries) {
          const after = Number(response.headers.get('retry-after'));
          const wait = Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 10_000) : this.#retryDelayMs * 2 ** attempt;
          await sleep(wait, signal);
          if (signal.aborted) throw new Failure('aborted');
          continue;
        }
        const status = Number.isSafeInteger(response.status) ? response.status : 0;
        throw new Failure(`the model endpoint answered HTTP ${status}: ${statusSentence(status)}`);
      }
      try {
        const type = String(response.headers.get('content-type') ?? '');
        if (/^text\/event-stream/i.test(type)) return await this.#readStream(response, watch, usage, turn);
        const reply = await this.#readJson(response, watch, usage);
        if (refused) this.#stream = false;
        return reply;
      } catch (e) {
        if (signal.aborted) throw e;
        if (watch.overdue) throw this.#overdue();
        if (watch.timedOut) throw new Failure(`the model endpoint sent nothing for ${this.#timeoutMs} ms (timeoutMs)`);
        if (e instanceof Failure) throw e;
        throw new Failure(`the model endpoint's answer could not be read (${errorName(e)})`);
      } finally {
        watch.stop();
      }
    }
  }

  /** A non-streamed answer: read up to `maxResponseBytes`, then parsed. */
  async #readJson(response, watch, usage) {
    const chunks = [];
    const decoder = new TextDecoder();
    let bytes = 0;
    await eachChunk(response, watch, (chunk) => {
      watch.touch(); // a JSON answer progresses by its bytes
      bytes += chunk.byteLength;
      if (bytes > this.#maxResponseBytes) throw this.#tooLarge();
      chunks.push(decoder.decode(chunk, { stream: true }));
    });
    chunks.push(decoder.decode());
    let data;
    try {
      data = JSON.parse(chunks.join(''));
    } catch {
      throw new Failure('the model endpoint answered with something that is not JSON');
    }
    addUsage(usage, data?.usage);
    const choice = Array.isArray(data?.choices) ? data.choices[0] : undefined;
    if (!choice || typeof choice.message !== 'object' || choice.message === null) {
      throw new Failure('the model endpoint answered without a chat completion choice');
    }
    return { message: choice.message, finish: choice.finish_reason ?? null };
  }

  /**
   * A streamed answer: Server-Sent Events parsed as they arrive (one line
   * buffered at a time, at most `maxResponseBytes` in all), each text or
   * reasoning delta emitted on the turn in order; tool calls assembled by
   * index; the last `usage` counted once the stream ends with `[DONE]`,
   * where reading stops. Only `data` lines are progress (a comment or a blank
   * line does not restart the idle clock), and an answer whose finish reason
   * came is kept if the stream then stalls or passes the request's deadline.
   */
  async #readStream(response, watch, usage, turn) {
    const decoder = new TextDecoder();
    // Best effort: a part the runtime refuses (over 64 KiB, the turn over) is not the answer's loss.
    const emit = (part) => {
      try {
        turn?.emit?.(part);
      } catch {
        // the text still joins the answer
      }
    };
    let bytes = 0;
    let pending = '';
    let data = [];
    let text = '';
    let refusal = '';
    let finish = null;
    let done = false;
    let lastUsage;
    const calls = new Map(); // index -> the call its deltas assemble
    const event = () => {
      const payload = data.join('\n');
      data = [];
      if (payload === '' || done) return;
      if (payload.trim() === '[DONE]') {
        done = true;
        return;
      }
      let chunk;
      try {
        chunk = JSON.parse(payload);
      } catch {
        throw new Failure('the model stream sent an event that is not JSON');
      }
      if (chunk?.error) throw new Failure('the model endpoint reported an error in the middle of its stream');
      if (chunk?.usage) lastUsage = chunk.usage;
      const choice = Array.isArray(chunk?.choices) ? chunk.choices[0] : undefined;
      if (!choice) return;
      const delta = choice.delta ?? {};
      const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
      if (reasoning !== '') emit({ type: 'reasoning-delta', text: reasoning });
      if (typeof delta.content === 'string' && delta.content !== '') {
        text += delta.content;
        emit({ type: 'text-delta', text: delta.content });
      }
      if (typeof delta.refusal === 'string') refusal += delta.refusal;
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const i = Number.isSafeInteger(call?.index) ? call.index : calls.size;
        if (!calls.has(i)) calls.set(i, { id: '', type: 'function', function: { name: '', arguments: '' } });
        const slot = calls.get(i);
        if (typeof call.id === 'string') slot.id = call.id;
        if (typeof call.function?.name === 'string') slot.function.name += call.function.name;
        if (typeof call.function?.arguments === 'string') slot.function.arguments += call.function.arguments;
      }
      if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
    };
    const line = (l) => {
      if (l === '') return event();
      if (l.startsWith(':')) return; // a comment (keep-alive)
      const colon = l.indexOf(':');
      const field = colon < 0 ? l : l.slice(0, colon);
      let value = colon < 0 ? '' : l.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        watch.touch();
        data.push(value);
      }
    };
    // Lines are cut where they end (CRLF, CR or LF); the search resumes where the last one stopped.
    const eol = /\r\n|\r|\n/g;
    let scanned = 0;
    try {
      await eachChunk(response, watch, (chunk) => {
        bytes += chunk.byteLength;
        if (bytes > this.#maxResponseBytes) throw this.#tooLarge();
        pending += decoder.decode(chunk, { stream: true });
        let start = 0;
        eol.lastIndex = scanned;
        for (let m = eol.exec(pending); m !== null && !done; m = eol.exec(pending)) {
          if (m[0] === '\r' && m.index + 1 === pending.length) break; // its LF may come next
          line(pending.slice(start, m.index));
          start = m.index + m[0].length;
        }
        pending = pending.slice(start);
        scanned = pending.endsWith('\r') ? pending.length - 1 : pending.length;
        return done; // `[DONE]`: nothing after it is read
      });
    } catch (e) {
      // Stalled or overdue after its finish reason: the answer has arrived.
      if (finish === null || watch.source.aborted || !(watch.timedOut || watch.overdue)) throw e;
      done = true;
    }
    if (!done) {
      pending += decoder.decode();
      if (pending !== '') line(pending.replace(/\r$/, ''));
      event();
    }
    // Ended without `[DONE]` or a finish reason: cut short, and its unfinished text is not an answer.
    if (!done && finish === null) throw new Failure('the model stream ended before its answer did');
    addUsage(usage, lastUsage);
    const message = { role: 'assistant', content: text };
    if (refusal !== '') message.refusal = refusal;
    const toolCalls = [...calls].sort((a, b) => a[0] - b[0]).map(([, call]) => call);
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, finish };
  }

  #overdue() {
    return new Failure(`the model endpoint did not finish its answer within ${this.#requestTimeoutMs} ms (requestTimeoutMs)`);
  }

  #tooLarge() {
    return new Failure(`the model endpoint's answer is too large (over maxResponseBytes, ${this.#maxResponseBytes} bytes)`);
  }
}

/**
 * A request's signal: the turn's, or a timeout once no progress came for
 * `ms` (the reader calls `touch` on progress), or once `total` ms passed
 * since the request began, whatever came meanwhile (`overdue`).
 */
class Watch {
  constructor(signal, ms, total) {
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    this.timedOut = false;
    this.overdue = false;
    this.ms = ms;
    this.onAbort = () => this.controller.abort(signal.reason);
    this.source = signal;
    if (signal.aborted) this.controller.abort(signal.reason);
    else signal.addEventListener('abort', this.onAbort, { once: true });
    this.timer = undefined;
    this.deadline = setTimeout(() => {
      this.overdue = true;
      this.controller.abort();
    }, total);
    this.touch();
  }

  touch() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.ms);
  }

  stop() {
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    this.source.removeEventListener('abort', this.onAbort);
  }
}

/**
 * Reads a response body chunk by chunk; stops reading on abort, or when
 * `onChunk` returns `true` (the rest is not wanted: the body is cancelled).
 */
async function eachChunk(response, watch, onChunk) {
  const body = response.body;
  if (!body || typeof body.getReader !== 'function') {
    const buffer = new Uint8Array(await response.arrayBuffer());
    onChunk(buffer);
    return;
  }
  const reader = body.getReader();
  const cancel = () => reader.cancel().catch(() => {});
  watch.signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      if (watch.signal.aborted) throw new Failure('aborted');
      const { done, value } = await reader.read();
      if (done) return;
      if (value && value.byteLength > 0 && onChunk(value) === true) {
        cancel();
        return;
      }
    }
  } catch (e) {
    cancel();
    throw e;
  } finally {
    watch.signal.removeEventListener('abort', cancel);
  }
}

/** `new OpenAIHost(options)`. */
export function createOpenAIHost(options) {
  return new OpenAIHost(options);
}

async function runTool(byName, call, signal) {
  const name = call.function.name;
  const tool = byName.get(name);
  if (!tool) return `Error: there is no tool named ${JSON.stringify(name)}.`;
  let input;
  try {
    input = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    return `Error: the arguments of ${name} are not valid JSON.`;
  }
  try {
    const result = await tool.call(input, { signal });
    return typeof result?.content === 'string' ? result.content : JSON.stringify(result ?? null);
  } catch (e) {
    return `Error: ${name} failed (${describe(e)}).`;
  }
}

/** The kind of a transport failure (`TypeError`, `AbortError`, ...): a name, never a message. */
function errorName(e) {
  try {
    const name = e instanceof Error || (e && typeof e.name === 'string') ? String(e.name) : typeof e;
    return /^[A-Za-z]{1,40}$/.test(name) ? name : 'Error';
  } catch {
    return 'Error';
  }
}

