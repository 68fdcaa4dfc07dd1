// subagent-tree/ai-sdk: the tree in the Vercel AI SDK (`ai`, an optional
// peer dependency: only this entry imports it).
//
// - `aiSdkTools(tools, options?)`: a member's tools (`turn.tools`,
//   `runtime.toolsFor(agent, choice)`) as an AI SDK `ToolSet` made with
//   `tool()` and `jsonSchema()`, to spread into `generateText({ tools })` or
//   `streamText`. Each `execute` passes the SDK's `abortSignal` on (and
//   `options.signal`, if given): an aborted call starts nothing. What the
//   model reads is the tool's own text, a refusal included.
// - `aiSdkHost({ model, ... })`: an `AgentHost` running each turn over any
//   AI SDK `LanguageModel` with `streamText`: the member's earlier turns from
//   its log (the `store` given, else read through the turn), its input, its tree tools (narrowed by
//   `treeTools`) plus your `tools`; steered messages join between steps; the
//   turn's signal aborts the call mid-stream (`aborted`); text and reasoning
//   deltas go to `turn.emit`; usage is reported in the runtime's shape.
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { configError, describe, either, inputImages, parseStructured, priorTurns } from '../edge/host-shared.js';

const DEFAULT_MAX_STEPS = 16;
const DEFAULT_HISTORY_TURNS = 20;

/**
 * A member's tools as an AI SDK `ToolSet` (by tool name). `options.signal`
 * joins every call's `abortSignal` (a host passes the turn's).
 */
export function aiSdkTools(tools, options) {
  if (!Array.isArray(tools)) throw configError('aiSdkTools takes the member\'s tools: turn.tools or runtime.toolsFor(agent)');
  const signal = options?.signal;
  const set = {};
  for (const t of tools) {
    if (!t || typeof t.name !== 'string' || typeof t.call !== 'function') {
      throw configError('aiSdkTools takes tools of the runtime ({ name, description, inputSchema, call })');
    }
    set[t.name] = tool({
      description: t.description,
      inputSchema: jsonSchema(t.inputSchema),
      async execute(input, context) {
        const aborted = either(context?.abortSignal, signal);
        if (aborted?.aborted) return `${t.name} was not run: the call was aborted.`;
        const result = await t.call(input, aborted ? { signal: aborted } : undefined);
        return typeof result?.content === 'string' ? result.content : JSON.stringify(result ?? null);
      },
    });
  }
  return set;
}

