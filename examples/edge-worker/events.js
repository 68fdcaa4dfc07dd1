// A tree's events as Server-Sent Events that a browser's EventSource follows
// and resumes with nothing lost or repeated.
//
// Durable events (a member started, ended, was catalogued, took a message, a
// turn started or ended, a tool call began or ended) are journaled in the
// object's storage as they happen, numbered 1, 2, 3, ... for the tree's whole
// life (the counter is stored with each entry, so a restarted object goes on
// from where the last one stopped). A follower gets each as `id: N`; its
// EventSource reconnects with `Last-Event-ID: N` and gets N+1 onwards from the
// journal, then live. Workerd holds a response's bytes until the storage
// writes started before them are durable (the output gate), so no follower
// sees an id that a restart could lose.
//
// Deltas (`subagent/delta`, a running turn's streamed text) carry no id and are
// never replayed: they are best-effort, dropped for a follower whose buffer is
// half full, and superseded by the turn's end, which is durable.
//
// A follower that stops reading is not kept: once more than `bufferBytes`
// waits for it, its stream is ended with an error (its EventSource reconnects
// and resumes from the journal), so the object's memory stays bounded by
// followers x bufferBytes.
//
// A resume replays at most `replayEvents` events and `replayBytes` bytes: one
// from further back (`Last-Event-ID: 0` on a long-lived tree, say) gets a
// `reset` event instead, with the tree listed and how many events it missed,
// so a request of a hundred bytes never costs the object megabytes.

/** Event types that are journaled (their ids resume a stream). */
export const DURABLE_TYPES = Object.freeze([
  'subagent/start',
  'subagent/end',
  'subagent/catalog',
  'subagent/message',
  'subagent/turn',
  'subagent/tool',
]);

/** The defaults (the worker's README, "Events"); env SSE_BUFFER_BYTES, SSE_FOLLOWERS and SSE_HEARTBEAT_MS override them. */
export const STREAM_LIMITS = Object.freeze({
  /** Bytes that may wait for one follower before it is dropped. */
  bufferBytes: 256 * 1024,
  /** Followers of one tree at once; one more is refused 429 TOO_MANY_FOLLOWERS. */
  followers: 256,
  /** Durable events kept for resumption; an older Last-Event-ID gets a `reset`. */
  journalEvents: 10_000,
  /** The most events one resume replays; one from further back gets a `reset` (the tree listed) instead. */
  replayEvents: 1_000,
  /** The most bytes one resume replays (its frames); past it, a `reset` instead. */
  replayBytes: 1024 * 1024,
  /** How often each follower gets a comment line (keeps proxies from closing an idle stream, and finds readers that left). */
  heartbeatMs: 15_000,
});
const PING = new TextEncoder().encode(': ping\n\n');

const PREFIX = 'sse/';
const NEXT = 'sse:next';
/** Frame bytes journaled before the next event (each entry keeps the count before it: `at`). */
const BYTES = 'sse:bytes';
const key = (id) => `${PREFIX}${String(id).padStart(12, '0')}`;
const encoder = new TextEncoder();
const frame = (id, type, data) => encoder.encode(`${id === undefined ? '' : `id: ${id}\n`}event: ${type}\ndata: ${data}\n\n`);

/** The journal of one tree and the followers of its stream. */
export class TreeEvents {
  /**
   * @param {DurableObjectStorage} storage the object's storage (the journal's keys start `sse/`)
   * @param {{ bufferBytes?: number, followers?: number, journalEvents?: number }} [limits]
   */
  constructor(storage, limits = {}) {
    this.storage = storage;
    this.limits = { ...STREAM_LIMITS, ...limits };
    this.next = null; // the id the next durable event gets, once loaded
    this.bytes = 0; // frame bytes journaled before it
    this.followers = new Set();
  }

  /** Reads where the journal stands; before any event is journaled. */
  load() {
    this.loading ??= this.storage.get([NEXT, BYTES]).then((got) => {
      const n = got.get(NEXT);
      const b = got.get(BYTES);
      this.next = Number.isSafeInteger(n) && n > 0 ? n : 1;
      this.bytes = Number.isSafeInteger(b) && b >= 0 ? b : 0;
    });
    return this.loading;
  }

  /** Journals and follows `runtime`'s events of the tree `rootId`. Call after `load()`. */
  attach(runtime, rootId) {
    for (const type of DURABLE_TYPES) runtime.on(type, (e) => this.durable(type, e), { root: rootId });
    runtime.on('subagent/delta', (e) => this.delta(e), { root: rootId });
  }

  /** The id of the last journaled event (0 before the first). */
  get lastEventId() {
    return this.next - 1;
  }

  /** What the followers hold: `{ count, queuedBytes }`. */
  stats() {
    let queuedBytes = 0;
    for (const f of this.followers) queuedBytes += f.queued();
    return { count: this.followers.size, queuedBytes };
  }

  durable(type, event) {
    const id = this.next++;
    const data = JSON.stringify(event);
    const bytes = frame(id, type, data);
    const at = this.bytes;
    this.bytes += bytes.byteLength;
    // Not awaited: the object's writes are applied in order, and its output gate holds
    // every byte sent after this until it is durable.
    const entries = { [key(id)]: { type, data, at }, [NEXT]: this.next, [BYTES]: this.bytes };
    this.storage.put(entries).catch((e) => console.error('journal write failed', e));
    if (id > this.limits.journalEvents) this.storage.delete(key(id - this.limits.journalEvents)).catch(() => {});
    for (const f of this.followers) f.durable(id, bytes);
  }

  delta(event) {
    if (this.followers.size === 0) return;
    const bytes = frame(undefined, 'subagent/delta', JSON.stringify(event));
    for (const f of this.followers) f.bestEffort(bytes);
  }

