// subagent-tree/acp-provider (Node): children that are other agents. A
// provider whose runs are Agent Client Protocol agents (Claude Code, Codex,
// Gemini CLI, this package's own `subagent-tree-acp`...) started as child
// processes and driven over stdio with `@agentclientprotocol/sdk` (an optional
// peer, as for `subagent-tree/acp`).
//
// One process per child: an external run is one execution with no follow-up
// (seed 003), so the process lives exactly as long as its run; a crash, a hang
// or a runaway tool stays inside one child; its directory, environment and
// permissions are its own; and ending the run is ending the process (its
// whole process group), so nothing is left behind. The price is the agent's
// start-up per child (Claude Code ~1 s, Codex ~0.5 s).
//
// A run: spawn, `initialize`, `session/new` with the child's confined `cwd`,
// `session/prompt` with its prompt. What the agent streams goes to the tree
// as the child's (`request.emit`): `agent_message_chunk` as text deltas,
// `agent_thought_chunk` as reasoning deltas, `tool_call`s as tool events. Its
// result: the agent's last message (its text after its last tool call), the
// stop reason mapped, and its usage. An interrupt or `dispose()` sends
// `session/cancel`, waits `cancelMs` for the answer, then ends the process.
// A process that cannot start, exits, stays silent past a deadline or writes
// what is not JSON-RPC ends the run in `error`, with a diagnostic that says
// which (never the agent's output, tool inputs or file contents).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Writable } from 'node:stream';
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk/unstable';
import { SubagentError } from '__SNIPPET__';

/** ACP's stop reasons as the runtime's. */
const STOP = { end_turn: 'completed', cancelled: 'aborted', refusal: 'refusal', max_tokens: 'max-tokens', max_turn_requests: 'max-tokens' };

/** The deadlines (ms) a run keeps, unless the options say otherwise. */
export const DEFAULT_TIMEOUTS = Object.freeze({ startMs: 60_000, idleMs: 600_000, cancelMs: 5_000 });

/** Longest line (bytes) an agent may write: past it the run ends in error. */
const MAX_LINE_BYTES = 16 << 20;
/** Text emitted per part: well under the runtime's 64 KiB per part, in UTF-16 units. */
const PART_CHARS = 16 << 10;

const invalid = (message) => new SubagentError('INVALID_ARGUMENT', message);

/** A run's end that is not the agent's answer: the stop reason and a diagnostic naming what happened. */
class RunEnd extends Error {
  constructor(stopReason, diagnostic) {
    super(diagnostic);
    this.stopReason = stopReason;
  }
}

function timeoutsOf(value) {
  if (value === undefined) return DEFAULT_TIMEOUTS;
  if (typeof value !== 'object' || value === null) throw invalid('timeouts must be an object { startMs?, idleMs?, cancelMs? }');
  const out = { ...DEFAULT_TIMEOUTS };
  for (const [key, v] of Object.entries(value)) {
    if (!(key in DEFAULT_TIMEOUTS)) throw invalid(`timeouts has no option ${JSON.stringify(key)}; it takes startMs, idleMs and cancelMs`);
    if (!Number.isSafeInteger(v) || v < 1) throw invalid(`timeouts.${key} must be a whole number of milliseconds of at least 1`);
    out[key] = v;
  }
  return Object.freeze(out);
}

const OPTIONS = ['name', 'command', 'args', 'env', 'capabilities', 'permission', 'timeouts', 'stderr'];

function configOf(options, defaults = {}) {
  if (typeof options !== 'object' || options === null) throw invalid('acpProvider needs an options object { command, args?, env?, ... }');
  for (const key of Object.keys(options)) if (!OPTIONS.includes(key)) throw invalid(`acpProvider has no option ${JSON.stringify(key)}; it takes ${OPTIONS.join(', ')}`);
  const o = { ...defaults, ...options, env: { ...defaults.env, ...options.env } };
  const name = o.name ?? 'acp';
  if (typeof name !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(name)) throw invalid(`name must be 1-32 lower-case letters, digits or hyphens starting with a letter, not ${JSON.stringify(name)}`);
  if (typeof o.command !== 'string' || o.command === '') throw invalid('command must be the agent\'s executable (a non-empty string)');
  const args = o.args ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw invalid('args must be an array of strings');
  for (const [k, v] of Object.entries(o.env)) if (v !== undefined && v !== null && typeof v !== 'string') throw invalid(`env.${k} must be a string (or null to unset it)`);
  const permission = o.permission ?? 'deny';
  if (permission !== 'deny' && permission !== 'allow' && typeof permission !== 'function') throw invalid('permission must be "deny", "allow" or a function');
  if (o.stderr !== undefined && typeof o.stderr !== 'function') throw invalid('stderr must be a function (text) => void');
  const capabilities = Object.freeze({ agentOptions: false, agentPreset: false, outputSchema: false, depthLimit: false, ...(o.capabilities ?? {}) });
  return Object.freeze({ name, command: o.command, args: [...args], env: o.env, permission, timeouts: timeoutsOf(o.timeouts), stderr: o.stderr, capabilities });
}

