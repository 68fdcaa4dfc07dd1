// subagent-tree: the live runtime's types (full entry only). The generated
// `subagent_tree.d.ts` imports and re-exports them (scripts/public-types.mjs);
// the build copies this file to `types/runtime.d.ts`.
import type { Agent } from '../index.js';
import type { AbortSignalLike, JsonValue, SessionEvent, CatalogMode, CatalogEntry, Row, SessionStore, LastTurn, SubagentErrorCode } from './core.js';

/** Text content: what hosts return, what tools and notices read. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** Image content: base64 `data` of `mimeType` (the host's model must accept image input). */
export interface ImageBlock {
  type: 'image';
  data: string;
  mimeType: string;
}

/**
 * A content block, narrowed on `type`. (The runtime stores and passes on any
 * object with a string `type` unchanged and reads only `text` blocks; these
 * are the blocks the seeds name.)
 */
export type ContentBlock = TextBlock | ImageBlock;

/** Why a run ended; open to more reasons. */
export type SubagentStopReason =
  | 'completed'
  | 'aborted'
  | 'error'
  | 'max-tokens'
  | 'refusal'
  | 'budget-exhausted'
  | (string & {});

/**
 * Limits on what a member's whole subtree (itself and every descendant) may
 * spend together: input plus output tokens, turns, members started below it,
 * and cost (in the unit hosts report `usage.cost` in). Each present field a
 * positive integer up to 2^53 - 1, at least one present; anything else is
 * `INVALID_ARGUMENT` and nothing is written. Every budget on a member's chain
 * of creators applies to it.
 */
export interface Budget {
  tokens?: number;
  turns?: number;
  spawns?: number;
  cost?: number;
}

/** A member's own budget: what was set (its effective, clamped value) and what is left. */
export interface BudgetState {
  set: Budget;
  remaining: Budget;
}

/**
 * What one turn may spend, the smallest over the budgets on its chain:
 * `tokens` and `cost` are reserved for this turn (half of what running
 * turns left unreserved), `turns` is how many turns are left, this one
 * included. A host keeps within it (`OpenAIHost` caps its output tokens).
 */
export interface TurnBudget {
  tokens?: number;
  cost?: number;
  turns?: number;
}

/**
 * What a turn or an external run spent (names as the AI SDK's). Non-negative
 * integers up to 2^53 - 1; `cost` is in the host's own unit (micro-dollars,
 * say) and summed as given. Anything else is refused (`INVALID_ARGUMENT`
 * naming the field) and nothing is recorded from it.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  cost?: number;
}

/** Usage summed over turns, with how many turns. */
export type UsageTotals = Usage & { turns: number };

/**
 * A member's own totals and its whole subtree's (itself and every
 * descendant). `complete` is false when a lost turn (the host stopped during
 * it) or a member whose log cannot be read is in the sums.
 */
export interface UsageRollup {
  own: UsageTotals;
  subtree: UsageTotals;
  complete: boolean;
}

/** The terminal outcome of a run (or, for `ask`, of the turn that answered). */
export interface SubagentResult {
  output: ContentBlock[];
  stopReason: SubagentStopReason;
  structured?: JsonValue;
  /** Non-assistant failure detail, at most 4096 UTF-8 bytes. */
  diagnostic?: string;
  /** What the turn (for an activation: its last turn) or the external run reported spending. */
  usage?: Usage;
  /** An activation's result: its member's own and subtree totals, read from the logs once it settled. */
  totals?: UsageRollup;
}

/**
 * A started child. `dispose()` returns the same promise on every call. The
 * child's identity is `childId`, its Session id (a model sees it as
 * `subagentId`; listings call it `id`).
 */
export interface SubagentActivation {
  readonly childId: string;
  /** Full name: `reviewer/checker`, or the Session id below an unnamed creator. */
  readonly name: string;
  /** The accepted initial message (local children). */
  readonly messageId?: string;
  readonly result: Promise<SubagentResult>;
  /** The child's live handle (local children). */
  readonly agent?: Agent;
  /** The child's effective budget (its request clamped to its creators' remaining), when it has one. */
  readonly budget?: Budget;
  dispose(): Promise<void>;
}

