// A small TypeScript consumer of the package's .d.ts, checked with
// `tsc --noEmit --strict`. `@ts-expect-error` lines must stay errors.
import {
  Agent,
  MemoryStore,
  SubagentError,
  SubagentRuntime,
  decodeCatalogPayload,
  defaultName,
  errorCodes,
  init,
  isValidName,
  listDescendants,
  parseAgentRef,
  projectCatalog,
  resolveName,
  validateName,
} from 'subagent-tree';
import type {
  RuntimeLimits,
  AgentHost,
  AgentRef,
  ContentBlock,
  LiveRow,
  LocalActivation,
  RuntimeEventMap,
  SubagentActivation,
  SubagentEndEvent,
  SubagentResult,
  ToolResult,
  CatalogEntry,
  ChildRow,
  DiagnosticRow,
  Row,
  SessionEvent,
  SessionStore,
  SubagentErrorCode,
} from 'subagent-tree';

export async function tour(signal: AbortSignal): Promise<string[]> {
  await init();
  const ok: boolean = isValidName('reviewer');
  const name: string = validateName('reviewer');
  const next: string = defaultName(['agent-1']);
  const ref: AgentRef = parseAgentRef('reviewer/checker');
  if (ref.kind === 'path') {
    const segments: string[] = ref.segments;
    void segments;
  } else if (ref.kind === 'session') {
    const id: string = ref.id;
    void id;
  }
  const entry: CatalogEntry = decodeCatalogPayload({ version: 3, childId: 'c', childCreatedAt: 1, mode: 'one-shot', name: 'c' });
  const label: string | undefined = entry.label;
  const events: SessionEvent[] = [{ seq: 0, type: 'subagent/catalog', payload: { version: 0 } }];
  const entries: CatalogEntry[] = projectCatalog(events, { inheritedEventCount: 0 });
  projectCatalog(events);

  const memory = new MemoryStore();
  await memory.append('root', events);
  const read: SessionEvent[] | null = await memory.read('root');
  await memory.read('root', { types: ['subagent/catalog'], fromSeq: 1, signal });
  const many: (SessionEvent[] | null)[] = await memory.readMany(['root']);
  const flushed: boolean = await memory.flush('root');

  // Any object with read (and optionally readMany) is a store; methods may be sync or async.
  const custom: SessionStore = {
    append: () => undefined,
    read: (_id, options) => (options.signal?.aborted ? null : []),
    readMany: async (ids) => ids.map(() => null),
  };
  const rows: Row[] = await listDescendants(custom, 'root', { signal });
  await listDescendants(memory, 'root');
  const out: string[] = [];
  for (const row of rows) {
    if (row.kind === 'child') {
      const child: ChildRow = row;
      out.push(child.path ?? child.id, String(child.hasChildren), child.mode);
    } else {
      const diagnostic: DiagnosticRow = row;
      out.push(diagnostic.reason);
    }
  }
  const id: string = await resolveName(memory, 'root', 'lead', { signal });

  try {
    validateName('Lead');
  } catch (e) {
    if (e instanceof SubagentError) {
      const code: SubagentErrorCode = e.code;
      const sentence: string = e.message;
      out.push(code, sentence, e.name);
    }
  }
  const codes: readonly SubagentErrorCode[] = errorCodes;
  const made = new SubagentError('UNAUTHORIZED', 'no', { cause: 1 });

  // @ts-expect-error names are strings
  isValidName(3);
  // @ts-expect-error a diagnostic row has no hasChildren until narrowed
  rows[0]?.hasChildren;
  // @ts-expect-error segments exist only on a path reference
  parseAgentRef('x').segments;
  // @ts-expect-error a store needs read
  await listDescendants({ append: () => undefined }, 'root');
  // @ts-expect-error unknown option
  await listDescendants(memory, 'root', { signl: signal });
  // @ts-expect-error codes are a closed union
  new SubagentError('NOT_A_CODE', 'x');
  // @ts-expect-error errorCodes is read-only
  errorCodes.push('CANCELLED');
  // @ts-expect-error modes are a closed union
  const badMode: CatalogEntry['mode'] = 'sometimes';
  // @ts-expect-error inheritedEventCount is a number
  projectCatalog(events, { inheritedEventCount: '3' });

  void [ok, name, next, label, entries, read, many, flushed, id, codes, made, badMode];
  return out;
}

