// The docs' runnable examples (marked <!-- runs -->) run exactly as written
// and print the text block that follows each of them. The Chinese twins hold
// identical blocks (docs-sync.test.mjs), so the English docs are run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { ROOT, readDoc, runnableExamples } from './docs.mjs';

const expectedCount = { 'README.md': 4, 'docs/upgrading.md': 1 };

for (const [file, min] of Object.entries(expectedCount)) {
  const examples = runnableExamples(readDoc(file));
  test(`${file} has runnable examples`, () => {
    assert.ok(examples.length >= min, `found ${examples.length}`);
  });
  for (const [i, example] of examples.entries()) {
    test(`${file} example ${i + 1} (line ${example.line}) runs as written`, async () => {
      // Inside pkg-tests so `subagent-tree` resolves to the installed package.
      const script = path.join(ROOT, 'pkg-tests', `.doc-example-${path.basename(file, '.md')}-${i}-${process.pid}.mjs`);
      await writeFile(script, example.code);
      try {
        const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 30_000 });
        assert.equal(stdout, example.expected);
      } finally {
        await rm(script, { force: true });
      }
    });
  }
}