/** The activation of a local child (the built-in `spawn` and `fork`, or a provider with `prepareContinuable`). */
export interface LocalActivation extends SubagentActivation {
  readonly messageId: string;
  readonly agent: Agent;
}

export interface SubagentCapabilities {
  readonly agentOptions: boolean;
  readonly agentPreset: boolean;
  readonly outputSchema: boolean;
  readonly depthLimit: boolean;
}

/** What `prepareContinuable` receives. */
export interface ContinuableCreateRequest {
  readonly cwd: string;
  readonly sessionId: string;
  readonly parent: Agent;
  readonly signal: AbortSignalLike;
}

/** What `start` receives. */
export interface ResolvedSubagentStartRequest {
  readonly cwd: string;
  readonly agentPreset?: string;
  readonly label: string;
  readonly prompt: ContentBlock[];
  readonly parent: Agent;
  readonly signal: AbortSignalLike;
  readonly agentOptions?: AgentOptions;
  readonly outputSchema?: JsonValue;
  readonly maxDepth?: number;
  /**
   * Streams what the run does to listeners, as its child's: text as
   * `subagent/delta` (the run has no turns: its `turnId` is one number per
   * run), its own tool calls as `subagent/tool` (a `tool-call`, then a
   * `tool-result` with the same `id`). Never stored. `false` when ignored:
   * before the run is the child (`start` has not resolved), after it left, or
   * a result for no open call. A bad part throws a `SubagentError`.
   */
  emit(part: RunPart): boolean;
}

/** What an external run streams through `request.emit`. */
export type RunPart =
  | DeltaPart
  | { type: 'tool-call'; id: string; tool: string; input?: JsonValue }
  | { type: 'tool-result'; id: string; output?: string; isError?: boolean };

/**
 * An external execution handle. `dispose()` cancels remaining work and reaches
 * quiescence, so `result` must have settled once `dispose()` has: the
 * activation's teardown (and a drain of its tree) waits for it.
 */
export interface SubagentRun {
  readonly id: string;
  readonly result: SubagentResult | Promise<SubagentResult>;
  dispose(): unknown;
}

/** A registered transport for running children. */
export interface SubagentProvider {
  readonly name: string;
  readonly capabilities: SubagentCapabilities;
  readonly inheritsParentContext: boolean;
  readonly agentRouteDefaults?: { provider: string; model: string };
  /**
   * `'provider-managed'`: the provider owns depth enforcement for its external
   * runs (seed 003's `resolveMaxDepth`), so the tree's `maxDepth` does not
   * apply to them and its tool says so; only a provider of external runs
   * (`start`, no `prepareContinuable`) may declare it. Absent: the tree's limit.
   */
  readonly depth?: 'provider-managed';
  prepareContinuable?(request: ContinuableCreateRequest): { seed?: SessionEvent[] } | undefined | Promise<{ seed?: SessionEvent[] } | undefined>;
  start?(request: ResolvedSubagentStartRequest): SubagentRun | Promise<SubagentRun>;
}

/** Where a message came from: an agent's words or the runtime's account of a settled child. */
export type MessageSource =
  | { kind: 'user' }
  | { kind: 'agent-message'; form: 'relay'; senderSessionId: string; senderName: string }
  | {
      kind: 'subagent-settled';
      form: 'notice';
      summary: string;
      stopReason: SubagentStopReason;
      senderSessionId: string;
      senderName: string;
      structured?: JsonValue;
      diagnostic?: string;
    };

export interface InboxMessage {
  id: string;
  source: MessageSource;
  content: ContentBlock[];
  delivery: 'queue' | 'steer';
  /** Model-ready text: agents' messages framed as data, naming the sender by full name. */
  text: string;
  /** A prompt's `requestId` and `timeZone`, as its caller gave them. */
  requestId?: string;
  timeZone?: string;
}

