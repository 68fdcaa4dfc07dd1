// Readable errors from a minified package: every minified file (the wasm
// glue, the JS helpers beside it) ships a source map with its unminified text,
// listed by `npm pack`, so a stack under `node --enable-source-maps` (or in
// devtools) names the original file, line and function.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './docs.mjs';

const PKG = path.join(ROOT, 'pkg');
const HERE = path.join(ROOT, 'pkg-tests');

function minifiedFiles() {
  const snippets = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.js')) snippets.push(path.relative(PKG, file));
    }
  };
  walk(path.join(PKG, 'snippets'));
  return ['subagent_tree.js', 'subagent_tree_lite.js', ...snippets];
}

test('each minified file has a source map with its unminified text, and npm pack ships it', () => {
  const [report] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], { cwd: PKG, encoding: 'utf8' }));
  const shipped = new Set(report.files.map((f) => f.path));
  const files = minifiedFiles();
  assert.ok(files.length >= 5, files.join(', '));
  for (const file of files) {
    const text = readFileSync(path.join(PKG, file), 'utf8');
    const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1];
    assert.equal(url, `${path.basename(file)}.map`, `${file} links its map`);
    const mapFile = path.join(path.dirname(file), url);
    assert.ok(shipped.has(mapFile), `${mapFile} is in the package`);
    const map = JSON.parse(readFileSync(path.join(PKG, mapFile), 'utf8'));
    assert.equal(map.version, 3);
    assert.deepEqual(map.sources, [path.basename(file, '.js') + '.unminified.js']);
    assert.ok(map.sourcesContent[0].length > text.length, `${file}: the map holds the unminified text`);
  }
});

test('an error thrown through the glue reads as its source under node --enable-source-maps', () => {
  const script = "import('subagent-tree').then(({ validateName }) => { try { validateName('Bad'); } catch (e) { console.log(e.stack); } })";
  const stack = execFileSync(process.execPath, ['--enable-source-maps', '-e', script], { cwd: HERE, encoding: 'utf8' });
  const source = readFileSync(path.join(ROOT, 'src/wasm/js/error.js'), 'utf8').split('\n');
  const line = source.findIndex((l) => l.includes('return hasCause ? new SubagentError')) + 1;
  assert.match(stack, new RegExp(`at makeError \\(.*error\\.unminified\\.js:${line}:\\d+\\)`), stack);
  assert.match(stack, /subagent_tree\.unminified\.js:\d+:\d+/, stack);
});
