// subagent-tree/acp: a tree as an Agent Client Protocol agent
// (`@agentclientprotocol/sdk`, an optional peer dependency: only this entry
// imports it, from its `unstable` entry, which carries the subagent types),
// so any editor that speaks ACP shows the named tree.
//
// - `session/new` opens a root (the ACP session id is its Session id);
//   `session/prompt` asks lead and streams its turn as `agent_message_chunk`s.
// - For a client that advertises `clientCapabilities.subagents`, every child
//   is announced with a `subagent_update` on its creator's session before any
//   traffic under its id (title its name, description its label, `_meta` its
//   full name and provider), then patched as its state changes; its deltas,
//   tool calls and usage go out under its own id, and messages between members
//   as `session_message`s. `session/cancel` on a child's id interrupts it.
// - A client without the capability gets no subagent updates and nothing
//   under a child's id (the protocol says MUST NOT): each child is a
//   `tool_call` on the root's session, its full name in `_meta`.
// - `session/load` (its logs read through the runtime, or the `store` given): after a restart, the tree is announced
//   creators first, siblings in creation order, then each session's history
//   is replayed. Only a root loads: a child's session (of this tree or any
//   other) is refused with `invalidParams` (`data.code` `UNAUTHORIZED`) and
//   never becomes promptable; children are reached through their root.
import { agent as agentApp, methods, PROTOCOL_VERSION, RequestError } from '@agentclientprotocol/sdk/unstable';
import { SubagentError } from '__SNIPPET__';

/** The `_meta` key this agent's own fields go under. */
export const META_KEY = 'subagent-tree';

/** The runtime's stop reasons as ACP's (a spent budget is the nearest: `max_tokens`). */
const STOP = { completed: 'end_turn', aborted: 'cancelled', 'max-tokens': 'max_tokens', refusal: 'refusal', 'budget-exhausted': 'max_tokens' };
const stopReasonOf = (reason) => STOP[reason] ?? 'end_turn';

function configError(message) {
  return new SubagentError('INVALID_ARGUMENT', message);
}

/** The runtime's codes for a request the client got wrong (a child's session loaded as a root, say). */
const CLIENT_MISTAKES = new Set(['INVALID_ARGUMENT', 'INVALID_NAME', 'LIMIT_EXCEEDED', 'UNAUTHORIZED', 'UNKNOWN_AGENT']);

/** A runtime error as a JSON-RPC error the client can read (its code kept in `data`). */
function requestError(error) {
  if (error instanceof RequestError) return error;
  const data = { code: error?.code, message: String(error?.message ?? error) };
  return CLIENT_MISTAKES.has(error?.code)
    ? RequestError.invalidParams(data, data.message)
    : RequestError.internalError(data, data.message);
}

/** ACP content blocks as the runtime's (text and images pass as they are; a resource becomes text). */
function contentOf(blocks) {
  if (!Array.isArray(blocks) || blocks.length === 0) throw RequestError.invalidParams(undefined, 'prompt must be a non-empty array of content blocks');
  return blocks.map((b) => {
    switch (b?.type) {
      case 'text':
        return { type: 'text', text: b.text };
      case 'image':
        return { type: 'image', data: b.data, mimeType: b.mimeType };
      case 'resource_link':
        return { type: 'text', text: `[${b.title ?? b.name}](${b.uri})` };
      case 'resource':
        if (typeof b.resource?.text === 'string') return { type: 'text', text: `${b.resource.uri}:\n${b.resource.text}` };
        throw RequestError.invalidParams(undefined, `resource ${b.resource?.uri} has no text (blob resources are not supported)`);
      default:
        throw RequestError.invalidParams(undefined, `content blocks of type ${JSON.stringify(b?.type)} are not supported`);
    }
  });
}

/** The runtime's content as ACP content blocks (anything but text and images as its JSON text). */
function acpContent(content) {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  return blocks.map((b) =>
    b?.type === 'text' ? { type: 'text', text: b.text } : b?.type === 'image' ? { type: 'image', data: b.data, mimeType: b.mimeType } : { type: 'text', text: JSON.stringify(b) },
  );
}