  /**
   * A follower (its `readable` is the response body), from `after` (a Last-Event-ID) or, without one, from
   * now after a `ready` event (`{ id, rows, lastEventId }`, rows from `listRows()`).
   * An `after` the journal no longer holds (or never held), or one further
   * back than a replay may reach (`replayEvents`, `replayBytes`), gets a
   * `reset` event of the same shape with `missed` (how many events it did not
   * get), then what follows it. `null` when the tree has as many followers as
   * it may.
   */
  async follow(rootId, after, listRows) {
    if (this.followers.size >= this.limits.followers) return null;
    const follower = new Follower(this.limits.bufferBytes, () => {
      this.followers.delete(follower);
      if (this.followers.size === 0) clearInterval(this.heartbeat);
    });
    // From here every live event reaches it (held while it catches up).
    if (this.followers.size === 0) {
      this.heartbeat = setInterval(() => {
        for (const f of this.followers) if (!f.catchingUp) f.write(PING);
      }, this.limits.heartbeatMs);
    }
    this.followers.add(follower);
    const upTo = this.lastEventId;
    const oldest = Math.max(1, upTo - this.limits.journalEvents + 1);
    const fresh = after === null;
    let resumable = !fresh && after <= upTo && after >= oldest - 1 && upTo - after <= this.limits.replayEvents;
    if (resumable && after < upTo) {
      // What the replay would send, from the count journaled before its first event.
      const first = await this.storage.get(key(after + 1));
      resumable = Number.isSafeInteger(first?.at) && this.bytes - first.at <= this.limits.replayBytes;
    }
    follower.write(encoder.encode('retry: 1000\n\n'));
    // Caught up in the background: a replay goes at the pace of the reader of the
    // response this follower is about to become.
    const catchUp = async () => {
      if (resumable) {
        // The journal's entries after `after`, up to what was live when the follower came.
        let from = after + 1;
        while (from <= upTo && !follower.closed) {
          const page = await this.storage.list({ start: key(from), end: key(upTo + 1), limit: 256 });
          if (page.size === 0) break;
          for (const [k, { type, data }] of page) {
            const id = Number(k.slice(PREFIX.length));
            await follower.replay(id, frame(id, type, data));
          }
          from = Number([...page.keys()].at(-1).slice(PREFIX.length)) + 1;
        }
      } else {
        follower.skipTo(upTo);
        const data = JSON.stringify({ id: rootId, rows: await listRows(), lastEventId: upTo, deltas: 'best-effort', ...(fresh ? {} : { missed: Math.max(0, upTo - after) }) });
        follower.write(frame(undefined, fresh ? 'ready' : 'reset', data));
      }
      follower.caughtUp();
    };
    // A failed read ends the stream; its EventSource connects again.
    catchUp().catch((e) => follower.close(e));
    return follower;
  }
}

/** One follower: its stream, what waits for it, and the last id it was given. */
class Follower {
  constructor(bufferBytes, onClose) {
    this.bufferBytes = bufferBytes;
    this.onClose = onClose;
    const { readable, writable } = new TransformStream(undefined, new ByteLengthQueuingStrategy({ highWaterMark: bufferBytes }));
    this.readable = readable;
    this.writer = writable.getWriter();
    // A reader that went away (its connection closed) cancels the stream: forget it at once.
    this.writer.closed.catch(() => this.close());
    this.last = 0;
    this.held = []; // live events while the journal is replayed
    this.heldBytes = 0;
    this.catchingUp = true;
    this.closed = false;
  }

  /** Bytes waiting for the reader. */
  queued() {
    return this.closed ? 0 : Math.max(0, this.bufferBytes - (this.writer.desiredSize ?? this.bufferBytes));
  }

  skipTo(id) {
    this.last = id;
  }

  /** A journaled event while catching up, written at the reader's pace (never dropped for it). */
  async replay(id, bytes) {
    if (this.closed || id <= this.last) return;
    try {
      await this.writer.ready;
    } catch {
      return; // closed meanwhile
    }
    if (this.closed) return;
    this.last = id;
    this.writer.write(bytes).catch(() => this.close());
  }

  /** A live durable event: given once, in order (held while the journal is replayed). */
  durable(id, bytes) {
    if (this.closed) return;
    if (this.catchingUp) {
      this.held.push([id, bytes]);
      this.heldBytes += bytes.byteLength;
      if (this.heldBytes > this.bufferBytes) this.close(new Error(`the follower fell more than ${this.bufferBytes} bytes behind`));
      return;
    }
    if (id <= this.last) return;
    this.last = id;
    this.write(bytes);
  }

  bestEffort(bytes) {
    if (this.closed || this.catchingUp) return;
    if ((this.writer.desiredSize ?? 0) - bytes.byteLength < this.bufferBytes / 2) return;
    this.write(bytes);
  }

  caughtUp() {
    this.catchingUp = false;
    const held = this.held;
    this.held = [];
    for (const [id, bytes] of held) this.durable(id, bytes);
  }

  write(bytes) {
    if (this.closed) return;
    if ((this.writer.desiredSize ?? 0) < bytes.byteLength && this.queued() > 0) {
      // The reader has let its buffer fill: drop it (its EventSource resumes from the journal).
      this.close(new Error(`the follower fell more than ${this.bufferBytes} bytes behind`));
      return;
    }
    this.writer.write(bytes).catch(() => this.close());
  }

  close(reason) {
    if (this.closed) return;
    this.closed = true;
    this.held = [];
    this.onClose();
    (reason ? this.writer.abort(reason) : this.writer.close()).catch(() => {});
  }
}
