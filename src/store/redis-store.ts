// The shared store (DESIGN.md §4): the Store interface on Redis through ioredis, so replicas share
// sessions, event logs and pub/sub. One auto-pipelined command connection, plus one subscriber
// connection created on the first subscribe and shared by every local listener.

import { Redis, type ChainableCommander, type RedisOptions } from "ioredis";
import { fail } from "../errors.js";
import type {
  CommandObserver,
  SetOptions,
  Store,
  StreamAppendOptions,
  StreamEntry,
  Unsubscribe,
} from "./store.js";

export interface RedisStoreOptions extends RedisOptions {
  /** Receives connection errors and errors thrown by listeners; nothing is logged here. */
  readonly onError?: (err: unknown) => void;
  /** Sees each command (a MULTI counts as one) complete or fail. */
  readonly onCommand?: CommandObserver;
}

type Listener = (message: string) => void;

interface Channel {
  readonly listeners: Set<Listener>;
  /** Settles when Redis confirmed the SUBSCRIBE. */
  readonly active: Promise<unknown>;
}

/** Store on Redis (6.2 or newer: GETEX, exclusive XRANGE). */
export class RedisStore implements Store {
  readonly kind = "redis" as const;
  readonly #redis: Redis;
  #subscriber: Redis | undefined;
  readonly #channels = new Map<string, Channel>();
  /** Per subscription: what to run when it is active again after a lost connection. */
  readonly #resyncs = new Map<Listener, () => void>();
  readonly #onError: (err: unknown) => void;
  readonly #onCommand: CommandObserver | undefined;

  constructor(url: string, options: RedisStoreOptions = {}) {
    const { onError, onCommand, ...redisOptions } = options;
    this.#onError = onError ?? (() => {});
    this.#onCommand = onCommand;
    // Fail fast while Redis is away (one reconnection attempt per command, then 503) rather than
    // holding requests for seconds.
    this.#redis = new Redis(url, { enableAutoPipelining: true, maxRetriesPerRequest: 1, ...redisOptions });
    // Without a listener ioredis prints unhandled 'error' events; failed commands still reject.
    this.#redis.on("error", (err: unknown) => this.#onError(err));
  }

