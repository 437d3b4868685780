// Environment configuration (docs/architecture.md §6): one schema gives validation, defaults, types and the
// docs table (docs/configuration.md is generated from ENV_VARS). process.env is read only here.
import { BlockList, isIP } from "node:net";
import { addCidr } from "../egress/policy.js";
import { checkRedisUrl, RedisUrlError } from "../store/redis-urls.js";
import { redactUrl } from "../log-redaction.js";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly publicUrl: string;
  /** One Redis URL, or with redisCluster the seed nodes of a cluster (comma-separated). */
  readonly redisUrl: string | undefined;
  readonly redisCluster: boolean;
  readonly redisKeyPrefix: string;
  readonly configFile: string | undefined;
  /** Raw secret from the environment; undefined means one random key per process. */
  readonly secretKey: string | undefined;
  /** Earlier secret keys, newest first: what they sealed or MACed still opens and verifies. */
  readonly previousSecretKeys: readonly string[];
  readonly adminToken: string | undefined;
  /** Bearer token GET /metrics requires; undefined leaves it open. */
  readonly metricsToken: string | undefined;
  readonly allowedOrigins: readonly string[];
  readonly allowedHosts: readonly string[];
  readonly providerAllowCidrs: readonly string[];
  readonly clientMetadataAllowCidrs: readonly string[];
  readonly accessTokenTtlSeconds: number;
  readonly providerDenyCidrs: readonly string[];
  readonly sessionIdleTtlSeconds: number;
  readonly bodyLimitBytes: number;
  /** How long a client may take to send a whole request (headers and body); 0: no limit. */
  readonly requestTimeoutMs: number;
  readonly upstreamTimeoutMs: number;
  readonly inputTimeoutSeconds: number;
  readonly maxHeldCalls: number;
  /** Held calls one user may have per tenant on a replica; 0: no cap. */
  readonly maxHeldCallsPerPrincipal: number;
  /** Held calls one client address may have per tenant without auth on a replica; 0: no cap. */
  readonly maxHeldCallsPerAddress: number;
  readonly sseRetryMs: number;
  readonly sseHeartbeatMs: number;
  readonly eventLogMaxEvents: number;
  readonly pageSize: number;
  readonly logLevel: LogLevel;
  /** Default per-tenant limit on /mcp requests per minute; 0: none. */
  readonly tenantRequestsPerMinute: number;
  /** Default per-client (a user, whatever the OAuth client, else IP) limit on /mcp requests per minute; 0: none. */
  readonly clientRequestsPerMinute: number;
  /** Live sessions one user (`sub`, whatever the client) may hold per tenant; 0: no cap. */
  readonly maxSessionsPerPrincipal: number;
  /** Live sessions one client address may hold per tenant without authentication; 0: no cap. */
  readonly maxSessionsPerAddress: number;
  /** GET streams open at once on one session, across replicas; 0: no cap. */
  readonly maxStreamsPerSession: number;
  /** subscriptions/listen streams one replica holds per tenant; 0: no cap. */
  readonly maxListenStreamsPerTenant: number;
  /** subscriptions/listen streams one replica holds per tenant for one user; 0: no cap. */
  readonly maxListenStreamsPerPrincipal: number;
  /** subscriptions/listen streams one replica holds per tenant for one address (tenant without auth); 0: no cap. */
  readonly maxListenStreamsPerAddress: number;
  /** Distinct resource URIs one replica's listen streams of a tenant watch; 0: no cap. */
  readonly maxWatchedUrisPerTenant: number;
  /** Limit per client IP on each of /oauth/token, /oauth/revoke and /oauth/register, per minute; 0: none. */
  readonly oauthRequestsPerMinute: number;
  /** Limit per client IP on GET /oauth/authorize (each creates a pending flow in the store), per minute; 0: none. */
  readonly oauthAuthorizeRequestsPerMinute: number;
  /** Limit per client IP on POST /oauth/login, per minute; 0: none. */
  readonly oauthLoginRequestsPerMinute: number;
  /** Limit per client IP on POST /oauth/consent, per minute; 0: none. */
  readonly oauthConsentRequestsPerMinute: number;
  /** Failed logins to one account from one address before back-off starts; 0: no per-address back-off. */
  readonly loginThrottleFailures: number;
  /** Failed logins to one account from all addresses before the account-wide back-off; 0: none. */
  readonly loginThrottleAccountFailures: number;
  /** Longest per-address login back-off, in seconds. */
  readonly loginThrottleMaxSeconds: number;
  /** Proxies whose X-Forwarded-For names the client address (rate limits by IP, logs). */
  readonly trustedProxyCidrs: readonly string[];
  /** How long in-flight requests may take to finish after SIGTERM. */
  readonly shutdownTimeoutMs: number;
}

