// The shared store (docs/architecture.md §4): the Store interface on Redis through ioredis, so replicas share
// sessions, event logs and pub/sub; on one server, a Sentinel-managed master or a Redis Cluster.
// One auto-pipelined command connection, plus the subscriptions' connection (redis-subscriptions.ts)
// and, with Sentinel, one that runs WAIT.

import type { ChainableCommander, Redis } from "ioredis";
import { fail } from "../protocol/errors.js";
import {
  hashTag,
  isConnectionFailure,
  openCommandClient,
  watchMaster,
  quit,
  staleSlotMap,
  type CommandClient,
  type RedisTarget,
} from "./redis-connection.js";
import { RedisSubscriptions } from "./redis-subscriptions.js";
import { clusterEndpoint, type ClusterEndpoint, type SentinelEndpoint } from "./redis-urls.js";
import type {
  CommandObserver,
  MasterObserver,
  SetOptions,
  Store,
  StreamAppendOptions,
  ChainKeys,
  StreamEntry,
  Unsubscribe,
} from "./store.js";

export interface RedisStoreOptions {
  /** The URL names the seed nodes of a Redis Cluster (comma-separated when several). */
  readonly cluster?: boolean;
  /** Connect through Redis Sentinel; the URL then gives only credentials, database and TLS. */
  readonly sentinel?: SentinelEndpoint;
  /** How long waitForReplica() waits for a replica's acknowledgement (Sentinel mode); 500 ms unless set. */
  readonly replicaWaitMs?: number;
  /** Receives connection errors and errors thrown by listeners; nothing is logged here. */
  readonly onError?: (err: unknown) => void;
  /** Sees each command (a MULTI counts as one) complete or fail. */
  readonly onCommand?: CommandObserver;
  /** Sentinel mode: told each time the command connection is ready on another master (`host:port`). */
  readonly onMaster?: MasterObserver;
}

/**
 * Store on Redis (6.2 or newer: GETEX, exclusive XRANGE). In a cluster, commands fail until
 * ready() has resolved (nothing is queued while the cluster is away), and the keys of one command
 * or transaction must share a hash tag (store/keys.ts gives each tenant's keys one).
 */
export class RedisStore implements Store {
  readonly kind = "redis" as const;
  readonly #redis: CommandClient;
  /** Set when the URL names a Redis Cluster. */
  readonly #cluster: ClusterEndpoint | undefined;
  /** Set in Sentinel mode, where the master has replicas to wait for. */
  readonly #replicaWaitMs: number | undefined;
  /** Sentinel mode: the connection that runs WAIT, and its rounds (one at a time). */
  #waiter: Redis | undefined;
  #waiting: Promise<unknown> = Promise.resolve();
  #nextWait: Promise<boolean> | undefined;
  readonly #subscriptions: RedisSubscriptions;
  readonly #onError: (err: unknown) => void;
  readonly #onCommand: CommandObserver | undefined;

