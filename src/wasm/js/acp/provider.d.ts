// subagent-tree/acp-provider (Node): children that are other agents, over ACP (`@agentclientprotocol/sdk` ^2.4, optional peer).
/**
 * A provider whose runs are Agent Client Protocol agents (Claude Code, Codex,
 * Gemini CLI, `subagent-tree-acp`...), one process per child, driven over
 * stdio. Register it with `runtime.registerProvider(...)`; a model starts one
 * with the provider's delegation tool (`acp_agent`, `claude-code_agent`...), a
 * host with `startActivation({ provider: name, ... })`.
 *
 * @module subagent-tree/acp-provider
 */
import type { SubagentCapabilities, SubagentProvider } from '../index.js';

/** The deadlines a run keeps, in milliseconds. */
export interface AcpTimeouts {
  /** `initialize` and `session/new` together (default 60,000): past it the run ends in `error`. */
  startMs?: number;
  /** Silence while the prompt runs (default 600,000: ten minutes without a message): past it the run ends in `error`. */
  idleMs?: number;
  /** After an interrupt or `dispose()` sends `session/cancel`, how long the agent has to answer before its process is ended (default 5,000). */
  cancelMs?: number;
}

/** The options the agent's `session/request_permission` offered, and the tool call it asks about. */
export interface AcpPermissionRequest {
  tool?: string;
  kind?: string;
  options: ReadonlyArray<{ optionId: string; name: string; kind: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always' | string }>;
}

export interface AcpProviderOptions {
  /** The provider's name (default `acp`): its delegation tool is `{name}_agent`. */
  name?: string;
  /** The agent's executable. */
  command: string;
  args?: string[];
  /** Over the process's environment; `null` unsets a variable. */
  env?: Record<string, string | null>;
  /** What the provider claims to honour of a start (default none). */
  capabilities?: Partial<SubagentCapabilities>;
  /**
   * How `session/request_permission` is answered: `deny` (the default: the
   * agent's reject option), `allow`, or a function returning either or an
   * `optionId`. With no such option, the request is answered `cancelled`.
   */
  permission?: 'deny' | 'allow' | ((request: AcpPermissionRequest) => 'allow' | 'deny' | string | Promise<'allow' | 'deny' | string>);
  timeouts?: AcpTimeouts;
  /** What the agent writes to stderr (discarded by default; never in a diagnostic). */
  stderr?: (text: string) => void;
}

/** The deadlines a run keeps unless `timeouts` says otherwise. */
export declare const DEFAULT_TIMEOUTS: Readonly<Required<AcpTimeouts>>;

/** A preset's options: `command` is the preset's; `args` are added to its own. */
export type AcpPresetOptions = Omit<AcpProviderOptions, 'command'>;

/**
 * A provider that runs `command args` per child: `initialize`, `session/new`
 * with the child's directory, `session/prompt` with its prompt. The agent's
 * text and tool calls stream as the child's (`subagent/delta`,
 * `subagent/tool`); its result is its last message, its stop reason mapped
 * (`end_turn` completed, `cancelled` aborted, `refusal`, `max_tokens`
 * max-tokens) and its usage. An interrupt or `dispose()` sends
 * `session/cancel`, then ends the process. A process that cannot start,
 * exits, stays silent past a deadline or writes what is not JSON-RPC ends the
 * run in `error`, its diagnostic naming which.
 */
export declare function acpProvider(options: AcpProviderOptions): SubagentProvider;

export declare namespace acpProvider {
  /**
   * Claude Code through `@agentclientprotocol/claude-agent-acp` (an optional
   * peer: `NO_PROVIDER` naming it when it is not installed). Name
   * `claude-code`; `IS_SANDBOX` is unset for it unless `env` sets it.
   */
  function claudeCode(options?: AcpPresetOptions): SubagentProvider;
  /**
   * Codex through `@zed-industries/codex-acp` and its native package for
   * this platform (optional peers), run directly. Name `codex`.
   */
  function codex(options?: AcpPresetOptions): SubagentProvider;
}
