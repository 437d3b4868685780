// The embedded store (docs/architecture.md §4): the Store interface on in-process Maps, for a single process
// with no Redis. Mirrors Redis semantics (TTL rounding, WRONGTYPE, stream ids, empty hashes and
// sets vanish) so the same contract suite passes against both implementations.

import {
  STORE_COMMANDS,
  type CommandObserver,
  type SetOptions,
  type Store,
  type StreamAppendOptions,
  type ChainKeys,
  type StreamEntry,
  type Unsubscribe,
} from "./store.js";

export interface MemoryStoreOptions {
  /** Clock in epoch milliseconds; tests inject a frozen one. */
  readonly now?: () => number;
  /** How often expired keys nobody reads are dropped. */
  readonly sweepIntervalMs?: number;
  /** Receives errors thrown by subscribers' listeners. */
  readonly onError?: (err: unknown) => void;
  /** Sees each command complete, as the Redis store reports them (metrics). */
  readonly onCommand?: CommandObserver;
}

interface StreamId {
  readonly ms: number;
  readonly seq: number;
}

interface StreamLog {
  readonly items: (StreamId & { readonly data: string })[];
  /** Survives trimming, as Redis's last-generated-id does, so ids never repeat. */
  last: StreamId | undefined;
}

type Value =
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "hash"; readonly value: Map<string, string> }
  | { readonly type: "set"; readonly value: Set<string> }
  | { readonly type: "stream"; readonly value: StreamLog }
  | { readonly type: "zset"; readonly value: Map<string, number> };

type Entry = Value & { expiresAt?: number };
type EntryOf<T extends Value["type"]> = Extract<Value, { type: T }> & { expiresAt?: number };

const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";