  constructor(url: string, options: RedisStoreOptions = {}) {
    const { onError, onCommand, cluster = false, sentinel } = options;
    this.#onError = onError ?? (() => {});
    this.#onCommand = onCommand;
    this.#cluster = cluster ? clusterEndpoint(url) : undefined;
    this.#replicaWaitMs = sentinel === undefined ? undefined : (options.replicaWaitMs ?? 500);
    const target: RedisTarget =
      this.#cluster !== undefined
        ? { kind: "cluster", endpoint: this.#cluster }
        : sentinel !== undefined
          ? { kind: "sentinel", endpoint: sentinel }
          : { kind: "server", url };
    this.#redis = openCommandClient(target);
    // Without a listener ioredis prints unhandled 'error' events; failed commands still reject.
    this.#redis.on("error", (err: unknown) => this.#onError(err));
    this.#redis.on("node error", (err: unknown) => this.#onError(err));
    if (sentinel !== undefined && options.onMaster) watchMaster(this.#redis as Redis, options.onMaster);
    this.#subscriptions = new RedisSubscriptions(this.#redis, this.#cluster, this.#onError);
  }

  /** Resolves once the command connection is ready; rejects after timeoutMs with the last error. */
  async ready(timeoutMs: number): Promise<void> {
    const redis = this.#redis;
    if (redis.status === "ready") return;
    let lastError: unknown;
    // A cluster's own error only says "Failed to refresh slots cache"; its nodes' errors say why.
    let lastNodeError: unknown;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: unknown) => (lastError = err);
      const onNodeError = (err: unknown) => (lastNodeError = err);
      const done = (err?: Error) => {
        clearTimeout(timer);
        redis.off("ready", onReady).off("error", onError).off("node error", onNodeError).off("end", onEnd);
        if (err === undefined) resolve();
        else reject(err);
      };
      const failed = (message: string) => new Error(message, { cause: lastNodeError ?? lastError });
      const onReady = () => done();
      const onEnd = () => done(failed("connection ended"));
      const timer = setTimeout(() => done(failed(`not ready after ${timeoutMs} ms`)), timeoutMs);
      redis.on("ready", onReady).on("error", onError).on("node error", onNodeError).on("end", onEnd);
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
    if (keys.length === 0) return 0;
    if (this.#cluster === undefined) return this.#guard(this.#redis.del(...keys));
    // One DEL may only name keys of one slot. Portico's callers pass keys of one hash tag (one
    // command); keys of several tags are deleted per tag, each deletion atomic on its own.
    const byTag = new Map<string, string[]>();
    for (const key of keys) {
      const group = byTag.get(hashTag(key));
      if (group) group.push(key);
      else byTag.set(hashTag(key), [key]);
    }
    const counts = await Promise.all(
      [...byTag.values()].map((group) => this.#guard(this.#redis.del(...group))),
    );
    return counts.reduce((sum, n) => sum + n, 0);
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

  async chainAppend(
    keys: ChainKeys,
    expectedHead: string | null,
    head: string,
    data: string,
    maxLen: number,
  ): Promise<boolean> {
    const args = [expectedHead === null ? "0" : "1", expectedHead ?? "", head, data, String(maxLen)];
    const script = this.#redis.eval(CHAIN_APPEND, 3, keys.head, keys.stream, keys.anchor, ...args);
    return (await this.#guard(script)) === 1;
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
    if (this.#cluster === undefined) await this.#guard(this.#redis.publish(channel, message));
    // ioredis sends a keyless PUBLISH to any node, and messages sent through different nodes may
    // overtake each other on their way to the subscriber's node. Naming the channel as the key of
    // a script sends every message of a channel through the node owning its slot, in order.
    else await this.#guard(this.#redis.eval(PUBLISH_THROUGH_SLOT_OWNER, 1, channel, message));
  }

  subscribe(
    channel: string,
    listener: (message: string) => void,
    onResync?: () => void,
  ): Promise<Unsubscribe> {
    return this.#subscriptions.subscribe(channel, listener, onResync);
  }

  /**
   * Replication is asynchronous: in Sentinel mode, waits (bounded) until what was acknowledged so
   * far reached a replica, so that a failover keeps it (docs/storage.md "Replication"). WAIT
   * covers its own connection's writes and blocks that connection, so it runs on one of its own,
   * after a write of `probeKey` that comes later in the replication stream than every write
   * already acknowledged. Callers arriving meanwhile share the next round.
   */
  waitForReplica(probeKey: string): Promise<boolean> {
    if (this.#replicaWaitMs === undefined) return Promise.resolve(true);
    if (this.#nextWait === undefined) {
      const round = this.#waiting.then(() => {
        this.#nextWait = undefined; // whoever comes now wrote after this probe: next round
        return this.#waitRound(probeKey, this.#replicaWaitMs ?? 0);
      });
      this.#nextWait = round;
      this.#waiting = round.catch(() => false);
    }
    return this.#nextWait;
  }

  async #waitRound(probeKey: string, timeoutMs: number): Promise<boolean> {
    if (this.#waiter === undefined) {
      this.#waiter = (this.#redis as Redis).duplicate({ enableAutoPipelining: false });
      this.#waiter.on("error", (err: unknown) => this.#onError(err));
    }
    await this.#guard(this.#waiter.set(probeKey, String(Date.now()), "PX", PROBE_TTL_MS));
    const acknowledged = await this.#guard(this.#waiter.wait(1, timeoutMs));
    if (acknowledged >= 1) return true;
    this.#onError(new Error(`no Redis replica acknowledged the latest writes within ${timeoutMs} ms`));
    return false;
  }

  async ping(): Promise<void> {
    await this.#guard(this.#redis.ping());
  }

  /** Whether the server runs in cluster mode (INFO cluster), to catch a misconfiguration at boot. */
  async clusterEnabled(): Promise<boolean> {
    return /^cluster_enabled:1\s*$/m.test(await this.#guard(this.#redis.info("cluster")));
  }

  async close(): Promise<void> {
    await Promise.all([quit(this.#redis), this.#subscriptions.close(), this.#waiter && quit(this.#waiter)]);
  }

  /**
   * Every command passes here, so this is where its duration and outcome are observed, and where
   * its failure is mapped (#failure).
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
        throw this.#failure(err);
      },
    );
  }

  /**
   * Redis being unreachable, or a cluster moving slots, is an expected failure with its own code
   * (503 on the wire); other Redis errors (a wrong type, a bad argument) are bugs and pass through
   * unchanged.
   */
  #failure(err: unknown): unknown {
    if (!isConnectionFailure(err) && !staleSlotMap(this.#redis, err)) return err;
    return fail("PORTICO_ERR_STORE_UNAVAILABLE", "Service Unavailable: the session store cannot be reached");
  }

  /** Runs a MULTI and returns its replies, rejecting with the first failed command's error. */
  async #exec(tx: ChainableCommander): Promise<unknown[]> {
    const results = await this.#guard(tx.exec());
    if (results === null) throw new Error("Redis transaction aborted");
    return results.map(([err, value]) => {
      if (err) throw this.#failure(err);
      return value;
    });
  }
}

/** How long the replication probe key lives; it only needs to outlive one WAIT. */
const PROBE_TTL_MS = 60_000;

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

// KEYS: head, stream, anchor. ARGV: whether a head is expected, the expected head, the new head,
// the entry's data, the stream's length. The entry is appended only while the head is unchanged
// (first: a failed XADD, say on a key of another type, leaves the head as it was);
// past the length the oldest entries are trimmed, the last one trimmed kept as the anchor.
const CHAIN_APPEND = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
redis.call('XADD', KEYS[2], '*', 'data', ARGV[4])
redis.call('SET', KEYS[1], ARGV[3])
local over = redis.call('XLEN', KEYS[2]) - tonumber(ARGV[5])
if over > 0 then
  local trimmed = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', over)
  local fields = trimmed[#trimmed][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'data' then redis.call('SET', KEYS[3], fields[i + 1]) end
  end
  redis.call('XTRIM', KEYS[2], 'MAXLEN', tonumber(ARGV[5]))
end
return 1`;

// KEYS[1]: the channel, named as a key only so that a cluster routes by its slot; ARGV[1]: message.
const PUBLISH_THROUGH_SLOT_OWNER = "return redis.call('PUBLISH', KEYS[1], ARGV[1])";

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
