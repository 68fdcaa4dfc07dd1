// The subagent-tree demo: a live agent tree in the browser, persisted in
// IndexedDB, driven by one tab (others follow read-only), with a scripted
// agent host and no network. Every piece of tree or message text is set with
// textContent; nothing from the store or the user becomes markup.
//
// URL parameters: db (IndexedDB database, default "subagent-tree-demo"),
// think (ms per scripted turn, default 700), autorun=0 (no opening script);
// worker=<base URL>&tree=<id> follows a tree of the example edge worker
// (examples/edge-worker) read-only instead, over its Server-Sent Events.
import { SubagentRuntime, SubagentError, validateName } from './pkg/web.js';
import './pkg/web/subagent-tree-element.js';
import { IndexedDBStore, TreeLock } from './pkg/web/indexeddb-store.js';
import { ScriptedHost, LONG_TASK, contentText } from './host.js';

const params = new URLSearchParams(location.search);
const DB = params.get('db') || 'subagent-tree-demo';
const THINK = Number(params.get('think') ?? 700);
const TREE_TOKENS = 20_000; // a fresh demo tree's budget, in tokens (its bar is on lead's row)
const AUTORUN = params.get('autorun') !== '0';
const ROOT_KEY = `subagent-tree-demo:${DB}:root`;
const OPENING = 'Prepare the 1.0 release: have the change reviewed and the release notes drafted.';
const TRANSCRIPT_TYPES = ['message/input', 'turn/end'];
// Relayed to a follower tab's <subagent-tree> (the ones the element follows itself).
const LIVE_EVENTS = ['subagent/start', 'subagent/end', 'subagent/turn', 'subagent/message', 'subagent/catalog', 'subagent/delta'];

const $ = (id) => document.getElementById(id);
const ui = {
  role: $('role'),
  tree: $('tree'),
  controls: $('controls'),
  selectedName: $('selected-name'),
  selectedId: $('selected-id'),
  transcript: $('transcript'),
  spawnForm: $('spawn-form'),
  spawnName: $('spawn-name'),
  spawnLabel: $('spawn-label'),
  spawnParent: $('spawn-parent'),
  messageForm: $('message-form'),
  messageTo: $('message-to'),
  messageText: $('message-text'),
  messageLong: $('message-long'),
  interrupt: $('interrupt'),
  interruptName: $('interrupt-name'),
  result: $('result'),
  reset: $('reset'),
};

const state = {
  store: null,
  lock: null,
  runtime: null,
  host: null,
  root: null, // live lead handle (leader only)
  rootId: localStorage.getItem(ROOT_KEY),
  selected: null, // { sessionId, name }
  running: new Set(), // session ids whose turn is running (from `subagent/turn`): Interrupt is offered only for these
  transcript: { sessionId: null, nextSeq: 0, chain: Promise.resolve() },
};

// ---- small UI helpers -------------------------------------------------------

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function showResult(message, kind = 'ok') {
  ui.result.className = `result ${kind}`;
  ui.result.replaceChildren();
  if (kind === 'error' && message && typeof message === 'object') {
    ui.result.append(el('code', 'code', message.code ?? 'Error'), document.createTextNode(` ${message.message}`));
  } else {
    ui.result.textContent = message;
  }
}

function showError(error) {
  const code = error instanceof SubagentError || typeof error?.code === 'string' ? error.code : error?.name;
  showResult({ code, message: error?.message ?? String(error) }, 'error');
}

function setRole(role) {
  document.body.dataset.role = role;
  if (role === 'leader') {
    ui.role.textContent = 'this tab drives the tree';
    ui.role.className = 'role leader';
  } else if (role === 'follower') {
    ui.role.textContent = 'read-only (another tab drives this tree)';
    ui.role.className = 'role follower';
  } else {
    ui.role.textContent = role;
    ui.role.className = 'role';
  }
  updateControls();
}

