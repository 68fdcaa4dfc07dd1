// Fails when the crate's files import each other in a cycle, or a layer
// imports one below it (issue 43): core < runtime < testkit < wasm, sim.
// Reads every src/**/*.rs, takes the paths it names (`crate::a::b`, `super::x`,
// `self::x`, and `child::x` for a `mod child;` it declares; `use` trees with
// braces included; a trailing `#[cfg(test)] mod tests` is left out), resolves
// each to the file of the deepest module it reaches, and looks for strongly
// connected files. A module naming its own ancestors (`super::Runtime` in an
// `impl Runtime` file) is no dependency: it is part of that module. A name a
// `mod.rs` or `lib.rs` only imports or re-exports (`pub use member::Agent`,
// `use machine::Tree`) is seen through to the file that defines it, so
// `crate::runtime::Agent` is an import of `runtime/member.rs`.
//   node scripts/module-cycles.mjs [src]
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(process.argv[2] ?? 'src');

/** Module path (`['runtime', 'member']`) of a file. */
function modulePathOf(file) {
  const rel = path.relative(SRC, file).split(path.sep);
  const last = rel.pop().replace(/\.rs$/, '');
  if (last !== 'mod' && last !== 'lib') rel.push(last);
  return rel;
}

/** The file of a module path, or undefined. */
function fileOf(mod) {
  if (mod.length === 0) return path.join(SRC, 'lib.rs');
  const base = path.join(SRC, ...mod);
  for (const f of [`${base}.rs`, path.join(base, 'mod.rs')]) if (existsSync(f)) return f;
  return undefined;
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : name.endsWith('.rs') ? [full] : [];
  });
}

/** Code without comments, strings and the trailing test module. */
function code(text) {
  const cut = text.search(/#\[cfg\(test\)\]\s*mod tests\b/);
  if (cut >= 0) text = text.slice(0, cut);
  return text
    .replace(/\/\/[^\n]*/g, '')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/r#+"[\s\S]*?"#+/g, '""')
    .replace(/"(?:[^"\\]|\\.)*"/g, '""');
}

/** Every path a `use` tree or an inline path starting at `index` names: arrays of segments. */
function expand(text, index) {
  const out = [];
  const segs = [];
  let i = index;
  const ident = () => {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (!m) return undefined;
    i += m[0].length;
    return m[0];
  };
  for (;;) {
    const id = ident();
    if (id === undefined) break;
    segs.push(id);
    if (text.startsWith('::{', i)) {
      i += 3;
      // A brace group: each member is a tree of its own.
      let depth = 1;
      let start = i;
      const members = [];
      for (; i < text.length && depth > 0; i++) {
        if (text[i] === '{') depth++;
        else if (text[i] === '}') depth--;
        if ((text[i] === ',' && depth === 1) || depth === 0) {
          members.push(text.slice(start, i).trim());
          start = i + 1;
        }
      }
      for (const member of members) {
        if (!member) continue;
        for (const rest of expand(member, 0)) out.push([...segs, ...rest]);
      }
      return out;
    }
    if (!text.startsWith('::', i)) break;
    i += 2;
  }
  if (segs.length) out.push(segs);
  return out;
}

const files = walk(SRC);
const edges = new Map(files.map((f) => [f, new Set()]));

/** A module file's imported names (`use` and `pub use`) -> the absolute path each names. */
const imports = new Map();
for (const file of files) {
  if (!/(?:^|\/)(?:mod|lib)\.rs$/.test(file)) continue;
  const here = modulePathOf(file);
  const text = code(readFileSync(file, 'utf8'));
  const names = new Map();
  for (const m of text.matchAll(/(?:^|[;}\s])(?:pub(?:\([^)]*\))?\s+)?use\s+/g)) {
    for (const segs of expand(text, m.index + m[0].length)) {
      let abs;
      if (segs[0] === 'crate') abs = segs.slice(1);
      else if (segs[0] === 'self') abs = [...here, ...segs.slice(1)];
      else if (segs[0] === 'super') {
        let base = here;
        let rest = segs;
        while (rest[0] === 'super') {
          base = base.slice(0, -1);
          rest = rest.slice(1);
        }
        abs = [...base, ...rest];
      } else abs = [...here, ...segs];
      const name = segs[segs.length - 1];
      if (name !== 'self' && segs.length > 1) names.set(name, abs);
    }
  }
  imports.set(file, names);
}

