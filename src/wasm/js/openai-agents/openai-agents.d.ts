// subagent-tree/openai-agents: the tree in the OpenAI Agents SDK (peer `@openai/agents` ^0.20).
/**
 * A member's tools as OpenAI Agents function tools, and an `AgentHost` that
 * runs each turn with the SDK's `run()`. `@openai/agents` is an optional
 * peer dependency: only this entry imports it.
 *
 * @module subagent-tree/openai-agents
 */
import type { Agent as OpenAIAgent, FunctionTool } from '@openai/agents';
import type { AbortSignalLike, AgentHost, SessionStore, Tool, ToolChoice } from '../index.js';

export interface OpenAIAgentsToolsOptions {
  /** Joins every call's signal (a host passes the turn's signal). */
  signal?: AbortSignalLike;
}

/**
 * A member's tools (`turn.tools`, `runtime.toolsFor(agent, choice)`) as the
 * SDK's function tools (`tool()` with the runtime's own JSON Schemas,
 * `strict: false`), of the same names, for an `Agent`'s `tools`. Each call
 * passes the run's signal on (an aborted call starts nothing); the model
 * reads the tool's own text, a refusal included.
 */
export declare function openAIAgentsTools(tools: readonly Tool[], options?: OpenAIAgentsToolsOptions): FunctionTool<any, any, string>[];

export interface OpenAIAgentsHostOptions {
  /** The agent every member's turn runs as (its instructions, model, settings and own tools). */
  agent: OpenAIAgent<any, any>;
  /** The runtime's store: a member's earlier turns are rebuilt from its log. Without it, the log is read through the turn (`turn.readLog`). */
  store?: SessionStore;
  /** Earlier turns kept in the input (default 20). */
  historyTurns?: number;
  /** The SDK's `maxTurns` for each run (default 16). */
  maxTurns?: number;
  /** The tree tools each member gets (`{ only?, except? }` of tool names, as `runtime.toolsFor`). */
  treeTools?: ToolChoice;
}

/**
 * An `AgentHost` running each member's turn with `run(agent, input, { signal })`:
 * the member's identity context joins the agent's instructions, its tree tools
 * join the agent's own, the turn's signal aborts the run (`aborted`), and the
 * run's usage is reported in the runtime's shape.
 */
export declare function openAIAgentsHost(options: OpenAIAgentsHostOptions): AgentHost;
