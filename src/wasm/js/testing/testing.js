// subagent-tree/testing: a test-harness kit over the public API. Scripted
// hosts, record and replay of model turns (cassettes), a virtual clock and a
// seeded id source, settling a whole tree, stable tree snapshots, and moving
// every log of a tree between two stores. Plain JS: the same in Node,
// browsers and workerd; it needs no wasm of its own.

/** Every failure of this kit. `code` is stable (see `testingErrorCodes`). */
export class TestingError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.code = code;
  }
}
Object.defineProperty(TestingError.prototype, 'name', { value: 'TestingError', writable: true, configurable: true });

export const testingErrorCodes = Object.freeze([
  'INVALID_ARGUMENT',
  'INVALID_SCRIPT',
  'UNSCRIPTED_TURN',
  'SCRIPT_MISMATCH',
  'SCRIPTED_FAILURE',
  'INVALID_CASSETTE',
  'REPLAY_DRIFT',
  'INVALID_BUNDLE',
  'TARGET_NOT_EMPTY',
  'IMPORT_FAILED',
]);

const fail = (code, message, options) => new TestingError(code, message, options);
const quote = (v) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);
};
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const json = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
const turnRef = (name, n) => `${name} turn ${n}`;

/** A copy of the turn the kit can change (tools, takeSteered) without touching the runtime's. */
function copyTurn(turn, tools, takeSteered) {
  const copy = {};
  for (const key of ['sessionId', 'rootId', 'name', 'parentName', 'cwd', 'first', 'signal', 'input', 'inputText', 'context', 'guidance', 'outputSchema', 'agent', 'waitForSteered', 'waitForInterrupt', 'turnId', 'emit']) {
    if (turn[key] !== undefined) copy[key] = turn[key];
  }
  copy.tools = tools;
  copy.takeSteered = takeSteered;
  return Object.freeze(copy);
}

/** Turn counters per full name (1-based), shared by every kit host. */
function counter() {
  const turns = new Map();
  return (name) => {
    const n = (turns.get(name) ?? 0) + 1;
    turns.set(name, n);
    return n;
  };
}

/**
 * Gives a kit host `attach(runtime)`. Waits use the turn's own named
 * conditions (`waitForSteered`, `waitForInterrupt`), so no kit host needs the
 * runtime any more; the method stays for code written against the first kit.
 */
function attachable(host) {
  host.attach = (runtime) => {
    if (!runtime || typeof runtime.on !== 'function') throw fail('INVALID_ARGUMENT', 'attach needs a SubagentRuntime');
    return host;
  };
  return host;
}

/** Failure bookkeeping: `failures` lists every error a turn threw; `check()` throws the first. */
function failures() {
  const list = [];
  return {
    list,
    note(error) {
      list.push(error);
      return error;
    },
    check() {
      if (list.length) throw list[0];
    },
  };
}

// ---------------------------------------------------------------- determinism

/**
 * A virtual clock: every read returns the current time, then advances it by
 * `tick` ms (default 1, so successive events are ordered); `advance(ms)` moves it on.
 */
export function virtualClock({ start = 1_700_000_000_000, tick = 1 } = {}) {
  if (!Number.isFinite(start) || !Number.isFinite(tick) || tick < 0) {
    throw fail('INVALID_ARGUMENT', `virtualClock needs a finite start and a non-negative tick, not start ${quote(start)}, tick ${quote(tick)}`);
  }
  let t = start;
  const clock = {
    now: () => {
      const value = t;
      t += tick;
      return value;
    },
    peek: () => t,
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw fail('INVALID_ARGUMENT', `advance needs a non-negative number of ms, not ${quote(ms)}`);
      t += ms;
      return t;
    },
  };
  return Object.freeze(clock);
}

/** A string's 32-bit FNV-1a hash (the seed of `seededIds`). */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * A seeded id source for `RuntimeInit.newId`: version-4-shaped UUIDs from a
 * small PRNG (mulberry32) seeded by `seed`, so two runs with one seed mint
 * the same ids in the same order.
 */
export function seededIds(seed = 'subagent-tree') {
  if (typeof seed !== 'string' && !Number.isInteger(seed)) throw fail('INVALID_ARGUMENT', `seededIds needs a string or integer seed, not ${quote(seed)}`);
  let state = hash(String(seed));
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0);
  };
  const hex = (n) => n.toString(16).padStart(8, '0');
  return (_kind) => {
    const h = hex(next()) + hex(next()) + hex(next()) + hex(next());
    const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
}