/** What a tool call resolves to; refusals are `isError` results, never exceptions. */
export interface ToolResult {
  /** Model-ready text (JSON for structured results). */
  content: string;
  isError: boolean;
  structured?: JsonValue;
}

/** A tool as handed to a model. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonValue;
  call(input: unknown, options?: { signal?: AbortSignalLike }): Promise<ToolResult>;
}

/** One turn of a local member, as the host sees it. */
export interface AgentTurn {
  readonly sessionId: string;
  readonly rootId: string;
  /** Full name: `lead`, `reviewer/checker`, or the Session id. */
  readonly name: string;
  readonly parentName?: string;
  readonly cwd: string;
  /** Whether the member has never run a turn, read from its log: a root reopened after a restart that ran before is not on its first turn (keep its history). */
  readonly first: boolean;
  /** Aborts on interrupt, disposal or drain. */
  readonly signal: AbortSignalLike;
  /** This turn's id, as its `subagent/delta` events name it (a new one per turn). */
  readonly turnId: number;
  /**
   * Streams a part to `subagent/delta` listeners (never stored: the turn's
   * final output is). `false` once this turn has ended: a late part is
   * ignored. A bad part throws a `SubagentError` (`INVALID_ARGUMENT`, or
   * `LIMIT_EXCEEDED` for text over 64 KiB).
   */
  emit(part: DeltaPart): boolean;
  /**
   * Moves the member's effective directory: `path` resolves against the
   * current one (`turn.cwd`) and is confined to the tree's root directory
   * like a start's `cwd`. Written to its log (`session/cwd`) before this
   * resolves with the new absolute directory; later turns, children started
   * after it and a cold resume use it. Only during this turn.
   */
  setCwd(path: string): Promise<string>;
  readonly input: InboxMessage[];
  /** Model-ready input texts, then return guidance on a local child's first turn. */
  readonly inputText: string[];
  /** Identity runtime context: this member's full name and its creator's. */
  readonly context: string;
  readonly guidance?: string;
  readonly outputSchema?: JsonValue;
  /** The runtime's `limits.toolCallsPerReply`: a model host runs no reply that asks for more tool calls. */
  readonly toolCallsPerReply: number;
  /** What this turn may spend, where a budget applies (see `TurnBudget`). */
  readonly budget?: TurnBudget;
  /** The member's agent options, as its log records them (absent when it has none): the model and settings to run it with. */
  readonly agentOptions?: Readonly<AgentOptions>;
  /** The member's preset id, as its log records it (absent when it runs with none). */
  readonly agentPreset?: string;
  readonly agent: Agent;
  /** The member's model-facing tools. */
  readonly tools: Tool[];
  /** The member's tools narrowed to `choice` (as `runtime.toolsFor(turn.agent, choice)`). */
  toolsFor(choice?: ToolChoice): Tool[];
  /** Messages steered in since the last call: call at each step of the model loop. */
  takeSteered(): InboxMessage[];
  /**
   * The member's own log (of `types`, all by default), read by the runtime
   * from its store: what a host rebuilds the member's earlier turns from
   * without being given the store (the shipped hosts do, by default).
   */
  readLog(options?: ReadLogOptions): Promise<SessionEvent[]>;
  /**
   * Waits until a steered message is pending (then `takeSteered()` it), the
   * turn is signalled (`aborted`) or over (`ended`), or the rest of the tree
   * is quiet: every other member idle or itself waiting (`quiet`), so no
   * message can come except from the caller. Of several waiting turns, the
   * one that began waiting first goes on; the next once that one is idle or
   * waiting again. Never resolves on a timer.
   */
  waitForSteered(): Promise<TurnWaitEnd>;
  /** As `waitForSteered`, but steered messages do not end the wait (they stay pending). */
  waitForInterrupt(): Promise<Exclude<TurnWaitEnd, 'steered'>>;
}