/**
 * A provider whose runs are ACP agents started as `command args`: register it
 * with `runtime.registerProvider(acpProvider({ command }))`.
 */
export function acpProvider(options) {
  const config = configOf(options);
  return Object.freeze({
    name: config.name,
    capabilities: config.capabilities,
    inheritsParentContext: false,
    start: (request) => startRun(config, request),
  });
}

/** Where an optional peer is: the app's `node_modules` first, then this package's. */
function resolvePeer(specifier, install, preset) {
  for (const from of [path.join(process.cwd(), 'noop.js'), import.meta.url]) {
    try {
      return createRequire(from).resolve(specifier);
    } catch {
      // not there; try the next place
    }
  }
  throw new SubagentError('NO_PROVIDER', `acpProvider.${preset} runs ${install}, which is not installed: npm install ${install}`);
}

/**
 * Claude Code through its ACP adapter (`@agentclientprotocol/claude-agent-acp`,
 * an optional peer). Its own settings (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`,
 * ...) come from `env` over the process's. `IS_SANDBOX` is unset for it unless
 * `env` sets it: as root with any other value the adapter asks `claude` to skip
 * permission checks, which `claude` then refuses.
 */
acpProvider.claudeCode = function claudeCode(options = {}) {
  const manifest = resolvePeer('@agentclientprotocol/claude-agent-acp/package.json', '@agentclientprotocol/claude-agent-acp', 'claudeCode');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : Object.values(pkg.bin ?? {})[0];
  if (typeof bin !== 'string') throw new SubagentError('NO_PROVIDER', '@agentclientprotocol/claude-agent-acp has no command to run (no "bin" in its package.json)');
  const defaults = { name: 'claude-code', command: process.execPath, args: [path.join(path.dirname(manifest), bin)], env: { IS_SANDBOX: null } };
  return acpProvider(configInput(options, defaults));
};

/**
 * Codex through its ACP adapter (`@zed-industries/codex-acp`, an optional peer,
 * with its native package for this platform). The native binary runs directly
 * (the package's launcher leaves it running when it is stopped). Its settings
 * come from `env` (`OPENAI_API_KEY`, `CODEX_HOME`, which must exist) and
 * `args` (`-c model_provider=...`).
 */
acpProvider.codex = function codex(options = {}) {
  resolvePeer('@zed-industries/codex-acp/package.json', '@zed-industries/codex-acp', 'codex');
  const native = `@zed-industries/codex-acp-${process.platform}-${process.arch}`;
  const manifest = resolvePeer(`${native}/package.json`, native, 'codex');
  const defaults = { name: 'codex', command: path.join(path.dirname(manifest), 'bin', process.platform === 'win32' ? 'codex-acp.exe' : 'codex-acp'), env: {} };
  return acpProvider(configInput(options, defaults));
};

/** A preset's options over its defaults: `args` are added to the preset's. */
function configInput(options, defaults) {
  if (typeof options !== 'object' || options === null) throw invalid('the options must be an object');
  const { args, env, ...rest } = options;
  if (args !== undefined && !Array.isArray(args)) throw invalid('args must be an array of strings');
  return { ...defaults, ...rest, args: [...(defaults.args ?? []), ...(args ?? [])], env: { ...defaults.env, ...env } };
}

function startRun(config, request) {
  const id = `${config.name}-${randomUUID()}`;
  const run = new AcpRun(config, request);
  return { id, result: run.result, dispose: () => run.dispose() };
}