// ------------------------------------------------------------ scripted hosts

const STEP_KEYS = ['call', 'say', 'emit', 'waitForMessage', 'waitForAbort'];

function checkScript(script) {
  if (!isObject(script)) throw fail('INVALID_SCRIPT', `a script is an object of full names to turns, not ${quote(script)}`);
  const out = new Map();
  for (const [name, turns] of Object.entries(script)) {
    if (!Array.isArray(turns)) throw fail('INVALID_SCRIPT', `script[${quote(name)}] must be an array of turns`);
    out.set(name, turns.map((turn, i) => {
      const where = `script[${quote(name)}][${i}] (${turnRef(name, i + 1)})`;
      if (typeof turn === 'string') return { reply: turn, steps: [] };
      if (typeof turn === 'function') return { run: turn, steps: [] };
      if (!isObject(turn)) throw fail('INVALID_SCRIPT', `${where} must be a string, a function or a turn object`);
      const steps = turn.steps ?? [];
      if (!Array.isArray(steps)) throw fail('INVALID_SCRIPT', `${where}.steps must be an array`);
      steps.forEach((step, j) => {
        const kinds = isObject(step) ? STEP_KEYS.filter((k) => k in step) : [];
        if (kinds.length !== 1) throw fail('INVALID_SCRIPT', `${where}.steps[${j}] must have exactly one of ${STEP_KEYS.join(', ')}`);
        if ('call' in step && typeof step.call !== 'string') throw fail('INVALID_SCRIPT', `${where}.steps[${j}].call must be a tool name`);
      });
      for (const key of ['reply', 'fail', 'stopReason', 'diagnostic']) {
        if (turn[key] !== undefined && typeof turn[key] !== 'string') throw fail('INVALID_SCRIPT', `${where}.${key} must be a string`);
      }
      if (turn.expectInput !== undefined && typeof turn.expectInput !== 'string' && !(turn.expectInput instanceof RegExp)) {
        throw fail('INVALID_SCRIPT', `${where}.expectInput must be a string or a RegExp`);
      }
      return { ...turn, steps };
    }));
  }
  return out;
}

function matches(expect, text) {
  return typeof expect === 'string' ? text.includes(expect) : expect.test(text);
}

/** One of the turn's runtime methods; a turn not made by a SubagentRuntime may lack it. */
function turnCall(turn, kind, where) {
  if (typeof turn[kind] !== 'function') throw fail('INVALID_ARGUMENT', `${where}: this turn has no ${kind}(); kit hosts need turns from a SubagentRuntime`);
  return turn[kind];
}

/** Calls one of the turn's waits; a turn not made by a SubagentRuntime may lack them. */
function turnWait(turn, kind, where) {
  if (typeof turn[kind] !== 'function') throw fail('INVALID_ARGUMENT', `${where}: this turn has no ${kind}(); kit hosts need turns from a SubagentRuntime`);
  return turn[kind]();
}

/**
 * Takes steered messages until `done(taken)` holds. The wait ends on the
 * turn's named conditions, never a timer: when `done` never holds, `end`
 * says why ('aborted', 'ended', or 'quiet': the rest of the tree went quiet,
 * so no message can come).
 */
async function takeSteeredUntil(turn, done, where) {
  const taken = [];
  for (;;) {
    taken.push(...turn.takeSteered());
    if (done(taken)) return { messages: taken };
    const end = await turnWait(turn, 'waitForSteered', where);
    if (end !== 'steered') return { messages: taken, end };
  }
}

/** Why a wait ended without what it waited for, as a clause. */
const ENDED = { quiet: 'the tree went quiet without it', aborted: 'the turn was interrupted first', ended: 'the turn ended first' };

/**
 * An `AgentHost` that plays a declarative script per full name. Each turn is
 * a string (the reply), a function `(turn) => outcome`, or `{ expectInput?,
 * steps?, reply?, stopReason?, diagnostic?, structured?, usage?, fail? }`
 * whose steps are `{ call, input?, expectError? }`, `{ say }`,
 * `{ waitForMessage: true | text | RegExp }` and `{ waitForAbort: true }`.
 */
