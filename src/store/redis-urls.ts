// PORTICO_REDIS_URL (docs/architecture.md §4): one `redis://` or `rediss://` URL, or, in cluster mode, the
// seed nodes of a Redis Cluster as a comma-separated list whose scheme and credentials apply to
// every node; in Sentinel mode, PORTICO_REDIS_SENTINELS names the sentinels and the URL gives the
// data nodes' scheme, credentials and database. The configuration checks these at boot.

export interface RedisSeed {
  readonly host: string;
  readonly port: number;
}

/** A Redis Cluster to connect to: where to start, and what every node connection shares. */
export interface ClusterEndpoint {
  readonly seeds: readonly RedisSeed[];
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** `rediss://`: TLS to every node. */
  readonly tls: boolean;
}

/** A master that Redis Sentinel watches, and what every connection to its data nodes shares. */
export interface SentinelEndpoint {
  readonly sentinels: readonly RedisSeed[];
  /** The master's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  readonly masterName: string;
  readonly sentinelPassword: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly db: number;
  /** `rediss://`: TLS to the master and replicas (the sentinels are reached without). */
  readonly tls: boolean;
}

/** A value of PORTICO_REDIS_URL that cannot work; the message completes "PORTICO_REDIS_URL=… ". */
export class RedisUrlError extends Error {
  override readonly name = "RedisUrlError";
}

const EXAMPLE = "redis://127.0.0.1:6379";

/** Checks a Redis URL (or, in cluster mode, a list of seed URLs); throws RedisUrlError. */
export function checkRedisUrl(raw: string, cluster: boolean): void {
  if (cluster) clusterEndpoint(raw);
  else if (splitUrls(raw).length > 1)
    throw new RedisUrlError(
      "lists several URLs, which only a Redis Cluster takes (as seed nodes): set PORTICO_REDIS_CLUSTER=true, or give one URL.",
    );
  else parse(raw.trim());
}

/** The cluster that a list of seed URLs names; throws RedisUrlError. */
export function clusterEndpoint(raw: string): ClusterEndpoint {
  const urls = splitUrls(raw).map(parse);
  const [first] = urls;
  if (first === undefined) throw new RedisUrlError(`names no URL. Example: ${EXAMPLE}`);
  for (const url of urls) {
    if (url.protocol !== first.protocol || url.username !== first.username || url.password !== first.password)
      throw new RedisUrlError(
        "mixes schemes or credentials: every seed URL of a cluster must use the same scheme and credentials, which apply to every node.",
      );
    if (url.pathname !== "" && url.pathname !== "/" && url.pathname !== "/0")
      throw new RedisUrlError(
        `names database ${url.pathname.slice(1)}, but a Redis Cluster has only database 0.`,
      );
    if (url.search !== "")
      throw new RedisUrlError("has query parameters, which cluster mode does not read: remove them.");
  }
  return {
    seeds: urls.map((url) => ({
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port === "" ? 6379 : Number(url.port),
    })),
    username: first.username === "" ? undefined : decodeURIComponent(first.username),
    password: first.password === "" ? undefined : decodeURIComponent(first.password),
    tls: first.protocol === "rediss:",
  };
}

/**
 * The Sentinel setup that PORTICO_REDIS_SENTINELS (`host:port,…`), the master name and the URL
 * name together; throws RedisUrlError with a message that names the variable at fault.
 */
export function sentinelEndpoint(
  url: string,
  sentinels: readonly string[],
  masterName: string,
  sentinelPassword: string | undefined,
): SentinelEndpoint {
  if (splitUrls(url).length > 1)
    throw new RedisUrlError(
      "PORTICO_REDIS_URL lists several URLs: with PORTICO_REDIS_SENTINELS give one URL, whose credentials, database and scheme apply to the master and replicas.",
    );
  let data: URL;
  try {
    data = parse(url.trim());
  } catch (err) {
    throw new RedisUrlError(`PORTICO_REDIS_URL ${(err as Error).message}`);
  }
  const db = data.pathname === "" || data.pathname === "/" ? 0 : Number(data.pathname.slice(1));
  if (!Number.isInteger(db) || db < 0)
    throw new RedisUrlError(
      `PORTICO_REDIS_URL names database ${data.pathname.slice(1)}: use a number, e.g. /0.`,
    );
  return {
    sentinels: sentinels.map(sentinelAddress),
    masterName,
    sentinelPassword,
    username: data.username === "" ? undefined : decodeURIComponent(data.username),
    password: data.password === "" ? undefined : decodeURIComponent(data.password),
    db,
    tls: data.protocol === "rediss:",
  };
}

/** One `host:port` of PORTICO_REDIS_SENTINELS (`[v6]:port` for IPv6). */
function sentinelAddress(entry: string): RedisSeed {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:/[\]]+)):(\d{1,5})$/.exec(entry);
  const port = Number(match?.[3]);
  if (match === null || port < 1 || port > 65535)
    throw new RedisUrlError(
      `PORTICO_REDIS_SENTINELS entry ${JSON.stringify(entry)} is not host:port. Example: sentinel-0:26379,sentinel-1:26379,sentinel-2:26379`,
    );
  return { host: match[1] ?? match[2] ?? "", port };
}

/** The URL (or list) without passwords, safe for logs and error messages. */
export function redactRedisUrl(raw: string): string {
  return splitUrls(raw)
    .map((entry) => {
      try {
        const url = new URL(entry);
        if (url.password !== "") url.password = "***";
        return url.toString();
      } catch {
        return "(unparsable URL)";
      }
    })
    .join(",");
}

function splitUrls(raw: string): string[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function parse(entry: string): URL {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new RedisUrlError(`is not a URL. Example: ${EXAMPLE}`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:")
    throw new RedisUrlError("must use redis:// or rediss://.");
  return url;
}
