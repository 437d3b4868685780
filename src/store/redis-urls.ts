// PORTICO_REDIS_URL (docs/architecture.md §4): one `redis://` or `rediss://` URL, or, in cluster mode, the
// seed nodes of a Redis Cluster as a comma-separated list whose scheme and credentials apply to
// every node. The configuration checks a value with this at boot; the store connects with it.

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
