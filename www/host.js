// The demo's agent host: a scripted "model" with no network. Each turn
// thinks for a moment (abortable: interrupts end it as `aborted`), then acts
// through the same model-facing tools a real model would get (`spawn_agent`,
// `send_message`) and answers with text. While it thinks it streams what it is
// doing (`turn.emit` text deltas: the tree shows the last line live), and it
// reports the tokens a model of its size would have spent (`usage`, so rows
// show tokens and the tree's budget bar fills). A fresh tree plays a short release
// script: lead starts reviewer and writer, reviewer starts checker and tells
// writer something by name, everyone reports back and settles.

const LONG_TASK = '[long task]';

/** Text of a message's content blocks. */
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

async function call(turn, tool, input) {
  const t = turn.tools.find((x) => x.name === tool);
  if (!t) return { isError: true, content: `no ${tool} tool` };
  return t.call(input, { signal: turn.signal });
}

/** First turns of the release script, by full name. */
const SCRIPT = {
  async lead(turn) {
    const said = [];
    for (const [name, description, prompt] of [
      ['reviewer', 'Review the 1.0 change', 'Review the change for the 1.0 release; get the test suite run.'],
      ['writer', 'Draft the release notes', 'Draft the release notes for 1.0.'],
    ]) {
      const r = await call(turn, 'spawn_agent', { name, description, prompt });
      said.push(r.isError ? r.content : `Started ${r.structured?.name ?? name}.`);
    }
    return `${said.join(' ')} I will wrap up when both report back.`;
  },
  async reviewer(turn) {
    const started = await call(turn, 'spawn_agent', {
      name: 'checker',
      description: 'Run the test suite',
      prompt: 'Run the whole test suite and report.',
    });
    const told = await call(turn, 'send_message', {
      agent: 'writer',
      message: 'Please mention that every agent now has a name, such as reviewer/checker.',
    });
    return [
      started.isError ? started.content : 'checker is running the tests.',
      told.isError ? told.content : 'I told writer about the naming change.',
    ].join(' ');
  },
  async 'reviewer/checker'() {
    return 'All 128 tests pass.';
  },
  async writer(turn, steered) {
    const note = steered.find((m) => m.source?.kind === 'agent-message');
    return note
      ? `Draft ready: 1.0 gives every agent a name. Added ${note.source.senderName}'s point: "${contentText(note.content)}"`
      : 'Draft ready: 1.0 gives every agent a name.';
  },
};

/** How much longer than a plain turn a scripted first turn thinks (writer waits for reviewer's note). */
const SLOWER = { writer: 3 };

function reply(turn, messages, reported) {
  const lines = [];
  for (const m of messages) {
    const text = contentText(m.content);
    switch (m.source?.kind) {
      case 'subagent-settled':
        lines.push(`Noted: ${m.source.summary}`);
        break;
      case 'agent-message':
        lines.push(`Thanks ${m.source.senderName}, noted: "${text}"`);
        break;
      default:
        lines.push(`Done: "${text.replace(LONG_TASK, '').trim()}"`);
    }
  }
  if (turn.name === 'lead') {
    for (const m of messages) if (m.source?.kind === 'subagent-settled') reported.add(m.source.senderName);
    if (reported.has('reviewer') && reported.has('writer') && messages.some((m) => m.source?.kind === 'subagent-settled')) {
      lines.push('reviewer and writer have both reported: the 1.0 release is ready.');
    }
  }
  return lines.join('\n') || 'Nothing to do.';
}

/** Thinks for `ms`, streaming `line` word by word over that time (aborts with the turn). */
async function think(turn, ms, line) {
  const words = line.split(' ');
  for (let i = 0; i < words.length; i++) {
    turn.emit({ type: 'text-delta', text: i === 0 ? words[i] : ` ${words[i]}` });
    await sleep(ms / words.length, turn.signal);
  }
}

/** What the turn would have cost a model: about 4 characters a token. */
function usageOf(turn, text) {
  const read = turn.input.reduce((n, m) => n + contentText(m.content).length, 0);
  return { inputTokens: 60 + Math.ceil(read / 4), outputTokens: 8 + Math.ceil(text.length / 4) };
}

/** The live line while a turn thinks. */
function narration(turn, long) {
  const what = contentText(turn.input[0]?.content ?? '').replace(LONG_TASK, '').trim().split(/\s+/).slice(0, 8).join(' ');
  if (long) return `Working through the long task step by step: ${what || 'the task'} …`;
  return turn.first ? `Reading the task: ${what || 'the task'} …` : `Reading ${turn.input.length || 'the'} new message${turn.input.length === 1 ? '' : 's'} and replying …`;
}

export class ScriptedHost {
  /** @param {{ thinkMs?: number, longMs?: number }} options */
  constructor({ thinkMs = 700, longMs = 30_000 } = {}) {
    this.thinkMs = thinkMs;
    this.longMs = longMs;
    this.runtime = null;
    this.turns = 0;
    this.reported = new Set();
  }

  async runTurn(turn) {
    this.turns++;
    const long = turn.input.some((m) => contentText(m.content).startsWith(LONG_TASK));
    const scripted = turn.first ? SCRIPT[turn.name] : undefined;
    const thinkMs = long ? this.longMs : this.thinkMs * (scripted ? SLOWER[turn.name] ?? 1 : 1);
    try {
      await think(turn, thinkMs, narration(turn, long));
      const steered = turn.takeSteered();
      const answered = [...turn.input, ...steered];
      const text = scripted ? await scripted(turn, steered) : answered.length ? reply(turn, answered, this.reported) : '';
      return { stopReason: 'completed', text, usage: usageOf(turn, text) };
    } catch (error) {
      if (!turn.signal.aborted) throw error;
      const text = 'Interrupted before finishing.';
      return { stopReason: 'aborted', text, usage: usageOf(turn, text) };
    }
  }
}

export { LONG_TASK };
