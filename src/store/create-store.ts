// Picks the store at boot (docs/architecture.md §4): Redis (one server, Sentinel or a cluster) when a URL is configured,
// otherwise the embedded in-process store. An unreachable Redis fails the boot with a message
// naming it.

import { fail } from "../protocol/errors.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import { redactRedisUrl, sentinelEndpoint, type SentinelEndpoint } from "./redis-urls.js";
import type { CommandObserver, MasterObserver, Store } from "./store.js";

export interface CreateStoreOptions {
  /** `redis://` or `rediss://` URL; unset means the embedded store (one process only). */
  readonly redisUrl?: string | undefined;
  /** The URL names the seed nodes of a Redis Cluster (comma-separated when several). */
  readonly redisCluster?: boolean;
  /** `host:port` of Redis Sentinels: reach the master through them (the URL then gives credentials, database and TLS). */
  readonly redisSentinels?: readonly string[];
  /** The master's name in the sentinels' configuration; required with redisSentinels. */
  readonly redisSentinelMaster?: string | undefined;
  readonly redisSentinelPassword?: string | undefined;
  /** How long to wait for Redis before giving up; 5 s unless set. */
  readonly connectTimeoutMs?: number;
  /** Receives Redis connection errors after boot (the store itself logs nothing). */
  readonly onError?: (err: unknown) => void;
  /** Sees every store command complete or fail (metrics). */
  readonly onCommand?: CommandObserver;
  /** Sentinel mode: sees the master the store reaches, at boot and after each failover (logs). */
  readonly onMaster?: MasterObserver;
}

/** Builds the configured store; with Redis, resolves only once the connection is ready. */
export async function createStore(opts: CreateStoreOptions): Promise<Store> {
  const { onError, onCommand, onMaster } = opts;
  const observers = { ...(onError && { onError }), ...(onCommand && { onCommand }) };
  if (opts.redisUrl === undefined) return new MemoryStore(observers);
  const cluster = opts.redisCluster ?? false;
  const sentinels = opts.redisSentinels ?? [];
  const sentinel =
    sentinels.length === 0
      ? undefined
      : sentinelEndpoint(
          opts.redisUrl,
          sentinels,
          opts.redisSentinelMaster ?? "",
          opts.redisSentinelPassword,
        );
  const store = new RedisStore(opts.redisUrl, {
    cluster,
    ...(sentinel && { sentinel }),
    ...observers,
    onMaster,
  });
  const timeoutMs = opts.connectTimeoutMs ?? 5000;
  try {
    await store.ready(timeoutMs);
  } catch (err) {
    await store.close();
    const reason = describe(err instanceof Error && err.cause !== undefined ? err.cause : err);
    const hint = /cluster support disabled/.test(reason)
      ? " (not a cluster: unset PORTICO_REDIS_CLUSTER)"
      : "";
    throw fail(
      "PORTICO_ERR_STORE_UNAVAILABLE",
      `Cannot connect to ${where(opts.redisUrl, cluster, sentinel)} within ${timeoutMs / 1000} s: ${reason}${hint}`,
    );
  }
  // One server of a cluster would answer MOVED for most keys: refuse it at boot, not per request.
  if (!cluster && (await store.clusterEnabled().catch(() => false))) {
    await store.close();
    throw fail(
      "PORTICO_ERR_CONFIG_INVALID",
      `Redis at ${redactUrl(opts.redisUrl)} is a node of a Redis Cluster: set PORTICO_REDIS_CLUSTER=true`,
    );
  }
  return store;
}

/** The URL (or a cluster's list of seed URLs) without passwords, safe for logs and error messages. */
export function redactUrl(url: string): string {
  return redactRedisUrl(url);
}

function where(url: string, cluster: boolean, sentinel: SentinelEndpoint | undefined): string {
  if (sentinel !== undefined) {
    const sentinels = sentinel.sentinels.map(({ host, port }) => `${host}:${port}`).join(",");
    return `the Redis master "${sentinel.masterName}" through the sentinels ${sentinels}`;
  }
  return `${cluster ? "the Redis Cluster" : "Redis"} at ${redactUrl(url)}`;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    // Connection failures carry an errno code such as ECONNREFUSED or ENOTFOUND.
    const code = (err as NodeJS.ErrnoException).code;
    return code !== undefined && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
  }
  return "no answer";
}