/** What a turn spent, as ACP's `Usage`. */
function acpUsage(u) {
  if (!u) return undefined;
  const usage = { inputTokens: u.inputTokens, outputTokens: u.outputTokens, totalTokens: u.inputTokens + u.outputTokens };
  if (u.cacheReadTokens !== undefined) usage.cachedReadTokens = u.cacheReadTokens;
  if (u.cacheWriteTokens !== undefined) usage.cachedWriteTokens = u.cacheWriteTokens;
  if (u.reasoningTokens !== undefined) usage.thoughtTokens = u.reasoningTokens;
  return usage;
}

/** A child's idle state after a turn or its run ended `reason`. */
function idleState(reason, usage, diagnostic) {
  const state = { state: 'idle', stopReason: reason === 'error' ? 'error' : stopReasonOf(reason) };
  if (reason === 'error') state.error = { code: -32603, message: diagnostic || 'the turn failed' };
  if (usage) state.usage = acpUsage(usage);
  if (reason !== undefined) state._meta = { [META_KEY]: { stopReason: reason } };
  return state;
}

/** The last segment of a full name (`reviewer/checker` -> `checker`). */
const ownName = (fullName) => fullName.slice(fullName.lastIndexOf('/') + 1);

/**
 * An ACP agent app serving `runtime`'s trees: `acpAgent({ runtime, store? })`,
 * then `.connect(stream)` (e.g. `ndJsonStream` over stdio). One app serves
 * one client connection.
 */
