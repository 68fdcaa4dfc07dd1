// subagent-tree, browser: <subagent-tree>, an accessible view of one agent
// tree. It renders from a live runtime (`el.runtime = runtime; el.root =
// rootAgentOrId`, both write-only: the element never hands its runtime or
// root handle back out; rows carry each member's state (`running`, `idle`,
// `parked`, `settled`, `error`; `inactive` when a listing says only that it is
// not running), how its last turn stopped, its last output and, while it runs,
// the last line it streams; they follow `subagent/start`, `subagent/end`,
// `subagent/turn`, `subagent/catalog` and `subagent/delta` live (deltas drawn
// at most once per animation frame), the root row too) or from a
// store alone (`el.store = store; el.rootId = id`). Text from the tree (names,
// labels, ids) is only ever set with `textContent`, so untrusted labels stay
// text; each piece is bidi-isolated (`<bdi>`, `unicode-bidi: isolate`) and its
// bidi control characters are shown as visible `⟪U+202E⟫` marks, so an id
// such as "\u202Edael" can neither render as `lead` nor reorder its row. No framework; open shadow DOM; style with `::part(...)` and the
// `--subagent-tree-*` custom properties.
//
// Reading is lazy: from a store, catalogs are read only down to
// `initialDepth` levels below the root (plus the catalogs of the deepest
// shown level, to know which of them have children); a deeper branch is
// listed from its own Session id when expanded, and its depths and full names
// are re-based onto the node it hangs from. Live updates apply what an event
// says to what is already shown and read nothing again.
// From a store alone the element needs only listing: it loads the small
// `subagent-tree/lite` wasm on first use (a live runtime lists for itself,
// so a runtime page never downloads the lite module).
import { runtimeMethods } from './runtime-methods.js';

const apply = Reflect.apply;
let lite = null;
const loadLite = () =>
  (lite ??= import('../lite-web.js').catch((e) => {
    lite = null; // a failed load is retried on the next listing
    throw e;
  }));
const listTree = async (...args) => (await loadLite()).listTree(...args);

// `subagent/turn` covers every turn (the root's too, and ones ended by an
// interrupt, which emit no `subagent/end`), so activity follows it as well.
// A turn's end says whether an interrupt left unread input parked.
// `subagent/delta` carries what a running turn streams: shown as the row's live line.
const LIVE_EVENTS = ['subagent/start', 'subagent/end', 'subagent/turn', 'subagent/catalog', 'subagent/delta'];
/** What each shown state means (the badge's tooltip). */
const STATE_TITLES = {
  running: 'running: a turn (or an external run) is in progress',
  idle: 'idle: resident, waiting for input',
  parked: 'parked input: interrupted; its unread input waits for the next message',
  settled: 'settled: finished and left residency (a message resumes it)',
  error: 'error: its last turn or its settlement failed',
  inactive: 'not running',
};
/**
 * How a turn or run stopped, as the stop badge shows it: its text, and the
 * accessible label (the badge is `role="img"`, so the label is what a row's
 * name reads). Reasons outside this set show as they are.
 */
const STOPS = {
  completed: ['completed', 'last turn completed'],
  aborted: ['interrupted', 'last turn interrupted (aborted)'],
  error: ['error', 'last turn failed (error)'],
  'budget-exhausted': ['budget spent', 'last turn stopped: a budget is exhausted'],
  'max-tokens': ['max tokens', 'last turn stopped at its output token limit (max-tokens)'],
  refusal: ['refused', 'last turn refused (refusal)'],
};
/** Longest output text kept in an unselected row (the selected row shows it all). */
const ROW_OUTPUT_CHARS = 240;
/** Streamed text kept per running member: enough for its last line. */
const STREAM_CHARS = 2048;
/** Longest live line shown (its end: the newest text). */
const LIVE_LINE_CHARS = 160;
const CATALOG_EVENT = 'subagent/catalog';

