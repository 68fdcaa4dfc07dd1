// subagent-tree/acp: a tree as an Agent Client Protocol agent (`@agentclientprotocol/sdk` ^2.4, optional peer).
/**
 * A tree as an ACP agent app of `@agentclientprotocol/sdk` (its `unstable`
 * entry, which carries the subagent session types): connect it with
 * `.connect(ndJsonStream(output, input))`.
 *
 * @module subagent-tree/acp
 */
import type { AgentApp } from '@agentclientprotocol/sdk/unstable';
import type { SessionStore, SubagentRuntime } from '../index.js';

/** The `_meta` key under which updates carry this agent's fields (`fullName`, `provider`, `stopReason`). */
export declare const META_KEY: 'subagent-tree';

export interface AcpAgentOptions {
  /** The runtime whose trees the client drives: each `session/new` opens a root in it. */
  runtime: SubagentRuntime;
  /** Where logs are read for `session/load` (advertised always): by default through the runtime (`runtime.readLog`); a store given is read instead. */
  store?: SessionStore;
  /** `agentInfo.name` (default `subagent-tree`). */
  name?: string;
  /** `agentInfo.version` (default the package's). */
  version?: string;
  /** The model's context window in tokens, the `size` of `usage_update`s (default 128,000). */
  contextWindow?: number;
}

/**
 * Serves `runtime`'s trees over ACP: `session/new` opens a root (the ACP
 * session id is its Session id), `session/prompt` asks lead and streams its
 * turn, `session/cancel` interrupts the session's member (a child's under user
 * authority), `session/load` announces a stored tree creators first and
 * replays its history. A client that advertises `clientCapabilities.subagents`
 * gets each child as a `subagent_update` on its creator's session before any
 * traffic under its id; one that does not gets each child as a `tool_call` on
 * the root's session and nothing under a child's id. One app serves one
 * connection.
 */
export declare function acpAgent(options: AcpAgentOptions): AgentApp;
