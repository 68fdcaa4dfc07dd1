// One call shape (issue 42): the runtime's calls take one trailing options
// object `{ signal }`; the old forms (a bare AbortSignal) still type-check for
// one release but are `@deprecated`: the TypeScript language service reports
// each old call (what an editor strikes through) and no new one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const PKG_TESTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

const SOURCE = `import type { Agent, SubagentRuntime } from 'subagent-tree';
export async function calls(runtime: SubagentRuntime, lead: Agent, signal: AbortSignal): Promise<void> {
  await runtime.listDescendants('root', signal); // old
  await runtime.resolveName(lead, 'x', signal); // old
  await runtime.reopen(lead, 'x', signal); // old
  await runtime.waitForQuiescence(lead, signal); // old
  await runtime.listDescendants('root', { signal }); // new
  await runtime.resolveName(lead, 'x', { signal }); // new
  await runtime.reopen(lead, 'x', { signal }); // new
  await runtime.waitForQuiescence(lead, { signal }); // new
  await runtime.listDescendants('root'); // new
  await runtime.startActivation({ parent: lead, label: 'L', prompt: 'p' }); // new
}
`;

test('the bare-signal forms are deprecated overloads; the options forms are not', () => {
  const dir = mkdtempSync(path.join(PKG_TESTS, '.types-deprecated-'));
  try {
    const file = path.join(dir, 'calls.mts');
    writeFileSync(file, SOURCE);
    const options = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: false,
    };
    const service = ts.createLanguageService({
      getScriptFileNames: () => [file],
      getScriptVersion: () => '1',
      getScriptSnapshot: (name) => (ts.sys.fileExists(name) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(name)) : undefined),
      getCurrentDirectory: () => dir,
      getCompilationSettings: () => options,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
    });
    const errors = [...service.getSyntacticDiagnostics(file), ...service.getSemanticDiagnostics(file)];
    assert.deepEqual(errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'every call type-checks');
    const lines = SOURCE.split('\n');
    const deprecated = service
      .getSuggestionDiagnostics(file)
      .filter((d) => d.reportsDeprecated)
      .map((d) => ts.getLineAndCharacterOfPosition(service.getProgram().getSourceFile(file), d.start).line);
    const old = lines.flatMap((l, i) => (l.endsWith('// old') ? [i] : []));
    assert.equal(old.length, 4);
    assert.deepEqual([...new Set(deprecated)].sort((a, b) => a - b), old, 'exactly the old calls are reported deprecated');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