/** Why a turn's `waitForSteered` / `waitForInterrupt` ended. */
export type TurnWaitEnd = 'steered' | 'aborted' | 'quiet' | 'ended';

/** What a turn produced. */
export interface AgentTurnOutcome {
  stopReason?: SubagentStopReason;
  /** Assistant messages in order; the output is the last non-empty one. */
  messages?: (string | ContentBlock[])[];
  /** The accumulated assistant text stream (used when no message has content). */
  text?: string;
  structured?: JsonValue;
  diagnostic?: string;
  /** What the turn spent: recorded in its `turn/end`, rolled up by `runtime.usage`. */
  usage?: Usage;
}

/** Runs turns of local members: the model loop belongs to the host. */
/**
 * Which of a member's tools a model gets: `only` these (when given), then
 * none of `except`. Each name must be one of the runtime's tools (a
 * registered provider's delegation tool or a fixed one): a typo is
 * `INVALID_ARGUMENT`, not a tool silently missing. A tool left out is
 * refused like an unknown one.
 */
export interface ToolChoice {
  only?: string[];
  except?: string[];
}

export interface AgentHost {
  runTurn(turn: AgentTurn): AgentTurnOutcome | undefined | Promise<AgentTurnOutcome | undefined>;
  /**
   * What its models take (default `['text', 'image']`; `text` is required).
   * Without `image`, a prompt, message or start whose content has an image is
   * refused `UNSUPPORTED_CAPABILITY` before anything is written.
   */
  readonly inputModalities?: ReadonlyArray<'text' | 'image'>;
  /** Releases host resources when a member leaves residency. */
  release?(sessionId: string): unknown;
}

export interface RuntimeInit {
  store: SessionStore;
  host: AgentHost;
  /** Deepest child depth (the root is 0). Default 1. */
  maxDepth?: number;
  /** Live children per root tree; the root takes no slot. Default 8. */
  capacity?: number;
  defaultCwd?: string;
  /** Register the built-in `spawn` and `fork` providers. Default true. */
  builtinProviders?: boolean;
  /** Clock in ms (deterministic tests). */
  now?: () => number;
  /** Id source (deterministic tests); default random UUIDs. */
  newId?: (kind: 'session' | 'message') => string;
  /**
   * What opening a root does about work a stopped host left behind. A turn that
   * started and never ended is always recorded as ended (`error`, with a
   * diagnostic) when its member is next resident. `'report'` (default): opening
   * a root resumes members with such a turn or unread input; a lost turn's input
   * counts as answered by the failure, and the creator is told. `'rerun'`: as
   * report, but the lost turn's input runs again (the root's too). `'off'`: no
   * scan at open; members recover when next resumed.
   */
  recovery?: 'report' | 'rerun' | 'off';
  /** Overrides of the configurable limits (each within its range, else `INVALID_ARGUMENT`). */
  limits?: RuntimeLimits;
  /**
   * Confine children's `cwd` to the root's directory (`/`, `/etc` or `../..`
   * from a root at `/work` are `UNAUTHORIZED`). Default true; a NUL stays refused.
   */
  confineCwd?: boolean;  /**
   * Named compositions `spawn` may give a child (`startActivation({ agentPreset })`, or
   * `spawn_agent`'s `preset`); a child that names none, and every fork, runs with its
   * creator's. A preset's `agentOptions` sit under the child's own, over its creator's;
   * its `tools` narrow the member's tools.
   */
  presets?: Record<string, AgentPreset>;
}

/** What a preset gives the members that run with it. */
export interface AgentPreset {
  description?: string;
  agentOptions?: AgentOptions;
  /** The member's tools narrowed to `only`, then without `except` (fixed tool names, or a provider's `{name}_agent`). */
  tools?: ToolChoice;
}

/**
 * The configurable limits, in UTF-8 bytes (every string and key, plus one per
 * value) or counts. A value over one is `LIMIT_EXCEEDED`, naming it.
 */