export function scriptedHost(script, { onTurn } = {}) {
  const turns = checkScript(script);
  const next = counter();
  const problems = failures();
  const host = attachable({
    failures: problems.list,
    check: problems.check,
    async runTurn(turn) {
      const n = next(turn.name);
      const where = turnRef(turn.name, n);
      try {
        const planned = turns.get(turn.name)?.[n - 1];
        if (!planned) {
          const have = turns.get(turn.name)?.length ?? 0;
          throw fail('UNSCRIPTED_TURN', `${where} is not scripted (the script has ${have} turn(s) for ${quote(turn.name)}); its input: ${quote(turn.inputText.join('\n'))}`);
        }
        onTurn?.({ name: turn.name, turn: n, inputText: turn.inputText });
        if (planned.run) return await planned.run(turn);
        const input = turn.inputText.join('\n');
        if (planned.expectInput !== undefined && !matches(planned.expectInput, input)) {
          throw fail('SCRIPT_MISMATCH', `${where} expected input matching ${quote(String(planned.expectInput))}, got ${quote(input)}`);
        }
        const messages = [];
        for (const [j, step] of planned.steps.entries()) {
          if ('say' in step) messages.push(String(step.say));
          else if ('emit' in step) {
            // A streamed part (or parts), published to `subagent/delta` listeners in order.
            for (const part of Array.isArray(step.emit) ? step.emit : [step.emit]) turnCall(turn, 'emit', where)(part);
          }
          else if ('call' in step) {
            const tool = turn.tools.find((t) => t.name === step.call);
            if (!tool) throw fail('SCRIPT_MISMATCH', `${where} step ${j}: no tool named ${quote(step.call)}; this member has ${turn.tools.map((t) => t.name).join(', ') || 'none'}`);
            const result = await tool.call(step.input ?? {}, { signal: turn.signal });
            if (step.expectError !== undefined && result.isError !== step.expectError) {
              throw fail('SCRIPT_MISMATCH', `${where} step ${j}: ${step.call} ${result.isError ? 'was refused' : 'succeeded'}: ${quote(result.content)}`);
            }
          } else if ('waitForMessage' in step) {
            const expect = step.waitForMessage;
            const { end } = await takeSteeredUntil(turn, (taken) => taken.some((m) => expect === true || matches(expect, m.text)), where);
            if (end === 'aborted') return { stopReason: 'aborted', messages };
            if (end) throw fail('SCRIPT_MISMATCH', `${where} step ${j} waits for a message${expect === true ? '' : ` matching ${quote(String(expect))}`}, but ${ENDED[end]}`);
          } else if ('waitForAbort' in step) {
            const end = await turnWait(turn, 'waitForInterrupt', where);
            if (end !== 'aborted') throw fail('SCRIPT_MISMATCH', `${where} step ${j} waits for an interrupt, but ${ENDED[end]}`);
            return { stopReason: 'aborted', messages };
          }
        }
        if (planned.fail !== undefined) throw fail('SCRIPTED_FAILURE', `${where} fails as scripted: ${planned.fail}`);
        if (planned.reply !== undefined) messages.push(planned.reply);
        const outcome = { messages };
        for (const key of ['stopReason', 'diagnostic', 'structured', 'usage']) if (planned[key] !== undefined) outcome[key] = planned[key];
        return outcome;
      } catch (e) {
        if (!(e instanceof TestingError && e.code === 'SCRIPTED_FAILURE')) problems.note(e);
        throw e;
      }
    },
  });
  return host;
}

// ---------------------------------------------------------- record and replay

export const CASSETTE_FORMAT = 'subagent-tree/cassette';
/** Version 2 added `{aborted: true}` steps; version 1 cassettes (without them) still replay. */
export const CASSETTE_VERSION = 2;

/**
 * Wraps a host and records every turn it runs: one JSON line per turn,
 * written when the turn ends, keyed by full name and turn number, with the
 * input text, each step (steered messages taken, tool calls and their
 * results, the moment the turn's signal aborted) in order, and the outcome
 * (or the error thrown).
 */
