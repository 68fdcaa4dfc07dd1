// Each English doc and its Chinese twin correspond: the same code blocks
// (language, markers and text, byte for byte), headings of the same count and
// levels in the same order, and a link to each other at the top.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { PAIRS, readDoc } from './docs.mjs';

for (const [en, zh] of PAIRS) {
  test(`${en} and ${zh} have identical code blocks`, () => {
    const a = readDoc(en).blocks;
    const b = readDoc(zh).blocks;
    assert.ok(a.length > 0, `${en} has no code blocks`);
    assert.equal(b.length, a.length, `${en} has ${a.length} code blocks, ${zh} ${b.length}`);
    for (const [i, block] of a.entries()) {
      const other = b[i];
      const at = `block ${i + 1} (${en}:${block.line}, ${zh}:${other.line})`;
      assert.equal(other.lang, block.lang, `${at}: language`);
      assert.equal(other.marker?.text, block.marker?.text, `${at}: marker comment`);
      assert.equal(other.code, block.code, `${at}: code`);
    }
  });

  test(`${en} and ${zh} have corresponding headings`, () => {
    const a = readDoc(en).headings;
    const b = readDoc(zh).headings;
    assert.ok(a.length > 0);
    assert.deepEqual(
      b.map((h) => h.level),
      a.map((h) => h.level),
      `heading levels differ:\n${en}: ${a.map((h) => `${'#'.repeat(h.level)} ${h.text}`).join(' | ')}\n${zh}: ${b.map((h) => `${'#'.repeat(h.level)} ${h.text}`).join(' | ')}`,
    );
    // A heading that is code (an API name) stays the same in both.
    for (const [i, h] of a.entries()) if (/^`[^`]+`$/.test(h.text)) assert.equal(b[i].text, h.text);
  });

  test(`${en} and ${zh} link to each other at the top`, () => {
    const top = (file) => readDoc(file).text.split('\n').slice(0, 5).join('\n');
    assert.match(top(en), new RegExp(`\\]\\(${path.basename(zh).replace(/\./g, '\\.')}\\)`), `${en} links ${zh} near its top`);
    assert.match(top(zh), new RegExp(`\\]\\(${path.basename(en).replace(/\./g, '\\.')}\\)`), `${zh} links ${en} near its top`);
  });
}