export interface RuntimeLimits {
  /** A label. Default 1 KiB; 64 B - 64 KiB. */
  labelBytes?: number;
  /** A child's prompt. Default 1 MiB; 1 KiB - 16 MiB. */
  promptBytes?: number;
  /** A message. Default 1 MiB; 1 KiB - 16 MiB. */
  messageBytes?: number;
  /** Content blocks per prompt or message. Default 256; 1 - 4096. */
  contentBlocks?: number;
  /** A host's turn outcome, a run result, a seed event. Default 4 MiB; 64 KiB - 32 MiB. */
  eventPayloadBytes?: number;
  /** Tool calls a model host runs from one reply. Default 64; 1 - 1024. */
  toolCallsPerReply?: number;
  /** Input one member holds before its turns take it (settlement notices always land). Default 64 MiB; 1 MiB - 1 GiB. */
  memberQueueBytes?: number;
  /** The same, summed over the runtime's members. Default 256 MiB; 1 MiB - 2 GiB. */
  queueBytes?: number;
}

/**
 * `heapUsage()`: the module's heap, shared by every runtime and store in it.
 * Past `limitBytes` (`setHeapLimit`) every input (a prompt, a message, data
 * copied in from JS: a host's answer or a store's read too) is refused
 * `LIMIT_EXCEEDED` naming `heapBytes`; what the runtime does of its own
 * finishes in the headroom above it.
 */
export interface HeapUsage {
  /** Bytes the module holds now. */
  usedBytes: number;
  /** `heapBytes`. Default 2 GiB; 16 MiB - 3 GiB. */
  limitBytes: number;
  /** The instance's linear memory (it grows to what was once held, never shrinks). */
  memoryBytes: number;
}

export interface OpenRootOptions {
  sessionId?: string;
  cwd?: string;
  /** The whole tree's budget; one that differs from the budget the root's log records is written there. */
  budget?: Budget;
  /** The root's agent options (its local children's merge over them); ones that differ from what its log records are written there. */
  agentOptions?: AgentOptions;
}

/**
 * A member's host-Agent provider, model, reasoning-effort and output-token
 * overrides (strict: an unknown key is `INVALID_ARGUMENT`). A local child's
 * merge over its creator's; they are recorded in the member's log before its
 * first turn, handed to every turn as `turn.agentOptions`, and restored by a
 * cold resume. `OpenAIHost` sends `model` and `reasoning_effort` and caps
 * `max_tokens`; `aiSdkHost` picks the model from its `models`.
 */
export interface AgentOptions {
  provider?: string;
  model?: string;
  reasoningEffort?: string;
  /** A whole number from 1 to 2^53 - 1. */
  maxOutputTokens?: number;
}

export interface ActivationSpec {
  /** A registered provider's name. Default `'spawn'` (the built-in fresh-context local provider). */
  provider?: string;
  label: string;
  prompt: string | ContentBlock[];
  parent: Agent;
  delivery?: 'parent' | 'caller';
  name?: string;
  childId?: string;
  signal?: AbortSignalLike;
  cwd?: string;
  agentPreset?: string;
  /** The child's provider, model, reasoning effort or output-token overrides: a local child's merge over its creator's. */
  agentOptions?: AgentOptions;
  outputSchema?: JsonValue;
  maxDepth?: number;
  /** The child's subtree budget (local children), clamped to what its creators' budgets have left. */
  budget?: Budget;
}

export interface PromptOptions {
  delivery?: 'queue' | 'steer';
  signal?: AbortSignalLike;
  /** The caller's own id for this request (1-256 bytes): kept on the accepted message, shown to the host. */
  requestId?: string;
  /** The caller's IANA time zone (`Europe/Paris`; anything `Intl.DateTimeFormat` refuses is `INVALID_ARGUMENT`): kept and shown likewise. */
  timeZone?: string;
}

/**
 * `{kind:'user'}` addresses a Session id; `{kind:'user', root}` also resolves
 * full names in that root's tree; `{kind:'ancestor', agent}` is an exact live
 * ancestor of the target (names resolve in its tree).
 */