const STYLE = `
:host {
  display: block; min-width: 0; max-width: 100%;
  font: var(--subagent-tree-font, 14px/1.4 system-ui, sans-serif);
  color: var(--subagent-tree-color, #1d2330);
  --_indent: var(--subagent-tree-indent, 1.1rem);
  --_accent: var(--subagent-tree-accent, #2458d6);
  --_muted: var(--subagent-tree-muted, #4b5563);
  --_running: var(--subagent-tree-running, #14672f);
  --_error: var(--subagent-tree-error, #9b1c1c);
}
*, *::before, *::after { box-sizing: border-box; }
:host([hidden]) { display: none; }
ul { list-style: none; margin: 0; padding: 0; }
[role="treeitem"] { outline: none; }
/* A hanging indent: the toggle hangs left of the row's content edge, so every wrapped line
   (a label, the badges, the output) starts under the member's own name, at any depth. */
[role="treeitem"] > .row {
  display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.1rem 0.45rem; min-width: 0;
  padding: 0.2rem 0.4rem 0.2rem calc(1.85rem + var(--depth, 0) * var(--_indent));
  border-radius: 5px; cursor: default; user-select: none;
}
[role="treeitem"] > .row:hover { background: var(--subagent-tree-hover, #eef1f7); }
[role="treeitem"][aria-selected="true"] > .row {
  background: var(--subagent-tree-selected, #dfe8fb); box-shadow: inset 3px 0 0 var(--_accent);
}
[role="treeitem"]:focus-visible > .row { outline: 2px solid var(--_accent); outline-offset: -2px; }
[role="treeitem"][aria-disabled="true"] > .row { color: var(--subagent-tree-disabled, #8a8f99); cursor: not-allowed; }
.toggle { flex: none; width: 1rem; margin-left: -1.45rem; text-align: center; color: #6b7280; font-size: 0.75em; cursor: pointer; }
.toggle.leaf { visibility: hidden; }
.name, .label, .badge, .note, .output { unicode-bidi: isolate; }
/* Long names break anywhere rather than push the row past the edge. */
.name { flex: 0 1 auto; min-width: 0; font-weight: 600; overflow-wrap: anywhere; }
/* A label keeps at least ~8 characters on the name's line, else it moves to the next one; it wraps, never cut. */
.label { flex: 1 1 7rem; min-width: 0; color: var(--_muted); overflow-wrap: anywhere; }
.badges { flex: none; display: inline-flex; align-items: baseline; gap: 0.3rem; margin-left: auto; }
.badge {
  flex: none; font-size: 0.72em; padding: 0 0.4em; border-radius: 999px; white-space: nowrap;
  border: 1px solid #cfd5df; color: var(--_muted); background: #fff;
}
.badge.activity.running { border-color: #6cc58a; color: var(--_running); background: #e9f8ee; }
.badge.activity.running::before { content: "● "; }
.badge.activity.inactive, .badge.activity.settled { color: #6b7280; }
.badge.activity.parked { border-color: #f0c98c; color: #8a5300; background: #fff6e6; }
.badge.activity.error, .badge.reason { border-color: #e2b4b4; color: var(--_error); background: #fbeeee; }
/* Tokens spent, and a budget's bar (filled by what is spent; \`low\` from 90 %). */
.usage { flex: none; font-size: 0.72em; color: var(--_muted); white-space: nowrap; font-variant-numeric: tabular-nums; }
.budget {
  flex: none; display: inline-block; position: relative; inline-size: 3.2rem; block-size: 0.45rem; align-self: center;
  border-radius: 999px; background: var(--subagent-tree-budget-track, #e3e7ee); overflow: hidden;
}
.budget > .fill { position: absolute; inset: 0 auto 0 0; background: var(--subagent-tree-budget, #4f7be8); }
.budget.low > .fill { background: var(--_error); }
/* Each stop reason its own colour (and text: the colour is never the only signal). */
.badge.stop { border-style: dashed; }
.badge.stop.completed { border-color: #9fd3b0; color: #1d5b33; background: #f1faf3; }
.badge.stop.aborted { border-color: #f0c98c; color: #8a5300; background: #fff6e6; }
.badge.stop.error { border-color: #e2b4b4; color: var(--_error); background: #fbeeee; }
.badge.stop.budget-exhausted { border-color: #c9b6f2; color: #5b2fb3; background: #f5f0fe; }
.badge.stop.max-tokens { border-color: #9ccfe0; color: #0b5d75; background: #ecf8fc; }
.badge.stop.refusal { border-color: #c8c2b4; color: #5a4a1e; background: #f7f4ec; }
/* The last output: one line, cut with an ellipsis; the selected row shows it whole. */
.output {
  flex: 1 0 100%; min-width: 0; font-size: 0.85em; color: var(--_muted);
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
}
[role="treeitem"][aria-selected="true"] > .row > .output:not(.live) { white-space: pre-wrap; overflow-wrap: anywhere; }
/* The live line of a running turn: left-aligned while it fits; once longer than the row, its end
   (the newest text) stays in view and its start is clipped (an rtl box overflows to the left). */
.output.live { direction: rtl; text-align: left; text-overflow: clip; color: var(--_running); }
.output.live > span { direction: ltr; unicode-bidi: isolate; }
/* A member shown by its Session id (it has no name): marked and monospace, so it never passes for a name. */
.idmark {
  flex: none; font-size: 0.72em; padding: 0 0.35em; border-radius: 3px;
  background: var(--subagent-tree-id-mark, #e5e7eb); color: var(--_muted); font-family: ui-monospace, monospace;
}
.name.id { font-weight: 400; font-family: ui-monospace, monospace; }
.note { color: #8a8f99; font-size: 0.8em; font-style: italic; }
.status { padding: 0.4rem; color: #6b7280; }
.status.error { color: var(--_error); }
`;

/** At most `max` characters (code points, so no surrogate pair is split), with `…` when cut. */
function cut(value, max) {
  if (value.length <= max) return value;
  // 2 * (max + 1) UTF-16 units hold at least max + 1 code points (a pair cut at the end is never kept).
  const room = 2 * (max + 1);
  const chars = Array.from(value.length > room ? value.slice(0, room) : value);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : value;
}

/** Input plus output tokens of a usage total (0 when it does not read). */
function tokens(usage) {
  const n = (v) => (Number.isSafeInteger(v) && v >= 0 ? v : 0);
  return usage && typeof usage === 'object' ? n(usage.inputTokens) + n(usage.outputTokens) : 0;
}

/** A token count, short: 950, 12.3k, 4.5M. */
function count(n) {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)}k`;
  return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)}M`;
}

/** `base` joined with a relative full name (the root `lead` is never a prefix). */
function joinName(base, rel) {
  return base === 'lead' ? rel : `${base}/${rel}`;
}

// Bidi controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI): shown, never obeyed.
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** Tree text as shown: every bidi control replaced by a visible mark. */
export function visibleText(value) {
  return String(value).replace(BIDI_CONTROLS, (c) => `⟪U+${c.charCodeAt(0).toString(16).toUpperCase()}⟫`);
}

// Anything an id could use to look like another text: every character but printable ASCII.
const NOT_PRINTABLE_ASCII = /[^\x21-\x7E]/gu;

/**
 * A Session id as shown: every character outside printable ASCII (confusable
 * letters such as Cyrillic `е`, invisible ones such as U+200B, spaces, bidi
 * controls) replaced by a visible `⟪U+0435⟫` mark.
 */
export function idText(value) {
  return String(value).replace(NOT_PRINTABLE_ASCII, (c) => `⟪U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟫`);
}

/**
 * A member's full name as shown; an unnamed member's is its Session id, marked as one; a catalog entry
 * whose id does not read shows as `entry N` (N its event's seq: the space keeps it from passing for a name).
 */
function shownName(node) {
  if (node.unread) return node.fullName;
  return node.named ? visibleText(node.fullName) : idText(node.fullName);
}

/** Text isolated from its neighbours, for an attribute such as `title` (FSI … PDI). */
function isolated(value) {
  return `\u2068${visibleText(value)}\u2069`;
}

function text(tag, className, value, part) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (part) el.setAttribute('part', part);
  if (value !== undefined) el.textContent = visibleText(value);
  return el;
}

/**
 * A store view that reads catalogs only down to `limit` levels below the
 * listed session: deeper sessions answer an empty catalog without a read
 * (their rows are dropped by the element and listed on expansion).
 */
function depthLimitedStore(store, rootId, limit) {
  const depth = new Map([[rootId, 0]]);
  const note = (id, events) => {
    const d = depth.get(id) ?? 0;
    if (!Array.isArray(events)) return;
    for (const e of events) {
      const child = e && e.type === CATALOG_EVENT && e.payload && e.payload.childId;
      if (typeof child === 'string' && !depth.has(child)) depth.set(child, d + 1);
    }
  };
  const allowed = (id) => (depth.get(id) ?? 0) <= limit;
  const view = {
    append: () => Promise.reject(new Error('<subagent-tree> reads its store through a read-only view and never appends')),
    async read(id, options) {
      if (!allowed(id)) return [];
      const events = await store.read(id, options);
      note(id, events);
      return events;
    },
  };
  if (typeof store.readMany === 'function') {
    view.readMany = async (ids, options) => {
      const wanted = ids.filter(allowed);
      const got = wanted.length ? await store.readMany(wanted, options) : [];
      const byId = new Map();
      wanted.forEach((id, i) => byId.set(id, got?.[i]));
      return ids.map((id) => {
        if (!allowed(id)) return [];
        const events = byId.get(id);
        note(id, events);
        return events;
      });
    };
  }
  return view;
}

