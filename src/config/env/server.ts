// Environment variables of the process edge (docs/configuration.md): listening, public URL, Redis,
// secrets, the admin and metrics tokens, allowed origins and hosts, and the egress CIDRs.
import type { VarSpec } from "./types.js";

export const SERVER_VARS: readonly VarSpec[] = [
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
      "Redis URL (`redis://` or `rediss://`). Unset: the embedded in-process store (one process only; what it holds, tenants and users made through the admin API included, is lost when the process stops). With `PORTICO_REDIS_CLUSTER=true`: a seed node of the cluster, or several separated by commas; their credentials and TLS apply to every node.",
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
    name: "PORTICO_REDIS_SENTINELS",
    key: "redisSentinels",
    type: "list",
    default: "",
    description:
      "Comma-separated `host:port` of Redis Sentinels (`[v6]:port` for IPv6): Portico asks them for the master of `PORTICO_REDIS_SENTINEL_MASTER` and follows its failovers. `PORTICO_REDIS_URL` is then still required for the data nodes' scheme (`rediss://` for TLS), credentials and database; its host is not used. Not with `PORTICO_REDIS_CLUSTER` ([docs/operations.md](operations.md#redis)).",
  },
  {
    name: "PORTICO_REDIS_SENTINEL_MASTER",
    key: "redisSentinelMaster",
    type: "string",
    description:
      "The master's name in the sentinels' configuration (`sentinel monitor <name> …`); required with `PORTICO_REDIS_SENTINELS`.",
  },
  {
    name: "PORTICO_REDIS_SENTINEL_PASSWORD",
    key: "redisSentinelPassword",
    type: "string",
    description:
      "Password of the sentinels themselves (their `requirepass`), when they have one; the data nodes' password goes in `PORTICO_REDIS_URL`.",
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
    name: "PORTICO_PROMETHEUS_URL",
    key: "prometheusUrl",
    type: "url",
    description:
      "Base URL of a Prometheus that scrapes every replica (e.g. `http://prometheus:9090`): the console's traffic overview queries it (`/api/v1/query_range`), so it covers all replicas. Reached directly, not through the provider egress policy (the operator names it); no redirect is followed. Unset, the overview shows the answering replica's own figures of the last hour ([docs/metrics.md](metrics.md#traffic-overview)).",
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
];