export type InterruptAuthority = { kind: 'user'; root?: Agent } | { kind: 'ancestor'; agent: Agent };

/** What `interrupt` did: whether a running turn (or external run) was signalled to stop. */
export interface InterruptReceipt {
  readonly signalled: boolean;
}

/**
 * A member reopened under its root: a live handle, held resident until `release()`,
 * unless a drain stops it or its log cannot be written (it then ends in error).
 * `reopen` refuses with `DRAINING` while the member's tree drains, and with
 * `ACTIVATION_CLOSING` while a creator of it is being disposed.
 */
export interface HeldMember {
  readonly agent: Agent;
  /** Ends the hold (idempotent); an idle member with nothing owned then settles as usual. */
  release(): void;
}

/** What `ask` resolves with once the message is accepted. */
export interface AskReceipt {
  readonly messageId: string;
  /** The result of the turn that consumes the message (queued or steered in). */
  readonly answer: Promise<SubagentResult>;
}

export interface SubagentMemberNames {
  readonly self: string;
  readonly parent?: string;
}

/** A listing row with live activity (`running` says nothing about task completion). */
/**
 * `state`, on a resident member that is not running: `idle` (waiting for input) or
 * `parked` (an interrupt left unread input waiting for the next message).
 */
export type LiveRow = Row & LiveMember;

/** What a live listing says of one member (a row's, or the root's in `listTree`). */
export interface LiveMember {
  activity: 'running' | 'inactive';
  state?: 'idle' | 'parked';
  usage: UsageRollup;
  /** The member's own budget, where it has one. */
  budget?: BudgetState;
  /** How its last turn ended, from its log (absent before one ended, and for an external run). */
  lastTurn?: LastTurn;
  /** The preset its log records (see `RuntimeInit.presets`), when it runs with one. */
  preset?: string;
}

/** `runtime.listTree`: the root and every member below it, each with its live state. */
export interface LiveTree {
  root: { id: string } & LiveMember;
  rows: LiveRow[];
}

/** `subagent/start`: a child's run began (a first start or a cold resume). */
export interface SubagentStartEvent {
  provider: string;
  /** The child's Session id (its `childId`). */
  id: string;
  parentSessionId: string;
  rootSessionId: string;
  /** The child's full name. */
  name: string;
  label: string;
  mode: CatalogMode;
  /** Its own budget as the event happened (set and remaining), where it has one. */
  budget?: BudgetState;
  /** On a first start made by a delegation tool: that call's `callId` (its `subagent/tool` events). */
  toolCallId?: number;
  /** Its trace context, as its log keeps it (see `setTraceContextSource`). */
  trace?: TraceContext;
}

/** `subagent/end`: a child's run settled and left residency. */
export interface SubagentEndEvent extends SubagentStartEvent {
  stopReason: SubagentStopReason;
  /** Teardown failed: the captured result is kept and `dispose()` rejects. */
  error?: string;
}

/** `subagent/catalog`: a child entry was committed to its parent's log. */
export interface SubagentCatalogEvent {
  rootSessionId: string;
  parentSessionId: string;
  entry: CatalogEntry;
}

/** `subagent/message`: a message was accepted (durable) into a member's inbox. */
export interface SubagentMessageEvent {
  rootSessionId: string;
  sessionId: string;
  /** The recipient's full name. */
  name: string;
  messageId: string;
  kind: 'user' | 'agent-message' | 'subagent-settled';
  /** The sender's full name, for an agent's message or a settlement notice (absent from a user or host). */
  from?: string;
  /** The message's content as accepted (present whenever a listener is registered). */
  content?: ContentBlock[];
}