/** The SDK's usage in the runtime's `Usage` shape (fields it leaves out stay out). */
function usageOf(u) {
  const n = (v) => (Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const usage = { inputTokens: n(u?.inputTokens), outputTokens: n(u?.outputTokens) };
  const cacheRead = u?.inputTokenDetails?.cacheReadTokens;
  if (cacheRead !== undefined) usage.cacheReadTokens = n(cacheRead);
  const cacheWrite = u?.inputTokenDetails?.cacheWriteTokens;
  if (cacheWrite !== undefined) usage.cacheWriteTokens = n(cacheWrite);
  const reasoning = u?.outputTokenDetails?.reasoningTokens;
  if (reasoning !== undefined) usage.reasoningTokens = n(reasoning);
  return usage;
}

const STOPS = { stop: 'completed', 'tool-calls': 'completed', length: 'max-tokens', 'content-filter': 'refusal' };

/**
 * The model a turn runs with: its agent options' `model` from `models` (a
 * name -> LanguageModel map, or a function of the options), else the host's
 * `model`. `{ error }` names the models this host knows when it knows none by
 * that name.
 */
function modelFor(options, fallback, models) {
  if (options.model === undefined) {
    return fallback === undefined || fallback === null ? { error: 'INVALID_ARGUMENT: this host has no default model and the member\'s agentOptions name none' } : { model: fallback };
  }
  let found;
  if (typeof models === 'function') {
    try {
      found = models(options);
    } catch (e) {
      return { error: `INVALID_ARGUMENT: models() failed for agentOptions.model ${JSON.stringify(options.model)} (${describe(e)})` };
    }
  } else if (models && Object.hasOwn(models, options.model)) {
    found = models[options.model];
  }
  if (found !== undefined && found !== null) return { model: found };
  const known = models && typeof models === 'object' ? Object.keys(models) : [];
  const list = known.length > 0 ? `it knows ${known.map((k) => JSON.stringify(k)).join(', ')}` : 'give the host models';
  return { error: `INVALID_ARGUMENT: agentOptions.model ${JSON.stringify(options.model)} is not a model this host knows (${list})` };
}

/**
 * An `AgentHost` over an AI SDK `LanguageModel`: `aiSdkHost({ model,
 * system?, store?, historyTurns?, maxSteps?, tools?, treeTools?,
 * ...callSettings })`, the call settings (`temperature`,
 * `maxOutputTokens`, `providerOptions`, ...) passed to `streamText` as given.
 */
export function aiSdkHost(options) {
  const o = options ?? {};
  const { model, models, system, store, historyTurns, maxSteps, tools: extra, treeTools, ...settings } = o;
  if ((model === undefined || model === null) && models === undefined) throw configError('aiSdkHost needs a model (an AI SDK LanguageModel), or models');
  if (models !== undefined && (models === null || (typeof models !== 'object' && typeof models !== 'function'))) {
    throw configError('models must be an object of model name -> LanguageModel, or a function of the agent options');
  }
  const steps = maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isSafeInteger(steps) || steps < 1) throw configError('maxSteps must be a positive integer');
  const turnsKept = historyTurns ?? DEFAULT_HISTORY_TURNS;
  if (!Number.isSafeInteger(turnsKept) || turnsKept < 0) throw configError('historyTurns must be a non-negative integer');
  if (store !== undefined && typeof store?.read !== 'function') throw configError("store must be the runtime's store");
  if (extra !== undefined && (extra === null || typeof extra !== 'object')) throw configError('tools must be an AI SDK ToolSet');
  if (treeTools !== undefined && (treeTools === null || typeof treeTools !== 'object')) {
    throw configError('treeTools must be an object { only?, except? } of tool names');
  }
  for (const reserved of ['messages', 'prompt', 'abortSignal', 'stopWhen', 'prepareStep']) {
    if (reserved in settings) throw configError(`${reserved} is the host's to set`);
  }
  return {
    async runTurn(turn) {
      const signal = turn.signal ?? new AbortController().signal;
      const instructions = [typeof system === 'string' ? system : '', turn.context];
      if (turn.outputSchema !== undefined && turn.outputSchema !== null) {
        instructions.push(
          `When you finish, reply with only a JSON object (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(turn.outputSchema)}`,
        );
      }
      let messages;
      let tools;
      try {
        // From the store given, else through the turn: a member's earlier turns are never forgotten.
        const history = await priorTurns(store, turn, turnsKept, signal);
        const text = (turn.inputText ?? []).join('\n\n');
        // Images in the input go beside its text, as the SDK's image parts.
        const images = inputImages(turn).map((b) => ({ type: 'image', image: b.data, mediaType: b.mimeType }));
        messages = [...history, { role: 'user', content: images.length === 0 ? text : [{ type: 'text', text }, ...images] }];
        const own = treeTools && turn.toolsFor ? turn.toolsFor(treeTools) : turn.tools ?? [];
        tools = { ...aiSdkTools(Array.from(own), { signal }), ...(extra ?? {}) };
      } catch (e) {
        if (signal.aborted) return { stopReason: 'aborted' };
        return { stopReason: 'error', diagnostic: `the turn could not be prepared (${describe(e)})` };
      }
      // The member's agent options choose its model (from `models`) and cap its output.
      const options = turn.agentOptions ?? {};
      const chosen = modelFor(options, model, models);
      if (chosen.error) return { stopReason: 'error', diagnostic: chosen.error };
      const cap = Number.isSafeInteger(turn.budget?.tokens) ? turn.budget.tokens : undefined;
      const limits = [settings.maxOutputTokens, options.maxOutputTokens, cap].filter((n) => n !== undefined);
      const maxOutputTokens = limits.length === 0 ? undefined : Math.min(...limits);
      const providerOptions =
        options.reasoningEffort === undefined ? settings.providerOptions : { ...settings.providerOptions, openai: { ...settings.providerOptions?.openai, reasoningEffort: options.reasoningEffort } };
      try {
        const result = streamText({
          ...settings,
          ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
          ...(providerOptions === undefined ? {} : { providerOptions }),
          model: chosen.model,
          system: instructions.filter((s) => s).join('\n\n'),
          messages,
          tools,
          abortSignal: signal,
          stopWhen: stepCountIs(steps),
          // Messages steered in while the model worked join before its next step.
          prepareStep: ({ messages: sent }) => {
            const steered = turn.takeSteered?.() ?? [];
            if (steered.length === 0) return undefined;
            return { messages: [...sent, ...steered.map((m) => ({ role: 'user', content: m.text }))] };
          },
        });
        let failure;
        let finish;
        let usage;
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') turn.emit?.({ type: 'text-delta', text: part.text });
          else if (part.type === 'reasoning-delta') turn.emit?.({ type: 'reasoning-delta', text: part.text });
          else if (part.type === 'finish') {
            finish = part.finishReason;
            usage = part.totalUsage;
          } else if (part.type === 'error') failure = part.error;
          else if (part.type === 'abort') return { stopReason: 'aborted' };
        }
        if (signal.aborted) return { stopReason: 'aborted' };
        if (failure !== undefined) return { stopReason: 'error', diagnostic: `the model call failed (${describe(failure)})` };
        const taken = await result.steps;
        const outputs = taken.map((s) => s.text ?? '').filter((t) => t.trim() !== '');
        const last = outputs.at(-1) ?? '';
        const outcome = { stopReason: STOPS[finish] ?? (finish === 'error' ? 'error' : 'completed'), messages: outputs, usage: usageOf(usage) };
        if (turn.outputSchema !== undefined && turn.outputSchema !== null) {
          const structured = parseStructured(last);
          if (structured !== undefined) outcome.structured = structured;
        }
        return outcome;
      } catch (e) {
        if (signal.aborted) return { stopReason: 'aborted' };
        return { stopReason: 'error', diagnostic: `the model call failed (${describe(e)})` };
      }
    },
  };
}
