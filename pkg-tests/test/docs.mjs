// Reads the project's Markdown docs for the doc tests: fenced code blocks
// (with the marker comment on the line before each), headings and links.
//
// A marker is an HTML comment right before a fence, e.g.
//   <!-- runs -->                           run in Node; the next ```text block is its output
//   <!-- runs; check: ai-sdk -->            the same, type-checked with the AI SDK's types (docs-types)
//   <!-- runs; check: mcp -->               the same, with the MCP SDK's types (openai-agents: the OpenAI Agents SDK's)
//   <!-- check: node dom; given: web-app --> type-check in these configurations, with the
//                                           declarations of docs-check/given/web-app.d.ts
// `runs` implies `check: node`. Every js/ts block needs one (see docs-types.test.mjs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Each English doc and its Chinese twin: same sections, identical code blocks. */
export const PAIRS = [
  ['README.md', 'README.zh-CN.md'],
  ['docs/upgrading.md', 'docs/upgrading.zh-CN.md'],
];
export const DOCS = PAIRS.flat();

export const CODE_LANGS = new Set(['js', 'mjs', 'javascript', 'ts', 'mts', 'typescript']);

export function readDoc(file) {
  return parse(readFileSync(path.join(ROOT, file), 'utf8'), file);
}

function parseMarker(line) {
  const m = /^<!--\s*(.*?)\s*-->$/.exec(line.trim());
  if (!m) return null;
  const marker = { text: m[1], runs: false, envs: [], given: [] };
  for (const part of m[1].split(';').map((p) => p.trim()).filter(Boolean)) {
    if (part === 'runs') marker.runs = true;
    else if (part.startsWith('check:')) marker.envs = part.slice(6).trim().split(/\s+/).filter(Boolean);
    else if (part.startsWith('given:')) marker.given = part.slice(6).trim().split(/\s+/).filter(Boolean);
    else marker.unknown = part;
  }
  if (marker.runs && marker.envs.length === 0) marker.envs = ['node'];
  return marker;
}

/** A table row's cells (the text between unescaped pipes, trimmed). */
function cells(line) {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim());
}

/** `{ blocks: [{lang, code, line, marker}], headings: [{level, text, line}], tables: [{line, rows: [{line, cells}]}], text }` */
export function parse(text, file = '<doc>') {
  const lines = text.split('\n');
  const blocks = [];
  const headings = [];
  const tables = [];
  let table = null;
  let open = null;
  let lastNonEmpty = '';
  for (const [i, line] of lines.entries()) {
    // A table: consecutive lines starting with `|` outside code; its separator row is not a row.
    if (!open && line.trimStart().startsWith('|')) {
      if (!table) tables.push((table = { line: i + 1, rows: [] }));
      if (!/^\s*\|[\s:|-]+\|\s*$/.test(line)) table.rows.push({ line: i + 1, cells: cells(line) });
      lastNonEmpty = line;
      continue;
    }
    table = null;
    if (open) {
      if (/^```\s*$/.test(line)) {
        blocks.push({ ...open, code: open.body.join('\n') + '\n', file });
        open = null;
        lastNonEmpty = line; // a marker belongs to the very next fence only
      } else {
        open.body.push(line);
      }
      continue;
    }
    const fence = /^```(\S*)\s*$/.exec(line);
    if (fence) {
      open = { lang: fence[1], line: i + 1, marker: parseMarker(lastNonEmpty), body: [] };
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) headings.push({ level: heading[1].length, text: heading[2], line: i + 1 });
    if (line.trim() !== '') lastNonEmpty = line;
  }
  if (open) throw new Error(`${file}:${open.line}: unclosed code fence`);
  return { blocks, headings, tables, text };
}

/** Runnable examples: a `runs` block and the ```text block that follows it. */
export function runnableExamples(doc) {
  const out = [];
  for (const [i, block] of doc.blocks.entries()) {
    if (!block.marker?.runs) continue;
    const next = doc.blocks[i + 1];
    if (!next || next.lang !== 'text') throw new Error(`${block.file}:${block.line}: a runs block must be followed by a text block`);
    out.push({ ...block, expected: next.code });
  }
  return out;
}