/** `subagent/turn`: a member's turn started or ended (the root's too). */
export interface SubagentTurnEvent {
  rootSessionId: string;
  sessionId: string;
  name: string;
  phase: 'start' | 'end';
  /** On `end`: how the turn ended. */
  stopReason?: SubagentStopReason;
  /** On `end`: the turn's final output as text (what its `turn/end` records), absent when it produced none. */
  output?: string;
  /** On `end`, `true` when the turn was interrupted and the member's unread input waits for the next message. */
  parked?: boolean;
  /** On `end`: what the turn reported spending. */
  usage?: Usage;
  /** On `start`: the member's trace context, as its log keeps it (see `setTraceContextSource`). */
  trace?: TraceContext;
}

/** A W3C Trace Context: what a tracer parents a member's spans on. */
export interface TraceContext {
  /** A version-00 `traceparent` header: `00-<32 hex>-<16 hex>-<2 hex>`. */
  traceparent: string;
  /** At most 512 bytes of printable ASCII. */
  tracestate?: string;
}

/** The member being created, as a `TraceContextSource` is asked for it. */
export interface TraceContextRequest {
  sessionId: string;
  rootSessionId: string;
  /** Its creator (absent for a root). */
  parentSessionId?: string;
  /** Its full name. */
  name: string;
  /** A child's label and provider (absent for a root). */
  label?: string;
  provider?: string;
  /** The delegation tool call creating it, if one does (its `subagent/tool` events' `callId`). */
  toolCallId?: number;
}

/**
 * Gives a member being created (a child, or a root whose log keeps none yet)
 * its trace context, kept in its log as a `trace/context` event: turns of the
 * member resumed by any later runtime carry it on `subagent/turn`, so their
 * spans join the trace that created it. An answer that is not a valid
 * context (or a throw) keeps none; tracing never stops a start.
 */
export type TraceContextSource = (member: TraceContextRequest) => TraceContext | undefined | void;

/** A streamed part: assistant or reasoning text as it arrives, at most 64 KiB of UTF-8 each. */
export interface DeltaPart {
  type: 'text-delta' | 'reasoning-delta';
  text: string;
}

/** `subagent/delta`: a part a running turn streamed, in order. Never written to the store. */
export interface SubagentDeltaEvent {
  rootSessionId: string;
  sessionId: string;
  /** The member's full name. */
  name: string;
  /** The turn that streamed it (a new id per turn; an external run's: one id per run). */
  turnId: number;
  part: DeltaPart;
}

/**
 * `subagent/tool`: a member's model-facing tool call began (`start`, with its
 * arguments) or ended (`end`, with its result's text). A delegation that
 * started a child names it on `end`, and the child's `subagent/start` carries
 * this `callId` as `toolCallId`.
 */
export interface SubagentToolEvent {
  rootSessionId: string;
  /** The caller's Session id. */
  sessionId: string;
  /** The caller's full name. */
  name: string;
  /** Pairs a call's `start` and `end` (unique within the runtime). */
  callId: number;
  tool: string;
  phase: 'start' | 'end';
  /** On `start`: the arguments as the model gave them. */
  input?: JsonValue;
  /** On `end`: whether the result is a refusal or failure. */
  isError?: boolean;
  /** On `end` of a refusal: its code (`output`, a sentence for the model, may repeat the model's arguments). */
  errorCode?: SubagentErrorCode;
  /** On `end`: the result's model-ready text. */
  output?: string;
  /** On `end` of a delegation that started a child: its Session id and full name. */
  childId?: string;
  childName?: string;
}

/** What each `on(type)` listener receives: `provider-added` the registered provider, `provider-removed` its name. */
export interface RuntimeEventMap {
  'subagent/start': SubagentStartEvent;
  'subagent/end': SubagentEndEvent;
  'subagent/catalog': SubagentCatalogEvent;
  'subagent/message': SubagentMessageEvent;
  'subagent/turn': SubagentTurnEvent;
  'subagent/delta': SubagentDeltaEvent;
  'subagent/tool': SubagentToolEvent;
  'subagent/provider-added': SubagentProvider;
  'subagent/provider-removed': string;
  'subagent/flush-failed': SubagentFlushFailedEvent;
}

