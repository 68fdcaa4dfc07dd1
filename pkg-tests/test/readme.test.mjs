// The README's runnable examples (marked <!-- runs -->) run exactly as written
// and print the text block that follows each of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const readme = await readFile(path.join(here, '..', '..', 'README.md'), 'utf8');
const examples = [...readme.matchAll(/<!-- runs -->\n```js\n([\s\S]*?)```[\s\S]*?```text\n([\s\S]*?)```/g)];

test('the README has runnable examples', () => {
  assert.ok(examples.length >= 2, `found ${examples.length}`);
});

for (const [i, [, code, expected]] of examples.entries()) {
  test(`README example ${i + 1} runs as written`, async () => {
    // Inside pkg-tests so `subagent-tree` resolves to the installed package.
    const file = path.join(here, '..', `.readme-example-${i}-${process.pid}.mjs`);
    await writeFile(file, code);
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
      assert.equal(stdout, expected);
    } finally {
      await rm(file, { force: true });
    }
  });
}
