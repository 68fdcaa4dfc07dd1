// `subagent-tree/lite` runs the full entry's own suites for what both entries
// export: names, catalog, listing, resolution, stores, conversions, errors
// and hostile input. Its listings and resolutions are driven by a JS loop
// (src/wasm/js/lite/drive.js) instead of the full build's async drivers, so
// this is where the two are held to one behaviour: every sentence, every
// abort, every round trip. The suites run unchanged in a child process whose
// `subagent-tree` resolves to the lite entry (lite-entry.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SUITES = ['names', 'catalog', 'listing', 'resolve', 'stores', 'fast-path', 'errors', 'hostile'];
const here = (file) => fileURLToPath(new URL(file, import.meta.url));
// Without the parent runner's NODE_TEST_CONTEXT, so the child reports as TAP text.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT'));

test('the hook loads the lite entry for `subagent-tree`', () => {
  const probe = "const m = await import('subagent-tree'); console.log(JSON.stringify(['SubagentRuntime' in m, 'listDescendants' in m]));";
  const run = spawnSync(process.execPath, ['--import', here('./lite-entry.mjs'), '--input-type=module', '-e', probe], {
    cwd: here('.'),
    env,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), [false, true]);
});

for (const suite of SUITES) {
  test(`${suite}.test.mjs passes against subagent-tree/lite`, () => {
    const run = spawnSync(
      process.execPath,
      ['--import', here('./lite-entry.mjs'), '--test', '--test-reporter=tap', here(`./${suite}.test.mjs`)],
      { cwd: here('.'), env, encoding: 'utf8', maxBuffer: 64 << 20 },
    );
    const counts = Object.fromEntries([...run.stdout.matchAll(/^# (tests|pass|fail) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    const failures = run.stdout.split('\n').filter((l) => /^\s*not ok /.test(l)).join('\n');
    assert.equal(run.status, 0, `${suite} against lite:\n${failures}\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-2000)}`);
    assert.ok(counts.tests > 0 && counts.pass === counts.tests, `${suite}: ${JSON.stringify(counts)}`);
  });
}
