// Every JavaScript and TypeScript block of the docs (README, upgrade guide,
// both languages) type-checks with `tsc --strict` against the installed
// package, in each configuration its marker names:
//   node: lib es2022 + @types/node, no DOM;   dom: lib es2022 + DOM, no @types/node.
// Both with skipLibCheck false, so the package's own .d.ts files are checked
// too. JavaScript blocks are checked with checkJs, as strictly as TypeScript
// blocks (noImplicitAny included: a JS block annotates with JSDoc where
// inference cannot tell a type).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, DOCS, CODE_LANGS, readDoc } from './docs.mjs';

const PKG_TESTS = path.join(ROOT, 'pkg-tests');
const GIVEN = path.join(PKG_TESTS, 'docs-check', 'given');
const TSC = path.join(PKG_TESTS, 'node_modules', '.bin', 'tsc');
const ENVS = {
  node: { lib: ['es2022'], types: ['node'] },
  dom: { lib: ['es2022', 'dom', 'dom.iterable'], types: [] },
  // The AI SDK adapter's blocks: the SDK's own .d.ts need the DOM and Node libs and are its own to check.
  'ai-sdk': { lib: ['es2022', 'dom', 'dom.iterable'], types: ['node'], skipLibCheck: true },
  // The MCP adapter's blocks, with the MCP SDK's own .d.ts (its to check, as the AI SDK's).
  mcp: { lib: ['es2022', 'dom', 'dom.iterable'], types: ['node'], skipLibCheck: true },
  acp: { lib: ['es2022', 'dom', 'dom.iterable'], types: ['node'], skipLibCheck: true },
  'openai-agents': { lib: ['es2022', 'dom', 'dom.iterable'], types: ['node'], skipLibCheck: true },
  otel: { lib: ['es2022', 'dom', 'dom.iterable'], types: ['node'], skipLibCheck: true },
};

const blocks = DOCS.flatMap((file) => readDoc(file).blocks).filter((b) => CODE_LANGS.has(b.lang));

test('every JS/TS block of the docs is type-checked', () => {
  const unchecked = blocks.filter((b) => !b.marker || b.marker.envs.length === 0 || b.marker.unknown);
  assert.deepEqual(unchecked.map((b) => `${b.file}:${b.line}`), [], 'blocks without a <!-- check: ... --> or <!-- runs --> marker');
  for (const b of blocks) {
    for (const env of b.marker.envs) assert.ok(ENVS[env], `${b.file}:${b.line}: unknown configuration ${env}`);
    for (const g of b.marker.given) assert.ok(existsSync(path.join(GIVEN, `${g}.d.ts`)), `${b.file}:${b.line}: no docs-check/given/${g}.d.ts`);
  }
  assert.ok(blocks.length >= 10, `only ${blocks.length} blocks found`);
});

for (const [env, libs] of Object.entries(ENVS)) {
  for (const kind of ['js', 'ts']) {
    const mine = blocks.filter((b) => b.marker?.envs.includes(env) && (['ts', 'mts', 'typescript'].includes(b.lang) ? 'ts' : 'js') === kind);
    // Identical blocks of the two languages are checked once.
    const unique = [...new Map(mine.map((b) => [`${b.marker.text}\n${b.code}`, b])).values()];
    test(`tsc --strict accepts the docs' ${kind.toUpperCase()} blocks in the ${env} configuration (${unique.length} blocks)`, { skip: unique.length === 0 }, () => {
      const dir = path.join(PKG_TESTS, `.docs-check-${env}-${kind}-${process.pid}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      try {
        const where = {};
        const files = unique.map((b, i) => {
          const name = `block${i}.${kind === 'ts' ? 'mts' : 'mjs'}`;
          where[name] = `${b.file}:${b.line}`;
          // `export {}` keeps every block a module, so blocks never share top-level names.
          writeFileSync(path.join(dir, name), `${b.code}export {};\n`);
          return name;
        });
        const given = [...new Set(unique.flatMap((b) => b.marker.given))].map((g) => path.join(GIVEN, `${g}.d.ts`));
        const tsconfig = {
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'es2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            lib: libs.lib,
            types: libs.types,
            skipLibCheck: libs.skipLibCheck ?? false,
            allowJs: kind === 'js',
            checkJs: kind === 'js',
          },
          files: [...files, ...given],
        };
        writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
        const r = spawnSync(TSC, ['-p', dir, '--pretty', 'false'], { encoding: 'utf8' });
        const out = `${r.stdout}${r.stderr}`.replace(/block\d+\.m[jt]s/g, (f) => `${f} [${where[f]}]`);
        assert.equal(r.status, 0, out);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}