interface VarSpec {
  readonly name: string;
  readonly key: keyof Config;
  readonly type: "int" | "bool" | "string" | "url" | "redis-url" | "list" | "cidrs" | "enum" | "path";
  readonly default?: string;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly description: string;
}

/** Every variable Portico reads, in the order the docs list them. */
export const ENV_VARS: readonly VarSpec[] = [
  {
    name: "PORT",
    key: "port",
    type: "int",
    default: "8080",
    min: 0,
    max: 65535,
    description: "TCP port to listen on.",
  },
  {
    name: "HOST",
    key: "host",
    type: "string",
    default: "127.0.0.1",
    description: "Interface to bind. Use `0.0.0.0` in containers.",
  },
  {
    name: "PORTICO_PUBLIC_URL",
    key: "publicUrl",
    type: "url",
    description:
      "Public base URL clients use (default `http://localhost:<PORT>` on loopback, else `http://<HOST>:<PORT>`). Its host is always an allowed Host, its origin an allowed Origin.",
  },
  {
    name: "PORTICO_REDIS_URL",
    key: "redisUrl",
    type: "redis-url",
    description:
      "Redis URL (`redis://` or `rediss://`). Unset: the embedded in-process store (one process only). With `PORTICO_REDIS_CLUSTER=true`: a seed node of the cluster, or several separated by commas; their credentials and TLS apply to every node.",
  },
  {
    name: "PORTICO_REDIS_CLUSTER",
    key: "redisCluster",
    type: "bool",
    default: "false",
    description:
      "`true`: `PORTICO_REDIS_URL` names a Redis Cluster (Redis 6.2 or newer) instead of one server ([docs/operations.md](operations.md#redis)).",
  },
  {
    name: "PORTICO_REDIS_KEY_PREFIX",
    key: "redisKeyPrefix",
    type: "string",
    default: "portico",
    description: "First segment of every Redis key and channel; lets several deployments share one Redis.",
  },
  {
    name: "PORTICO_CONFIG",
    key: "configFile",
    type: "path",
    description:
      "JSON bootstrap file seeding tenants and providers at boot (idempotent upsert). Unset: the built-in `demo` tenant.",
  },
  {
    name: "PORTICO_SECRET_KEY",
    key: "secretKey",
    type: "string",
    description:
      "Secret (≥ 32 characters) that signs cursors and encrypts secrets at rest. Required for several replicas; unset, each process draws a random one and warns.",
  },
  {
    name: "PORTICO_SECRET_KEY_PREVIOUS",
    key: "previousSecretKeys",
    type: "list",
    description:
      "Earlier values of `PORTICO_SECRET_KEY` (comma-separated, newest first, each ≥ 32 characters, surrounding spaces ignored) during a key rotation: secrets, cursors, ETags and `requestState` made under them still open and verify; new ones use the current key. Needs `PORTICO_SECRET_KEY`; a value equal to it is refused. Rotation: [docs/operations.md](operations.md#rotating-portico_secret_key).",
  },
  {
    name: "PORTICO_ADMIN_TOKEN",
    key: "adminToken",
    type: "string",
    description:
      "Platform admin key for /admin/v1 (≥ 24 characters; send as `Authorization: Bearer …`). Unset, the platform key is a random value of the process that is never shown or logged: platform routes stay shut until it is set.",
  },
  {
    name: "PORTICO_METRICS_TOKEN",
    key: "metricsToken",
    type: "string",
    description:
      "Bearer token (≥ 24 characters) that `GET /metrics` requires (`Authorization: Bearer …`; Prometheus: `authorization: { credentials: … }`). Unset, `/metrics` is open, for scraping inside the cluster network ([docs/metrics.md](metrics.md)).",
  },
  {
    name: "PORTICO_ALLOWED_ORIGINS",
    key: "allowedOrigins",
    type: "list",
    default: "",
    description:
      "Comma-separated extra `Origin` values accepted on /mcp (DNS-rebinding protection). Loopback origins are accepted when bound to loopback.",
  },
  {
    name: "PORTICO_ALLOWED_HOSTS",
    key: "allowedHosts",
    type: "list",
    default: "",
    description:
      "Comma-separated extra `Host` names (with or without port) accepted on /mcp. Loopback names are accepted when bound to loopback.",
  },
  {
    name: "PORTICO_PROVIDER_ALLOW_CIDRS",
    key: "providerAllowCidrs",
    type: "cidrs",
    default: "",
    description:
      "Comma-separated CIDRs that provider URLs (http tools, upstream MCP servers, identity providers) may resolve into; empty allows every address not refused. An IPv6 address that carries an IPv4 one (NAT64, 6to4, Teredo) is allowed only if both are inside. Link-local and cloud metadata addresses are always refused, however written (docs/security.md).",
  },
  {
    name: "PORTICO_PROVIDER_DENY_CIDRS",
    key: "providerDenyCidrs",
    type: "cidrs",
    default: "",
    description:
      "Comma-separated CIDRs that provider URLs may never resolve into, e.g. `10.0.0.0/8`; also matched against the IPv4 address an IPv6 one carries (mapped, NAT64, 6to4, Teredo).",
  },
  {
    name: "PORTICO_CLIENT_METADATA_ALLOW_CIDRS",
    key: "clientMetadataAllowCidrs",
    type: "cidrs",
    default: "",
    description:
      "Comma-separated non-public CIDRs that OAuth client metadata document URLs may resolve into. Empty: public addresses only (SSRF protection); link-local and cloud metadata addresses are always refused.",
  },
  {
    name: "PORTICO_ACCESS_TOKEN_TTL_SECONDS",
    key: "accessTokenTtlSeconds",
    type: "int",
    default: "3600",
    min: 60,
    max: 86400,
    description: "Lifetime of the access tokens Portico's authorization server issues.",
  },
  {
    name: "PORTICO_SESSION_IDLE_TTL_SECONDS",
    key: "sessionIdleTtlSeconds",
    type: "int",
    default: "1800",
    min: 5,
    max: 604800,
    description: "Sliding idle lifetime of an MCP session and its event logs.",
  },
  {
    name: "PORTICO_BODY_LIMIT_BYTES",
    key: "bodyLimitBytes",
    type: "int",
    default: "4194304",
    min: 1024,
    max: 104857600,
    description: "Largest accepted request body; larger gets 413.",
  },
  {
    name: "PORTICO_REQUEST_TIMEOUT_MS",
    key: "requestTimeoutMs",
    type: "int",
    default: "60000",
    min: 0,
    max: 3600000,
    description:
      "How long a client may take to send one whole request, headers and body (its headers alone: at most 60 s); past it the connection gets a 408 in the surface's format and is closed, so a client trickling bytes cannot hold a socket for ever. Responses are not bounded by it (SSE streams stay open). `0` turns it off (Node's headers timeout of 60 s still applies).",
  },
  {
    name: "PORTICO_UPSTREAM_TIMEOUT_MS",
    key: "upstreamTimeoutMs",
    type: "int",
    default: "60000",
    min: 100,
    max: 3600000,
    description:
      "Timeout of one upstream call: reset by upstream progress, up to ten timeouts in all (an upstream that only reports progress ends too); paused while the upstream waits on the client's answer to its sampling, elicitation or roots request.",
  },
  {
    name: "PORTICO_INPUT_TIMEOUT_SECONDS",
    key: "inputTimeoutSeconds",
    type: "int",
    default: "300",
    min: 1,
    max: 3600,
    description:
      "How long a client has to answer what an upstream asks (sampling, elicitation, roots): for a 2026-07-28 client, to retry a request that answered `input_required` (the lifetime of its `requestState`, and how long a session-era upstream call waiting for it is held before it is cancelled); for a session-era client, to answer Portico's server-to-client request.",
  },
  {
    name: "PORTICO_MAX_HELD_CALLS",
    key: "maxHeldCalls",
    type: "int",
    default: "1000",
    min: 1,
    max: 1000000,
    description:
      "Session-era upstream calls one replica holds open per tenant while their 2026-07-28 clients answer `input_required`. Past it, a call that asks the client is cancelled upstream and answered 429-style (-32000, `retryAfterSeconds`), so one tenant cannot hold a replica's upstream connections.",
  },
  {
    name: "PORTICO_MAX_HELD_CALLS_PER_PRINCIPAL",
    key: "maxHeldCallsPerPrincipal",
    type: "int",
    default: "100",
    min: 0,
    max: 1000000,
    description:
      "Of a tenant's `PORTICO_MAX_HELD_CALLS` on one replica, how many one user (`sub`, whatever the client) may hold, so one user cannot take them from everyone else; past it, a call that asks the client is cancelled upstream and answered -32000 with `retryAfterSeconds`. `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_HELD_CALLS_PER_ADDRESS",
    key: "maxHeldCallsPerAddress",
    type: "int",
    default: "500",
    min: 0,
    max: 1000000,
    description:
      "The same for one client address (IPv6 by /64; an office behind one NAT shares it) on a tenant without authentication. `0`: no cap.",
  },
  {
    name: "PORTICO_SSE_RETRY_MS",
    key: "sseRetryMs",
    type: "int",
    default: "1000",
    min: 0,
    max: 600000,
    description: "`retry` sent to clients in the priming event of every SSE stream.",
  },
  {
    name: "PORTICO_SSE_HEARTBEAT_MS",
    key: "sseHeartbeatMs",
    type: "int",
    default: "25000",
    min: 1000,
    max: 600000,
    description: "Interval of SSE comment keep-alives.",
  },
  {
    name: "PORTICO_EVENT_LOG_MAX_EVENTS",
    key: "eventLogMaxEvents",
    type: "int",
    default: "1000",
    min: 10,
    max: 100000,
    description: "Events kept per SSE stream for `Last-Event-ID` replay.",
  },
  {
    name: "PORTICO_PAGE_SIZE",
    key: "pageSize",
    type: "int",
    default: "500",
    min: 1,
    max: 10000,
    description: "Entries per page of tools/prompts/resources lists.",
  },
  {
    name: "PORTICO_RATE_LIMIT_REQUESTS_PER_MINUTE",
    key: "tenantRequestsPerMinute",
    type: "int",
    default: "60000",
    min: 0,
    max: 100000000,
    description:
      "Default limit on a tenant's MCP requests per minute, counted across all replicas (a tenant's `limits.requestsPerMinute` overrides it). `0`: no limit. Over it: 429 with `Retry-After` and a JSON-RPC error ([docs/security.md](security.md#bounded-by-default)).",
  },
  {
    name: "PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE",
    key: "clientRequestsPerMinute",
    type: "int",
    default: "3000",
    min: 0,
    max: 100000000,
    description:
      "Default limit on one client's MCP requests per minute per tenant: one user (the token's `sub`, whatever the OAuth client: anyone may register clients) when authenticated, else the client IP (IPv6 by /64; an office behind one NAT shares it). A tenant's `limits.perClientRequestsPerMinute` overrides it. `0`: no limit.",
  },
  {
    name: "PORTICO_MAX_SESSIONS_PER_PRINCIPAL",
    key: "maxSessionsPerPrincipal",
    type: "int",
    default: "100",
    min: 0,
    max: 10000000,
    description:
      "Live MCP sessions (session era) one authenticated user (the token's `sub`, whatever the client: anyone may register a client) may hold per tenant, across all replicas; `initialize` past it answers 429 (-32000, `retryAfterSeconds`). DELETE or expiry frees a place. `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_SESSIONS_PER_ADDRESS",
    key: "maxSessionsPerAddress",
    type: "int",
    default: "1000",
    min: 0,
    max: 10000000,
    description:
      'Live MCP sessions one client address (IPv6 by /64) may hold per tenant without authentication (`auth: "none"`): generous, as many users may share one office NAT. `0`: no cap.',
  },
  {
    name: "PORTICO_MAX_STREAMS_PER_SESSION",
    key: "maxStreamsPerSession",
    type: "int",
    default: "10",
    min: 0,
    max: 100000,
    description:
      "GET streams (the standalone stream and resumed ones) one session may hold open at once, across replicas; a GET past it answers 429 (-32000). A stream's place is freed when it closes, or one idle TTL after its replica died. `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_LISTEN_STREAMS_PER_TENANT",
    key: "maxListenStreamsPerTenant",
    type: "int",
    default: "1000",
    min: 0,
    max: 10000000,
    description:
      "`subscriptions/listen` streams (2026-07-28) one replica holds open per tenant; past it, a listen answers 429 (-32000) and the client may retry on another replica. `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_LISTEN_STREAMS_PER_PRINCIPAL",
    key: "maxListenStreamsPerPrincipal",
    type: "int",
    default: "100",
    min: 0,
    max: 10000000,
    description:
      "`subscriptions/listen` streams one replica holds open per tenant for one user (`sub`, whatever the client), and resource URIs those streams subscribe to (`resourceSubscriptions`, counted per stream), so one user cannot take the tenant's `PORTICO_MAX_LISTEN_STREAMS_PER_TENANT` or `PORTICO_MAX_WATCHED_URIS_PER_TENANT` from everyone else; past either, a listen answers 429 (-32000). `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_LISTEN_STREAMS_PER_ADDRESS",
    key: "maxListenStreamsPerAddress",
    type: "int",
    default: "500",
    min: 0,
    max: 10000000,
    description:
      "`subscriptions/listen` streams one replica holds open per tenant without authentication for one client address (IPv6 by /64; an office behind one NAT shares it), and resource URIs those streams subscribe to (counted per stream); past either, a listen answers 429 (-32000). `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_WATCHED_URIS_PER_TENANT",
    key: "maxWatchedUrisPerTenant",
    type: "int",
    default: "1000",
    min: 0,
    max: 10000000,
    description:
      "Distinct resource URIs the listen streams of one tenant on one replica may watch (`resourceSubscriptions`; each is an upstream subscription). A listen that would pass it answers 429 (-32000). `0`: no cap.",
  },
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_REQUESTS_PER_MINUTE",
    key: "oauthRequestsPerMinute",
    type: "int",
    default: "60",
    min: 0,
    max: 100000000,
    description:
      'Limit per client IP on each of `/oauth/token`, `/oauth/revoke` (both authenticate client secrets) and `/oauth/register`, per minute. `0`: no limit. Over it: 429, `Retry-After` and `{"error":"temporarily_unavailable"}`.',
  },
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_AUTHORIZE_REQUESTS_PER_MINUTE",
    key: "oauthAuthorizeRequestsPerMinute",
    type: "int",
    default: "300",
    min: 0,
    max: 100000000,
    description:
      "Limit per client IP on `GET /oauth/authorize`, per minute, counted across all replicas: each request holds a pending sign-in in the store for 10 minutes, so this bounds what one address can make the store hold. High enough for an office behind one NAT signing in at once. `0`: no limit. Over it: 429 with `Retry-After` and an HTML page.",
  },
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_LOGIN_REQUESTS_PER_MINUTE",
    key: "oauthLoginRequestsPerMinute",
    type: "int",
    default: "30",
    min: 0,
    max: 100000000,
    description:
      "Limit per client IP on `POST /oauth/login` (password submissions), per minute, counted across all replicas. `0`: no limit. Over it: 429 with `Retry-After` and an HTML page.",
  },
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_CONSENT_REQUESTS_PER_MINUTE",
    key: "oauthConsentRequestsPerMinute",
    type: "int",
    default: "30",
    min: 0,
    max: 100000000,
    description:
      "Limit per client IP on `POST /oauth/consent`, per minute, counted across all replicas. `0`: no limit. Over it: 429 with `Retry-After` and an HTML page.",
  },
  {
    name: "PORTICO_LOGIN_THROTTLE_FAILURES",
    key: "loginThrottleFailures",
    type: "int",
    default: "5",
    min: 0,
    max: 1000,
    description:
      "Failed logins to one username from one client address (IPv6 by /64) within an hour before that address must wait before its next try on it: 1 s, then 2 s, 4 s … up to `PORTICO_LOGIN_THROTTLE_MAX_SECONDS`, checked before the password is hashed (docs/security.md). A success from the address resets its count. `0`: no per-address back-off.",
  },
  {
    name: "PORTICO_LOGIN_THROTTLE_ACCOUNT_FAILURES",
    key: "loginThrottleAccountFailures",
    type: "int",
    default: "50",
    min: 0,
    max: 100000,
    description:
      "Failed logins to one username from all addresses within an hour before the account-wide back-off (1 s, 2 s … up to 60 s): it slows every address that has failed on the username, never one that has not, so a stranger cannot lock the user out. `0`: no account-wide back-off.",
  },
  {
    name: "PORTICO_LOGIN_THROTTLE_MAX_SECONDS",
    key: "loginThrottleMaxSeconds",
    type: "int",
    default: "900",
    min: 1,
    max: 86400,
    description: "Longest per-address login back-off, in seconds.",
  },
  {
    name: "PORTICO_TRUSTED_PROXIES",
    key: "trustedProxyCidrs",
    type: "cidrs",
    default: "",
    description:
      "Comma-separated CIDRs of the reverse proxies and load balancers in front of Portico: only from a peer in them is `X-Forwarded-For` believed, and the client address is the last one not in them (per-address limits, logs). Empty: the peer address is the client, and behind a load balancer every user shares its address. `docker-compose.yml` and `deploy/` set it ([docs/operations.md](operations.md#client-addresses)).",
  },
  {
    name: "PORTICO_SHUTDOWN_TIMEOUT_MS",
    key: "shutdownTimeoutMs",
    type: "int",
    default: "10000",
    min: 0,
    max: 600000,
    description:
      "On SIGTERM, how long in-flight requests may take to finish (after SSE streams are ended with a `retry` hint and new connections refused) before the rest are cut and the process exits.",
  },
  {
    name: "PORTICO_LOG_LEVEL",
    key: "logLevel",
    type: "enum",
    default: "info",
    values: ["fatal", "error", "warn", "info", "debug", "trace", "silent"],
    description: "Level of the JSON logs on stdout; `debug` adds one `request completed` line per request.",
  },
];