export function recordingHost(host, { onRecord } = {}) {
  if (!host || typeof host.runTurn !== 'function') throw fail('INVALID_ARGUMENT', 'recordingHost needs an AgentHost (an object with runTurn)');
  const next = counter();
  const records = [];
  const lines = [JSON.stringify({ format: CASSETTE_FORMAT, version: CASSETTE_VERSION })];
  const write = (record) => {
    records.push(record);
    const line = JSON.stringify(record);
    lines.push(line);
    onRecord?.(line);
  };
  onRecord?.(lines[0]);
  const recorder = {
    records,
    cassette: () => `${lines.join('\n')}\n`,
    /** Passed on to the wrapped host (a scripted host's `waitForMessage` needs it). */
    attach(runtime) {
      host.attach?.(runtime);
      return recorder;
    },
    check() {
      host.check?.();
    },
    async runTurn(turn) {
      const n = next(turn.name);
      const steps = [];
      const tools = turn.tools.map((tool) =>
        Object.freeze({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema,
          async call(input, options) {
            const step = { call: tool.name, input: json(input) ?? null };
            steps.push(step);
            const result = await tool.call(input, options);
            step.result = json(result);
            return result;
          },
        }),
      );
      const takeSteered = () => {
        const taken = turn.takeSteered();
        if (taken.length) steps.push({ steered: taken.map((m) => m.text) });
        return taken;
      };
      // What the turn was offered, so a replay under other options (maxDepth, outputSchema, cwd) is drift.
      const record = {
        name: turn.name,
        turn: n,
        first: turn.first,
        inputText: [...turn.inputText],
        tools: turn.tools.map((t) => t.name),
        outputSchema: json(turn.outputSchema) ?? null,
        cwd: turn.cwd,
        steps,
      };
      // Where among the steps an interrupt (or disposal, or drain) reached the turn: the replay waits for it there.
      const onAbort = () => steps.push({ aborted: true });
      if (turn.signal.aborted) onAbort();
      else turn.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const outcome = await host.runTurn(copyTurn(turn, tools, takeSteered));
        record.outcome = json(outcome) ?? null;
        return outcome;
      } catch (e) {
        record.error = String(e?.message ?? e);
        if (typeof e?.name === 'string' && e.name !== 'Error') record.errorName = e.name;
        throw e;
      } finally {
        turn.signal.removeEventListener('abort', onAbort);
        write(record);
      }
    },
    release(sessionId) {
      return host.release?.(sessionId);
    },
  };
  return recorder;
}

/** Parses and checks a cassette (its text or its records); coded errors name the line. */
export function parseCassette(cassette) {
  let records;
  let version = CASSETTE_VERSION;
  if (typeof cassette === 'string') {
    const lines = cassette.split('\n').filter((l) => l.trim() !== '');
    records = lines.map((line, i) => {
      try {
        return JSON.parse(line);
      } catch (e) {
        throw fail('INVALID_CASSETTE', `cassette line ${i + 1} is not JSON: ${quote(line)}`, { cause: e });
      }
    });
    const header = records.shift();
    if (!isObject(header) || header.format !== CASSETTE_FORMAT || !(header.version === 1 || header.version === CASSETTE_VERSION)) {
      throw fail('INVALID_CASSETTE', `cassette line 1 must be {"format":"${CASSETTE_FORMAT}","version":${CASSETTE_VERSION}} (or version 1), not ${quote(lines[0] ?? '')}`);
    }
    version = header.version;
  } else if (Array.isArray(cassette)) records = cassette;
  else throw fail('INVALID_CASSETTE', `a cassette is its JSON-lines text or an array of records, not ${quote(cassette)}`);
  const byKey = new Map();
  records.forEach((r, i) => {
    const at = `cassette record ${i + 1}`;
    if (!isObject(r) || typeof r.name !== 'string' || !Number.isInteger(r.turn) || r.turn < 1) throw fail('INVALID_CASSETTE', `${at} needs a name and a turn number (from 1)`);
    if (!Array.isArray(r.inputText) || !r.inputText.every((t) => typeof t === 'string')) throw fail('INVALID_CASSETTE', `${at} (${turnRef(r.name, r.turn)}) needs inputText, an array of strings`);
    const step = (s) => isObject(s) && (typeof s.call === 'string' || Array.isArray(s.steered) || (version > 1 && s.aborted === true));
    if (!Array.isArray(r.steps) || !r.steps.every(step)) {
      throw fail('INVALID_CASSETTE', `${at} (${turnRef(r.name, r.turn)}) needs steps of {call, input, result}, {steered}${version > 1 ? ' or {aborted: true}' : ''}`);
    }
    if (!('outcome' in r) && typeof r.error !== 'string') throw fail('INVALID_CASSETTE', `${at} (${turnRef(r.name, r.turn)}) needs an outcome or an error`);
    const key = `${r.turn} ${r.name}`;
    if (byKey.has(key)) throw fail('INVALID_CASSETTE', `${at}: ${turnRef(r.name, r.turn)} is recorded twice`);
    byKey.set(key, r);
  });
  return byKey;
}

