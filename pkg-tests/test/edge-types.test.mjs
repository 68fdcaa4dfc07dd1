// The .d.ts of the edge and Node modules (durable-object-store, openai-host,
// file-store) and of each adapter entry, checked by a strict TypeScript
// consumer of each (types-*/), the adapters with their libraries' own types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { root } from './edge-helpers.mjs';

const PROJECTS = [
  ['types-edge', 'tsc --strict accepts a consumer of the edge and Node modules'],
  ['types-ai-sdk', "tsc --strict accepts subagent-tree/ai-sdk with the AI SDK's own types"],
  ['types-mcp', "tsc --strict accepts subagent-tree/mcp with the MCP SDK's own types"],
  ['types-acp', "tsc --strict accepts subagent-tree/acp with the ACP SDK's own types"],
  ['types-openai-agents', "tsc --strict accepts subagent-tree/openai-agents with the OpenAI Agents SDK's own types"],
  ['types-otel', 'tsc --strict accepts subagent-tree/otel with an @opentelemetry/api Tracer (typed structurally)'],
];

for (const [project, name] of PROJECTS) {
  test(name, async () => {
    const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
    const result = await new Promise((resolve) => {
      execFile(tsc, ['-p', path.join(root, project)], { cwd: root }, (error, stdout, stderr) => resolve({ error, out: `${stdout}${stderr}` }));
    });
    assert.equal(result.error, null, result.out);
  });
}
