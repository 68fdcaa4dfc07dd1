// The error class and codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubagentError, errorCodes, validateName, listDescendants } from 'subagent-tree';

const CONTRACT_CODES = [
  'NO_PROVIDER', 'DUPLICATE_PROVIDER', 'UNSUPPORTED_CAPABILITY', 'CONTINUATION_UNAVAILABLE', 'PERSISTENCE_UNAVAILABLE',
  'UNAUTHORIZED', 'DRAINING', 'ACTIVATION_CLOSING', 'ACTIVATION_LIMIT_REACHED', 'ACTIVATION_TEARDOWN_FAILED', 'DUPLICATE_CHILD',
  'NOT_RESUMABLE', 'NOT_CONTINUABLE', 'INPUT_CLOSED', 'PARENT_UNAVAILABLE', 'CANCELLED', 'DEPTH_EXCEEDED', 'INVALID_NAME',
  'DUPLICATE_NAME', 'UNKNOWN_AGENT', 'CORRUPT_CATALOG',
];

test('errorCodes lists every code of the contract, UPPER_SNAKE, once, frozen', () => {
  for (const code of CONTRACT_CODES) assert.ok(errorCodes.includes(code), code);
  for (const code of errorCodes) assert.match(code, /^[A-Z]+(_[A-Z]+)*$/);
  assert.equal(new Set(errorCodes).size, errorCodes.length);
  assert.ok(Object.isFrozen(errorCodes));
  assert.ok(errorCodes.includes('INVALID_ARGUMENT'));
});

test('library errors are real Errors: instanceof, name, code, message, stack', () => {
  let error;
  try {
    validateName('Bad Name');
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof SubagentError);
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'SubagentError');
  assert.equal(error.code, 'INVALID_NAME');
  assert.equal(typeof error.stack, 'string');
  assert.ok(String(error).startsWith('SubagentError: agent name "Bad Name"'), String(error));
  assert.equal('cause' in error, false, 'no cause unless there is one');
  assert.equal(Object.prototype.toString.call(error), '[object Error]');
  assert.ok(errorCodes.includes(error.code));
});

test('SubagentError can be constructed and thrown by hosts', () => {
  const e = new SubagentError('UNAUTHORIZED', 'no', { cause: 1 });
  assert.equal(e.code, 'UNAUTHORIZED');
  assert.equal(e.message, 'no');
  assert.equal(e.cause, 1);
  assert.equal(e.name, 'SubagentError');
  assert.ok(e instanceof Error);
});

test('rejections carry the same class', async () => {
  const error = await listDescendants(null, 'x').catch((e) => e);
  assert.ok(error instanceof SubagentError);
  assert.equal(error.code, 'INVALID_ARGUMENT');
  assert.match(error.message, /^store must be an object with append and read methods, not null$/);
});

test('the package entries share one SubagentError class', async () => {
  const viaNode = await import('subagent-tree');
  assert.equal(viaNode.SubagentError, SubagentError);
  const pkgJson = (await import('subagent-tree/package.json', { with: { type: 'json' } })).default;
  assert.equal(pkgJson.type, 'module');
  assert.deepEqual(Object.keys(pkgJson.exports['.']), ['types', 'workerd', 'node', 'browser', 'default']);
});