/** The file a path names: the deepest module it reaches, seen through the imports of a `mod.rs`/`lib.rs`. */
function resolve(segs, depth = 0) {
  for (let n = segs.length; n >= 0; n--) {
    const target = fileOf(segs.slice(0, n));
    if (!target) continue;
    const via = n < segs.length ? imports.get(target)?.get(segs[n]) : undefined;
    if (via && depth < 8 && fileOf(via) !== target) return resolve([...via, ...segs.slice(n + 1)], depth + 1);
    return target;
  }
  return undefined;
}
for (const file of files) {
  const here = modulePathOf(file);
  const isModRoot = /(?:^|\/)(?:mod|lib)\.rs$/.test(file);
  const text = code(readFileSync(file, 'utf8'));
  const children = [...text.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;/gm)].map((m) => m[1]);
  // The module a `super::` names: a mod.rs file is its module; another file's parent is one up.
  const selfMod = here;
  const parentMod = here.slice(0, -1);
  const refs = [];
  for (const m of text.matchAll(/\b(crate|super|self)::/g)) {
    for (const segs of expand(text, m.index + m[0].length)) {
      if (m[1] === 'crate') refs.push(segs);
      else if (m[1] === 'self') refs.push([...selfMod, ...segs]);
      else {
        let base = parentMod;
        let rest = segs;
        while (rest[0] === 'super') {
          base = base.slice(0, -1);
          rest = rest.slice(1);
        }
        refs.push([...base, ...rest]);
      }
    }
  }
  for (const child of children) {
    for (const m of text.matchAll(new RegExp(`(?<![A-Za-z0-9_:])${child}::`, 'g'))) {
      for (const segs of expand(text, m.index)) refs.push([...(isModRoot ? here : here), ...segs]);
    }
  }
  for (const segs of refs) {
    const target = resolve(segs);
    if (!target || target === file) continue;
    const targetMod = modulePathOf(target);
    const ancestor = targetMod.length <= here.length && targetMod.every((s, k) => s === here[k]);
    if (!ancestor) edges.get(file).add(target);
  }
}

// Layers: a file may import its own layer and those before it, never a later one.
const LAYERS = { core: 0, runtime: 1, 'testkit.rs': 2, wasm: 3, sim: 3 };
const layerOf = (f) => {
  const top = path.relative(SRC, f).split(path.sep)[0];
  return top in LAYERS ? [top.replace(/\.rs$/, ''), LAYERS[top]] : undefined;
};
const upward = [];
for (const [file, targets] of edges) {
  const from = layerOf(file);
  if (!from) continue; // lib.rs: the crate's map of every layer
  for (const t of targets) {
    const to = layerOf(t);
    if (to && to[0] !== from[0] && to[1] >= from[1]) upward.push(`  ${path.relative(path.dirname(SRC), file)} (${from[0]}) -> ${path.relative(path.dirname(SRC), t)} (${to[0]})`);
  }
}

// Tarjan's strongly connected components.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const on = new Set();
const sccs = [];
function connect(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  on.add(v);
  for (const w of edges.get(v)) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const scc = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) sccs.push(scc);
  }
}
for (const f of files) if (!index.has(f)) connect(f);

const rel = (f) => path.relative(path.dirname(SRC), f);
const count = [...edges.values()].reduce((n, s) => n + s.size, 0);
if (upward.length > 0) {
  console.error(`module-cycles: ${upward.length} import(s) of a later layer (core < runtime < testkit < wasm, sim):`);
  for (const line of upward) console.error(line);
}
if (sccs.length === 0 && upward.length === 0) {
  console.log(`module-cycles: ${files.length} files, ${count} imports between them, no cycle, layers in order (core < runtime < testkit < wasm, sim)`);
} else {
  for (const scc of sccs) {
    const members = new Set(scc);
    console.error(`module-cycles: a cycle among ${scc.length} files:`);
    for (const f of scc.sort()) {
      const inside = [...edges.get(f)].filter((t) => members.has(t)).map(rel).sort();
      console.error(`  ${rel(f)} -> ${inside.join(', ')}`);
    }
  }
  process.exit(1);
}
