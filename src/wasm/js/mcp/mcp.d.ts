// subagent-tree/mcp: a member's tree as an MCP server (peer `@modelcontextprotocol/sdk` ^1.32).
/**
 * One member's tree tools and its tree as a Model Context Protocol server.
 * `@modelcontextprotocol/sdk` is an optional peer dependency: only this entry
 * imports it.
 *
 * @module subagent-tree/mcp
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Agent, SubagentRuntime } from '../index.js';

/** The URI of the tree resource: `subagent-tree://tree`. */
export declare const TREE_URI: 'subagent-tree://tree';

export interface McpServerOptions {
  /** The runtime whose tree the server drives. */
  runtime: SubagentRuntime;
  /** The member whose tools the server exposes (its tree resource lists the members below it). */
  agent: Agent;
  /** The server's name in `initialize` (default `subagent-tree`). */
  name?: string;
  /** The server's version in `initialize` (default the package's). */
  version?: string;
}

/**
 * An `McpServer` exposing `agent`'s tree tools as MCP tools (the same names,
 * JSON Schemas, descriptions and texts; a refusal has `isError: true`) and
 * its tree as the resource `subagent-tree://tree` (JSON: `root` and
 * `members`, each with its full name, Session id, state, last turn, usage and
 * budget), whose subscribers hear `notifications/resources/updated` when the
 * tree changes. Connect it: `await server.connect(transport)`. A runtime or
 * handle that is missing, dead or foreign is refused with its coded error.
 */
export declare function mcpServer(options: McpServerOptions): McpServer;