export class SubagentTreeElement extends HTMLElement {
  static get observedAttributes() {
    return ['root-id', 'root-name', 'initial-depth'];
  }

  #runtime = null;
  /** The runtime's `listTree`, `listDescendants` and `on`, fixed when it was set (see runtime-methods.js). */
  #methods = null;
  #root = null;
  #store = null;
  #rootId = null;
  #rootName = null;
  #initialDepth = 2;

  /** id -> node; `children` is null while a branch is not loaded. */
  #nodes = new Map();
  #activity = new Map();
  /** id -> { state, output, stop }: what the runtime's events said about each member. */
  #live = new Map();
  /** id -> { turnId, text }: what a running turn streamed so far (its tail). */
  #streams = new Map();
  /** id -> { own, subtree, complete, budget }: tokens spent (a listing's totals plus later turns) and its budget. */
  #spend = new Map();
  /** Members whose live line changed since the last frame. */
  #dirty = new Set();
  #frame = null;
  #liveRoot = null;
  #rootNode = null;
  #selected = null;
  #focused = null;
  #itemNode = new WeakMap();
  #serial = 0;

  #controller = null;
  #unsubscribe = [];
  #buffer = null; // live events that arrive while a listing is in flight
  #scheduled = null;
  #pendingRefresh = false;
  #ready = Promise.resolve();

  #tree;
  #status;

  constructor() {
    super();
    // delegatesFocus: a click anywhere in the tree, or the host's focus(), lands on an item.
    const shadow = this.attachShadow({ mode: 'open', delegatesFocus: true });
    const style = document.createElement('style');
    style.textContent = STYLE;
    this.#status = text('div', 'status', undefined, 'status');
    this.#status.setAttribute('role', 'status');
    this.#status.hidden = true;
    this.#tree = document.createElement('ul');
    this.#tree.setAttribute('role', 'tree');
    this.#tree.setAttribute('part', 'tree');
    shadow.append(style, this.#status, this.#tree);
    this.#tree.addEventListener('keydown', (e) => this.#onKey(e));
    this.#tree.addEventListener('click', (e) => this.#onClick(e));
    this.#tree.addEventListener('dblclick', (e) => this.#onDoubleClick(e));
    this.#tree.addEventListener('focusin', (e) => {
      const node = this.#nodeOf(e.target);
      if (node && node !== this.#focused) this.#focus(node, false);
    });
  }

  connectedCallback() {
    this.#syncLabel();
    this.#schedule();
  }

  disconnectedCallback() {
    this.#stop();
  }

  attributeChangedCallback(name, _old, value) {
    if (name === 'root-id') this.rootId = value;
    else if (name === 'root-name') this.rootName = value;
    else if (name === 'initial-depth') this.initialDepth = value === null ? 2 : Number(value);
  }

