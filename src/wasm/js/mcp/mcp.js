// subagent-tree/mcp: one member's tree as a Model Context Protocol server
// (`@modelcontextprotocol/sdk`, an optional peer dependency: only this entry
// imports it), so any MCP client (an editor, a desktop app, another agent)
// can drive a named tree.
//
// - Tools: the member's tree tools (`runtime.toolsFor(agent)`) with their own
//   names, JSON Schemas and descriptions, served through the SDK's low-level
//   `Server` handlers (`McpServer.registerTool` wants zod schemas; these are
//   JSON Schema already). A call passes the request's signal on; what the
//   client reads is the tool's own text, a refusal with `isError: true`.
// - Resource `subagent-tree://tree`: the member's tree as JSON (names, states,
//   last turns, usage, budgets, from `runtime.listTree`). A client that
//   subscribes hears `notifications/resources/updated` when the tree changes
//   (a member joins, starts, ends or ends a turn), at most once per tick.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { SubagentError } from '__SNIPPET__';

/** The URI of the tree resource. */
export const TREE_URI = 'subagent-tree://tree';
/** The runtime events after which the tree reads differently. */
const TREE_EVENTS = ['subagent/catalog', 'subagent/start', 'subagent/end', 'subagent/turn'];

function configError(message) {
  return new SubagentError('INVALID_ARGUMENT', message);
}

/** A full name below `agent` (the root's rows are already full names). */
function fullName(agent, row) {
  if (typeof row.path !== 'string') return row.id;
  return agent.name === 'lead' ? row.path : `${agent.name}/${row.path}`;
}

/** What the tree resource says of one member (fields it lacks stay out). */
function member(fields, live) {
  for (const key of ['activity', 'state', 'lastTurn', 'usage', 'budget']) if (live[key] !== undefined) fields[key] = live[key];
  return fields;
}

/** The member's tree as the resource shows it. */
async function treeDocument(runtime, agent) {
  const tree = await runtime.listTree(agent.sessionId);
  return {
    root: member({ name: agent.name, sessionId: agent.sessionId }, tree.root),
    members: tree.rows.map((row) =>
      row.kind === 'diagnostic'
        ? { sessionId: row.id, parentId: row.parentId, depth: row.depth, diagnostic: row.reason, ...(row.detail ? { detail: row.detail } : {}) }
        : member(
            {
              name: fullName(agent, row),
              sessionId: row.id,
              parentId: row.parentId,
              depth: row.depth,
              mode: row.mode,
              ...(row.label !== undefined ? { label: row.label } : {}),
            },
            row,
          ),
    ),
  };
}

/**
 * An `McpServer` serving `agent`'s tree tools and its tree resource; connect
 * it to a transport (`await server.connect(transport)`).
 */
export function mcpServer(options) {
  const { runtime, agent, name = 'subagent-tree', version = '__VERSION__' } = options ?? {};
  if (!runtime || typeof runtime.toolsFor !== 'function' || typeof runtime.listTree !== 'function' || typeof runtime.on !== 'function') {
    throw configError('mcpServer needs { runtime }: a SubagentRuntime');
  }
  if (!agent || typeof agent.sessionId !== 'string') throw configError('mcpServer needs { agent }: a live Agent handle of that runtime');
  if (typeof name !== 'string' || typeof version !== 'string') throw configError('mcpServer: name and version are strings');
  // Checks the handle (a dead or foreign one throws its coded error here, not at the first call).
  const tools = runtime.toolsFor(agent);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new McpServer({ name, version });
  const low = server.server;
  low.registerCapabilities({ tools: {}, resources: { subscribe: true } });

  low.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  low.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found: this server has ${[...byName.keys()].join(', ')}`);
    let result;
    try {
      result = await tool.call(request.params.arguments ?? {}, { signal: extra.signal });
    } catch (error) {
      // A call the runtime could not take at all (a closed tree, an aborted request) still answers.
      return { content: [{ type: 'text', text: `${tool.name} failed: ${error?.message ?? error}` }], isError: true };
    }
    const answer = { content: [{ type: 'text', text: String(result?.content ?? '') }], isError: result?.isError === true };
    const structured = result?.structured;
    if (structured && typeof structured === 'object' && !Array.isArray(structured)) answer.structuredContent = structured;
    return answer;
  });

  server.registerResource(
    'tree',
    TREE_URI,
    {
      title: `The agent tree of ${agent.name}`,
      description: 'Every member below this agent with its full name, state, last turn, usage and budget (JSON).',
      mimeType: 'application/json',
    },
    async () => ({ contents: [{ uri: TREE_URI, mimeType: 'application/json', text: JSON.stringify(await treeDocument(runtime, agent)) }] }),
  );

  // Subscriptions: one set of runtime listeners while a client is subscribed.
  let listening = [];
  let pending = null;
  const changed = () => {
    pending ??= setTimeout(() => {
      pending = null;
      if (listening.length) low.sendResourceUpdated({ uri: TREE_URI }).catch(() => {});
    }, 0);
  };
  const stop = () => {
    for (const off of listening.splice(0)) off();
    if (pending !== null) clearTimeout(pending);
    pending = null;
  };
  low.setRequestHandler(SubscribeRequestSchema, (request) => {
    if (request.params.uri !== TREE_URI) throw new McpError(ErrorCode.InvalidParams, `No resource ${request.params.uri}: this server has ${TREE_URI}`);
    if (!listening.length) listening = TREE_EVENTS.map((type) => runtime.on(type, changed, { root: agent.rootId }));
    return {};
  });
  low.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    if (request.params.uri !== TREE_URI) throw new McpError(ErrorCode.InvalidParams, `No resource ${request.params.uri}: this server has ${TREE_URI}`);
    stop();
    return {};
  });
  const closed = low.onclose;
  low.onclose = () => {
    stop();
    closed?.();
  };
  return server;
}
