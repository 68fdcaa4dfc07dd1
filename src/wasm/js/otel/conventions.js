// The OpenTelemetry GenAI semantic conventions this entry emits, pinned in one
// place (open-telemetry/semantic-conventions-genai v0.1.0, Development status:
// a later release that renames an attribute changes this module only).
export const OPERATION = 'gen_ai.operation.name';
export const AGENT_NAME = 'gen_ai.agent.name';
export const AGENT_ID = 'gen_ai.agent.id';
export const AGENT_DESCRIPTION = 'gen_ai.agent.description';
export const CONVERSATION_ID = 'gen_ai.conversation.id';
export const INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const CACHE_READ_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
export const CACHE_CREATION_TOKENS = 'gen_ai.usage.cache_creation.input_tokens';
export const FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const ERROR_TYPE = 'error.type';
export const TOOL_NAME = 'gen_ai.tool.name';
export const TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const TOOL_TYPE = 'gen_ai.tool.type';
/** Content, opt-in (`recordContent: true`): a call's arguments and result. */
export const TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const TOOL_CALL_RESULT = 'gen_ai.tool.call.result';

/** Operation names (`gen_ai.operation.name`), also the first word of each span's name. */
export const CREATE_AGENT = 'create_agent';
export const INVOKE_AGENT = 'invoke_agent';
export const EXECUTE_TOOL = 'execute_tool';

/** This library's own attributes (outside the conventions). */
export const PROVIDER = 'subagent_tree.provider';
export const MODE = 'subagent_tree.mode';
export const MESSAGE_KIND = 'subagent_tree.message.kind';
export const MESSAGE_ID = 'subagent_tree.message.id';
export const MESSAGE_FROM = 'subagent_tree.message.from';
/** Content, opt-in (`recordContent: true`): a message's text. */
export const MESSAGE_CONTENT = 'subagent_tree.message.content';
/** On a delegation's `execute_tool`: the child it started (v0.1.0 has no attribute for it). */
export const CHILD_ID = 'subagent_tree.child.id';
export const CHILD_NAME = 'subagent_tree.child.name';

/** `SpanKind.INTERNAL` and `SpanStatusCode.ERROR` of `@opentelemetry/api` (stable numbers: no import needed). */
export const SPAN_KIND_INTERNAL = 0;
export const STATUS_ERROR = 2;