/** Raised when the environment is unusable; the message says how to fix it. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function splitList(raw: string): string[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function parseVar(spec: VarSpec, raw: string): unknown {
  // A URL's password or secret parameters are not repeated into the error (it reaches the logs).
  const where = `${spec.name}=${JSON.stringify(redactUrl(raw))}`;
  switch (spec.type) {
    case "int": {
      if (!/^\d+$/.test(raw)) throw new ConfigError(`${where} is not a whole number. ${spec.description}`);
      const n = Number(raw);
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max))
        throw new ConfigError(`${where} is out of range: use ${spec.min} to ${spec.max}.`);
      return n;
    }
    case "bool":
      if (raw !== "true" && raw !== "false") throw new ConfigError(`${where} must be true or false.`);
      return raw === "true";
    case "url": {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new ConfigError(`${where} is not a URL. Example: https://mcp.example.com`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new ConfigError(`${where} must use http:// or https://.`);
      return spec.name === "PORTICO_PUBLIC_URL" ? raw.replace(/\/+$/, "") : raw;
    }
    case "redis-url": // checked with PORTICO_REDIS_CLUSTER, in checkRedis
      return raw;
    case "list":
      return splitList(raw);
    case "cidrs":
      for (const cidr of splitList(raw)) {
        try {
          addCidr(new BlockList(), cidr);
        } catch (err) {
          throw new ConfigError(`${spec.name}: ${(err as Error).message}.`);
        }
      }
      return splitList(raw);
    case "enum":
      if (!spec.values?.includes(raw))
        throw new ConfigError(`${where} must be one of: ${spec.values?.join(", ")}.`);
      return raw;
    case "string":
    case "path":
      if (raw.trim() === "")
        throw new ConfigError(`${spec.name} is set but empty; unset it or give a value.`);
      return raw;
  }
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || (isIP(h) === 4 && h.startsWith("127."));
}

/** Reads, validates and freezes the configuration. Throws ConfigError with a fix in its message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const values: Record<string, unknown> = {};
  for (const spec of ENV_VARS) {
    const raw = env[spec.name] ?? spec.default;
    values[spec.key] = raw === undefined ? undefined : parseVar(spec, raw);
  }
  checkRedis(values as unknown as Config);
  const secret = values.secretKey as string | undefined;
  if (secret !== undefined && secret.length < 32)
    throw new ConfigError(
      "PORTICO_SECRET_KEY is too short: use at least 32 characters, e.g. `openssl rand -base64 32`.",
    );
  values.previousSecretKeys = checkPreviousKeys(secret, values.previousSecretKeys as string[] | undefined);
  const adminToken = values.adminToken as string | undefined;
  if (adminToken !== undefined && adminToken.length < 24)
    throw new ConfigError(
      "PORTICO_ADMIN_TOKEN is too short: use at least 24 characters, e.g. `openssl rand -base64 32`.",
    );
  const metricsToken = values.metricsToken as string | undefined;
  // Printable ASCII without spaces: what a bearer token can carry in an Authorization header.
  if (metricsToken !== undefined && !/^[\x21-\x7e]{24,}$/.test(metricsToken))
    throw new ConfigError(
      "PORTICO_METRICS_TOKEN must be at least 24 printable characters without spaces, e.g. `openssl rand -base64 32`.",
    );
  const host = values.host as string;
  if (values.publicUrl === undefined) {
    const shown = isLoopbackHost(host) ? "localhost" : host.includes(":") ? `[${host}]` : host;
    values.publicUrl = `http://${shown}:${values.port as number}`;
  }
  return Object.freeze(values) as unknown as Config;
}

/** PORTICO_SECRET_KEY_PREVIOUS: long enough, distinct, and only beside a current key. */
function checkPreviousKeys(current: string | undefined, previous: string[] | undefined): readonly string[] {
  if (previous === undefined) return Object.freeze([]);
  if (current === undefined)
    throw new ConfigError(
      "PORTICO_SECRET_KEY_PREVIOUS is set without PORTICO_SECRET_KEY: set the new key as PORTICO_SECRET_KEY and keep the old ones in PORTICO_SECRET_KEY_PREVIOUS.",
    );
  previous.forEach((key, i) => {
    if (key.length < 32)
      throw new ConfigError(
        `PORTICO_SECRET_KEY_PREVIOUS entry ${i + 1} is too short: each previous key is a former PORTICO_SECRET_KEY (at least 32 characters).`,
      );
    if (key === current)
      throw new ConfigError(
        `PORTICO_SECRET_KEY_PREVIOUS entry ${i + 1} equals PORTICO_SECRET_KEY: list only the keys it replaced.`,
      );
    if (previous.indexOf(key) !== i)
      throw new ConfigError(
        `PORTICO_SECRET_KEY_PREVIOUS entry ${i + 1} repeats entry ${previous.indexOf(key) + 1}.`,
      );
  });
  return Object.freeze(previous);
}