// subagent-tree/lite: the same listing types, the same error class.
import * as lite from 'subagent-tree/lite';
async function liteConsumer(): Promise<void> {
  const store = new lite.MemoryStore();
  const rows: Row[] = await lite.listDescendants(store, 'root');
  const id: string = await lite.resolveName(store, 'root', 'reviewer');
  const err: SubagentError = new lite.SubagentError('UNKNOWN_AGENT', 'x');
  const codes: readonly string[] = lite.errorCodes;
  void [rows, id, err, codes];
  // @ts-expect-error the lite entry has no runtime
  void lite.SubagentRuntime;
}
void liteConsumer;

// The live runtime: optional options, per-event listener types, content blocks.
export async function runtimeTour(signal: AbortSignal): Promise<string[]> {
  const host: AgentHost = {
    runTurn(turn) {
      const first = turn.input[0];
      const text: string = first ? first.text : '';
      if (first?.source.kind === 'agent-message') {
        const sender: string = first.source.senderName;
        void sender;
      }
      return { messages: [`${turn.name}: ${text}`, [{ type: 'text', text }]], stopReason: 'completed' };
    },
  };
  const runtime = new SubagentRuntime({ store: new MemoryStore(), host, maxDepth: 2 });
  // Issue 42: the runtime options the README documents are typed.
  const limits: RuntimeLimits = { promptBytes: 4 << 20, toolCallsPerReply: 8 };
  new SubagentRuntime({ store: new MemoryStore(), host, limits, confineCwd: false, recovery: 'rerun' });
  // @ts-expect-error: no limit is named promptByte
  new SubagentRuntime({ store: new MemoryStore(), host, limits: { promptByte: 1 } });
  // @ts-expect-error: confineCwd is a boolean
  new SubagentRuntime({ store: new MemoryStore(), host, confineCwd: 'no' });
  const lead: Agent = await runtime.openRoot();
  await runtime.openRoot({ sessionId: 'r2', cwd: '/' });
  const child: LocalActivation = await runtime.startActivation({ provider: 'spawn', parent: lead, label: 'L', prompt: 'p' });
  const grandchild = await runtime.startActivation({ provider: 'fork', parent: child.agent, label: 'L', prompt: [{ type: 'text', text: 'p' }] });
  const viaOther: SubagentActivation = await runtime.startActivation({ provider: 'mine', parent: lead, label: 'L', prompt: 'p' });
  // Issue 42: the provider defaults to 'spawn', so a spec without one is a local activation with its handle.
  const byDefault: LocalActivation = await runtime.startActivation({ parent: lead, label: 'L', prompt: 'p' });
  void byDefault.agent;
  // One call shape: a trailing options object, `{ signal }` (the bare signal is a deprecated overload).
  await runtime.resolveName(lead, 'reviewer', { signal });
  await runtime.waitForQuiescence(lead, { signal });
  const held = await runtime.reopen(lead, 'reviewer', { signal });
  held.release();
  const result: SubagentResult = await grandchild.result;
  const out: string[] = result.output.map((b: ContentBlock) => (b.type === 'text' ? b.text : b.mimeType));
  const rows: LiveRow[] = await runtime.listDescendants(lead.sessionId);
  await runtime.listDescendants(lead.sessionId, signal);
  await runtime.listDescendants(lead.sessionId, { signal });
  for (const row of rows) if (row.kind === 'child') out.push(row.path ?? row.id, row.activity);
  await runtime.prompt(lead, child.childId, 'hi');
  await runtime.prompt(lead, child.childId, 'hi', { delivery: 'steer', signal });
  await runtime.sendMessage(child.agent, lead.sessionId, 'hi');
  const id: string = await runtime.resolveName(lead, 'reviewer');
  await runtime.resolveName(lead, 'reviewer', signal);
  const offStart = runtime.on('subagent/start', (e) => out.push(e.name, e.label, e.mode, e.parentSessionId));
  const offEnd = runtime.on('subagent/end', (e: SubagentEndEvent) => out.push(e.stopReason, e.error ?? ''), { root: lead.sessionId });
  runtime.on('subagent/catalog', (e) => out.push(e.entry.name ?? e.entry.id));
  runtime.on('subagent/message', (e) => out.push(e.messageId, e.kind));
  runtime.on('subagent/turn', (e) => out.push(e.phase, e.output ?? ''));
  runtime.on('subagent/provider-added', (provider) => out.push(provider.name.toUpperCase()));
  const removed: (event: RuntimeEventMap['subagent/provider-removed']) => void = (name) => out.push(name);
  runtime.on('subagent/provider-removed', removed);
  offStart();
  offEnd();
  const tools = runtime.toolsFor(lead);
  const called: ToolResult | undefined = await tools[0]?.call({ scope: 'children' }, { signal });
  try {
    await runtime.sendMessage(lead, 'nobody', 'x');
  } catch (e) {
    if (e instanceof SubagentError && e.code === 'UNAUTHORIZED') out.push(e.message);
  }

  // @ts-expect-error a diagnostic row has no path until narrowed
  rows[0]?.path;
  // @ts-expect-error an image block has no text until narrowed
  result.output[0]?.text;
  // @ts-expect-error an activation of another provider may have no agent
  const maybe: Agent = viaOther.agent;
  // @ts-expect-error the start payload is an object, not a provider name
  runtime.on('subagent/start', (e: string) => e);
  // @ts-expect-error provider-added carries the provider object, provider-removed its name
  runtime.on('subagent/provider-removed', (e) => e.name);
  // @ts-expect-error no such event
  runtime.on('subagent/nothing', () => undefined);
  // @ts-expect-error content blocks have a known type
  await runtime.prompt(lead, lead.sessionId, [{ type: 'txt', text: 'x' }]);
  // @ts-expect-error the loader's internals are not part of the package's types
  runtime.free();
  void [called, id, maybe];
  return out;
}