/**
 * `subagent/flush-failed`: the store's durability barrier (`flush`, and any
 * `addFlushListener` listener) failed as a member left residency, so its last
 * writes may not be durable. The member left anyway; `error` says why.
 */
export interface SubagentFlushFailedEvent {
  rootSessionId: string;
  sessionId: string;
  /** The member's full name. */
  name: string;
  error: string;
}

export type RuntimeEventType = keyof RuntimeEventMap;

/**
 * `subagent/gap`, only in `runtime.events()`: `missed` events this reader
 * wanted were dropped before it read them (it let more than its
 * `bufferBytes` wait, or fell behind what the runtime's streams keep in all);
 * list the tree again (or read the logs) for what it missed. The events after
 * them follow.
 */
export interface SubagentGapEvent {
  missed: number;
}

/** What `runtime.events()` yields: an event with its type, typed by it (a gap too). */
export type RuntimeEventItem =
  | { [K in RuntimeEventType]: { type: K; event: RuntimeEventMap[K] } }[RuntimeEventType]
  | { type: 'subagent/gap'; event: SubagentGapEvent };

/**
 * `runtime.events()`: of one tree (`root`, its Session id), of some `types`;
 * the signal's abort ends the stream. Every stream of a runtime reads one
 * journal through its own cursor, so N readers hold one copy of an event,
 * and the journal is bounded in total by the largest `bufferBytes` of its
 * open streams. While the consumer lags, a member's deltas coalesce (one
 * delta per member and part kind between its other events, keeping the
 * latest 1 MiB of text); no other event is dropped while it stays within its
 * `bufferBytes`. One that lets more wait misses the oldest: its next item is
 * a `subagent/gap` saying how many (a gap is never silent), then the rest.
 */
export interface EventsOptions {
  root?: string;
  types?: RuntimeEventType[];
  signal?: AbortSignalLike;
  /** What may wait for the reader: each event 256 bytes plus its text and data. Default 16 MiB; 64 KiB - 256 MiB. */
  bufferBytes?: number;
}

/** A log read's options (`turn.readLog`, `runtime.readLog`): only these event types, and a cancellation. */
export interface ReadLogOptions {
  types?: string[];
  signal?: AbortSignalLike;
}

export interface OnOptions {
  /** Only events of this root's tree (its Session id). */
  root?: string;
}

// Methods declared here rather than generated (they need overloads or a type
// parameter): merged into the generated `SubagentRuntime` class.
declare module '../subagent_tree.js' {
  interface SubagentRuntime {
    /**
     * Starts a child (see the README for the check order). With a built-in
     * local provider (`spawn`, `fork`) the activation carries the child's
     * `agent` handle and initial `messageId`.
     */
    startActivation(spec: ActivationSpec & { provider?: 'spawn' | 'fork' }): Promise<LocalActivation>;
    startActivation(spec: ActivationSpec): Promise<SubagentActivation>;
    /** @deprecated Pass `{ signal }`: the bare signal is accepted until the next minor release. */
    listDescendants(rootSessionId: string, signal: AbortSignalLike): Promise<LiveRow[]>;
    /** @deprecated Pass `{ signal }`: the bare signal is accepted until the next minor release. */
    resolveName(caller: Agent, text: string, signal: AbortSignalLike): Promise<string>;
    /** @deprecated Pass `{ signal }`: the bare signal is accepted until the next minor release. */
    reopen(root: Agent, target: string, signal: AbortSignalLike): Promise<HeldMember>;
    /** @deprecated Pass `{ signal }`: the bare signal is accepted until the next minor release. */
    waitForQuiescence(root: Agent, signal: AbortSignalLike): Promise<void>;
    /**
     * Subscribes to one lifecycle event type, optionally of one tree root; the
     * listener's argument is typed by `type`. Returns the unsubscriber.
     */
    on<K extends RuntimeEventType>(type: K, listener: (event: RuntimeEventMap[K]) => void, options?: OnOptions): () => void;
  }
}
