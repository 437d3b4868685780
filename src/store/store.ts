// The storage interface every feature builds on (docs/architecture.md §4). Two implementations:
// redis-store.ts (shared by replicas) and memory-store.ts (embedded, one process only).
// test/store/store-contract.test.ts runs the same contract against both.

export interface SetOptions {
  /** Expire the key after this many seconds. */
  readonly ttlSeconds?: number;
  /** Only write when the key does not exist (SET NX). */
  readonly onlyIfAbsent?: boolean;
  /** Only write when the key exists (SET XX): never resurrects an expired or deleted key. */
  readonly onlyIfPresent?: boolean;
  /** Keep the key's current TTL (SET KEEPTTL); ignored when ttlSeconds is given. */
  readonly keepTtl?: boolean;
}

export interface StreamEntry {
  /** Entry id, `<ms>-<seq>` as Redis Streams spell it; increases within one stream. */
  readonly id: string;
  readonly data: string;
}

export interface StreamAppendOptions {
  /** Keep at most about this many entries (older ones are trimmed). */
  readonly maxLen: number;
  /** (Re)set the stream's TTL on every append; absent for a durable stream. */
  readonly ttlSeconds?: number;
}

/** The keys of a chained log (audit/audit.ts): one hash slot (one hash tag). */
export interface ChainKeys {
  /** The newest entry's link (its sequence number and MAC). */
  readonly head: string;
  /** The entries. */
  readonly stream: string;
  /** The last entry trimmed off the stream's old end, as its data. */
  readonly anchor: string;
}

export type Unsubscribe = () => Promise<void>;

/** Sees every store command complete: its duration, and whether it succeeded (metrics). */
export type CommandObserver = (seconds: number, ok: boolean) => void;

/** Sees the store reach a (new) Redis Sentinel master: `host:port`, and the one before if any. */
export type MasterObserver = (master: string, previous: string | undefined) => void;

export interface Store {
  /** "redis" or "memory", for logs and /readyz. */
  readonly kind: "redis" | "memory";

  get(key: string): Promise<string | null>;
  /** Reads a value and slides its TTL in one round trip (GETEX). */
  getAndTouch(key: string, ttlSeconds: number): Promise<string | null>;
  /** Writes a value; false when onlyIfAbsent/onlyIfPresent stopped the write. */
  set(key: string, value: string, options?: SetOptions): Promise<boolean>;
  /**
   * Writes `value` (or deletes the key when null) only if the key currently holds `expected`
   * (null: only if absent), atomically. The building block of optimistic concurrency.
   */
  compareAndSet(key: string, expected: string | null, value: string | null): Promise<boolean>;
  /** Deletes keys; returns how many existed. */
  del(...keys: string[]): Promise<number>;
  /** Sets a TTL; false when the key does not exist. */
  expire(key: string, ttlSeconds: number): Promise<boolean>;
  /** Seconds left before expiry: -1 without TTL, -2 when missing (as Redis TTL). */
  ttl(key: string): Promise<number>;
  /** Atomically adds `by` to an integer value (creating it at 0) and returns the result. */
  incr(key: string, by?: number, ttlSeconds?: number): Promise<number>;

  hashGet(key: string, field: string): Promise<string | null>;
  hashGetAll(key: string): Promise<Record<string, string>>;
  hashSet(key: string, field: string, value: string, ttlSeconds?: number): Promise<void>;
  hashDel(key: string, field: string): Promise<void>;

  setAdd(key: string, member: string, ttlSeconds?: number): Promise<void>;
  setRemove(key: string, member: string): Promise<void>;
  setMembers(key: string): Promise<string[]>;

  /** Adds a member to a sorted set, or moves it to a new score (ZADD). */
  sortedAdd(key: string, member: string, score: number): Promise<void>;
  sortedRemove(key: string, member: string): Promise<void>;
  /** Members with a score ≤ maxScore, lowest score first, at most `limit` (ZRANGEBYSCORE). */
  sortedUpTo(key: string, maxScore: number, limit: number): Promise<string[]>;
  /** How many members a sorted set holds; 0 when it does not exist (ZCARD). */
  sortedCount(key: string): Promise<number>;

  /** Appends to a bounded stream (XADD MAXLEN ~) and returns the entry id. */
  streamAppend(key: string, data: string, options: StreamAppendOptions): Promise<string>;
  /**
   * Appends `data` to a chained log atomically, only when its head still holds `expectedHead`
   * (null: absent): the head becomes `head`, and past `maxLen` entries the oldest are trimmed,
   * the last one trimmed kept as the anchor. False, writing nothing, when the head moved.
   */
  chainAppend(
    keys: ChainKeys,
    expectedHead: string | null,
    head: string,
    data: string,
    maxLen: number,
  ): Promise<boolean>;
  /** Entries with ids strictly greater than afterId, oldest first. */
  streamReadAfter(key: string, afterId: string, count: number): Promise<StreamEntry[]>;

  /** Entries with ids strictly less than beforeId (or the newest, when absent), newest first. */
  streamReadBefore(key: string, beforeId: string | undefined, count: number): Promise<StreamEntry[]>;

  /** Fire-and-forget broadcast to every subscriber of the channel, on every replica. */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Listens on a channel; resolves once the subscription is active. `onResync` runs each time the
   * subscription is active again after its connection was lost: whatever was published meanwhile
   * was missed, so state kept from the channel must be read again.
   */
  subscribe(
    channel: string,
    listener: (message: string) => void,
    onResync?: () => void,
  ): Promise<Unsubscribe>;

  /**
   * Waits, bounded, until the writes acknowledged so far are on a replica of the backend, where it
   * has replicas to lose them to (Redis Sentinel); true at once elsewhere. False: not confirmed in
   * time. `probeKey` (keys.replicationProbe()) is written first, to have something to wait for.
   */
  waitForReplica(probeKey: string): Promise<boolean>;

  /** Round trip to the backend, for readiness. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The commands a CommandObserver sees, and tracing's store spans (publish and subscribe are not
 * round trips in the embedded store).
 */
export const STORE_COMMANDS = [
  "get",
  "getAndTouch",
  "set",
  "compareAndSet",
  "del",
  "expire",
  "ttl",
  "incr",
  "hashGet",
  "hashGetAll",
  "hashSet",
  "hashDel",
  "setAdd",
  "setRemove",
  "setMembers",
  "sortedAdd",
  "sortedRemove",
  "sortedUpTo",
  "sortedCount",
  "streamAppend",
  "chainAppend",
  "streamReadAfter",
  "streamReadBefore",
  "ping",
] as const satisfies readonly (keyof Store)[];