/** The first place where `recorded` and `now` differ, as `path: recorded X, now Y`; undefined when equal. */
export function firstDifference(recorded, now, path = '') {
  if (Object.is(recorded, now)) return undefined;
  if (Array.isArray(recorded) && Array.isArray(now)) {
    for (let i = 0; i < Math.max(recorded.length, now.length); i++) {
      if (i >= recorded.length) return `${path}[${i}]: recorded nothing, now ${quote(now[i])}`;
      if (i >= now.length) return `${path}[${i}]: recorded ${quote(recorded[i])}, now nothing`;
      const d = firstDifference(recorded[i], now[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isObject(recorded) && isObject(now)) {
    for (const key of new Set([...Object.keys(recorded), ...Object.keys(now)])) {
      const d = firstDifference(recorded[key], now[key], path ? `${path}.${key}` : key);
      if (d) return d;
    }
    return undefined;
  }
  if (typeof recorded === 'string' && typeof now === 'string') {
    let i = 0;
    while (recorded[i] === now[i]) i++;
    const from = Math.max(0, i - 20);
    return `${path} (at character ${i}): recorded ${quote(recorded.slice(from, i + 40))}, now ${quote(now.slice(from, i + 40))}`;
  }
  return `${path}: recorded ${quote(recorded)}, now ${quote(now)}`;
}

/**
 * Where what a turn is offered differs from its record: the tools (a changed
 * `maxDepth` takes `spawn_agent` away), the output schema, the working
 * directory. Records written before these were kept are not compared on them.
 */
function offeredDifference(record, turn) {
  if (Array.isArray(record.tools)) {
    const d = firstDifference(record.tools, turn.tools.map((t) => t.name), 'tools');
    if (d) return d;
  }
  if ('outputSchema' in record) {
    const d = firstDifference(record.outputSchema, json(turn.outputSchema) ?? null, 'outputSchema');
    if (d) return d;
  }
  return typeof record.cwd === 'string' ? firstDifference(record.cwd, turn.cwd, 'cwd') : undefined;
}

/**
 * A host that replays a cassette without a model. Each turn must match its
 * record: the input text, then each step in order (steered messages taken,
 * tool calls, which really run, and their results, and an interrupt where one
 * was recorded); the recorded outcome is returned (or the recorded error
 * thrown). The first difference ends the turn with a `REPLAY_DRIFT` error
 * naming the member, the turn and what differs; `check()` throws it, and also
 * reports recorded turns that never ran. Waits for a recorded steered message
 * or interrupt end on the turn's named conditions: a message or interrupt
 * that has not come when the rest of the tree is quiet is drift, not a hang.
 * `onTurn` is called as each replayed turn starts (its signal live): the
 * place for a test to repeat an interrupt from outside the tree.
 */
export function replayHost(cassette, { onTurn } = {}) {
  const records = parseCassette(cassette);
  const next = counter();
  const problems = failures();
  const ran = new Set();
  const drift = (name, n, what) => problems.note(fail('REPLAY_DRIFT', `replay drift at ${turnRef(name, n)}: ${what}`));
  const host = attachable({
    failures: problems.list,
    check() {
      problems.check();
      const missing = [...records.keys()].filter((k) => !ran.has(k));
      if (missing.length) {
        const r = records.get(missing[0]);
        throw fail('REPLAY_DRIFT', `replay drift at ${turnRef(r.name, r.turn)}: recorded, but the replay never ran it (${missing.length} recorded turn(s) did not run)`);
      }
    },
    async runTurn(turn) {
      const n = next(turn.name);
      const key = `${n} ${turn.name}`;
      const record = records.get(key);
      if (!record) throw drift(turn.name, n, `the cassette has no such turn; its input: ${quote(turn.inputText.join('\n'))}`);
      ran.add(key);
      onTurn?.({ name: turn.name, turn: n, inputText: turn.inputText });
      const d = firstDifference(record.inputText, [...turn.inputText], 'inputText') ?? offeredDifference(record, turn);
      if (d) throw drift(turn.name, n, d);
      const where = turnRef(turn.name, n);
      for (const [j, step] of record.steps.entries()) {
        if (step.steered) {
          // The recorded messages arrived while this turn ran: wait for as many (they come from other members' turns).
          const { messages, end } = await takeSteeredUntil(turn, (t) => t.length >= step.steered.length, where);
          const ds = firstDifference(step.steered, messages.map((m) => m.text), `steps[${j}].steered`);
          if (ds) throw drift(turn.name, n, end ? `${ds} (${ENDED[end]})` : ds);
          continue;
        }
        if (step.aborted) {
          // The recorded turn was interrupted here: the replayed one waits for the same interrupt.
          const end = turn.signal.aborted ? 'aborted' : await turnWait(turn, 'waitForInterrupt', where);
          if (end !== 'aborted') throw drift(turn.name, n, `steps[${j}]: recorded an interrupt (the turn's signal aborted), but ${ENDED[end]}`);
          continue;
        }
        const tool = turn.tools.find((t) => t.name === step.call);
        if (!tool) throw drift(turn.name, n, `steps[${j}]: the recorded tool ${quote(step.call)} is not among this member's tools (${turn.tools.map((t) => t.name).join(', ') || 'none'})`);
        const result = json(await tool.call(json(step.input), { signal: turn.signal }));
        const dr = firstDifference(step.result, result, `steps[${j}].result (${step.call})`);
        if (dr) throw drift(turn.name, n, dr);
      }
      if (turn.signal.aborted && !record.steps.some((s) => s.aborted)) throw drift(turn.name, n, 'the turn was interrupted (its signal aborted), but the recorded turn was not');
      if (record.error !== undefined) {
        // The recorded failure again, with its name (the runtime's diagnostic shows it).
        const error = new Error(record.error);
        if (typeof record.errorName === 'string') Object.defineProperty(error, 'name', { value: record.errorName, configurable: true, writable: true });
        throw error;
      }
      return json(record.outcome) ?? undefined;
    },
  });
  return host;
}

// ------------------------------------------------------ settling and snapshots

/**
 * Resolves once the whole tree is quiet (`runtime.waitForQuiescence`), then
 * calls `check()` of each given kit host, so a scripting error, an
 * unscripted turn or a replay drift fails the test here.
 */
export async function settle(runtime, root, { hosts = [], signal } = {}) {
  if (!runtime || typeof runtime.waitForQuiescence !== 'function') throw fail('INVALID_ARGUMENT', 'settle needs a SubagentRuntime');
  await runtime.waitForQuiescence(root, signal ? { signal } : undefined);
  for (const host of hosts) host.check?.();
}

const squash = (text, max) => {
  const one = String(text).replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
};

/** The output text of a `turn/end` payload, as the runtime stored it. */
function endOutput(payload) {
  const out = payload?.output ?? payload?.result?.output;
  if (!Array.isArray(out)) return '';
  return out.map((b) => (b?.type === 'text' ? b.text : `[${b?.type}]`)).join('');
}

async function lastEnd(store, id) {
  const events = (await store.read(id, { types: ['turn/end'] })) ?? [];
  const ends = events.filter((e) => e.type === 'turn/end');
  return ends.at(-1)?.payload;
}

/**
 * A stable text of the tree for golden tests: one line per member in
 * pre-order, indented by depth: full name, label, mode, activity, the last
 * turn's stop reason and its output (one line, at most `maxOutput` chars).
 * Session ids never appear (diagnostic rows show their reason only).
 */
export async function snapshotTree(runtime, store, root, { maxOutput = 60 } = {}) {
  if (!runtime || typeof runtime.listDescendants !== 'function') throw fail('INVALID_ARGUMENT', 'snapshotTree needs a SubagentRuntime');
  if (!store || typeof store.read !== 'function') throw fail('INVALID_ARGUMENT', 'snapshotTree needs the runtime\'s SessionStore');
  const rootId = typeof root === 'string' ? root : root?.sessionId;
  const line = async (indent, name, label, mode, activity, id) => {
    const end = await lastEnd(store, id);
    const stop = end ? (end.stopReason ?? '?') : 'no turn';
    const out = end ? ` ${JSON.stringify(squash(endOutput(end), maxOutput))}` : '';
    return `${indent}${name}${label ? ` (${label})` : ''} [${[mode, activity].filter(Boolean).join(', ')}] ${stop}${out}`;
  };
  const lines = [await line('', 'lead', '', 'root', undefined, rootId)];
  for (const row of await runtime.listDescendants(rootId)) {
    const indent = '  '.repeat(row.depth);
    if (row.kind === 'diagnostic') lines.push(`${indent}! ${row.reason} branch`);
    else lines.push(await line(indent, row.path ?? row.name ?? '(unnamed)', row.label, row.mode, row.activity, row.id));
  }
  return `${lines.join('\n')}\n`;
}

// --------------------------------------------------------------- portable trees

export const BUNDLE_FORMAT = 'subagent-tree/tree-bundle';

const childIds = (events) =>
  events.filter((e) => e.type === 'subagent/catalog' && typeof e.payload?.childId === 'string').map((e) => e.payload.childId);

/**
 * Every log of the tree under `rootId` (the root's and each catalogued
 * descendant's, breadth-first), as a JSON-ready bundle. A catalogued child
 * whose log is missing is listed in `missing`.
 */
export async function exportTree(store, rootId, { signal } = {}) {
  if (!store || typeof store.read !== 'function') throw fail('INVALID_ARGUMENT', 'exportTree needs a SessionStore');
  if (typeof rootId !== 'string' || rootId === '') throw fail('INVALID_ARGUMENT', `exportTree needs the root's Session id, not ${quote(rootId)}`);
  const sessions = [];
  const missing = [];
  const seen = new Set([rootId]);
  let level = [rootId];
  while (level.length) {
    const logs = await Promise.all(level.map((id) => store.read(id, signal ? { signal } : {})));
    const nextLevel = [];
    level.forEach((id, i) => {
      const events = logs[i];
      if (events == null) {
        if (id === rootId) throw fail('INVALID_ARGUMENT', `exportTree: the store has no session ${quote(rootId)}`);
        missing.push(id);
        return;
      }
      sessions.push({ id, events: events.map((e) => ({ seq: e.seq, type: e.type, payload: json(e.payload) ?? null })) });
      for (const child of childIds(events)) if (!seen.has(child)) (seen.add(child), nextLevel.push(child));
    });
    level = nextLevel;
  }
  return { format: BUNDLE_FORMAT, version: 1, rootId, sessions, missing };
}

function checkBundle(bundle) {
  const bad = (what) => fail('INVALID_BUNDLE', `tree bundle: ${what}`);
  if (!isObject(bundle)) throw bad(`expected an object from exportTree, not ${quote(bundle)}`);
  if (bundle.format !== BUNDLE_FORMAT || bundle.version !== 1) throw bad(`format must be "${BUNDLE_FORMAT}" version 1, not ${quote(bundle.format)} version ${quote(bundle.version)}`);
  if (typeof bundle.rootId !== 'string' || bundle.rootId === '') throw bad('rootId must be a non-empty string');
  if (!Array.isArray(bundle.sessions) || bundle.sessions.length === 0) throw bad('sessions must be a non-empty array');
  if (bundle.missing !== undefined && !(Array.isArray(bundle.missing) && bundle.missing.every((m) => typeof m === 'string'))) throw bad('missing must be an array of Session ids');
  const ids = new Set();
  bundle.sessions.forEach((s, i) => {
    if (!isObject(s) || typeof s.id !== 'string' || s.id === '') throw bad(`sessions[${i}] needs an id`);
    if (ids.has(s.id)) throw bad(`session ${quote(s.id)} appears twice`);
    ids.add(s.id);
    if (!Array.isArray(s.events)) throw bad(`session ${quote(s.id)}: events must be an array`);
    s.events.forEach((e, seq) => {
      if (!isObject(e) || e.seq !== seq) throw bad(`session ${quote(s.id)}: event ${seq} must have seq ${seq} (logs count from 0 without gaps)`);
      if (typeof e.type !== 'string' || e.type === '') throw bad(`session ${quote(s.id)}: event ${seq} needs a type`);
      if (!('payload' in e)) throw bad(`session ${quote(s.id)}: event ${seq} needs a payload`);
    });
  });
  if (bundle.sessions[0].id !== bundle.rootId) throw bad(`the first session must be the root ${quote(bundle.rootId)}`);
  // Every session is the root or catalogued by a session of the bundle.
  const reachable = new Set([bundle.rootId]);
  for (const s of bundle.sessions) for (const c of childIds(s.events)) reachable.add(c);
  for (const s of bundle.sessions) if (!reachable.has(s.id)) throw bad(`session ${quote(s.id)} is not in the tree (no catalog entry names it)`);
  // And the bundle refers to no session outside it: a catalogued child is in it, an
  // external run (no log), or one its export found missing (absent from the target too).
  const missing = new Set(bundle.missing ?? []);
  for (const s of bundle.sessions) {
    for (const e of s.events) {
      const id = e.type === 'subagent/catalog' ? e.payload?.childId : undefined;
      if (typeof id !== 'string' || ids.has(id) || missing.has(id) || EXTERNAL_MODES.has(e.payload?.mode)) continue;
      throw bad(`session ${quote(s.id)} catalogs ${quote(id)}, which is not in the bundle: a bundle may refer only to its own sessions`);
    }
  }
}

const EXTERNAL_MODES = new Set(['external', 'one-shot']);

/**
 * Writes a bundle from `exportTree` into `store`. The bundle is checked
 * whole first (`INVALID_BUNDLE`), then every target session must be absent
 * (`TARGET_NOT_EMPTY`); nothing is written before both pass. Logs are written
 * one batch each, deepest first and the root last, so an import cut short
 * never leaves a reachable half tree: until the root's log lands, the tree
 * does not exist in the target.
 */
export async function importTree(store, bundle, { signal } = {}) {
  if (!store || typeof store.append !== 'function' || typeof store.read !== 'function') throw fail('INVALID_ARGUMENT', 'importTree needs a SessionStore');
  if (typeof bundle === 'string') {
    try {
      bundle = JSON.parse(bundle);
    } catch (e) {
      throw fail('INVALID_BUNDLE', 'tree bundle: the text is not JSON', { cause: e });
    }
  }
  checkBundle(bundle);
  const existing = await Promise.all(bundle.sessions.map((s) => store.read(s.id, signal ? { signal } : {})));
  const taken = bundle.sessions.filter((_, i) => existing[i] != null && existing[i].length > 0).map((s) => s.id);
  if (taken.length) throw fail('TARGET_NOT_EMPTY', `importTree: the store already has ${taken.length} of the tree's sessions (first ${quote(taken[0])}); import into a store without them`);
  // A member its export found missing must be missing here too: else the bundle's catalog would claim a session of the target.
  const missing = bundle.missing ?? [];
  const present = await Promise.all(missing.map((id) => store.read(id, signal ? { signal } : {})));
  const claimed = missing.filter((_, i) => present[i] != null);
  if (claimed.length) throw fail('INVALID_BUNDLE', `tree bundle: it catalogs ${quote(claimed[0])} as missing, but the target store holds that session: a bundle may refer only to its own sessions`);
  const order = [...bundle.sessions].reverse();
  let written = 0;
  for (const s of order) {
    signal?.throwIfAborted();
    try {
      if (s.events.length) await store.append(s.id, s.events.map((e) => ({ seq: e.seq, type: e.type, payload: e.payload })));
      await store.flush?.(s.id);
    } catch (e) {
      throw fail('IMPORT_FAILED', `importTree: writing session ${quote(s.id)} failed after ${written} of ${order.length} logs (descendants first; the root is not written, so the tree is not reachable)`, { cause: e });
    }
    written++;
  }
  return { rootId: bundle.rootId, sessions: written };
}

/** The logs of a tree as one canonical text (for byte-for-byte comparisons). */
export async function treeLogText(store, rootId) {
  const bundle = await exportTree(store, rootId);
  return bundle.sessions.map((s) => s.events.map((e) => JSON.stringify({ session: s.id, ...e })).join('\n')).join('\n') + '\n';
}