  /** Resolves once the command connection is ready; rejects after timeoutMs with the last error. */
  async ready(timeoutMs: number): Promise<void> {
    const redis = this.#redis;
    if (redis.status === "ready") return;
    let lastError: unknown;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: unknown) => (lastError = err);
      const done = (err?: Error) => {
        clearTimeout(timer);
        redis.off("ready", onReady).off("error", onError).off("end", onEnd);
        if (err === undefined) resolve();
        else reject(err);
      };
      const onReady = () => done();
      const onEnd = () => done(new Error("connection ended", { cause: lastError }));
      const timer = setTimeout(
        () => done(new Error(`not ready after ${timeoutMs} ms`, { cause: lastError })),
        timeoutMs,
      );
      redis.on("ready", onReady).on("error", onError).on("end", onEnd);
    });
  }

  async get(key: string): Promise<string | null> {
    return this.#guard(this.#redis.get(key));
  }

  async getAndTouch(key: string, ttlSeconds: number): Promise<string | null> {
    checkTtl(ttlSeconds);
    return this.#guard(this.#redis.getex(key, "EX", ttlSeconds));
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const args: (string | number)[] = [key, value];
    if (options.ttlSeconds !== undefined) args.push("EX", checkTtl(options.ttlSeconds));
    else if (options.keepTtl) args.push("KEEPTTL");
    if (options.onlyIfAbsent) args.push("NX");
    else if (options.onlyIfPresent) args.push("XX");
    return (await this.#guard(this.#redis.call("SET", ...args))) === "OK";
  }

  async compareAndSet(key: string, expected: string | null, value: string | null): Promise<boolean> {
    const args = [expected === null ? "0" : "1", expected ?? "", value === null ? "0" : "1", value ?? ""];
    return (await this.#guard(this.#redis.eval(COMPARE_AND_SET, 1, key, ...args))) === 1;
  }

  async del(...keys: string[]): Promise<number> {
    return keys.length === 0 ? 0 : this.#guard(this.#redis.del(...keys));
  }

  async expire(key: string, ttlSeconds: number): Promise<boolean> {
    if (!Number.isInteger(ttlSeconds))
      throw new RangeError(`ttlSeconds must be an integer, got ${ttlSeconds}`);
    return (await this.#guard(this.#redis.expire(key, ttlSeconds))) === 1;
  }

  async ttl(key: string): Promise<number> {
    return this.#guard(this.#redis.ttl(key));
  }

  async incr(key: string, by = 1, ttlSeconds?: number): Promise<number> {
    if (!Number.isSafeInteger(by)) throw new RangeError(`by must be an integer, got ${by}`);
    if (ttlSeconds === undefined) return this.#guard(this.#redis.incrby(key, by));
    // SET NX EX creates a new key at 0 with the TTL and leaves an existing one alone; MULTI makes
    // "create with TTL, then add" atomic, so a counter never lives without its TTL.
    const tx = this.#redis.multi().set(key, "0", "EX", checkTtl(ttlSeconds), "NX").incrby(key, by);
    const [, total] = await this.#exec(tx);
    return Number(total);
  }

  async hashGet(key: string, field: string): Promise<string | null> {
    return this.#guard(this.#redis.hget(key, field));
  }

  async hashGetAll(key: string): Promise<Record<string, string>> {
    return this.#guard(this.#redis.hgetall(key));
  }

  async hashSet(key: string, field: string, value: string, ttlSeconds?: number): Promise<void> {
    if (ttlSeconds === undefined) await this.#guard(this.#redis.hset(key, field, value));
    else await this.#exec(this.#redis.multi().hset(key, field, value).expire(key, checkTtl(ttlSeconds)));
  }

  async hashDel(key: string, field: string): Promise<void> {
    await this.#guard(this.#redis.hdel(key, field));
  }

  async setAdd(key: string, member: string, ttlSeconds?: number): Promise<void> {
    if (ttlSeconds === undefined) await this.#guard(this.#redis.sadd(key, member));
    else await this.#exec(this.#redis.multi().sadd(key, member).expire(key, checkTtl(ttlSeconds)));
  }

  async setRemove(key: string, member: string): Promise<void> {
    await this.#guard(this.#redis.srem(key, member));
  }

  async setMembers(key: string): Promise<string[]> {
    return this.#guard(this.#redis.smembers(key));
  }

  async sortedAdd(key: string, member: string, score: number): Promise<void> {
    await this.#guard(this.#redis.zadd(key, score, member));
  }

  async sortedRemove(key: string, member: string): Promise<void> {
    await this.#guard(this.#redis.zrem(key, member));
  }

  async sortedUpTo(key: string, maxScore: number, limit: number): Promise<string[]> {
    const max = maxScore === Infinity ? "+inf" : maxScore;
    const count = Number.isFinite(limit) ? limit : -1;
    return this.#guard(this.#redis.zrangebyscore(key, "-inf", max, "LIMIT", 0, count));
  }

  async sortedCount(key: string): Promise<number> {
    return this.#guard(this.#redis.zcard(key));
  }

  async streamAppend(key: string, data: string, options: StreamAppendOptions): Promise<string> {
    const tx = this.#redis.multi().xadd(key, "MAXLEN", "~", options.maxLen, "*", "data", data);
    if (options.ttlSeconds !== undefined) tx.expire(key, checkTtl(options.ttlSeconds));
    const [id] = await this.#exec(tx);
    return String(id);
  }

  async streamReadAfter(key: string, afterId: string, count: number): Promise<StreamEntry[]> {
    // "(" makes the start exclusive (Redis 6.2+).
    const rows = await this.#guard(this.#redis.xrange(key, `(${afterId}`, "+", "COUNT", count));
    return rows.map(([id, fields]) => ({ id, data: fieldValue(fields, "data") }));
  }

  async streamReadBefore(key: string, beforeId: string | undefined, count: number): Promise<StreamEntry[]> {
    const end = beforeId === undefined ? "+" : `(${beforeId}`;
    const rows = await this.#guard(this.#redis.xrevrange(key, end, "-", "COUNT", count));
    return rows.map(([id, fields]) => ({ id, data: fieldValue(fields, "data") }));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.#guard(this.#redis.publish(channel, message));
  }

  async subscribe(channel: string, listener: Listener, onResync?: () => void): Promise<Unsubscribe> {
    // A fresh wrapper per call, so subscribing the same function twice gives two subscriptions.
    const own: Listener = (message) => listener(message);
    if (onResync) this.#resyncs.set(own, onResync);
    let state = this.#channels.get(channel);
    if (state === undefined) {
      state = { listeners: new Set(), active: this.#subscriberConnection().subscribe(channel) };
      this.#channels.set(channel, state);
    }
    state.listeners.add(own);
    try {
      await state.active;
    } catch (err) {
      if (this.#channels.get(channel) === state) this.#channels.delete(channel);
      this.#resyncs.delete(own);
      throw err;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      this.#resyncs.delete(own);
      const current = this.#channels.get(channel);
      if (current === undefined || !current.listeners.delete(own) || current.listeners.size > 0) return;
      this.#channels.delete(channel);
      // Commands on one connection run in order, so a later SUBSCRIBE still wins over this.
      await this.#subscriber?.unsubscribe(channel);
    };
  }

  async ping(): Promise<void> {
    await this.#guard(this.#redis.ping());
  }

  async close(): Promise<void> {
    this.#channels.clear();
    this.#resyncs.clear();
    await Promise.all([quit(this.#redis), this.#subscriber && quit(this.#subscriber)]);
  }

  /**
   * Redis being unreachable is an expected failure with its own code (503 on the wire); other Redis
   * errors (a wrong type, a bad argument) are bugs and pass through unchanged. Every command
   * passes here, so this is also where its duration and outcome are observed.
   */
  #guard<T>(command: Promise<T>): Promise<T> {
    const started = performance.now();
    const observe = (ok: boolean) => this.#onCommand?.((performance.now() - started) / 1000, ok);
    return command.then(
      (value) => {
        observe(true);
        return value;
      },
      (err: unknown) => {
        observe(false);
        throw isConnectionFailure(err)
          ? fail("PORTICO_ERR_STORE_UNAVAILABLE", "Service Unavailable: the session store cannot be reached")
          : err;
      },
    );
  }

  /** Runs a MULTI and returns its replies, rejecting with the first failed command's error. */
  async #exec(tx: ChainableCommander): Promise<unknown[]> {
    const results = await this.#guard(tx.exec());
    if (results === null) throw new Error("Redis transaction aborted");
    return results.map(([err, value]) => {
      if (err) throw err;
      return value;
    });
  }

  #subscriberConnection(): Redis {
    if (this.#subscriber !== undefined) return this.#subscriber;
    const subscriber = this.#redis.duplicate({ enableAutoPipelining: false });
    subscriber.on("error", (err: unknown) => this.#onError(err));
    subscriber.on("message", (channel: string, message: string) => this.#dispatch(channel, message));
    // ioredis subscribes again after a reconnection, but what was published meanwhile is lost.
    let lost = false;
    subscriber.on("close", () => (lost = true));
    subscriber.on("ready", () => {
      if (!lost) return;
      lost = false;
      void this.#resync(subscriber);
    });
    this.#subscriber = subscriber;
    return subscriber;
  }

  /** Once the channels are subscribed again, tells their owners to re-read what they follow. */
  async #resync(subscriber: Redis): Promise<void> {
    const channels = [...this.#channels.keys()];
    try {
      // Replies come in order: when this one is in, ioredis's own resubscription is active too.
      if (channels.length > 0) await subscriber.subscribe(...channels);
    } catch (err) {
      this.#onError(err);
      return; // the next reconnection tries again
    }
    for (const resync of [...this.#resyncs.values()]) {
      try {
        resync();
      } catch (err) {
        this.#onError(err);
      }
    }
  }

  #dispatch(channel: string, message: string): void {
    const state = this.#channels.get(channel);
    if (state === undefined) return;
    for (const listener of [...state.listeners]) {
      if (!state.listeners.has(listener)) continue;
      try {
        listener(message);
      } catch (err) {
        this.#onError(err);
      }
    }
  }
}

// KEYS[1]; ARGV: hasExpected, expected, hasValue, value. Returns 1 when written.
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
if ARGV[3] == '0' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[4]) end
return 1`;

async function quit(redis: Redis): Promise<void> {
  if (redis.status === "end") return;
  // QUIT waits for a live connection; one that is down is dropped at once instead.
  if (redis.status !== "ready") return redis.disconnect();
  await redis.quit().catch(() => redis.disconnect());
}

function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return (
    err.name === "MaxRetriesPerRequestError" ||
    /Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE/.test(err.message)
  );
}

function checkTtl(ttlSeconds: number): number {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(`ttlSeconds must be a positive integer, got ${ttlSeconds}`);
  }
  return ttlSeconds;
}

function fieldValue(fields: string[], name: string): string {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1] ?? "";
  return "";
}
