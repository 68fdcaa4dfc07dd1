// subagent-tree: one tab drives a tree (Web Locks + BroadcastChannel).
/**
 * One tab drives a tree (Web Locks + BroadcastChannel).
 *
 * @module subagent-tree/tree-lock
 */

export type TreeLockRole = 'idle' | 'pending' | 'leader' | 'follower' | 'closed';

export interface TreeLockOptions {
  /** A follower queues for the lock and becomes the leader when it is released (default true). */
  takeover?: boolean;
  locks?: LockManager;
  BroadcastChannel?: typeof BroadcastChannel;
}

export interface TreeLockEventMap {
  /** The role changed (`leader` after `acquire` or a takeover, `follower`). */
  rolechange: CustomEvent<{ role: TreeLockRole }>;
  /** A message another tab posted on this tree's channel. */
  message: CustomEvent<unknown>;
}

/**
 * Elects the tab that drives one tree: the holder of the Web Lock
 * `subagent-tree:<treeId>` (taken with `ifAvailable`) leads and may run
 * members; every other tab follows read-only, refreshed by the leader's
 * messages on the BroadcastChannel of the same name.
 */
export declare class TreeLock extends EventTarget {
  constructor(treeId: string, options?: TreeLockOptions);
  readonly role: TreeLockRole;
  readonly isLeader: boolean;
  /** Takes the lock when free; resolves `'leader'` or `'follower'`. */
  acquire(): Promise<TreeLockRole>;
  /** Posts a structured-cloneable message to the other tabs on this tree. */
  post(message: unknown): void;
  /** Releases the lock (or stops waiting for it) and closes the channel. */
  close(): void;
  addEventListener<K extends keyof TreeLockEventMap>(
    type: K,
    listener: (this: TreeLock, ev: TreeLockEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof TreeLockEventMap>(
    type: K,
    listener: (this: TreeLock, ev: TreeLockEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}
