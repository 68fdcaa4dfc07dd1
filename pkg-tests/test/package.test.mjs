// What `npm pack` ships and what the registry page shows: README (both
// languages), licences, changelog, a complete package.json, public types free
// of wasm-bindgen's loader internals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './docs.mjs';

const PKG = path.join(ROOT, 'pkg');
const manifest = JSON.parse(readFileSync(path.join(PKG, 'package.json'), 'utf8'));
const REPO = 'https://github.com/subagent-tree/subagent-tree';

test('npm pack --dry-run lists the README, both licences and the changelog', () => {
  const [report] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], { cwd: PKG, encoding: 'utf8' }));
  const files = report.files.map((f) => f.path);
  for (const f of ['README.md', 'README.zh-CN.md', 'CHANGELOG.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'package.json', 'index.d.ts', 'subagent_tree_bg.wasm']) {
    assert.ok(files.includes(f), `${f} is not in the package: ${files.join(', ')}`);
  }
  assert.ok(!files.includes('subagent_tree_bg.wasm.d.ts'), 'the raw wasm exports are not shipped as types');
  assert.ok(!files.includes('sizes.txt'));
  for (const f of ['README.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'CHANGELOG.md']) {
    assert.equal(readFileSync(path.join(PKG, f), 'utf8'), readFileSync(path.join(ROOT, f), 'utf8'), `pkg/${f} is the repository's`);
  }
});

test('the licence files are the two licences package.json and Cargo.toml name', () => {
  assert.equal(manifest.license, 'MIT OR Apache-2.0');
  assert.match(readFileSync(path.join(ROOT, 'LICENSE-MIT'), 'utf8'), /^Copyright .*\n\nPermission is hereby granted, free of charge/);
  assert.match(readFileSync(path.join(ROOT, 'LICENSE-APACHE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004/);
  assert.match(readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8'), /^license = "MIT OR Apache-2\.0"$/m);
});

test('package.json is complete: repository, homepage, bugs, keywords, files, sideEffects, ESM', () => {
  assert.equal(manifest.name, 'subagent-tree');
  assert.match(manifest.version, /^\d+\.\d+\.\d+/);
  assert.ok(manifest.description.length > 20);
  assert.deepEqual(manifest.repository, { type: 'git', url: `git+${REPO}.git` });
  assert.equal(manifest.homepage, `${REPO}#readme`);
  assert.equal(manifest.bugs.url, `${REPO}/issues`);
  assert.ok(Array.isArray(manifest.keywords) && manifest.keywords.length >= 5);
  assert.equal(manifest.type, 'module', 'ESM-only');
  assert.ok(Array.isArray(manifest.sideEffects) && manifest.sideEffects.length > 0);
  for (const f of manifest.sideEffects) assert.ok(existsSync(path.join(PKG, f)), `sideEffects names a missing ${f}`);
  for (const f of manifest.files) assert.ok(existsSync(path.join(PKG, f)), `files names a missing ${f}`);
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const targets = typeof target === 'string' ? [target] : Object.values(target);
    for (const t of targets) assert.ok(existsSync(path.join(PKG, t)), `exports[${subpath}] names a missing ${t}`);
  }
  const cargo = readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8');
  assert.match(cargo, new RegExp(`^repository = "${REPO}"$`, 'm'), 'Cargo.toml repository is the project URL');
});

test('the README says the package is ESM-only', () => {
  assert.match(readFileSync(path.join(ROOT, 'README.md'), 'utf8'), /\*\*ESM-only\*\*/);
});

test("the public types hold no wasm-bindgen loader internals and need no DOM or disposable lib", () => {
  const dts = ['index.d.ts', 'subagent_tree.d.ts'].map((f) => readFileSync(path.join(PKG, f), 'utf8')).join('\n');
  for (const internal of ['InitOutput', '__wbg', '__wbindgen', 'Symbol.dispose', 'initSync', 'RequestInfo', 'free(): void']) {
    assert.ok(!dts.includes(internal), `the types mention ${internal}`);
  }
  // The README's ESM note is true of the package: no CommonJS entry.
  assert.ok(!JSON.stringify(manifest.exports).includes('"require"'));
});

test('the changelog is a release: this version with its date, no internal references', () => {
  const log = readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
  const entry = new RegExp(`^## \\[${manifest.version.replace(/\./g, '\\.')}\\] - (\\d{4}-\\d{2}-\\d{2})$`, 'm').exec(log);
  assert.ok(entry, `CHANGELOG.md has no "## [${manifest.version}] - YYYY-MM-DD" entry`);
  assert.ok(!Number.isNaN(Date.parse(entry[1])), entry[1]);
  for (const internal of [/\bissue \d+/i, /\bseeds? \d+/i, /\bseed "/i, /simulation seed/i, /\bsession of\b/i]) {
    const found = log.match(internal);
    assert.equal(found, null, `CHANGELOG.md refers to ${found?.[0]}`);
  }
  const guide = readFileSync(path.join(ROOT, 'docs/upgrading.md'), 'utf8').split('\n');
  assert.match(guide[0], /catalog payloads v0-v2/, 'docs/upgrading.md says in its first line whom it is for');
});

test('every relative link of the shipped Markdown resolves inside the installed package', () => {
  const [report] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], { cwd: PKG, encoding: 'utf8' }));
  const files = new Set(report.files.map((f) => f.path));
  const broken = [];
  for (const doc of ['README.md', 'README.zh-CN.md', 'CHANGELOG.md']) {
    const text = readFileSync(path.join(PKG, doc), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
    for (const match of text.matchAll(/\]\(([^)\s]+)\)|<img[^>]*\ssrc="([^"]+)"/g)) {
      const target = match[1] ?? match[2];
      if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
      const file = path.posix.normalize(target.split('#')[0]);
      if (!files.has(file)) broken.push(`${doc}: ${target}`);
    }
  }
  assert.deepEqual(broken, [], 'relative links to files the package does not ship (ship them, or link absolute)');
});

test('the README leads with npm install; the repository commands are under Developing; fragments say so', async () => {
  const { readDoc, PAIRS } = await import('./docs.mjs');
  for (const [en, zh] of PAIRS.filter(([a]) => a === 'README.md')) {
    for (const [file, fragment, developing] of [[en, /fragment/i, '## Developing'], [zh, /片段/, '## 开发']]) {
      const doc = readDoc(file);
      assert.equal(doc.blocks[0].code, 'npm install subagent-tree\n', `${file}: the first block installs the package`);
      const dev = doc.headings.find((h) => `${'#'.repeat(h.level)} ${h.text}` === developing);
      const commands = doc.blocks.find((b) => b.code.includes('make demo'));
      assert.ok(dev && commands.line > dev.line, `${file}: the block with make demo and make test is under ${developing}`);
      // A block that needs declarations of its own (`given:`) says in visible text that it is a fragment.
      const lines = doc.text.split('\n');
      for (const block of doc.blocks.filter((b) => b.marker?.given.length)) {
        const before = lines.slice(Math.max(0, block.line - 8), block.line - 2).join('\n').replace(/<!--[\s\S]*?-->/g, '');
        assert.match(before, fragment, `${file}:${block.line}: a fragment must say so in visible text`);
      }
    }
  }
});
