// Catalog payloads (strict v0-v3) and the catalog projection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCatalogPayload, projectCatalog } from 'subagent-tree';
import { throws, c0, c1, c2, c3, note, start, log, forkLog } from './helpers.mjs';

const base = (version, mode, extra = {}) => ({ version, childId: 'c1', childCreatedAt: 42, mode, ...extra });

test('v0: one-shot (label optional) and continuable (label required)', () => {
  assert.deepEqual(decodeCatalogPayload(base(0, 'one-shot')), { id: 'c1', createdAt: 42, mode: 'one-shot' });
  assert.deepEqual(decodeCatalogPayload(base(0, 'one-shot', { label: 'L' })), { id: 'c1', createdAt: 42, mode: 'one-shot', label: 'L' });
  assert.deepEqual(decodeCatalogPayload(base(0, 'continuable', { label: 'L' })), { id: 'c1', createdAt: 42, mode: 'continuable', label: 'L' });
  throws(() => decodeCatalogPayload(base(0, 'continuable')), 'CORRUPT_CATALOG');
  throws(() => decodeCatalogPayload(base(0, 'unknown')), 'CORRUPT_CATALOG');
  throws(() => decodeCatalogPayload(base(0, 'external')), 'CORRUPT_CATALOG');
});

test('v1: as v0 plus unknown (label optional)', () => {
  assert.deepEqual(decodeCatalogPayload(base(1, 'unknown')), { id: 'c1', createdAt: 42, mode: 'unknown' });
  assert.equal(decodeCatalogPayload(base(1, 'unknown', { label: 'x' })).label, 'x');
  assert.equal(decodeCatalogPayload(base(1, 'one-shot')).mode, 'one-shot');
  assert.equal(decodeCatalogPayload(base(1, 'continuable', { label: 'L' })).mode, 'continuable');
  throws(() => decodeCatalogPayload(base(1, 'continuable')), 'CORRUPT_CATALOG');
  throws(() => decodeCatalogPayload(base(1, 'external')), 'CORRUPT_CATALOG');
});

test('v2: external only (label optional)', () => {
  assert.deepEqual(decodeCatalogPayload(base(2, 'external')), { id: 'c1', createdAt: 42, mode: 'external' });
  assert.equal(decodeCatalogPayload(base(2, 'external', { label: 'run' })).label, 'run');
  for (const mode of ['one-shot', 'continuable', 'unknown']) throws(() => decodeCatalogPayload(base(2, mode, { label: 'L' })), 'CORRUPT_CATALOG');
});

test('v3: v2 fields plus a required, valid name', () => {
  assert.deepEqual(decodeCatalogPayload(base(3, 'one-shot', { name: 'reviewer' })), { id: 'c1', createdAt: 42, mode: 'one-shot', name: 'reviewer' });
  assert.deepEqual(decodeCatalogPayload(base(3, 'continuable', { name: 'r', label: 'L' })), { id: 'c1', createdAt: 42, mode: 'continuable', label: 'L', name: 'r' });
  assert.equal(decodeCatalogPayload(base(3, 'external', { name: 'ext' })).mode, 'external');
  throws(() => decodeCatalogPayload(base(3, 'one-shot')), 'CORRUPT_CATALOG', 'name');
  throws(() => decodeCatalogPayload(base(3, 'continuable', { name: 'r' })), 'CORRUPT_CATALOG', 'label');
  throws(() => decodeCatalogPayload(base(3, 'unknown', { name: 'r' })), 'CORRUPT_CATALOG');
  for (const name of ['lead', 'Reviewer', '', 'a'.repeat(33), '0b0e7c1e-8c0a-4f7e-9d8b-2f4a6c1d3e5f', 7, null, ['a'], { n: 'a' }]) {
    throws(() => decodeCatalogPayload(base(3, 'one-shot', { name })), 'CORRUPT_CATALOG');
  }
});

