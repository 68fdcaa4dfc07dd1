// subagent-tree, browser: one tab drives a tree. `TreeLock` takes a Web Lock
// named after the tree (`ifAvailable`, so it never waits): the tab that holds
// it is the leader and may run the tree's members; every other tab is a
// follower that only reads the store, so no member runs twice. A
// BroadcastChannel of the same name carries the leader's notices (new
// events, catalog facts) so followers refresh what they show. With
// `takeover` (the default) a follower queues for the lock and becomes the
// leader when the leading tab closes or releases it.

const PREFIX = 'subagent-tree:';

export class TreeLock extends EventTarget {
  #name;
  #locks;
  #Channel;
  #takeover;
  #role = 'idle';
  #channel;
  #release;
  #held;
  #waiting;

  /**
   * @param {string} treeId the tree's root Session id (or any stable tree key)
   * @param {{ takeover?: boolean, locks?: LockManager, BroadcastChannel?: typeof BroadcastChannel }} [options]
   */
  constructor(treeId, { takeover = true, locks = globalThis.navigator?.locks, BroadcastChannel: Channel = globalThis.BroadcastChannel } = {}) {
    super();
    if (typeof treeId !== 'string' || treeId === '') throw new TypeError('TreeLock needs a non-empty tree id');
    if (!locks || typeof locks.request !== 'function') throw new TypeError('TreeLock needs the Web Locks API (navigator.locks)');
    this.#name = PREFIX + treeId;
    this.#locks = locks;
    this.#Channel = Channel;
    this.#takeover = takeover;
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  /** `'idle'` before `acquire`, then `'leader'` or `'follower'`, and `'closed'` after `close`. */
  get role() {
    return this.#role;
  }

  get isLeader() {
    return this.#role === 'leader';
  }

  /** Takes the lock if it is free; resolves the role this tab now has. */
  async acquire() {
    if (this.#role !== 'idle') return this.#role;
    this.#role = 'pending';
    if (this.#Channel) {
      this.#channel = new this.#Channel(this.#name);
      this.#channel.onmessage = (event) => this.dispatchEvent(new CustomEvent('message', { detail: event.data }));
    }
    const granted = await new Promise((resolve, reject) => {
      this.#locks
        .request(this.#name, { ifAvailable: true }, (lock) => {
          resolve(lock !== null);
          return lock ? this.#held : undefined;
        })
        .catch(reject);
    });
    if (this.#role === 'closed') return this.#role;
    if (granted) {
      this.#setRole('leader');
    } else {
      this.#setRole('follower');
      if (this.#takeover) this.#queue();
    }
    return this.#role;
  }

  #queue() {
    const controller = new AbortController();
    this.#waiting = controller;
    this.#locks
      .request(this.#name, { signal: controller.signal }, () => {
        if (this.#role === 'closed') return undefined;
        this.#waiting = undefined;
        this.#setRole('leader');
        return this.#held;
      })
      .catch(() => {}); // aborted by close()
  }

  #setRole(role) {
    this.#role = role;
    this.dispatchEvent(new CustomEvent('rolechange', { detail: { role } }));
  }

  /** Sends `message` (structured-cloneable) to the other tabs on this tree. */
  post(message) {
    this.#channel?.postMessage(message);
  }

  /** Releases the lock (or stops waiting for it) and closes the channel. */
  close() {
    if (this.#role === 'closed') return;
    this.#role = 'closed';
    this.#waiting?.abort();
    this.#release();
    this.#channel?.close();
    this.#channel = undefined;
  }
}
