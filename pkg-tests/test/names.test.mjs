// Names (seed 000): the grammar, default names and references.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidName, validateName, defaultName, parseAgentRef } from 'subagent-tree';
import { throws } from './helpers.mjs';

const VALID = ['a', 'z', 'reviewer', 'agent-1', 'a-b-c', 'x9', 'a-', 'a--b', 'leader', 'lead-2', 'leads', 'a'.repeat(32), 'a0123456789-abcdefghijklmnopqrst'];
const INVALID = [
  '', 'lead', 'Lead', 'LEAD', 'Reviewer', 'reviewerX', '1abc', '9', '-a', '-', 'a_b', 'a b', ' a', 'a ', 'a\n', 'a/b', '/a', 'a.b',
  'é', 'ａ', 'a\u0000', 'a'.repeat(33), 'x'.repeat(1000),
  '0b0e7c1e-8c0a-4f7e-9d8b-2f4a6c1d3e5f', 'deadbeef-0000-4000-8000-000000000000', 'abcdefab-cdef-4abc-8def-abcdefabcdef',
];

test('the grammar: 1-32 of a-z 0-9 -, starting with a letter, never lead', () => {
  for (const name of VALID) assert.equal(isValidName(name), true, JSON.stringify(name));
  for (const name of INVALID) assert.equal(isValidName(name), false, JSON.stringify(name));
});

test('isValidName answers false for anything that is not a string', () => {
  for (const value of [undefined, null, 1, true, {}, ['a'], new String('abc'), Symbol('a'), 1n, () => 'a']) {
    assert.equal(isValidName(value), false);
  }
});

test('a UUID never parses as a name (any hex digits, any case)', () => {
  const hex = '0123456789abcdef';
  for (let i = 0; i < 200; i++) {
    let uuid = '';
    for (const len of [8, 4, 4, 4, 12]) {
      if (uuid) uuid += '-';
      for (let j = 0; j < len; j++) uuid += hex[(i * 7 + j * 13 + len) % 16];
    }
    assert.equal(isValidName(uuid), false, uuid);
    assert.deepEqual(parseAgentRef(uuid), { kind: 'session', id: uuid });
  }
});

test('validateName returns the name itself', () => {
  for (const name of VALID) assert.equal(validateName(name), name);
});

test('validateName throws INVALID_NAME naming the value and the rule', () => {
  const e = throws(() => validateName('Reviewer'), 'INVALID_NAME');
  assert.equal(e.message, 'agent name "Reviewer" must be 1-32 lower-case letters, digits or hyphens starting with a letter');
  throws(() => validateName('lead'), 'INVALID_NAME', '"lead"');
  for (const name of INVALID) throws(() => validateName(name), 'INVALID_NAME');
  // A huge string gives a short sentence.
  const huge = throws(() => validateName('X'.repeat(5_000_000)), 'INVALID_NAME');
  assert.ok(huge.message.length < 300, huge.message);
  assert.ok(huge.message.includes('5000000'), huge.message);
});

test('validateName rejects non-strings with INVALID_ARGUMENT', () => {
  for (const value of [undefined, null, 7, {}, ['a'], new String('a')]) throws(() => validateName(value), 'INVALID_ARGUMENT');
});

test('defaultName gives the first free agent-N, N from 1', () => {
  assert.equal(defaultName([]), 'agent-1');
  assert.equal(defaultName(['reviewer', 'checker']), 'agent-1');
  assert.equal(defaultName(['agent-1']), 'agent-2');
  assert.equal(defaultName(['agent-1', 'agent-2']), 'agent-3');
  assert.equal(defaultName(['agent-2', 'agent-3']), 'agent-1');
  assert.equal(defaultName(['agent-1', 'agent-3']), 'agent-2');
  assert.equal(defaultName(['agent-3', 'agent-1', 'agent-1', 'agent-2']), 'agent-4');
  // Only the canonical spelling occupies a number.
  assert.equal(defaultName(['agent-01', 'agent-x', 'agent-', 'agent-1a', 'Agent-1', 'agent-+1']), 'agent-1');
  assert.equal(defaultName(['agent-99999999999999999999999']), 'agent-1');
  const many = Array.from({ length: 10_000 }, (_, i) => `agent-${i + 1}`);
  assert.equal(defaultName(many), 'agent-10001');
  assert.equal(isValidName(defaultName(many)), true);
});

test('defaultName rejects anything but an array of strings', () => {
  for (const value of [undefined, null, 'agent-1', 3, {}, new Set(['agent-1']), [1], ['a', null], [undefined]]) {
    throws(() => defaultName(value), 'INVALID_ARGUMENT');
  }
});

test('parseAgentRef: lead, full names, and everything else as a Session id', () => {
  assert.deepEqual(parseAgentRef('lead'), { kind: 'lead' });
  assert.deepEqual(parseAgentRef('reviewer'), { kind: 'path', segments: ['reviewer'] });
  assert.deepEqual(parseAgentRef('reviewer/checker'), { kind: 'path', segments: ['reviewer', 'checker'] });
  assert.deepEqual(parseAgentRef('a/b/c/d'), { kind: 'path', segments: ['a', 'b', 'c', 'd'] });
  const long = Array.from({ length: 50 }, (_, i) => `n${i}`).join('/');
  assert.equal(parseAgentRef(long).segments.length, 50);
  for (const id of ['lead/reviewer', 'reviewer/lead', 'reviewer/', '/reviewer', 'a//b', '', 'Reviewer', 'session-ABC', '123', 'a b']) {
    assert.deepEqual(parseAgentRef(id), { kind: 'session', id }, JSON.stringify(id));
  }
  // Shapes carry no extra keys.
  assert.deepEqual(Object.keys(parseAgentRef('x')), ['kind', 'segments']);
  assert.deepEqual(Object.keys(parseAgentRef('lead')), ['kind']);
});

test('parseAgentRef rejects non-strings with INVALID_ARGUMENT', () => {
  for (const value of [undefined, null, 1, {}, ['lead']]) throws(() => parseAgentRef(value), 'INVALID_ARGUMENT');
});
