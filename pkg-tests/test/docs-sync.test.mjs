// Each English doc and its Chinese twin correspond: the same code blocks
// (language, markers and text, byte for byte), headings of the same count and
// levels in the same order, tables row for row (the same code in each row, no
// row left in English), and a link to each other at the top.
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

  test(`${en} and ${zh} have the same tables, row for row, translated`, () => {
    const a = readDoc(en).tables;
    const b = readDoc(zh).tables;
    assert.equal(b.length, a.length, `${en} has ${a.length} tables, ${zh} ${b.length}`);
    const code = (row) => row.cells.map((c) => (c.match(/`[^`]+`/g) ?? []).join(' '));
    const prose = (row) => row.cells.join(' ').replace(/`[^`]+`/g, '').replace(/\[[^\]]*\]\([^)]*\)/g, '');
    for (const [t, table] of a.entries()) {
      const other = b[t];
      const rows = (x) => x.rows.map((r) => r.cells[0]).join(' | ');
      assert.equal(other.rows.length, table.rows.length, `table ${t + 1} (${en}:${table.line}, ${zh}:${other.line}) has ${table.rows.length} rows in English, ${other.rows.length} in Chinese:\n${rows(table)}\n${rows(other)}`);
      for (const [r, row] of table.rows.entries()) {
        const twin = other.rows[r];
        const at = `${en}:${row.line} / ${zh}:${twin.line}`;
        assert.deepEqual(code(twin), code(row), `${at}: the same code in each cell`);
        // A row with English words outside its code must not read the same in Chinese.
        if (r > 0 && /[A-Za-z]{4,}/.test(prose(row))) assert.ok(/[\u3400-\u9fff]/.test(prose(twin)), `${at}: not translated: ${twin.cells.join(' | ')}`);
      }
    }
  });

  test(`${en} and ${zh} link to each other at the top`, () => {
    const top = (file) => readDoc(file).text.split('\n').slice(0, 5).join('\n');
    assert.match(top(en), new RegExp(`\\]\\(${path.basename(zh).replace(/\./g, '\\.')}\\)`), `${en} links ${zh} near its top`);
    assert.match(top(zh), new RegExp(`\\]\\(${path.basename(en).replace(/\./g, '\\.')}\\)`), `${zh} links ${en} near its top`);
  });
}