/** The runtime's content blocks as ACP's (text and images; anything else as JSON text). */
function promptOf(blocks, images) {
  const list = typeof blocks === 'string' ? [{ type: 'text', text: blocks }] : blocks;
  return list.map((b) => {
    if (b?.type === 'text') return { type: 'text', text: b.text };
    if (b?.type === 'image' && images) return { type: 'image', data: b.data, mimeType: b.mimeType };
    if (b?.type === 'image') return { type: 'text', text: `[an image (${b.mimeType}) the agent does not take]` };
    return { type: 'text', text: JSON.stringify(b) };
  });
}

/** ACP's `Usage` as the runtime's. */
function usageOf(u) {
  const n = (v) => (Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const usage = { inputTokens: n(u.inputTokens), outputTokens: n(u.outputTokens) };
  if (u.cachedReadTokens != null) usage.cacheReadTokens = n(u.cachedReadTokens);
  if (u.cachedWriteTokens != null) usage.cacheWriteTokens = n(u.cachedWriteTokens);
  if (u.thoughtTokens != null) usage.reasoningTokens = n(u.thoughtTokens);
  return usage;
}

/** The text of a tool call's content (its text blocks), for a tool-result part. */
function toolText(content) {
  if (!Array.isArray(content)) return '';
  return content
    .map((c) => (c?.type === 'content' && c.content?.type === 'text' ? c.content.text : ''))
    .filter(Boolean)
    .join('\n')
    .slice(0, PART_CHARS);
}

/** One child: one agent process, one session, one prompt. */
class AcpRun {
  #config;
  #request;
  #child;
  #connection;
  #sessionId;
  /** The agent's text, one entry per message (a tool call starts the next). */
  #messages = [''];
  #openCalls = new Set();
  #lastUsage;
  #fail;
  #failed;
  /** The first reason the run ended other than by the agent's answer. */
  #failure;
  #idleTimer;
  #stopping;
  #stop;
  #exited;
  #ended;
  result;

  constructor(config, request) {
    this.#config = config;
    this.#request = request;
    this.#failed = new Promise((_, reject) => (this.#fail = reject));
    this.#failed.catch(() => {});
    // Our own stop (an interrupt, dispose()): the runtime's signal, or dispose() before it.
    this.#stopping = new Promise((resolve) => (this.#stop = resolve));
    if (request.signal?.aborted) this.#stop();
    else request.signal?.addEventListener('abort', () => this.#stop(), { once: true });
    this.result = this.#run();
  }

  /** Cancels what remains and resolves once the process is gone (and `result` has settled). */
  async dispose() {
    this.#stop();
    await this.result;
    await this.#ended;
  }

  async #run() {
    try {
      return await this.#drive();
    } catch (e) {
      if (e instanceof RunEnd) return e.stopReason === 'aborted' ? { stopReason: 'aborted', output: this.#output() } : { stopReason: e.stopReason, diagnostic: e.message };
      return { stopReason: 'error', diagnostic: `the ${this.#config.name} agent failed: ${e?.message ?? e}`.slice(0, 400) };
    } finally {
      clearTimeout(this.#idleTimer);
      this.#ended = this.#end();
      await this.#ended;
    }
  }

  /** Ends the run unless it already ended: the first reason wins. */
  #failWith(diagnostic) {
    this.#failure ??= new RunEnd('error', diagnostic);
    this.#fail(this.#failure);
  }

  async #drive() {
    const [config, request] = [this.#config, this.#request];
    const who = `the ${config.name} agent`;
    let cwd;
    try {
      cwd = statSync(request.cwd).isDirectory() ? request.cwd : undefined;
    } catch {
      cwd = undefined;
    }
    const env = { ...process.env };
    for (const [k, v] of Object.entries(config.env)) {
      if (v === null || v === undefined) delete env[k];
      else env[k] = v;
    }
    const child = spawn(config.command, config.args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('close', resolve));
    child.once('error', (e) => this.#failWith(`${who} could not be started (${e.code ?? e.message})`));
    child.once('exit', (code, signal) => this.#failWith(`${who} exited (${signal ? `signal ${signal}` : `code ${code}`}) before it answered`));
    child.stdin.on('error', () => {}); // a closed pipe shows as the process's exit
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => {
      try {
        config.stderr?.(text);
      } catch {
        // a logger's failure is not the run's
      }
    });
    const conn = client({ name: 'subagent-tree' })
      .onNotification(methods.client.session.update, ({ params }) => this.#update(params))
      .onRequest(methods.client.session.requestPermission, ({ params }) => this.#permission(params))
      .connect(ndJsonStream(Writable.toWeb(child.stdin), this.#lines(child.stdout, who)));
    this.#connection = conn;
    const { startMs, idleMs, cancelMs } = config.timeouts;
    // Starting: initialize and session/new within startMs; a stop ends it at once.
    const startTimer = setTimeout(() => this.#failWith(`${who} did not start within ${startMs} ms`), startMs);
    const stopped = this.#stopping.then(() => {
      throw new RunEnd('aborted', 'stopped');
    });
    stopped.catch(() => {});
    let init;
    try {
      init = await Promise.race([conn.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} }), this.#failed, stopped]);
      const session = await Promise.race([conn.agent.request(methods.agent.session.new, { cwd: request.cwd, mcpServers: [] }), this.#failed, stopped]);
      this.#sessionId = session.sessionId;
    } catch (e) {
      throw await this.#asEnd(e, 'session/new');
    } finally {
      clearTimeout(startTimer);
    }
    // Prompting: silence past idleMs ends it; a stop asks the agent to cancel, and waits cancelMs.
    const images = init?.agentCapabilities?.promptCapabilities?.image === true;
    this.#idle = () => {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = setTimeout(() => this.#failWith(`${who} sent nothing for ${idleMs} ms`), idleMs);
    };
    this.#idle();
    const prompt = conn.agent.request(methods.agent.session.prompt, { sessionId: this.#sessionId, prompt: promptOf(request.prompt, images) });
    prompt.catch(() => {});
    const cancelled = this.#stopping.then(async () => {
      conn.agent.notify(methods.agent.session.cancel, { sessionId: this.#sessionId }).catch?.(() => {});
      await new Promise((resolve) => setTimeout(resolve, cancelMs).unref());
      throw new RunEnd('aborted', 'cancelled');
    });
    cancelled.catch(() => {});
    let response;
    try {
      response = await Promise.race([prompt, this.#failed, cancelled]);
    } catch (e) {
      throw await this.#asEnd(e, 'session/prompt');
    }
    const stopReason = STOP[response?.stopReason] ?? 'completed';
    const result = { stopReason, output: this.#output() };
    if (response?.usage) result.usage = usageOf(response.usage);
    else if (this.#lastUsage) result.usage = { inputTokens: this.#lastUsage, outputTokens: 0 };
    if (response?.stopReason === 'max_turn_requests') result.diagnostic = `${who} reached its limit of model requests`;
    else if (!(response?.stopReason in STOP)) result.diagnostic = `${who} stopped for a reason this provider does not know`;
    return result;
  }

  #idle = () => {};

  /** A failure while `what` ran, as the run's end. */
  async #asEnd(e, what) {
    if (e instanceof RunEnd) return e;
    // A request the SDK rejects as the connection closes: the process's exit says why.
    await Promise.race([this.#exited, new Promise((resolve) => setTimeout(resolve, 250).unref())]);
    if (this.#failure) return this.#failure;
    // An error answer: its code and message (never its data, which may quote inputs).
    const code = typeof e?.code === 'number' ? ` ${e.code}` : '';
    const message = typeof e?.message === 'string' ? `: ${e.message.slice(0, 200)}` : '';
    return new RunEnd('error', `the ${this.#config.name} agent answered ${what} with an error${code}${message}`);
  }

  /** The agent's output, line by line, each checked to be JSON-RPC before the SDK reads it. */
  #lines(stdout, who) {
    const encoder = new TextEncoder();
    let buffer = '';
    let bytes = 0;
    stdout.setEncoding('utf8');
    // Closed by the process's end, or cancelled by the SDK as the connection closes: whichever is first.
    let open = true;
    return new ReadableStream({
      cancel: () => {
        open = false;
      },
      start: (controller) => {
        const close = () => {
          if (open) controller.close();
          open = false;
        };
        stdout.on('data', (chunk) => {
          buffer += chunk;
          bytes += Buffer.byteLength(chunk);
          for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
            const line = buffer.slice(0, at).trim();
            buffer = buffer.slice(at + 1);
            bytes = Buffer.byteLength(buffer);
            if (line === '') continue;
            let message;
            try {
              message = JSON.parse(line);
            } catch {
              message = undefined;
            }
            if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') {
              this.#failWith(`${who} wrote a line that is not JSON-RPC (${Buffer.byteLength(line)} bytes)`);
              continue;
            }
            this.#idle();
            if (open) controller.enqueue(encoder.encode(`${line}\n`));
          }
          if (bytes > MAX_LINE_BYTES) {
            buffer = '';
            this.#failWith(`${who} wrote a line longer than ${MAX_LINE_BYTES} bytes`);
          }
        });
        stdout.on('end', close);
        stdout.on('error', close);
      },
    });
  }

  #emit(part) {
    try {
      this.#request.emit?.(part);
    } catch {
      // Live output only: a part the runtime refuses is not the run's failure.
    }
  }

  #update(params) {
    if (params.sessionId !== this.#sessionId) return;
    const u = params.update;
    switch (u?.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        if (u.content?.type !== 'text' || typeof u.content.text !== 'string') return;
        const type = u.sessionUpdate === 'agent_message_chunk' ? 'text-delta' : 'reasoning-delta';
        if (type === 'text-delta') this.#messages[this.#messages.length - 1] += u.content.text;
        for (let at = 0; at < u.content.text.length; at += PART_CHARS) this.#emit({ type, text: u.content.text.slice(at, at + PART_CHARS) });
        return;
      }
      case 'tool_call':
        if (typeof u.toolCallId !== 'string') return;
        if (this.#messages[this.#messages.length - 1] !== '') this.#messages.push('');
        this.#openCalls.add(u.toolCallId);
        this.#emit({ type: 'tool-call', id: u.toolCallId, tool: String(u.title ?? u.kind ?? 'tool').slice(0, 200), input: u.rawInput ?? null });
        if (u.status === 'completed' || u.status === 'failed') this.#toolEnd(u);
        return;
      case 'tool_call_update':
        if (u.status === 'completed' || u.status === 'failed') this.#toolEnd(u);
        return;
      case 'usage_update':
        if (Number.isSafeInteger(u.used) && u.used >= 0) this.#lastUsage = u.used;
        return;
      default:
    }
  }

  #toolEnd(u) {
    if (!this.#openCalls.delete(u.toolCallId)) return;
    this.#emit({ type: 'tool-result', id: u.toolCallId, output: toolText(u.content), isError: u.status === 'failed' });
  }

  /** `session/request_permission`: the configured policy's option (deny by default). */
  async #permission(params) {
    const options = Array.isArray(params?.options) ? params.options : [];
    let choice = this.#config.permission;
    if (typeof choice === 'function') {
      try {
        choice = await choice({ tool: params.toolCall?.title, kind: params.toolCall?.kind, options });
      } catch {
        choice = 'deny';
      }
    }
    const pick = (...kinds) => kinds.map((k) => options.find((o) => o.kind === k)).find(Boolean);
    const option = choice === 'allow' ? pick('allow_once', 'allow_always') : choice === 'deny' ? pick('reject_once', 'reject_always') : options.find((o) => o.optionId === choice);
    return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
  }

  /** The agent's last message (its text after its last tool call, or before when it said nothing after): none when it said nothing. */
  #output() {
    const said = this.#messages.filter((m) => m !== '');
    return said.length === 0 ? [] : [{ type: 'text', text: said[said.length - 1] }];
  }

  /** Ends the process (its group: tools it started too) and waits for it to go. */
  async #end() {
    const child = this.#child;
    try {
      this.#connection?.close?.();
    } catch {
      // closing twice is fine
    }
    if (!child || child.pid === undefined) return; // it never started
    if (child.exitCode !== null || child.signalCode !== null) {
      await this.#exited;
      return;
    }
    const kill = (signal) => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // gone already
      }
    };
    child.stdin.end();
    kill('SIGTERM');
    const timer = setTimeout(() => kill('SIGKILL'), 2_000);
    await this.#exited;
    clearTimeout(timer);
    // What it started may outlive it in its group: SIGKILL the group once more (ESRCH when empty).
    kill('SIGKILL');
  }
}
