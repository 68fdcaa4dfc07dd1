// subagent-tree/openai-host: a model-loop agent host for OpenAI-compatible chat-completions endpoints.
/**
 * A model-loop agent host for OpenAI-compatible chat-completions endpoints.
 *
 * @module subagent-tree/openai-host
 */
import type { AbortSignalLike, AgentHost, AgentTurn, AgentTurnOutcome, SessionStore, ToolChoice, Usage } from '../index.js';

/** What the host calls `fetch` with (a `RequestInit` where the platform declares one). */
export interface OpenAIFetchInit {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignalLike;
}

/** What `fetch` resolves to: the platform's `Response` where declared, else the part of one the host reads. */
export type OpenAIFetchResponse = typeof globalThis extends { Response: { prototype: infer R } }
  ? R
  : {
      readonly ok: boolean;
      readonly status: number;
      readonly headers: { get(name: string): string | null };
      json(): Promise<unknown>;
      readonly body?: { cancel?(): unknown } | null;
    };

export interface OpenAIHostOptions {
  /** e.g. `https://api.openai.com/v1`, `https://api.deepseek.com`; requests go to `<baseUrl>/chat/completions`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never appears in diagnostics. Omit for keyless local servers. */
  apiKey?: string;
  /**
   * e.g. `gpt-4o-mini`, `deepseek-chat`: the default. A member's
   * `agentOptions` override it per turn: `model` is sent as the request's
   * model, `reasoningEffort` as `reasoning_effort`, and `maxOutputTokens`
   * caps `max_tokens` (with the turn's budget, the lower wins).
   */
  model: string;
  /** The fetch to use (default the global `fetch`). */
  fetch?: (input: string, init: OpenAIFetchInit) => Promise<OpenAIFetchResponse>;
  /** Model requests per turn before it ends with `error` (default 16). */
  maxSteps?: number;
  /**
   * Most tool calls one model reply may ask for (at most 1024); a reply asking
   * for more ends the turn with `error`. Unset, each turn's `toolCallsPerReply`
   * applies: the runtime's `limits.toolCallsPerReply` (default 64).
   */
  maxToolCallsPerReply?: number;
  /** Put before the member's identity context in the system message. */
  systemPrompt?: string;
  /** The runtime's store: earlier turns are rebuilt from its `message/input` and `turn/end` events. */
  store?: SessionStore;
  /** Where earlier turns come from: `'store'` (default: the member's log, from `store` or else read through the turn), `'memory'` (this host's process only), `'none'`. */
  history?: 'store' | 'memory' | 'none';
  /** Earlier turns included (default 20). */
  historyTurns?: number;
  temperature?: number;
  /** Sent as `max_tokens` (lowered to what a budgeted turn's `turn.budget.tokens` leaves). */
  maxTokens?: number;
  /** Extra request body fields (`model`, `messages`, `tools`, `stream`, `stream_options` are the host's). */
  params?: Record<string, unknown>;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /**
   * Stream each request (default `true`: `stream: true` with
   * `stream_options.include_usage`): text and reasoning deltas go to
   * `turn.emit` as they arrive. A server answering a streamed request with
   * HTTP 400 gets it once more without streaming, and is not asked to stream
   * again; one that answers JSON anyway is read as JSON.
   */
  stream?: boolean;
  /**
   * A request that makes no progress for this long fails the turn (`error`).
   * A streamed answer progresses by its `data` lines (keep-alive comments do
   * not count), a JSON one by its bytes. Default 60,000 ms.
   */
  timeoutMs?: number;
  /**
   * The most one request may take, whatever it sends meanwhile (a trickle
   * cannot hold a turn); past it the turn fails, unless the answer's finish
   * reason had come (then the answer is kept). Default 600,000 ms (10 minutes).
   */
  requestTimeoutMs?: number;
  /** The most one answer may take, streamed or not; past it the turn fails, "too large". Default 8 MiB (at least 1,024). */
  maxResponseBytes?: number;
  /** Which of the member's tree tools the model gets (`{ only?, except? }`, as `runtime.toolsFor`); default all. */
  treeTools?: ToolChoice;
  /** Retries of 429, 5xx and network failures (default 2). */
  retries?: number;
  /** First retry delay in ms, doubled each time (default 500; `Retry-After` wins, up to 10 s). */
  retryDelayMs?: number;
}


/** @deprecated The host reports the runtime's `Usage` (`inputTokens`, `outputTokens`, ...) now. */
export type OpenAIHostUsage = Usage;

/**
 * An `AgentHost` running each turn as a tool-calling loop against a
 * chat-completions endpoint, streamed (deltas to `turn.emit`, the output
 * their concatenation, usage from the last chunk; a cut or malformed stream
 * fails the turn): the member's tools are function tools, steered
 * messages join at each step, `turn.signal` aborts the request in flight
 * (`aborted`), finish reasons map to stop reasons (`stop` -> `completed`,
 * `length` -> `max-tokens`, `content_filter` -> `refusal`), and failures end
 * with `error` and a key-free diagnostic.
 */
export declare class OpenAIHost implements AgentHost {
  constructor(options: OpenAIHostOptions);
  readonly endpoint: string;
  readonly model: string;
  /** The outcome's `usage` sums the turn's requests: prompt, completion, cached-prompt and reasoning tokens. */
  runTurn(turn: AgentTurn): Promise<AgentTurnOutcome & { usage: Usage }>;
  release(sessionId: string): void;
}

export declare function createOpenAIHost(options: OpenAIHostOptions): OpenAIHost;