/** The Redis settings together: one URL, or a cluster's seeds (docs/operations.md "Redis"). */
function checkRedis({ redisUrl, redisCluster, redisKeyPrefix }: Config): void {
  if (redisUrl === undefined) {
    if (redisCluster)
      throw new ConfigError(
        "PORTICO_REDIS_CLUSTER=true needs PORTICO_REDIS_URL: a seed node of the cluster.",
      );
    return;
  }
  try {
    checkRedisUrl(redisUrl, redisCluster);
  } catch (err) {
    if (err instanceof RedisUrlError)
      throw new ConfigError(`PORTICO_REDIS_URL=${JSON.stringify(redactUrl(redisUrl))} ${err.message}`);
    throw err;
  }
  // Every key carries its own hash tag ({t:<tenant>}, {oauth}, {admin}); a brace in the prefix
  // changes which part of a key Redis hashes ("app{1}" would put every key in one slot).
  if (redisCluster && /[{}]/.test(redisKeyPrefix))
    throw new ConfigError(
      `PORTICO_REDIS_KEY_PREFIX=${JSON.stringify(redisKeyPrefix)} must not contain { or } with a Redis Cluster: keys carry their own hash tags.`,
    );
}

/** The configuration table of docs/configuration.md, generated from ENV_VARS. */
export function configTableMarkdown(): string {
  const rows = ENV_VARS.map((v) => {
    const def = v.default === undefined ? "—" : v.default === "" ? "(empty)" : `\`${v.default}\``;
    return `| \`${v.name}\` | ${def} | ${v.description} |`;
  });
  return ["| Variable | Default | Meaning |", "| --- | --- | --- |", ...rows].join("\n");
}