function updateControls() {
  const leader = document.body.dataset.role === 'leader' && state.root;
  ui.controls.disabled = !leader;
  ui.reset.disabled = !leader;
  const name = state.selected?.name;
  ui.spawnParent.textContent = name ?? '—';
  ui.interruptName.textContent = name ?? '—';
  ui.interrupt.disabled = !leader || !state.selected || !state.running.has(state.selected.sessionId);
}

// ---- transcript ---------------------------------------------------------------

function senderLabel(source) {
  switch (source?.kind) {
    case 'agent-message':
      return `message from agent ${source.senderName}`;
    case 'subagent-settled':
      return `notice: ${source.senderName} settled (${source.stopReason})`;
    case 'user':
      return 'from the user';
    default:
      return 'message';
  }
}

function renderEntry(event) {
  const p = event.payload ?? {};
  if (event.type === 'message/input') {
    const kind = p.source?.kind ?? 'user';
    const li = el('li', `entry input ${kind}`);
    li.dataset.seq = String(event.seq);
    li.dataset.kind = kind;
    li.append(el('div', 'meta', senderLabel(p.source)));
    const body = el('div', 'body');
    const text = contentText(p.content);
    if (kind === 'agent-message') {
      // The framing the recipient's model sees: data from another agent, by full name.
      body.append(el('span', 'frame', `<agent-message from="${p.source.senderName}">`), el('span', 'framed', text), el('span', 'frame', '</agent-message>'));
    } else {
      body.textContent = text;
    }
    li.append(body);
    return li;
  }
  const stop = p.stopReason ?? 'completed';
  const li = el('li', `entry turn ${stop}`);
  li.dataset.seq = String(event.seq);
  li.dataset.kind = 'turn';
  li.dataset.stopReason = stop;
  const meta = el('div', 'meta', `${state.transcript.name ?? 'agent'} replied`);
  if (stop !== 'completed') meta.append(' ', el('span', 'stop', stop));
  li.append(meta, el('div', 'body', contentText(p.output) || '(no text)'));
  if (p.diagnostic) li.append(el('div', 'diagnostic', p.diagnostic));
  return li;
}

/** Shows a member's transcript, reading only the events after what is shown. */
function refreshTranscript(sessionId) {
  const t = state.transcript;
  if (sessionId && sessionId !== t.sessionId) return t.chain;
  t.chain = t.chain.then(async () => {
    const id = t.sessionId;
    if (!id || !state.store) return;
    const events = (await state.store.read(id, { types: TRANSCRIPT_TYPES, fromSeq: t.nextSeq })) ?? [];
    if (id !== t.sessionId) return;
    const placeholder = ui.transcript.querySelector('.empty');
    if (events.length && placeholder) placeholder.remove();
    for (const e of events) {
      if (e.seq < t.nextSeq) continue;
      ui.transcript.append(renderEntry(e));
      t.nextSeq = e.seq + 1;
    }
    if (events.length) ui.transcript.scrollTop = ui.transcript.scrollHeight;
  }).catch((e) => console.warn('transcript', e));
  return t.chain;
}

function selectMember({ sessionId, name }) {
  state.selected = { sessionId, name };
  ui.selectedName.textContent = name;
  ui.selectedId.textContent = sessionId === name ? '' : sessionId;
  ui.messageTo.value = name;
  state.transcript = { sessionId, name, nextSeq: 0, chain: state.transcript.chain };
  ui.transcript.replaceChildren(el('li', 'empty', 'No messages yet.'));
  updateControls();
  void refreshTranscript(sessionId);
}

// ---- leader: drive the tree ------------------------------------------------------