/** In-process Store; serves one process only (replicas do not see each other's data). */
export class MemoryStore implements Store {
  readonly kind = "memory" as const;
  readonly #entries = new Map<string, Entry>();
  readonly #channels = new Map<string, Set<(message: string) => void>>();
  readonly #now: () => number;
  readonly #onError: (err: unknown) => void;
  readonly #sweepTimer: NodeJS.Timeout;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError ?? (() => {});
    this.#sweepTimer = setInterval(() => this.#sweep(), options.sweepIntervalMs ?? 10_000);
    this.#sweepTimer.unref();
    if (options.onCommand) observeCommands(this, options.onCommand);
  }

  async get(key: string): Promise<string | null> {
    return this.#lookup(key, "string")?.value ?? null;
  }

  async getAndTouch(key: string, ttlSeconds: number): Promise<string | null> {
    checkTtl(ttlSeconds);
    const entry = this.#lookup(key, "string");
    if (entry === undefined) return null;
    entry.expiresAt = this.#deadline(ttlSeconds);
    return entry.value;
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    if (options.ttlSeconds !== undefined) checkTtl(options.ttlSeconds);
    const previous = this.#live(key);
    if (options.onlyIfAbsent && previous !== undefined) return false;
    if (options.onlyIfPresent && previous === undefined) return false;
    const expiresAt =
      options.ttlSeconds !== undefined
        ? this.#deadline(options.ttlSeconds)
        : options.keepTtl
          ? previous?.expiresAt
          : undefined;
    this.#entries.set(key, { type: "string", value, expiresAt });
    return true;
  }

  async compareAndSet(key: string, expected: string | null, value: string | null): Promise<boolean> {
    const current = this.#lookup(key, "string")?.value ?? null;
    if (current !== expected) return false;
    if (value === null) this.#entries.delete(key);
    else this.#entries.set(key, { type: "string", value });
    return true;
  }

  async del(...keys: string[]): Promise<number> {
    let count = 0;
    for (const key of keys) if (this.#live(key) !== undefined && this.#entries.delete(key)) count++;
    return count;
  }

  async expire(key: string, ttlSeconds: number): Promise<boolean> {
    if (!Number.isInteger(ttlSeconds))
      throw new RangeError(`ttlSeconds must be an integer, got ${ttlSeconds}`);
    const entry = this.#live(key);
    if (entry === undefined) return false;
    // As in Redis, a TTL of zero or less deletes the key.
    if (ttlSeconds <= 0) this.#entries.delete(key);
    else entry.expiresAt = this.#deadline(ttlSeconds);
    return true;
  }

  async ttl(key: string): Promise<number> {
    const entry = this.#live(key);
    if (entry === undefined) return -2;
    if (entry.expiresAt === undefined) return -1;
    // Redis rounds the remaining milliseconds to the nearest second.
    return Math.floor((entry.expiresAt - this.#now() + 500) / 1000);
  }

  async incr(key: string, by = 1, ttlSeconds?: number): Promise<number> {
    if (!Number.isSafeInteger(by)) throw new RangeError(`by must be an integer, got ${by}`);
    if (ttlSeconds !== undefined) checkTtl(ttlSeconds);
    const entry = this.#lookup(key, "string");
    const current = entry === undefined ? 0 : parseInteger(entry.value);
    const next = current + by;
    // As INCRBY keeps an existing key's TTL, only a new key gets ttlSeconds.
    const expiresAt =
      entry !== undefined
        ? entry.expiresAt
        : ttlSeconds === undefined
          ? undefined
          : this.#deadline(ttlSeconds);
    this.#entries.set(key, { type: "string", value: String(next), expiresAt });
    return next;
  }

  async hashGet(key: string, field: string): Promise<string | null> {
    return this.#lookup(key, "hash")?.value.get(field) ?? null;
  }

  async hashGetAll(key: string): Promise<Record<string, string>> {
    return Object.fromEntries(this.#lookup(key, "hash")?.value ?? []);
  }

  async hashSet(key: string, field: string, value: string, ttlSeconds?: number): Promise<void> {
    if (ttlSeconds !== undefined) checkTtl(ttlSeconds);
    const entry = this.#lookupOrCreate(key, "hash", () => new Map());
    entry.value.set(field, value);
    if (ttlSeconds !== undefined) entry.expiresAt = this.#deadline(ttlSeconds);
  }

  async hashDel(key: string, field: string): Promise<void> {
    const entry = this.#lookup(key, "hash");
    if (entry?.value.delete(field) && entry.value.size === 0) this.#entries.delete(key);
  }

  async setAdd(key: string, member: string, ttlSeconds?: number): Promise<void> {
    if (ttlSeconds !== undefined) checkTtl(ttlSeconds);
    const entry = this.#lookupOrCreate(key, "set", () => new Set());
    entry.value.add(member);
    if (ttlSeconds !== undefined) entry.expiresAt = this.#deadline(ttlSeconds);
  }

  async setRemove(key: string, member: string): Promise<void> {
    const entry = this.#lookup(key, "set");
    if (entry?.value.delete(member) && entry.value.size === 0) this.#entries.delete(key);
  }

  async setMembers(key: string): Promise<string[]> {
    return [...(this.#lookup(key, "set")?.value ?? [])];
  }

  async sortedAdd(key: string, member: string, score: number): Promise<void> {
    this.#lookupOrCreate(key, "zset", () => new Map()).value.set(member, score);
  }

  async sortedRemove(key: string, member: string): Promise<void> {
    const entry = this.#lookup(key, "zset");
    if (entry?.value.delete(member) && entry.value.size === 0) this.#entries.delete(key);
  }

  async sortedUpTo(key: string, maxScore: number, limit: number): Promise<string[]> {
    const members = [...(this.#lookup(key, "zset")?.value ?? [])];
    return members
      .filter(([, score]) => score <= maxScore)
      .sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, Math.max(0, limit))
      .map(([member]) => member);
  }

  async sortedCount(key: string): Promise<number> {
    return this.#lookup(key, "zset")?.value.size ?? 0;
  }

  async streamAppend(key: string, data: string, options: StreamAppendOptions): Promise<string> {
    if (options.ttlSeconds !== undefined) checkTtl(options.ttlSeconds);
    const entry = this.#lookupOrCreate(key, "stream", () => ({ items: [], last: undefined }));
    const { items, last } = entry.value;
    // Like Redis: never go backwards, even when the clock does.
    const ms = Math.max(this.#now(), last?.ms ?? 0);
    const seq = last !== undefined && last.ms === ms ? last.seq + 1 : 0;
    items.push({ ms, seq, data });
    entry.value.last = { ms, seq };
    if (items.length > options.maxLen) items.splice(0, items.length - Math.max(0, options.maxLen));
    if (options.ttlSeconds !== undefined) entry.expiresAt = this.#deadline(options.ttlSeconds);
    return `${ms}-${seq}`;
  }

  async chainAppend(
    keys: ChainKeys,
    expectedHead: string | null,
    head: string,
    data: string,
    maxLen: number,
  ): Promise<boolean> {
    if ((this.#lookup(keys.head, "string")?.value ?? null) !== expectedHead) return false;
    this.#entries.set(keys.head, { type: "string", value: head });
    const entry = this.#lookupOrCreate(keys.stream, "stream", () => ({ items: [], last: undefined }));
    const { items, last } = entry.value;
    const ms = Math.max(this.#now(), last?.ms ?? 0);
    const seq = last !== undefined && last.ms === ms ? last.seq + 1 : 0;
    items.push({ ms, seq, data });
    entry.value.last = { ms, seq };
    if (items.length > maxLen) {
      const trimmed = items.splice(0, items.length - maxLen);
      this.#entries.set(keys.anchor, { type: "string", value: trimmed.at(-1)!.data });
    }
    return true;
  }

  async streamReadAfter(key: string, afterId: string, count: number): Promise<StreamEntry[]> {
    const after = parseStreamId(afterId);
    const items = this.#lookup(key, "stream")?.value.items ?? [];
    return items
      .filter((item) => item.ms > after.ms || (item.ms === after.ms && item.seq > after.seq))
      .slice(0, Math.max(0, count))
      .map((item) => ({ id: `${item.ms}-${item.seq}`, data: item.data }));
  }

  async streamReadBefore(key: string, beforeId: string | undefined, count: number): Promise<StreamEntry[]> {
    const before = beforeId === undefined ? undefined : parseStreamId(beforeId);
    const items = this.#lookup(key, "stream")?.value.items ?? [];
    const older = (item: StreamId) =>
      before === undefined || item.ms < before.ms || (item.ms === before.ms && item.seq < before.seq);
    return items
      .filter(older)
      .reverse()
      .slice(0, Math.max(0, count))
      .map((item) => ({ id: `${item.ms}-${item.seq}`, data: item.data }));
  }

  async publish(channel: string, message: string): Promise<void> {
    const listeners = this.#channels.get(channel);
    if (listeners === undefined) return;
    const snapshot = [...listeners];
    // One microtask per message keeps publish order; the membership check means nothing is
    // delivered to a listener once its unsubscribe was called.
    queueMicrotask(() => {
      for (const listener of snapshot) {
        if (!listeners.has(listener)) continue;
        try {
          listener(message);
        } catch (err) {
          this.#onError(err);
        }
      }
    });
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<Unsubscribe> {
    // A fresh wrapper per call, so subscribing the same function twice gives two subscriptions.
    const own = (message: string) => listener(message);
    let listeners = this.#channels.get(channel);
    if (listeners === undefined) this.#channels.set(channel, (listeners = new Set()));
    listeners.add(own);
    return async () => {
      listeners.delete(own);
      if (listeners.size === 0 && this.#channels.get(channel) === listeners) this.#channels.delete(channel);
    };
  }

  /** One process, no replicas: nothing to wait for. */
  async waitForReplica(_probeKey: string): Promise<boolean> {
    return true;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#sweepTimer);
    this.#channels.clear();
  }

  #deadline(ttlSeconds: number): number {
    return this.#now() + ttlSeconds * 1000;
  }

  #expired(entry: Entry, now: number): boolean {
    return entry.expiresAt !== undefined && now > entry.expiresAt;
  }

  /** The entry if it exists and has not expired; expired ones are dropped on the way. */
  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || !this.#expired(entry, this.#now())) return entry;
    this.#entries.delete(key);
    return undefined;
  }

  #lookup<T extends Value["type"]>(key: string, type: T): EntryOf<T> | undefined {
    const entry = this.#live(key);
    if (entry !== undefined && entry.type !== type) throw new Error(WRONGTYPE);
    return entry as EntryOf<T> | undefined;
  }

  #lookupOrCreate<T extends Value["type"]>(
    key: string,
    type: T,
    create: () => EntryOf<T>["value"],
  ): EntryOf<T> {
    const found = this.#lookup(key, type);
    if (found !== undefined) return found;
    const entry = { type, value: create() } as unknown as EntryOf<T>;
    this.#entries.set(key, entry);
    return entry;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) if (this.#expired(entry, now)) this.#entries.delete(key);
  }
}

/** Wraps the instance's commands so each reports its duration and outcome. */
function observeCommands(store: MemoryStore, onCommand: CommandObserver): void {
  for (const name of STORE_COMMANDS) {
    const command = Reflect.get(store, name) as (this: MemoryStore, ...args: unknown[]) => Promise<unknown>;
    const observed = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        const result = await command.apply(store, args);
        onCommand((performance.now() - started) / 1000, true);
        return result;
      } catch (err) {
        onCommand((performance.now() - started) / 1000, false);
        throw err;
      }
    };
    Object.defineProperty(store, name, { value: observed });
  }
}

function checkTtl(ttlSeconds: number): void {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(`ttlSeconds must be a positive integer, got ${ttlSeconds}`);
  }
}

function parseInteger(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new Error("ERR value is not an integer or out of range");
  }
  return n;
}

function parseStreamId(id: string): StreamId {
  const match = /^(\d+)(?:-(\d+))?$/.exec(id);
  if (match === null) throw new Error("ERR Invalid stream ID specified as stream command argument");
  return { ms: Number(match[1]), seq: Number(match[2] ?? 0) };
}