test('payloads are strict: unknown keys and wrong types reject', () => {
  const cases = [
    ['extra', 1], ['Name', 'a'], ['name', 'a'], ['version', 4], ['version', -1], ['version', 1.5], ['version', '0'], ['version', null],
    ['childId', ''], ['childId', 3], ['childId', null], ['childCreatedAt', -1], ['childCreatedAt', 1.5], ['childCreatedAt', 1e300],
    ['childCreatedAt', '5'], ['childCreatedAt', NaN], ['childCreatedAt', 2 ** 53], ['label', null], ['label', 3], ['label', ['L']],
    ['mode', 'ONE-SHOT'], ['mode', 'oneshot'], ['mode', ''], ['mode', 1],
  ];
  for (const [key, value] of cases) {
    const e = throws(() => decodeCatalogPayload({ ...base(0, 'one-shot'), [key]: value }), 'CORRUPT_CATALOG');
    assert.ok(e.message.startsWith('catalog'), e.message);
  }
  for (const missing of ['version', 'childId', 'childCreatedAt', 'mode']) {
    const payload = base(0, 'one-shot');
    delete payload[missing];
    throws(() => decodeCatalogPayload(payload), 'CORRUPT_CATALOG');
  }
  for (const notObject of [null, undefined, [], 'x', 3, true, [base(0, 'one-shot')]]) {
    throws(() => decodeCatalogPayload(notObject), 'CORRUPT_CATALOG');
  }
  // The largest safe integer is a valid timestamp; an undefined property counts as absent (as in JSON).
  assert.equal(decodeCatalogPayload({ ...base(0, 'one-shot'), childCreatedAt: 2 ** 53 - 1 }).createdAt, 2 ** 53 - 1);
  assert.deepEqual(decodeCatalogPayload({ ...base(0, 'one-shot'), label: undefined }), { id: 'c1', createdAt: 42, mode: 'one-shot' });
});

test('decoded entries have absent, not undefined, optional fields', () => {
  const entry = decodeCatalogPayload(base(0, 'one-shot'));
  assert.deepEqual(Object.keys(entry), ['id', 'createdAt', 'mode']);
  assert.equal('label' in entry, false);
  assert.equal('name' in entry, false);
});

test('projection: own catalog events in parent event order, other types ignored, duplicates kept', () => {
  const events = log([note(), c3('b', 'beta'), note(), c0('a'), c2('x', 'run'), { type: 'subagent/start', payload: {} }, c3('b', 'beta-again')]);
  const rows = projectCatalog(events);
  assert.deepEqual(rows.map((r) => r.id), ['b', 'a', 'x', 'b']);
  assert.deepEqual(rows[0], { id: 'b', createdAt: 1_700_000_000_000, mode: 'one-shot', name: 'beta' });
  assert.deepEqual(rows[2], { id: 'x', createdAt: 7, mode: 'external', label: 'run' });
  assert.deepEqual(projectCatalog([]), []);
  assert.deepEqual(projectCatalog(log([note(), note()])), []);
});

test('projection ignores events a fork inherited (seq < inheritedEventCount)', () => {
  const parent = log([c3('a', 'alpha'), note(), c3('b', 'beta')]);
  const fork = forkLog(parent, 3, [c3('own', 'own')]);
  assert.deepEqual(projectCatalog(fork, { inheritedEventCount: 3 }).map((r) => r.id), ['own']);
  // Without the option nothing counts as inherited.
  assert.deepEqual(projectCatalog(fork).map((r) => r.id), ['a', 'b', 'own']);
  assert.deepEqual(projectCatalog(fork, {}).map((r) => r.id), ['a', 'b', 'own']);
  assert.deepEqual(projectCatalog(fork, { inheritedEventCount: 0 }).map((r) => r.id), ['a', 'b', 'own']);
  assert.deepEqual(projectCatalog(fork, { inheritedEventCount: 100 }), []);
});

test('a corrupt own event throws CORRUPT_CATALOG naming its seq; a corrupt inherited one is ignored', () => {
  const events = log([c3('a', 'alpha'), { type: 'subagent/catalog', payload: { version: 9 } }, c3('b', 'beta')]);
  throws(() => projectCatalog(events), 'CORRUPT_CATALOG', 'event 1');
  assert.deepEqual(projectCatalog(events, { inheritedEventCount: 2 }).map((r) => r.id), ['b']);
  // Corrupt payloads of other event types do not matter.
  assert.deepEqual(projectCatalog(log([{ type: 'other', payload: { version: 9 } }])), []);
});

test('projectCatalog validates its arguments', () => {
  for (const events of [undefined, null, 'x', {}, [null], [{ seq: -1, type: 'x', payload: null }], [{ seq: 0, payload: null }], [{ seq: '0', type: 'x' }], [{ seq: 1.5, type: 'x' }]]) {
    throws(() => projectCatalog(events), 'INVALID_ARGUMENT');
  }
  for (const inheritedEventCount of [-1, 1.5, '1', NaN, Infinity, true]) {
    throws(() => projectCatalog([], { inheritedEventCount }), 'INVALID_ARGUMENT', 'inheritedEventCount');
  }
  throws(() => projectCatalog([], 'fast'), 'INVALID_ARGUMENT');
  // A missing payload reads as null.
  assert.deepEqual(projectCatalog([{ seq: 0, type: 'note' }]), []);
});

test('payload v1 unknown and start markers project as data', () => {
  const events = log([start(0), c1('h'), c1('h2', 'one-shot')]);
  assert.deepEqual(projectCatalog(events).map((r) => [r.id, r.mode]), [['h', 'unknown'], ['h2', 'one-shot']]);
});