async function drive() {
  const host = new ScriptedHost({ thinkMs: THINK });
  const runtime = new SubagentRuntime({ store: state.store, host, maxDepth: 3, capacity: 8 });
  host.runtime = runtime;
  state.runtime = runtime;
  state.host = host;
  const fresh = !state.rootId;
  // A fresh tree gets a budget for the whole tree: its bar shows on the lead's row.
  const root = await runtime.openRoot(fresh ? { budget: { tokens: TREE_TOKENS } } : { sessionId: state.rootId });
  state.root = root;
  state.rootId = root.sessionId;
  localStorage.setItem(ROOT_KEY, root.sessionId);
  runtime.on(
    'subagent/turn',
    ({ sessionId, phase }) => {
      if (phase === 'start') state.running.add(sessionId);
      else state.running.delete(sessionId);
      updateControls();
    },
    { root: root.sessionId },
  );
  for (const type of LIVE_EVENTS) {
    runtime.on(type, (detail) => state.lock.post({ type: 'event', eventType: type, detail }), { root: root.sessionId });
  }
  state.lock.post({ type: 'root', rootId: root.sessionId });
  ui.tree.store = null;
  ui.tree.runtime = runtime;
  ui.tree.root = root;
  await ui.tree.ready;
  if (!state.selected) ui.tree.select(root.sessionId, { focus: false });
  setRole('leader');
  if (fresh && AUTORUN) await runtime.prompt(root, root.sessionId, OPENING, {});
}

async function activitySnapshot() {
  if (!state.runtime || !state.root) return [];
  const rows = await state.runtime.listDescendants(state.root.sessionId, {});
  return rows.filter((r) => r.kind === 'child').map((r) => [r.id, r.activity]);
}

// ---- follower: read-only view ------------------------------------------------------

function follow() {
  setRole('follower');
  if (state.rootId) showTreeFromStore();
  state.lock.post({ type: 'hello' });
}

function showTreeFromStore() {
  ui.tree.runtime = null;
  ui.tree.store = state.store;
  ui.tree.rootId = state.rootId;
  void ui.tree.ready.then(() => {
    if (!state.selected) ui.tree.select(state.rootId, { focus: false });
  });
}

async function onMessage(message) {
  if (!message || typeof message !== 'object') return;
  const leader = state.lock.isLeader;
  switch (message.type) {
    case 'hello':
      if (leader && state.root) {
        state.lock.post({ type: 'root', rootId: state.root.sessionId });
        state.lock.post({ type: 'activity', rows: await activitySnapshot() });
      }
      break;
    case 'root':
      if (!leader && message.rootId !== state.rootId) {
        state.rootId = message.rootId;
        state.selected = null;
        showTreeFromStore();
      }
      break;
    case 'activity':
      if (!leader) for (const [id, activity] of message.rows) ui.tree.setActivity(id, activity);
      break;
    case 'event':
      if (!leader) ui.tree.applyEvent(message.eventType, message.detail);
      break;
    case 'reset':
      location.reload();
      break;
  }
}

// ---- controls ---------------------------------------------------------------------

async function spawnChild(event) {
  event.preventDefault();
  const parent = state.selected;
  if (!parent || !state.runtime) return;
  const name = ui.spawnName.value.trim();
  const label = ui.spawnLabel.value.trim() || 'Help out';
  try {
    if (name) validateName(name); // the library's INVALID_NAME, before any work
    const spec = { name: name || undefined, label, prompt: label };
    // The member's live handle under the root's authority: a cold one is resumed
    // without a message, so a refused spawn costs no model turn and writes nothing.
    const held = await state.runtime.reopen(state.root, parent.sessionId);
    let activation;
    try {
      activation = await state.runtime.startActivation({ provider: 'spawn', parent: held.agent, delivery: 'parent', ...spec });
    } finally {
      held.release();
    }
    activation.result.catch(() => {});
    showResult(`Started ${activation.name} under ${parent.name}.`);
    ui.spawnName.value = '';
  } catch (error) {
    showError(error);
  }
}

async function sendMessage(event) {
  event.preventDefault();
  if (!state.runtime) return;
  const to = ui.messageTo.value.trim();
  const text = ui.messageText.value.trim();
  if (!to || !text) return;
  try {
    const target = await state.runtime.resolveName(state.root, to, {});
    const content = ui.messageLong.checked ? `${LONG_TASK} ${text}` : text;
    await state.runtime.prompt(state.root, target, content, {});
    showResult(`Delivered to ${to}.`);
    ui.messageText.value = '';
    ui.messageLong.checked = false;
  } catch (error) {
    showError(error);
  }
}

