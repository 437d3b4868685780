// The shapes of the environment configuration (docs/configuration.md): the frozen Config every
// feature receives, and the spec of one variable that validates it and documents it.

import type { LogFormat, LogLevel } from "../../logs/levels.js";

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly publicUrl: string;
  /** One Redis URL, or with redisCluster the seed nodes of a cluster (comma-separated). */
  readonly redisUrl: string | undefined;
  readonly redisCluster: boolean;
  /** `host:port` of Redis Sentinels; empty unless Sentinel mode. */
  readonly redisSentinels: readonly string[];
  readonly redisSentinelMaster: string | undefined;
  readonly redisSentinelPassword: string | undefined;
  readonly redisKeyPrefix: string;
  readonly configFile: string | undefined;
  /** Raw secret from the environment; undefined means one random key per process. */
  readonly secretKey: string | undefined;
  /** Earlier secret keys, newest first: what they sealed or MACed still opens and verifies. */
  readonly previousSecretKeys: readonly string[];
  readonly adminToken: string | undefined;
  /** Bearer token GET /metrics requires; undefined leaves it open. */
  readonly metricsToken: string | undefined;
  /** Prometheus the console's traffic overview queries (docs/metrics.md "Traffic overview"). */
  readonly prometheusUrl: string | undefined;
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
  readonly upstreamHealthIntervalMs: number;
  /** Upstream failures in a row that open a provider's circuit breaker; 0: no breaker. */
  readonly upstreamBreakerFailures: number;
  readonly upstreamBreakerOpenMs: number;
  readonly upstreamBreakerMaxOpenMs: number;
  readonly upstreamConnectTimeoutMs: number;
  /** 0: no headers timeout. */
  readonly upstreamHeadersTimeoutMs: number;
  /** The largest OpenAPI document an `openapi` provider may have, in bytes. */
  readonly openapiMaxDocumentBytes: number;
  /** The most operations an `openapi` provider's document may have. */
  readonly openapiMaxOperations: number;
  readonly inputTimeoutSeconds: number;
  readonly maxHeldCalls: number;
  /** Held calls one user may have per tenant on a replica; 0: no cap. */
  readonly maxHeldCallsPerPrincipal: number;
  /** Held calls one client address may have per tenant without auth on a replica; 0: no cap. */
  readonly maxHeldCallsPerAddress: number;
  readonly sseRetryMs: number;
  readonly sseHeartbeatMs: number;
  readonly listenCoalesceMs: number;
  /** Serves the deprecated HTTP+SSE transport (2024-11-05) beside Streamable HTTP. */
  readonly legacySse: boolean;
  /** Re-run, on a survivor, an interrupted tools/call of a tool annotated read-only or idempotent. */
  readonly rerunInterruptedIdempotentCalls: boolean;
  readonly eventLogMaxEvents: number;
  /** A task's lifetime when the client asks none, and the longest it may ask (ms). */
  readonly taskTtlDefaultMs: number;
  readonly taskTtlMaxMs: number;
  /** The pollInterval suggested for tasks Portico runs itself (ms). */
  readonly taskPollIntervalMs: number;
  /** The largest result JSON a task keeps (bytes). */
  readonly taskMaxResultBytes: number;
  /** Live tasks per caller (a user, else a session) and per tenant. */
  readonly maxTasksPerCaller: number;
  readonly maxTasksPerTenant: number;
  /** tasks/* requests per caller and minute; 0: no limit. */
  readonly taskPollsPerMinute: number;
  readonly pageSize: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
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
  /** Clients one address (IPv6 by /64) may register through /oauth/register per hour, across replicas; 0: none. */
  readonly oauthRegistrationsPerHour: number;
  /** Largest /oauth/register request body, in bytes. */
  readonly oauthRegistrationMaxBytes: number;
  /** A dynamically registered client that never got a token is deleted after this many seconds. */
  readonly oauthUnusedClientTtlSeconds: number;
  /** A dynamically registered client is deleted this long after its last refresh token could be used. */
  readonly oauthIdleClientTtlSeconds: number;
  /** Failed logins to one account from one address before back-off starts; 0: no per-address back-off. */
  readonly loginThrottleFailures: number;
  /** Failed logins to one account from all addresses before the account-wide back-off; 0: none. */
  readonly loginThrottleAccountFailures: number;
  /** Longest per-address login back-off, in seconds. */
  readonly loginThrottleMaxSeconds: number;
  /** Proxies whose X-Forwarded-For names the client address (rate limits by IP, logs). */
  readonly trustedProxyCidrs: readonly string[];
  /** After SIGTERM, how long the replica serves on while /readyz answers 503. */
  readonly shutdownDelaySeconds: number;
  /** How long in-flight requests may take to finish after SIGTERM. */
  readonly shutdownTimeoutMs: number;
  /** OTLP endpoints (the SDK reads them itself; set, tracing is on). */
  readonly otlpEndpoint: string | undefined;
  readonly otlpTracesEndpoint: string | undefined;
  readonly otlpProtocol: "http/protobuf" | "http/json" | "grpc" | undefined;
  readonly otlpTracesProtocol: "http/protobuf" | "http/json" | "grpc" | undefined;
  readonly otelServiceName: string;
  readonly otelSdkDisabled: boolean;
  /** Tracing is on: an OTLP endpoint is set and the SDK is not disabled (derived, not a variable). */
  readonly tracing: boolean;
}

export interface VarSpec {
  readonly name: string;
  readonly key: keyof Config;
  readonly type: "int" | "bool" | "string" | "url" | "redis-url" | "list" | "cidrs" | "enum" | "path";
  readonly default?: string;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly description: string;
}
