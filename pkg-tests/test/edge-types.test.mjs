// The .d.ts of the edge and Node modules (durable-object-store, openai-host,
// file-store) checked by a strict TypeScript consumer (types-edge/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { root } from './edge-helpers.mjs';

test('tsc --strict accepts a consumer of the edge and Node modules', async () => {
  const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
  const result = await new Promise((resolve) => {
    execFile(tsc, ['-p', path.join(root, 'types-edge')], { cwd: root }, (error, stdout, stderr) => resolve({ error, out: `${stdout}${stderr}` }));
  });
  assert.equal(result.error, null, result.out);
});

test('tsc --strict accepts subagent-tree/ai-sdk with the AI SDK\'s own types', async () => {
  const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
  const result = await new Promise((resolve) => {
    execFile(tsc, ['-p', path.join(root, 'types-ai-sdk')], { cwd: root }, (error, stdout, stderr) => resolve({ error, out: `${stdout}${stderr}` }));
  });
  assert.equal(result.error, null, result.out);
});

test('tsc --strict accepts subagent-tree/mcp with the MCP SDK\'s own types', async () => {
  const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
  const result = await new Promise((resolve) => {
    execFile(tsc, ['-p', path.join(root, 'types-mcp')], { cwd: root }, (error, stdout, stderr) => resolve({ error, out: `${stdout}${stderr}` }));
  });
  assert.equal(result.error, null, result.out);
});

test('tsc --strict accepts subagent-tree/openai-agents with the OpenAI Agents SDK\'s own types', async () => {
  const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
  const result = await new Promise((resolve) => {
    execFile(tsc, ['-p', path.join(root, 'types-openai-agents')], { cwd: root }, (error, stdout, stderr) => resolve({ error, out: `${stdout}${stderr}` }));
  });
  assert.equal(result.error, null, result.out);
});

test('tsc --strict accepts subagent-tree/otel with an @opentelemetry/api Tracer (typed structurally)', async () => {
  const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
  const result = await new Promise((resolve) => {
    execFile(tsc, ['-p', path.join(root, 'types-otel')], { cwd: root }, (error, stdout, stderr) => resolve({ error, out: `${stdout}${stderr}` }));
  });
  assert.equal(result.error, null, result.out);
});