function interruptSelected() {
  const target = state.selected;
  if (!target || !state.runtime) return;
  try {
    const { signalled } = state.runtime.interrupt(target.sessionId, { kind: 'user', root: state.root });
    showResult(signalled ? `Interrupted ${target.name}: its turn was stopped.` : `${target.name} was not running; nothing was stopped.`);
  } catch (error) {
    showError(error);
  }
}

async function resetTree() {
  if (!state.lock.isLeader) return;
  ui.reset.disabled = true;
  try {
    if (state.root) await state.runtime.closeRoot(state.root).catch(() => {});
    state.store.close();
    localStorage.removeItem(ROOT_KEY);
    await IndexedDBStore.deleteDatabase(DB);
  } finally {
    state.lock.post({ type: 'reset' });
    location.reload();
  }
}

// ---- a worker's tree: read-only, over Server-Sent Events --------------------------

/**
 * Follows a tree of the example edge worker: `<subagent-tree>` takes the
 * worker's listing and an EventSource of its events as its runtime (nothing
 * relays them); the EventSource resumes by itself after a drop or a restart.
 */
function followWorker(base, tree) {
  const url = (path) => new URL(`/trees/${encodeURIComponent(tree)}${path}`, base);
  const source = new EventSource(url('/events'));
  setRole(`following a worker's tree (${new URL(base).host})`);
  source.addEventListener('open', () => (document.body.dataset.stream = 'open'));
  source.addEventListener('error', () => (document.body.dataset.stream = 'reconnecting'));
  ui.tree.runtime = {
    listDescendants: async () => {
      const response = await fetch(url(''));
      if (!response.ok) throw new Error(`GET ${url('').pathname}: ${response.status}`);
      return (await response.json()).rows;
    },
    on(type, listener) {
      const handler = (message) => listener(JSON.parse(message.data));
      source.addEventListener(type, handler);
      return () => source.removeEventListener(type, handler);
    },
  };
  ui.tree.root = tree;
  ui.transcript.replaceChildren(el('li', 'empty', 'Transcripts: GET /trees/:id/transcript on the worker.'));
}

// ---- start ------------------------------------------------------------------------

async function main() {
  ui.tree.addEventListener('select', (e) => selectMember(e.detail));
  ui.tree.addEventListener('error', (e) => console.warn('tree', e.detail.error));
  ui.spawnForm.addEventListener('submit', spawnChild);
  ui.messageForm.addEventListener('submit', sendMessage);
  ui.interrupt.addEventListener('click', interruptSelected);
  ui.reset.addEventListener('click', resetTree);
  setRole('starting…');
  if (params.get('worker')) {
    followWorker(params.get('worker'), params.get('tree') ?? '');
    document.body.dataset.ready = 'true';
    return;
  }
  state.store = await IndexedDBStore.open(DB);
  // Every committed append, by this tab or another: the transcript shown follows it.
  state.store.subscribe(({ sessionId }) => void refreshTranscript(sessionId));
  state.lock = new TreeLock(DB);
  state.lock.addEventListener('message', (e) => void onMessage(e.detail));
  state.lock.addEventListener('rolechange', (e) => {
    // A follower whose leader went away takes over the same tree from IndexedDB.
    if (e.detail.role === 'leader' && document.body.dataset.role === 'follower') {
      state.rootId = localStorage.getItem(ROOT_KEY) ?? state.rootId;
      drive().catch(fail);
    }
  });
  const role = await state.lock.acquire();
  if (role === 'leader') await drive();
  else follow();
  document.body.dataset.ready = 'true';
}

function fail(error) {
  console.error(error);
  setRole('failed');
  showError(error);
}

main().catch(fail);
