// The ioredis connections behind RedisStore (docs/architecture.md §4): one server, a master that Redis
// Sentinel names, or a Redis Cluster reached through its seed nodes. Either way commands fail fast
// while Redis is away (then 503) rather than waiting in a queue, and pub/sub listens on one plain
// connection.

import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { ClusterEndpoint, SentinelEndpoint } from "./redis-urls.js";
import type { MasterObserver } from "./store.js";

/** The command connection: both kinds share ioredis's command API. */
export type CommandClient = Redis | Cluster;

/** Connection attempts a cluster subscriber makes to its node before moving to another. */
const SUBSCRIBER_ATTEMPTS = 3;
/** How often a cluster connection reads the slot map (CLUSTER SLOTS) on its own. */
const SLOTS_REFRESH_MS = 5000;

/** Where the store connects: one server (a URL), a Sentinel-managed master, or a cluster. */
export type RedisTarget =
  | { readonly kind: "server"; readonly url: string }
  | { readonly kind: "sentinel"; readonly endpoint: SentinelEndpoint }
  | { readonly kind: "cluster"; readonly endpoint: ClusterEndpoint };

/** Opens the auto-pipelined command connection to where `target` points. */
export function openCommandClient(target: RedisTarget): CommandClient {
  // One reconnection attempt per command, then 503, rather than holding requests for seconds.
  if (target.kind === "server")
    return new Redis(target.url, { enableAutoPipelining: true, maxRetriesPerRequest: 1 });
  if (target.kind === "sentinel") return openSentinelClient(target.endpoint);
  const endpoint = target.endpoint;
  return new Cluster(
    endpoint.seeds.map(({ host, port }) => ({ host, port })),
    {
      enableAutoPipelining: true,
      // A cluster that is not ready (every node lost, or reconnecting) would queue commands until
      // it is back, however long that takes; rejecting them at once gives the 503.
      enableOfflineQueue: false,
      // ioredis only learns of a moved slot from a MOVED reply it can follow; a batch of
      // auto-pipelined commands for several slots cannot be, so look at the slot map regularly too.
      slotsRefreshInterval: SLOTS_REFRESH_MS,
      redisOptions: { ...nodeOptions(endpoint), maxRetriesPerRequest: 1 },
      // Under TLS, connect to the names the cluster announces (they are what certificates name)
      // instead of the addresses they resolve to.
      ...(endpoint.tls && { dnsLookup: (address, callback) => callback(null, address) }),
    },
  );
}

/**
 * The master that the sentinels name. ioredis asks them for its address on every (re)connection,
 * checks that the node it reaches is a master, and (failoverDetector) listens for their
 * `+switch-master` to reconnect as soon as they promote a replica.
 */
function openSentinelClient(endpoint: SentinelEndpoint): Redis {
  return new Redis({
    sentinels: endpoint.sentinels.map(({ host, port }) => ({ host, port })),
    name: endpoint.masterName,
    ...(endpoint.sentinelPassword !== undefined && { sentinelPassword: endpoint.sentinelPassword }),
    ...(endpoint.username !== undefined && { username: endpoint.username }),
    ...(endpoint.password !== undefined && { password: endpoint.password }),
    db: endpoint.db,
    // ioredis applies `tls` to the data nodes only with this flag; the sentinels stay plain.
    ...(endpoint.tls && { tls: {}, enableTLSForSentinelMode: true }),
    failoverDetector: true,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    // A demoted master answers writes with READONLY until the connection moves: reconnect (to
    // the master the sentinels name now) and send the command again.
    reconnectOnError: (err) => (err.message.startsWith("READONLY") ? 2 : false),
  });
}

/**
 * Tells `observer` the address of the node a Sentinel connection is ready on, each time it differs
 * from the last: at boot, then once per failover that it follows (its reconnections to the same
 * master are not news).
 */
export function watchMaster(client: Redis, observer: MasterObserver): void {
  let current: string | undefined;
  client.on("ready", () => {
    const { remoteAddress, remotePort } = client.stream;
    if (remoteAddress === undefined) return;
    const master = `${remoteAddress.includes(":") ? `[${remoteAddress}]` : remoteAddress}:${remotePort}`;
    if (master === current) return;
    const previous = current;
    current = master;
    observer(master, previous);
  });
}

/**
 * A connection for SUBSCRIBE. Next to one server (or a Sentinel-managed master), a copy of the
 * command connection that reconnects for as long as it takes. In a cluster, where classic PUBLISH reaches every node, a connection to
 * one node picked at random; it ends ("end") when that node stays away, and the caller opens
 * another (`avoid` is the node to skip then, when there is a choice).
 */
export function openSubscriber(
  client: CommandClient,
  endpoint: ClusterEndpoint | undefined,
  avoid?: string,
): Redis {
  // A copy keeps the sentinels, so the subscriber follows failovers like the command connection.
  if (!(client instanceof Cluster)) return client.duplicate({ enableAutoPipelining: false });
  if (endpoint === undefined) throw new Error("a cluster subscriber needs the cluster endpoint");
  const known = client.nodes("all").map(({ options }) => ({ host: options.host, port: options.port }));
  const nodes = known.length > 0 ? known : endpoint.seeds;
  const others = nodes.filter((node) => `${node.host}:${node.port}` !== avoid);
  const pool = others.length > 0 ? others : nodes;
  const node = pool[Math.floor(Math.random() * pool.length)];
  return new Redis({
    ...nodeOptions(endpoint),
    ...node,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => (times > SUBSCRIBER_ATTEMPTS ? null : times * 100),
  });
}

/** `host:port` of a connection, to tell nodes apart. */
export function nodeKey(redis: Redis): string {
  return `${redis.options.host}:${redis.options.port}`;
}

/** Closes a connection: QUIT when it is live, otherwise drops it at once. */
export async function quit(client: CommandClient): Promise<void> {
  if (client.status === "end") return;
  // QUIT waits for a live connection; one that is down is dropped at once instead.
  if (client.status !== "ready") return client.disconnect();
  await client.quit().catch(() => client.disconnect());
  // QUIT leaves a Sentinel connection's failover detector (its own connections to every
  // sentinel) open; disconnect() closes them too, and does nothing more to a plain connection.
  if (client instanceof Redis && client.options.sentinels) client.disconnect();
}

/** True when an error means Redis (or the cluster) cannot be reached, rather than a bad command. */
export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return (
    err.name === "MaxRetriesPerRequestError" ||
    err.name === "ClusterAllFailedError" ||
    /Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE/.test(err.message) ||
    /Cluster isn't ready|Cluster is ended|CLUSTERDOWN|Too many Cluster redirections/.test(err.message)
  );
}

/**
 * True when a cluster answered that a slot is served elsewhere and ioredis could not follow (a
 * batch spanning slots): the slot map is stale. Refreshes it, so that the next commands go right.
 */
export function staleSlotMap(client: CommandClient, err: unknown): boolean {
  if (!(client instanceof Cluster) || !(err instanceof Error) || !/^(MOVED|ASK) /.test(err.message))
    return false;
  client.refreshSlotsCache();
  return true;
}

/** Redis's hash tag: what a key's cluster slot is computed from (the whole key without one). */
export function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

function nodeOptions(endpoint: ClusterEndpoint): RedisOptions {
  return {
    ...(endpoint.username !== undefined && { username: endpoint.username }),
    ...(endpoint.password !== undefined && { password: endpoint.password }),
    ...(endpoint.tls && { tls: {} }),
  };
}