  /** Focuses the tree's current item (the one Tab reaches), as a native composite widget does. */
  focus(options) {
    if (this.#focused?.li?.isConnected) this.#focused.li.focus(options);
    else super.focus(options);
  }

  // ---- inputs ------------------------------------------------------------

  /**
   * A live `SubagentRuntime`; rows then carry activity and follow its events.
   * Write-only: the element never gives its runtime back to page code.
   */
  set runtime(value) {
    this.#runtime = value ?? null;
    this.#methods = this.#runtime === null ? null : runtimeMethods(this.#runtime);
    this.#schedule();
  }

  /** The tree's root: a live `Agent` handle (with a runtime) or a Session id. Write-only, like `runtime`. */
  set root(value) {
    this.#root = value ?? null;
    this.#schedule();
  }

  /** A session store to read the tree from (used alone, without a runtime). */
  get store() {
    return this.#store;
  }
  set store(value) {
    this.#store = value ?? null;
    this.#schedule();
  }

  /** The root Session id (alternative to `root`). */
  get rootId() {
    if (typeof this.#root === 'string') return this.#root;
    if (this.#root && typeof this.#root.sessionId === 'string') return this.#root.sessionId;
    return this.#rootId;
  }
  set rootId(value) {
    this.#rootId = value ? String(value) : null;
    this.#schedule();
  }

  /** The root's full name (`lead` unless it is itself a descendant). */
  get rootName() {
    if (this.#rootName) return this.#rootName;
    if (this.#root && typeof this.#root === 'object' && typeof this.#root.name === 'string') return this.#root.name;
    return 'lead';
  }
  set rootName(value) {
    this.#rootName = value ? String(value) : null;
    this.#schedule();
  }

  /** Levels below the root listed up front (default 2); deeper branches load on expansion. */
  get initialDepth() {
    return this.#initialDepth;
  }
  set initialDepth(value) {
    const n = Number(value);
    this.#initialDepth = Number.isFinite(n) && n >= 1 ? Math.floor(n) : n === Infinity ? Infinity : 2;
    this.#schedule();
  }

  /** The selected member's Session id, or null. */
  get selectedId() {
    return this.#selected?.id ?? null;
  }

  /** Resolves when the current (re)load has finished. */
  get ready() {
    return this.#ready;
  }

  /** What the view knows of one member (a copy), or null. */
  nodeInfo(sessionId) {
    const n = this.#nodes.get(sessionId);
    if (!n) return null;
    return {
      sessionId: n.id,
      name: n.fullName,
      named: n.named,
      kind: n.kind,
      parentId: n.parentId,
      depth: n.depth,
      mode: n.mode,
      label: n.label,
      reason: n.reason,
      hasChildren: n.hasChildren,
      loaded: n.children !== null,
      expanded: n.expanded,
      activity: this.#activity.get(n.id),
      state: this.#live.get(n.id)?.state,
      output: this.#live.get(n.id)?.output,
      stopReason: this.#live.get(n.id)?.stop,
      live: this.#liveLine(n.id),
      ...this.#spendInfo(n.id),
    };
  }

  // ---- loading -----------------------------------------------------------

  #schedule() {
    if (!this.isConnected) return;
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#ready = new Promise((resolve) => {
      queueMicrotask(() => {
        this.#scheduled = null;
        resolve(this.#load());
      });
    });
  }

  #onStoreChange(change) {
    const id = change?.sessionId;
    if (typeof id !== 'string' || this.#pendingRefresh || !(id === this.rootId || this.#nodes.has(id))) return;
    this.#pendingRefresh = true;
    const frame = typeof requestAnimationFrame === 'function' ? requestAnimationFrame : (f) => setTimeout(f, 16);
    frame(() => {
      this.#pendingRefresh = false;
      if (this.isConnected) this.refresh();
    });
  }

  /** Reads the tree again, keeping expansion, focus and selection where they still exist. */
  refresh() {
    this.#ready = this.#load();
    return this.#ready;
  }

  #stop() {
    this.#controller?.abort();
    this.#controller = null;
    for (const off of this.#unsubscribe.splice(0)) {
      try {
        off();
      } catch {
        // a listener that is already gone
      }
    }
  }

  /**
   * The tree below `sessionId`: `{ root, rows }`, each with what the logs
   * (and a runtime) say of its member; `root` is null from a runtime-like
   * object that only lists descendants.
   */
  async #list(sessionId, limit, signal) {
    if (this.#runtime && this.#methods.listTree) {
      return apply(this.#methods.listTree, this.#runtime, [sessionId, { signal }]);
    }
    if (this.#runtime && this.#methods.listDescendants) {
      return { root: null, rows: await apply(this.#methods.listDescendants, this.#runtime, [sessionId, { signal }]) };
    }
    if (!this.#store) throw new Error('<subagent-tree> needs a runtime or a store: set element.runtime (and element.root), or element.store and element.rootId');
    const store = limit === Infinity ? this.#store : depthLimitedStore(this.#store, sessionId, limit);
    return listTree(store, sessionId, { signal });
  }

  async #load() {
    this.#stop();
    const rootId = this.rootId;
    if (rootId !== this.#liveRoot) {
      // Another tree: what events said about the last one's members does not carry over.
      this.#liveRoot = rootId;
      this.#activity.clear();
      this.#live.clear();
      this.#streams.clear();
      this.#spend.clear();
    }
    const keep = {
      expanded: new Set([...this.#nodes.values()].filter((n) => n.expanded).map((n) => n.id)),
      selected: this.#selected?.id,
      focused: this.#focused?.id,
      hadFocus: this.shadowRoot.activeElement !== null,
      fresh: this.#nodes.size === 0,
    };
    if (!rootId || (!this.#runtime && !this.#store)) {
      this.#reset();
      this.#showStatus(rootId ? 'No store or runtime to read the tree from.' : 'No tree.');
      return;
    }
    const controller = new AbortController();
    this.#controller = controller;
    this.#buffer = [];
    if (this.#runtime && this.#methods.on) {
      for (const type of LIVE_EVENTS) {
        const off = apply(this.#methods.on, this.#runtime, [type, (detail) => this.applyEvent(type, detail), { root: rootId }]);
        if (typeof off === 'function') this.#unsubscribe.push(off);
      }
    } else if (typeof this.#store?.subscribe === 'function') {
      // A store that tells of its appends (IndexedDBStore: this page and other tabs): read
      // again when a log this view shows grows, at most once per frame.
      try {
        const off = this.#store.subscribe((change) => this.#onStoreChange(change));
        if (typeof off === 'function') this.#unsubscribe.push(off);
      } catch {
        // a store that cannot be followed is still read
      }
    }
    this.setAttribute('aria-busy', 'true');
    if (this.#nodes.size === 0) this.#showStatus('Loading…');
    let listed;
    try {
      listed = await this.#list(rootId, this.#initialDepth, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) return;
      this.#buffer = null;
      this.removeAttribute('aria-busy');
      this.#reset();
      this.#showStatus(visibleText(`The tree could not be read: ${error?.message ?? error}`), true);
      this.dispatchEvent(new CustomEvent('error', { detail: { error } }));
      return;
    }
    if (controller.signal.aborted) return;
    this.#reset();
    this.#status.hidden = true;
    const live = Boolean(this.#runtime);
    const root = this.#makeNode({ kind: 'root', id: rootId, parentId: null, depth: 0, fullName: this.rootName, named: true });
    this.#rootNode = root;
    // A live runtime lists the whole tree; a store is read down to initialDepth.
    this.#ingest(listed.rows, root, live ? Infinity : this.#initialDepth);
    if (listed.root) this.#fromListing(rootId, listed.root);
    // Expansion: what was open before, else the levels listed up front.
    for (const node of this.#nodes.values()) {
      node.expanded =
        node.hasChildren &&
        node.children !== null &&
        (keep.fresh ? node.depth < this.#initialDepth : keep.expanded.has(node.id) || node === root);
    }
    this.#tree.replaceChildren(this.#renderItem(root));
    const buffered = this.#buffer;
    this.#buffer = null;
    for (const [type, detail] of buffered) this.applyEvent(type, detail);
    this.#selected = null;
    const selected = keep.selected && this.#nodes.get(keep.selected);
    if (selected) this.#setSelected(selected);
    const focus = (keep.focused && this.#nodes.get(keep.focused)) || selected || root;
    this.#focus(this.#visible(focus) ? focus : root, keep.hadFocus);
    this.removeAttribute('aria-busy');
    this.dispatchEvent(new CustomEvent('load', { detail: { rootId, count: this.#nodes.size - 1 } }));
  }

  #reset() {
    this.#nodes.clear();
    this.#rootNode = null;
    this.#selected = null;
    this.#focused = null;
    this.#tree.replaceChildren();
  }

  #showStatus(message, isError = false) {
    this.#status.textContent = message;
    this.#status.classList.toggle('error', isError);
    this.#status.hidden = false;
  }

  #syncLabel() {
    if (!this.#tree.hasAttribute('aria-label')) {
      this.#tree.setAttribute('aria-label', this.getAttribute('aria-label') || 'Agent tree');
    }
  }

  #makeNode({ kind, id, parentId, depth, mode, label, name, reason, fullName, named, unread = false }) {
    const node = {
      unread,
      key: `n${++this.#serial}`,
      kind,
      id,
      parentId,
      depth,
      mode,
      label,
      name,
      reason,
      fullName,
      named,
      hasChildren: false,
      children: [],
      expanded: false,
      loading: false,
      error: null,
      li: null,
      group: null,
    };
    this.#nodes.set(id, node);
    return node;
  }

  /**
   * Adds listing rows taken from `base`'s Session id: depths and full names
   * are re-based on `base`; rows deeper than `limit` are dropped and their
   * parents left unloaded (listed when expanded).
   */
  #ingest(rows, base, limit) {
    base.children = [];
    const added = [];
    for (const row of rows) {
      if (!row || typeof row.id !== 'string') continue;
      const parent = row.parentId === base.id ? base : this.#nodes.get(row.parentId);
      if (!parent) continue;
      if (row.depth > limit) {
        parent.hasChildren = true;
        parent.children = null;
        continue;
      }
      // A catalog entry whose child id does not read has the empty id: it is keyed by its place
      // instead, behind a lone surrogate so that no Session id (always well-formed) can equal it.
      const unread = row.kind === 'diagnostic' && row.id === '';
      const id = unread ? `\uD800${row.parentId}#${row.seq}` : row.id;
      if (this.#nodes.has(id)) continue;
      const named = parent.named && typeof row.name === 'string' && row.kind === 'child';
      const node = this.#makeNode({
        kind: row.kind === 'diagnostic' ? 'diagnostic' : 'child',
        id,
        parentId: parent.id,
        depth: base.depth + row.depth,
        mode: row.mode,
        // A diagnostic's detail (why its entry does not decode) shows where a label would.
        label: row.kind === 'diagnostic' ? row.detail : row.label,
        name: row.name,
        reason: row.reason,
        fullName: named ? joinName(parent.fullName, row.name) : unread ? `entry ${row.seq}` : row.id,
        named,
        unread,
      });
      if (row.kind === 'child' && row.hasChildren) {
        node.hasChildren = true;
        node.children = row.depth === limit ? null : [];
      }
      if (parent.children) parent.children.push(node.id);
      parent.hasChildren = true;
      added.push(node);
      if (row.kind === 'child') this.#fromListing(row.id, row);
    }
    return added;
  }

  // ---- live updates ----------------------------------------------------------

  /**
   * Applies one runtime event (`subagent/start`, `subagent/end`,
   * `subagent/turn`, `subagent/catalog` with its payload) to what is shown, reading nothing.
   * The element calls this for its runtime's events; a follower tab may call
   * it with events relayed from the tab that drives the tree.
   */
  applyEvent(type, detail) {
    if (!detail || typeof detail !== 'object') return;
    // Deltas only add to a member's stream: kept while a listing is in flight, shown once it is.
    if (type === 'subagent/delta') {
      this.#applyDelta(detail);
      return;
    }
    if (this.#buffer) {
      this.#buffer.push([type, detail]);
      return;
    }
    if (type === 'subagent/start') {
      if (typeof detail.id !== 'string') return;
      // A new member has spent nothing yet; a start says its own budget as it is now.
      const spend = this.#spend.get(detail.id) ?? { own: 0, subtree: 0, complete: true, budget: undefined };
      if (detail.budget && typeof detail.budget === 'object') spend.budget = structuredClone(detail.budget);
      if (this.#spend.size || spend.budget) this.#spend.set(detail.id, spend);
      // An external run works until it ends; a local member is idle until its first turn starts.
      this.#setState(detail.id, detail.mode === 'external' ? 'running' : 'idle');
    } else if (type === 'subagent/end') {
      if (typeof detail.id !== 'string') return;
      this.#streams.delete(detail.id);
      // The stop badge tells of the last turn, as the log does (a run can end without one, when
      // interrupted between turns); an external run has no turns: its end is how it stopped.
      const stop = detail.mode === 'external' && typeof detail.stopReason === 'string' ? { stop: detail.stopReason } : {};
      this.#setState(detail.id, detail.stopReason === 'error' || detail.error ? 'error' : 'settled', stop);
    } else if (type === 'subagent/turn') {
      if (typeof detail.sessionId !== 'string') return;
      // A turn's stream starts with it and ends with it (its final output replaces the live line).
      this.#streams.delete(detail.sessionId);
      if (detail.phase === 'start') {
        this.#setState(detail.sessionId, 'running');
      } else {
        const state = detail.stopReason === 'error' ? 'error' : detail.parked === true ? 'parked' : 'idle';
        const changes = {};
        if (typeof detail.output === 'string' && detail.output !== '') changes.output = detail.output;
        if (typeof detail.stopReason === 'string') changes.stop = detail.stopReason;
        this.#spent(detail.sessionId, detail.usage);
        this.#setState(detail.sessionId, state, changes);
      }
    } else if (type === CATALOG_EVENT) {
      if (detail.entry && !this.#nodes.has(detail.entry.id)) this.#spent(detail.parentSessionId, null, true);
      this.#addChild(detail.parentSessionId, detail.entry);
    }
  }

  /**
   * What a turn (its `usage`) or a new member (`spawn`) spent, counted as the
   * runtime counts it: in the member's own tokens, in the subtree tokens of it
   * and every member above it, and against every budget on that chain.
   */
  #spent(id, usage, spawn = false) {
    const n = usage && typeof usage === 'object' ? tokens(usage) : 0;
    const cost = usage && Number.isSafeInteger(usage.cost) ? usage.cost : 0;
    if (!n && !cost && !spawn && !usage) return;
    const chain = [];
    for (let at = this.#nodes.get(id); at; at = this.#nodes.get(at.parentId)) chain.push(at);
    chain.forEach((node, i) => {
      const spend = this.#spend.get(node.id);
      if (!spend) return;
      if (i === 0 && !spawn) spend.own += n;
      spend.subtree += n;
      const left = spend.budget?.remaining;
      if (left) {
        if (left.tokens !== undefined) left.tokens = Math.max(0, left.tokens - n);
        if (left.cost !== undefined) left.cost = Math.max(0, left.cost - cost);
        if (left.turns !== undefined && usage && !spawn) left.turns = Math.max(0, left.turns - 1);
        if (left.spawns !== undefined && spawn) left.spawns = Math.max(0, left.spawns - 1);
      }
      if (node.li) this.#updateRow(node);
    });
  }

  #spendInfo(id) {
    const spend = this.#spend.get(id);
    if (!spend) return {};
    const out = { tokens: { own: spend.own, subtree: spend.subtree, complete: spend.complete } };
    if (spend.budget) out.budget = structuredClone(spend.budget);
    return out;
  }

  /**
   * Adds a streamed part to its member's live line; the rows show it at the
   * next animation frame, once per frame however many parts arrive.
   */
  #applyDelta(detail) {
    const id = detail.sessionId;
    const part = detail.part;
    if (typeof id !== 'string' || !part || part.type !== 'text-delta' || typeof part.text !== 'string') return;
    let stream = this.#streams.get(id);
    if (!stream || stream.turnId !== detail.turnId) {
      stream = { turnId: detail.turnId, text: '' };
      this.#streams.set(id, stream);
    }
    stream.text += part.text;
    if (stream.text.length > 2 * STREAM_CHARS) stream.text = stream.text.slice(-STREAM_CHARS);
    this.#dirty.add(id);
    if (this.#frame === null) {
      const frame = typeof requestAnimationFrame === 'function' ? requestAnimationFrame : (f) => setTimeout(f, 16);
      this.#frame = frame(() => this.#flushDeltas());
    }
  }

  #flushDeltas() {
    this.#frame = null;
    for (const id of this.#dirty) {
      const node = this.#nodes.get(id);
      if (!node?.li) continue;
      const row = node.li.firstChild;
      const line = this.#liveLine(id);
      const shown = row.querySelector(':scope > .output');
      if (line !== undefined && shown?.classList.contains('live')) shown.firstChild.textContent = visibleText(line);
      else this.#updateRow(node);
    }
    this.#dirty.clear();
  }

  /** A running member's live line: the last non-empty line its turn streamed (its end), or undefined. */
  #liveLine(id) {
    const stream = this.#streams.get(id);
    if (!stream || this.#live.get(id)?.state !== 'running') return undefined;
    const lines = stream.text.split('\n');
    let line = '';
    for (let i = lines.length - 1; i >= 0 && !line; i--) line = lines[i].trim();
    if (!line) return undefined;
    const chars = Array.from(line.length > 2 * LIVE_LINE_CHARS ? line.slice(-2 * LIVE_LINE_CHARS) : line);
    return chars.length > LIVE_LINE_CHARS ? `…${chars.slice(-(LIVE_LINE_CHARS - 1)).join('')}` : line;
  }

  /**
   * Sets (or with `undefined` clears) a member's shown activity. `running`
   * shows it running; `inactive` keeps a state the events gave (`idle`,
   * `parked`, `settled`, `error`), else shows `inactive`.
   */
  setActivity(sessionId, activity) {
    if (activity === undefined) {
      this.#activity.delete(sessionId);
      const entry = this.#live.get(sessionId);
      if (entry) this.#live.set(sessionId, { ...entry, state: undefined });
    } else {
      this.#setListed(sessionId, activity === 'running' ? 'running' : 'inactive');
    }
    const node = this.#nodes.get(sessionId);
    if (node?.li) this.#updateRow(node);
  }

  /**
   * What a listing says of one member: a runtime's activity and residency,
   * and what its log says of its turns (one open, the last stop, the latest
   * output), so a view opened after a reload, or over a store alone, shows
   * each member as it is. Without a runtime the logs are the only source and
   * replace what an earlier read said; with one, its events stay first and
   * the logs fill in what no event told this view.
   */
  #fromListing(id, info) {
    const fromLog = !this.#runtime;
    if (info.usage && typeof info.usage === 'object') {
      const budget = info.budget && typeof info.budget === 'object' ? structuredClone(info.budget) : undefined;
      this.#spend.set(id, { own: tokens(info.usage.own), subtree: tokens(info.usage.subtree), complete: info.usage.complete !== false, budget });
    }
    const last = info.lastTurn && typeof info.lastTurn === 'object' ? info.lastTurn : null;
    if (info.activity === 'running' || info.activity === 'inactive') this.#setListed(id, info.activity, info.state);
    else if (info.turnOpen === true) this.#setListed(id, 'running');
    else if (fromLog && (last || this.#activity.has(id))) this.#setListed(id, 'inactive');
    const entry = { ...this.#live.get(id) };
    const resident = entry.state === 'running' || entry.state === 'idle' || entry.state === 'parked';
    if (last) {
      const stop = typeof last.stopReason === 'string' ? last.stopReason : undefined;
      const output = typeof last.output === 'string' && last.output !== '' ? last.output : undefined;
      if (fromLog || entry.stop === undefined) entry.stop = stop;
      if (fromLog || entry.output === undefined) entry.output = output;
      // Not resident and not running: finished (a message resumes it), or failed. A root never
      // finishes: between turns it waits for input.
      const rest = id === this.rootId ? 'idle' : 'settled';
      if (!resident && (fromLog || entry.state === undefined)) entry.state = stop === 'error' ? 'error' : rest;
    }
    this.#live.set(id, entry);
  }

  /**
   * What a listing (or a relayed snapshot) says: running, or not running, and
   * for a resident member how it waits (`idle`, `parked`).
   */
  #setListed(sessionId, activity, rest) {
    this.#activity.set(sessionId, activity);
    const entry = this.#live.get(sessionId);
    if (activity === 'running') this.#live.set(sessionId, { ...entry, state: 'running' });
    else if (rest === 'idle' || rest === 'parked') this.#live.set(sessionId, { ...entry, state: rest });
    else if (entry?.state === 'running') this.#live.set(sessionId, { ...entry, state: undefined });
  }

  #setState(sessionId, state, changes = {}) {
    this.#live.set(sessionId, { ...this.#live.get(sessionId), ...changes, state });
    this.#activity.set(sessionId, state === 'running' ? 'running' : 'inactive');
    const node = this.#nodes.get(sessionId);
    if (node?.li) this.#updateRow(node);
  }

  #addChild(parentId, entry) {
    const parent = this.#nodes.get(parentId);
    if (!parent || !entry || typeof entry.id !== 'string' || this.#nodes.has(entry.id)) return;
    const wasLeaf = !parent.hasChildren;
    parent.hasChildren = true;
    if (parent.children === null) {
      if (parent.li) this.#updateRow(parent);
      return; // that branch is listed when expanded
    }
    const unknown = entry.mode === 'unknown';
    const named = parent.named && !unknown && typeof entry.name === 'string';
    const node = this.#makeNode({
      kind: unknown ? 'diagnostic' : 'child',
      id: entry.id,
      parentId: parent.id,
      depth: parent.depth + 1,
      mode: unknown ? undefined : entry.mode,
      label: unknown ? undefined : entry.label,
      name: entry.name,
      reason: unknown ? 'unsupported' : undefined,
      fullName: named ? joinName(parent.fullName, entry.name) : entry.id,
      named,
    });
    parent.children.push(node.id); // a new child has no children yet
    // A member that just got its first child opens like the levels listed up front.
    if (wasLeaf && parent.depth < this.#initialDepth) parent.expanded = true;
    if (parent.li) {
      if (parent.group) parent.group.append(this.#renderItem(node));
      this.#updateRow(parent);
    }
  }

  // ---- rendering -------------------------------------------------------------

  #renderItem(node) {
    const li = document.createElement('li');
    li.setAttribute('role', 'treeitem');
    li.setAttribute('part', 'item');
    li.id = node.key;
    li.tabIndex = -1;
    li.dataset.sessionId = node.id;
    const row = text('div', 'row', undefined, 'row');
    row.id = `${node.key}-row`;
    li.setAttribute('aria-labelledby', row.id);
    row.append(text('span', 'toggle', undefined, 'toggle'));
    // An unnamed member is shown by its Session id: an `id` mark, then the id as ASCII.
    if (!node.named && !node.unread) row.append(text('span', 'idmark', 'id', 'id-mark'));
    row.append(text('bdi', node.named ? 'name' : 'name id', undefined, node.named ? 'name' : 'name id'));
    row.firstChild.setAttribute('aria-hidden', 'true');
    li.append(row);
    node.li = li;
    node.group = null;
    this.#itemNode.set(li, node);
    this.#updateRow(node);
    return li;
  }

  /** Brings one item's attributes and row text up to date (children are added separately). */
  #updateRow(node) {
    const li = node.li;
    li.setAttribute('aria-level', String(node.depth + 1));
    li.dataset.name = node.fullName;
    li.dataset.named = String(node.named);
    li.style.setProperty('--depth', String(node.depth));
    const disabled = node.kind === 'diagnostic';
    if (disabled) li.setAttribute('aria-disabled', 'true');
    else li.removeAttribute('aria-disabled');
    li.setAttribute('aria-selected', String(node === this.#selected));
    if (node.hasChildren) li.setAttribute('aria-expanded', String(node.expanded));
    else li.removeAttribute('aria-expanded');
    if (node.loading) li.setAttribute('aria-busy', 'true');
    else li.removeAttribute('aria-busy');
    li.dataset.kind = node.kind;

    const row = li.firstChild;
    const toggle = row.firstChild;
    toggle.textContent = node.hasChildren ? (node.expanded ? '▾' : '▸') : '';
    toggle.classList.toggle('leaf', !node.hasChildren);
    // Everything after the name is rebuilt from data, as text.
    const name = row.querySelector(':scope > .name');
    while (row.lastChild !== name) row.lastChild.remove();
    const shownAs = shownName(node);
    name.textContent = shownAs;
    const title = node.named || node.unread ? `\u2068${shownAs}\u2069` : `id \u2068${shownAs}\u2069`;
    row.title = node.label ? `${title}: ${isolated(node.label)}` : title;
    // Badges wrap as one group (to the next line when the row is narrow).
    const badges = text('span', 'badges', undefined, 'badges');
    if (node.kind !== 'diagnostic') this.#renderSpend(node, badges);
    if (node.kind === 'diagnostic') {
      badges.append(text('span', 'badge reason', node.reason ?? 'unavailable', 'badge reason'));
      row.append(badges, text('span', 'note', 'cannot be shown', 'note'));
    } else {
      if (node.label) row.append(text('bdi', 'label', node.label, 'label'));
      if (node.kind === 'child' && node.mode) badges.append(text('span', 'badge mode', node.mode, 'badge mode'));
      row.append(badges);
    }
    const live = this.#live.get(node.id);
    const shown = live?.state ?? this.#activity.get(node.id);
    if (shown) {
      const badge = text('span', `badge activity ${shown}`, shown, `badge activity ${shown}`);
      badge.dataset.state = shown;
      badge.title = STATE_TITLES[shown] ?? shown;
      badges.append(badge);
    }
    // How its last turn (or run) stopped, unless it runs again or its state says it already.
    const stop = live?.stop;
    if (stop && shown !== 'running' && !(stop === 'error' && shown === 'error')) {
      const known = Object.hasOwn(STOPS, stop);
      const [label, spoken] = known ? STOPS[stop] : [stop, `last turn stopped: ${stop}`];
      const kind = known ? stop : 'other';
      const badge = text('span', `badge stop ${kind}`, label, `badge stop ${kind}`);
      badge.dataset.stopReason = stop;
      badge.setAttribute('role', 'img');
      badge.setAttribute('aria-label', visibleText(spoken));
      badge.title = visibleText(spoken);
      badges.append(badge);
    }
    if (!badges.childElementCount) badges.remove();
    if (node.loading) row.append(text('span', 'note', 'loading…', 'note'));
    if (node.error) row.append(text('span', 'note', node.error, 'note error'));
    const streaming = this.#liveLine(node.id);
    if (streaming !== undefined) {
      const el = text('div', 'output live', undefined, 'output live');
      el.append(text('span', undefined, streaming));
      row.append(el);
    } else if (live?.output !== undefined) row.append(this.#renderOutput(node, live.output));

    if (node.expanded && node.children) {
      if (!node.group) {
        const group = document.createElement('ul');
        group.setAttribute('role', 'group');
        group.setAttribute('part', 'group');
        for (const id of node.children) {
          const child = this.#nodes.get(id);
          if (child) group.append(child.li ?? this.#renderItem(child));
        }
        node.group = group;
        li.append(group);
      }
      node.group.hidden = false;
    } else if (node.group) {
      node.group.hidden = true;
    }
  }

  /** Tokens (own, and its subtree's when it has more) and a bar for its budget, into `badges`. */
  #renderSpend(node, badges) {
    const spend = this.#spend.get(node.id);
    if (!spend) return;
    const more = spend.complete ? '' : '+';
    if (spend.subtree > 0) {
      const shown = spend.subtree === spend.own ? `${count(spend.own)}${more} tok` : `${count(spend.own)} · ${count(spend.subtree)}${more} tok`;
      const el = text('span', 'usage', shown, 'usage');
      el.title = `tokens: ${spend.own.toLocaleString('en')} its own, ${spend.subtree.toLocaleString('en')} with its subtree${spend.complete ? '' : ' (or more: a turn was lost)'}`;
      badges.append(el);
    }
    const budget = spend.budget;
    const field = budget && ['tokens', 'cost', 'turns', 'spawns'].find((k) => Number.isFinite(budget.set?.[k]) && Number.isFinite(budget.remaining?.[k]));
    if (field) {
      const set = budget.set[field];
      const used = Math.min(set, Math.max(0, set - budget.remaining[field]));
      const meter = text('span', 'budget', undefined, 'budget');
      meter.setAttribute('role', 'meter');
      meter.setAttribute('aria-valuemin', '0');
      meter.setAttribute('aria-valuemax', String(set));
      meter.setAttribute('aria-valuenow', String(used));
      const all = Object.keys(budget.set).filter((k) => Number.isFinite(budget.remaining?.[k])).map((k) => `${k} ${budget.remaining[k].toLocaleString('en')} of ${budget.set[k].toLocaleString('en')} left`);
      meter.setAttribute('aria-label', `budget: ${all.join(', ')}`);
      meter.title = `budget: ${all.join('; ')}`;
      meter.dataset.field = field;
      meter.classList.toggle('low', used >= 0.9 * set);
      const fill = text('span', 'fill', undefined, 'budget-fill');
      fill.style.inlineSize = `${set > 0 ? (100 * used) / set : 100}%`;
      meter.append(fill);
      badges.append(meter);
    }
  }

  /** The last output: whole in the selected row, else one line of at most ROW_OUTPUT_CHARS (CSS adds the ellipsis). */
  #renderOutput(node, output) {
    const full = node === this.#selected;
    let shown = output;
    if (!full) shown = cut(output.replace(/\s+/g, ' ').trim(), ROW_OUTPUT_CHARS);
    const el = text('div', full ? 'output full' : 'output', shown, full ? 'output full' : 'output');
    el.title = full ? '' : isolated(cut(output, 4000));
    return el;
  }

  // ---- expansion, selection, focus ------------------------------------------

  /** Expands a member, listing its branch first when it was not read yet. */
  async expand(sessionId) {
    const node = typeof sessionId === 'string' ? this.#nodes.get(sessionId) : sessionId;
    if (!node || !node.hasChildren || node.expanded || node.loading) return;
    if (node.children === null) {
      node.loading = true;
      node.error = null;
      if (node.li) this.#updateRow(node);
      const signal = this.#controller?.signal;
      const generation = this.#rootNode;
      try {
        const live = Boolean(this.#runtime);
        const { rows } = await this.#list(node.id, this.#initialDepth, signal);
        if (generation !== this.#rootNode || !this.#nodes.has(node.id)) return;
        const added = this.#ingest(rows, node, live ? Infinity : this.#initialDepth);
        // The levels just listed open like the ones listed up front.
        for (const n of added) {
          n.expanded = n.hasChildren && n.children !== null && n.depth - node.depth < this.#initialDepth;
        }
      } catch (error) {
        node.loading = false;
        node.error = 'could not be read';
        if (node.li) this.#updateRow(node);
        this.dispatchEvent(new CustomEvent('error', { detail: { error, sessionId: node.id } }));
        return;
      }
      node.loading = false;
    }
    node.expanded = true;
    if (node.li) this.#updateRow(node);
  }

  /** Collapses a member's branch. */
  collapse(sessionId) {
    const node = typeof sessionId === 'string' ? this.#nodes.get(sessionId) : sessionId;
    if (!node || !node.expanded) return;
    node.expanded = false;
    if (this.#focused && this.#isBelow(this.#focused, node)) this.#focus(node, true);
    if (node.li) this.#updateRow(node);
  }

  /** Selects a member (expanding the loaded branches above it); emits `select` unless `{emit:false}`. */
  select(sessionId, { emit = true, focus = true } = {}) {
    const node = this.#nodes.get(sessionId);
    if (!node || node.kind === 'diagnostic') return false;
    for (let p = this.#nodes.get(node.parentId); p; p = this.#nodes.get(p.parentId)) {
      if (!p.expanded) {
        p.expanded = true;
        this.#updateRow(p);
      }
    }
    this.#setSelected(node);
    if (focus) this.#focus(node, true);
    if (emit) this.#emitSelect(node);
    return true;
  }

  #setSelected(node) {
    const previous = this.#selected;
    this.#selected = node;
    if (previous?.li) previous.li.setAttribute('aria-selected', 'false');
    if (node?.li) node.li.setAttribute('aria-selected', 'true');
    // The output is shown whole only in the selected row.
    for (const n of new Set([previous, node])) {
      if (n?.li && this.#live.get(n.id)?.output !== undefined) this.#updateRow(n);
    }
  }

  #emitSelect(node) {
    this.dispatchEvent(
      new CustomEvent('select', { detail: { sessionId: node.id, name: node.fullName, named: node.named }, bubbles: true, composed: true }),
    );
  }

  #isBelow(node, ancestor) {
    for (let p = this.#nodes.get(node.parentId); p; p = this.#nodes.get(p.parentId)) if (p === ancestor) return true;
    return false;
  }

  #visible(node) {
    for (let p = this.#nodes.get(node.parentId); p; p = this.#nodes.get(p.parentId)) if (!p.expanded) return false;
    return Boolean(node.li);
  }

  /** Visible items in document order. */
  #visibleNodes() {
    const out = [];
    const walk = (node) => {
      out.push(node);
      if (node.expanded && node.children) for (const id of node.children) walk(this.#nodes.get(id));
    };
    if (this.#rootNode) walk(this.#rootNode);
    return out;
  }

  #focus(node, move) {
    if (!node?.li) return;
    if (this.#focused?.li && this.#focused !== node) this.#focused.li.tabIndex = -1;
    this.#focused = node;
    node.li.tabIndex = 0;
    if (move) node.li.focus({ preventScroll: false });
  }

  #nodeOf(target) {
    for (let el = target; el && el !== this.#tree; el = el.parentNode) {
      const node = this.#itemNode.get(el);
      if (node) return node;
    }
    return null;
  }

  #onClick(event) {
    const node = this.#nodeOf(event.target);
    if (!node) return;
    const onToggle = event.target instanceof Element && event.target.classList.contains('toggle');
    if (onToggle && node.hasChildren) {
      if (node.expanded) this.collapse(node);
      else void this.expand(node);
      this.#focus(node, true);
      return;
    }
    this.#focus(node, true);
    if (node.kind !== 'diagnostic') {
      this.#setSelected(node);
      this.#emitSelect(node);
    }
  }

  #onDoubleClick(event) {
    const node = this.#nodeOf(event.target);
    if (!node || !node.hasChildren) return;
    if (node.expanded) this.collapse(node);
    else void this.expand(node);
  }

  #onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const node = this.#focused;
    if (!node) return;
    const visible = this.#visibleNodes();
    const at = visible.indexOf(node);
    let handled = true;
    switch (event.key) {
      case 'ArrowDown':
        if (at >= 0 && at + 1 < visible.length) this.#focus(visible[at + 1], true);
        break;
      case 'ArrowUp':
        if (at > 0) this.#focus(visible[at - 1], true);
        break;
      case 'ArrowRight':
        if (node.hasChildren && !node.expanded) void this.expand(node);
        else if (node.expanded && node.children?.length) this.#focus(this.#nodes.get(node.children[0]), true);
        break;
      case 'ArrowLeft':
        if (node.expanded) this.collapse(node);
        else if (node.parentId && this.#nodes.get(node.parentId)) this.#focus(this.#nodes.get(node.parentId), true);
        break;
      case 'Home':
        if (visible.length) this.#focus(visible[0], true);
        break;
      case 'End':
        if (visible.length) this.#focus(visible[visible.length - 1], true);
        break;
      case 'Enter':
      case ' ':
        if (node.kind !== 'diagnostic') {
          this.#setSelected(node);
          this.#emitSelect(node);
        }
        break;
      default:
        handled = false;
    }
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  }
}

if (!customElements.get('subagent-tree')) customElements.define('subagent-tree', SubagentTreeElement);
