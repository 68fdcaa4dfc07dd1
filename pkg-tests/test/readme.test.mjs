// The README's quick start runs exactly as written and prints what the README says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

test('README quick start runs as written', async () => {
  const readme = await readFile(path.join(here, '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const blocks = [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)];
  const code = blocks.find((b) => b[1] === 'js')[2];
  const expected = blocks[blocks.findIndex((b) => b[1] === 'js') + 1][2];
  // Inside pkg-tests so `subagent-tree` resolves to the installed package.
  const file = path.join(here, '..', `.readme-quickstart-${process.pid}.mjs`);
  await writeFile(file, code);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
    assert.equal(stdout, expected);
  } finally {
    await rm(file, { force: true });
  }
});