// subagent-tree/testing: scripted hosts, record and replay, determinism, snapshots, portable trees.
import {
  TestingError,
  exportTree,
  importTree,
  recordingHost,
  replayHost,
  scriptedHost,
  seededIds,
  settle,
  snapshotTree,
  testingErrorCodes,
  treeLogText,
  virtualClock,
} from 'subagent-tree/testing';
import type { CassetteRecord, Script, TestingErrorCode, TreeBundle } from 'subagent-tree/testing';

export async function testingKit(): Promise<string> {
  const script: Script = {
    lead: [{ steps: [{ call: 'spawn_agent', input: { name: 'reviewer', description: 'Review', prompt: 'review' } }], reply: 'delegated' }, 'done'],
    reviewer: [{ expectInput: /review/, steps: [{ waitForMessage: 'go' }, { say: 'ok' }], stopReason: 'completed' }, (turn) => ({ messages: [turn.name] })],
    'reviewer/checker': [{ steps: [{ waitForAbort: true }] }, { fail: 'boom' }],
  };
  const clock = virtualClock({ start: 0, tick: 1 });
  const host = recordingHost(scriptedHost(script), { onRecord: (line: string) => void line });
  const store = new MemoryStore();
  const runtime = new SubagentRuntime({ store, host, now: clock.now, newId: seededIds('t') });
  const lead = await runtime.openRoot();
  await settle(runtime, lead, { hosts: [scriptedHost(script).attach(runtime)] });
  const records: readonly CassetteRecord[] = host.records;
  const replay = replayHost(host.cassette());
  replay.check();
  const bundle: TreeBundle = await exportTree(store, lead.sessionId);
  const { sessions } = await importTree(new MemoryStore(), bundle);
  const code: TestingErrorCode | undefined = testingErrorCodes[0];
  try {
    replayHost('not a cassette');
  } catch (e) {
    if (e instanceof TestingError && e.code === 'INVALID_CASSETTE') void e.message;
  }
  // @ts-expect-error a step has exactly one known kind
  const bad: Script = { lead: [{ steps: [{ tool: 'spawn_agent' }] }] };
  // @ts-expect-error not a testing error code
  const wrong: TestingErrorCode = 'UNKNOWN_AGENT';
  void [records, sessions, code, bad, wrong, clock.advance(5)];
  return (await snapshotTree(runtime, store, lead)) + (await treeLogText(store, lead.sessionId));
}
