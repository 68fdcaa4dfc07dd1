// subagent-tree/ai-sdk: the tree in the Vercel AI SDK (peer `ai` ^7).
/**
 * A member's tools as an AI SDK `ToolSet`, and an `AgentHost` over any AI SDK
 * `LanguageModel`. `ai` is an optional peer dependency: only this entry
 * imports it.
 *
 * @module subagent-tree/ai-sdk
 */
import type { LanguageModel, ToolSet } from 'ai';
import type { AbortSignalLike, AgentHost, AgentOptions, SessionStore, Tool, ToolChoice } from '../index.js';

export interface AiSdkToolsOptions {
  /** Joins every call's `abortSignal` (a host passes the turn's signal). */
  signal?: AbortSignalLike;
}

/**
 * A member's tools (`turn.tools`, `runtime.toolsFor(agent, choice)`) as an AI
 * SDK `ToolSet` by tool name, each made with `tool()` and `jsonSchema()`:
 * spread it into `generateText({ tools })` or `streamText`. `execute` passes
 * the SDK's `abortSignal` on (an aborted call starts nothing) and returns the
 * tool's text, a refusal included.
 */
export declare function aiSdkTools(tools: readonly Tool[], options?: AiSdkToolsOptions): ToolSet;

/** `aiSdkHost`'s options: these, then any `streamText` call settings (`temperature`, `maxOutputTokens`, `providerOptions`, ...). */
export interface AiSdkHostOptions {
  /** Any AI SDK `LanguageModel` (a provider's model, or a model id the AI Gateway resolves): the default, for members whose `agentOptions` name no model. */
  model?: LanguageModel;
  /**
   * The models a member's `agentOptions.model` may name: a name -> `LanguageModel`
   * map, or a function of the options. A turn whose model this host does not
   * know ends in `error`, its diagnostic naming the known ones.
   * `agentOptions.maxOutputTokens` caps `maxOutputTokens`;
   * `agentOptions.reasoningEffort` goes to `providerOptions.openai.reasoningEffort`.
   */
  models?: Record<string, LanguageModel> | ((options: AgentOptions) => LanguageModel | undefined);
  /** Put before the member's identity context in the system instructions. */
  system?: string;
  /** The runtime's store: each turn replays the member's earlier turns from its log. Without it, the log is read through the turn (`turn.readLog`): the history is the same. */
  store?: SessionStore;
  /** Earlier turns replayed (default 20). */
  historyTurns?: number;
  /** Model steps per turn (default 16), as `stopWhen: stepCountIs(maxSteps)`. */
  maxSteps?: number;
  /** Your own tools, beside the member's tree tools. */
  tools?: ToolSet;
  /** Which of the member's tree tools the model gets (`{ only?, except? }`); default all. */
  treeTools?: ToolChoice;
  [setting: string]: unknown;
}

/**
 * An `AgentHost` that runs each turn with `streamText`: the member's history
 * and input, its tree tools plus `tools`, steered messages between steps,
 * `turn.signal` aborting mid-stream (`aborted`), text and reasoning deltas
 * on `turn.emit`, usage in the runtime's shape, a structured result parsed
 * per `turn.outputSchema`, `turn.budget.tokens` capping `maxOutputTokens`.
 */
export declare function aiSdkHost(options: AiSdkHostOptions): AgentHost;