export function acpAgent(options) {
  const { runtime, store: given, name = 'subagent-tree', version = '__VERSION__', contextWindow = 128_000 } = options ?? {};
  if (!runtime || typeof runtime.on !== 'function' || typeof runtime.ask !== 'function') throw configError('acpAgent needs { runtime }: a SubagentRuntime');
  if (given !== undefined && (given === null || typeof given.read !== 'function')) throw configError('store must be the runtime\'s SessionStore (with read), or omitted');
  // Logs are read through the runtime unless a store was given: session/load needs nothing more.
  const store = given ?? { read: (sessionId, readOptions) => runtime.readLog(sessionId, readOptions) };
  if (!Number.isSafeInteger(contextWindow) || contextWindow <= 0) throw configError('contextWindow must be a positive integer (tokens)');

  let subagents = false;
  let client = null;
  /** Notifications leave in the order the runtime's events came. */
  let outbox = Promise.resolve();
  const send = (sessionId, update) => {
    const to = client;
    if (!to) return outbox;
    outbox = outbox.then(() => to.notify(methods.client.session.update, { sessionId, update })).catch(() => {});
    return outbox;
  };
  /** Root Session id -> the tree this connection follows. */
  const trees = new Map();
  /** Session id (root or child) -> its tree. */
  const treeOf = new Map();

  /** A tree followed on this connection: who is who, and what the client has been told. */
  const follow = (lead) => {
    const rootId = lead.sessionId;
    const tree = { lead, rootId, ids: new Map([['lead', rootId]]), parentOf: new Map(), announced: new Set(), running: new Set(), streamed: new Set(), offs: [] };
    trees.set(rootId, tree);
    treeOf.set(rootId, tree);
    // Traffic under a child's id only for a client that knows subagents, once it was announced.
    const visible = (id) => id === rootId || (subagents && tree.announced.has(id));
    const on = (type, fn) => tree.offs.push(runtime.on(type, fn, { root: rootId }));

    on('subagent/start', (e) => {
      tree.ids.set(e.name, e.id);
      tree.parentOf.set(e.id, e.parentSessionId);
      treeOf.set(e.id, tree);
      tree.running.add(e.id);
      if (tree.announced.has(e.id)) {
        send(subagents ? e.parentSessionId : rootId, subagents ? { sessionUpdate: 'subagent_update', sessionId: e.id, state: { state: 'running' } } : { sessionUpdate: 'tool_call_update', toolCallId: childCall(e.id), status: 'in_progress' });
        return;
      }
      tree.announced.add(e.id);
      send(subagents ? e.parentSessionId : rootId, announcement(e.id, e.name, e.label, e.provider, { state: 'running' }));
    });
    on('subagent/end', (e) => {
      if (!tree.announced.has(e.id)) return;
      tree.running.delete(e.id);
      // Settled: its run left residency (a message resumes it).
      const settled = idleState(e.stopReason, undefined, e.error);
      settled._meta[META_KEY].settled = true;
      send(
        subagents ? e.parentSessionId : rootId,
        subagents
          ? { sessionUpdate: 'subagent_update', sessionId: e.id, state: settled }
          : { sessionUpdate: 'tool_call_update', toolCallId: childCall(e.id), status: e.stopReason === 'completed' ? 'completed' : 'failed', rawOutput: { stopReason: e.stopReason } },
      );
    });
    on('subagent/turn', (e) => {
      const child = e.sessionId !== rootId;
      if (e.phase === 'start') {
        tree.streamed.delete(e.sessionId);
        // A patch only when it changes what the client was told (a start already said running).
        if (child && subagents && tree.announced.has(e.sessionId) && !tree.running.has(e.sessionId)) {
          tree.running.add(e.sessionId);
          send(tree.parentOf.get(e.sessionId), { sessionUpdate: 'subagent_update', sessionId: e.sessionId, state: { state: 'running' } });
        }
        return;
      }
      tree.running.delete(e.sessionId);
      if (!visible(e.sessionId)) return;
      // A host that streamed nothing: the turn's output as one chunk.
      if (!tree.streamed.has(e.sessionId) && e.output) send(e.sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: e.output } });
      if (e.usage) send(e.sessionId, { sessionUpdate: 'usage_update', used: e.usage.inputTokens + e.usage.outputTokens, size: contextWindow, ...(e.usage.cost !== undefined ? { cost: { amount: e.usage.cost, currency: 'USD' } } : {}) });
      if (child) send(tree.parentOf.get(e.sessionId), { sessionUpdate: 'subagent_update', sessionId: e.sessionId, state: idleState(e.stopReason, e.usage) });
    });
    on('subagent/delta', (e) => {
      if (!visible(e.sessionId)) return;
      tree.streamed.add(e.sessionId);
      send(e.sessionId, { sessionUpdate: e.part.type === 'reasoning-delta' ? 'agent_thought_chunk' : 'agent_message_chunk', content: { type: 'text', text: e.part.text }, messageId: `turn-${e.turnId}` });
    });
    on('subagent/tool', (e) => {
      if (!visible(e.sessionId)) return;
      send(
        e.sessionId,
        e.phase === 'start'
          ? { sessionUpdate: 'tool_call', toolCallId: `call-${e.callId}`, title: e.tool, kind: 'other', status: 'in_progress', rawInput: e.input ?? {} }
          : { sessionUpdate: 'tool_call_update', toolCallId: `call-${e.callId}`, status: e.isError ? 'failed' : 'completed', content: [{ type: 'content', content: { type: 'text', text: e.output ?? '' } }] },
      );
    });
    on('subagent/message', (e) => {
      if (e.sessionId === rootId && e.kind === 'user') return; // the client's own prompt
      if (!subagents || !visible(e.sessionId)) return;
      const content = acpContent(e.content);
      if (e.kind === 'user') send(e.sessionId, { sessionUpdate: 'user_message_chunk', content: content[0] ?? { type: 'text', text: '' }, messageId: e.messageId });
      else send(e.sessionId, { sessionUpdate: 'session_message', messageId: e.messageId, senderSessionId: tree.ids.get(e.from) ?? null, recipientSessionId: e.sessionId, content });
    });
    return tree;
  };

  const childCall = (id) => `subagent-${id}`;
  /** A child's first update on its creator's session (or, without the capability, its tool call on the root's). */
  const announcement = (id, fullName, label, provider, state) => {
    const meta = { [META_KEY]: { fullName, ...(provider ? { provider } : {}) } };
    return subagents
      ? { sessionUpdate: 'subagent_update', sessionId: id, title: ownName(fullName), description: label ?? null, capabilities: { cancel: {} }, state, _meta: meta }
      : {
          sessionUpdate: 'tool_call',
          toolCallId: childCall(id),
          title: `${fullName}: ${label ?? ''}`.trim(),
          kind: 'other',
          status: state.state === 'running' ? 'in_progress' : state.state === 'idle' ? 'completed' : 'pending',
          rawInput: { name: fullName, description: label ?? '' },
          _meta: meta,
        };
  };

  /** After a restart: the tree announced creators first, then each session's history. */
  const replay = async (tree) => {
    const listing = await runtime.listTree(tree.rootId);
    const rows = listing.rows.filter((r) => r.kind === 'child');
    for (const row of rows) {
      const fullName = row.path ?? row.id;
      tree.ids.set(fullName, row.id);
      tree.parentOf.set(row.id, row.parentId);
      treeOf.set(row.id, tree);
      const provider = (await store.read(row.id, { types: ['session/start'] }))?.at(-1)?.payload?.provider;
      const state = row.activity === 'running' ? { state: 'running' } : row.lastTurn ? idleState(row.lastTurn.stopReason) : { state: 'idle' };
      tree.announced.add(row.id);
      send(subagents ? row.parentId : tree.rootId, announcement(row.id, fullName, row.label, provider, state));
    }
    for (const id of [tree.rootId, ...(subagents ? rows.map((r) => r.id) : [])]) {
      const events = (await store.read(id, { types: ['message/input', 'turn/end'] })) ?? [];
      for (const e of events) {
        const p = e.payload ?? {};
        if (e.type === 'turn/end') {
          for (const content of acpContent(p.output)) send(id, { sessionUpdate: 'agent_message_chunk', content, messageId: `turn-${e.seq}` });
          continue;
        }
        const source = p.source ?? {};
        const content = acpContent(p.content);
        if (source.kind === 'user') for (const c of content) send(id, { sessionUpdate: 'user_message_chunk', content: c, messageId: p.messageId });
        else if (subagents) send(id, { sessionUpdate: 'session_message', messageId: p.messageId, senderSessionId: source.senderSessionId ?? null, recipientSessionId: id, content });
      }
    }
  };

  return agentApp({ name })
    .onConnect((connection) => {
      client = connection.client;
      connection.closed.then(() => {
        for (const tree of trees.values()) for (const off of tree.offs.splice(0)) off();
      });
    })
    .onRequest(methods.agent.initialize, ({ params }) => {
      subagents = params.clientCapabilities?.subagents != null;
      return {
        protocolVersion: Math.min(params.protocolVersion, PROTOCOL_VERSION),
        agentCapabilities: { loadSession: true, promptCapabilities: { image: true, embeddedContext: true } },
        agentInfo: { name, version },
        authMethods: [],
      };
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      try {
        const lead = await runtime.openRoot({ cwd: params.cwd });
        follow(lead);
        return { sessionId: lead.sessionId };
      } catch (e) {
        throw requestError(e);
      }
    })
    .onRequest(methods.agent.session.load, async ({ params }) => {
      const open = trees.get(params.sessionId);
      if (open) {
        await replay(open);
        await outbox;
        return {};
      }
      if (((await store.read(params.sessionId, {})) ?? null) === null) throw RequestError.sessionNotFound(params.sessionId);
      try {
        const lead = await runtime.openRoot({ sessionId: params.sessionId, cwd: params.cwd });
        const tree = follow(lead);
        await replay(tree);
        await outbox;
        return {};
      } catch (e) {
        throw requestError(e);
      }
    })
    .onRequest(methods.agent.session.prompt, async ({ params }) => {
      const tree = trees.get(params.sessionId);
      if (!tree) {
        if (treeOf.has(params.sessionId)) throw RequestError.invalidParams({ sessionId: params.sessionId }, 'a subagent session takes messages from its creator, not prompts');
        throw RequestError.sessionNotFound(params.sessionId);
      }
      const content = contentOf(params.prompt);
      let result;
      try {
        const { answer } = await runtime.ask(tree.lead, 'lead', content);
        result = await answer;
      } catch (e) {
        throw requestError(e);
      }
      await outbox; // every update of the turn before its response
      if (result.stopReason === 'error') throw RequestError.internalError({ stopReason: 'error', diagnostic: result.diagnostic }, result.diagnostic || 'the turn failed');
      const response = { stopReason: stopReasonOf(result.stopReason), _meta: { [META_KEY]: { stopReason: result.stopReason } } };
      if (result.usage) response.usage = acpUsage(result.usage);
      return response;
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      const tree = treeOf.get(params.sessionId);
      if (!tree) return;
      // Under user authority within the tree: a child with its descendants as the runtime's rules say.
      try {
        runtime.interrupt(params.sessionId, { kind: 'user', root: tree.lead });
      } catch {
        // A notification has no answer: a member that is gone has nothing to stop.
      }
    });
}
