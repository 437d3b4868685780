// Environment variables of the /mcp limits (docs/configuration.md, docs/security.md): requests per
// minute, sessions per user or address, GET streams, and subscriptions/listen streams and URIs.
import type { VarSpec } from "./types.js";

export const LIMIT_VARS: readonly VarSpec[] = [
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
      "`subscriptions/listen` streams (2026-07-28) one replica holds open per tenant; past it, a listen answers 429 (-31005) and the client may retry on another replica. `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_LISTEN_STREAMS_PER_PRINCIPAL",
    key: "maxListenStreamsPerPrincipal",
    type: "int",
    default: "100",
    min: 0,
    max: 10000000,
    description:
      "`subscriptions/listen` streams one replica holds open per tenant for one user (`sub`, whatever the client), and resource URIs those streams subscribe to (`resourceSubscriptions`, counted per stream), so one user cannot take the tenant's `PORTICO_MAX_LISTEN_STREAMS_PER_TENANT` or `PORTICO_MAX_WATCHED_URIS_PER_TENANT` from everyone else; past either, a listen answers 429 (-31005). `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_LISTEN_STREAMS_PER_ADDRESS",
    key: "maxListenStreamsPerAddress",
    type: "int",
    default: "500",
    min: 0,
    max: 10000000,
    description:
      "`subscriptions/listen` streams one replica holds open per tenant without authentication for one client address (IPv6 by /64; an office behind one NAT shares it), and resource URIs those streams subscribe to (counted per stream); past either, a listen answers 429 (-31005). `0`: no cap.",
  },
  {
    name: "PORTICO_MAX_WATCHED_URIS_PER_TENANT",
    key: "maxWatchedUrisPerTenant",
    type: "int",
    default: "1000",
    min: 0,
    max: 10000000,
    description:
      "Distinct resource URIs the listen streams of one tenant on one replica may watch (`resourceSubscriptions`; each is an upstream subscription). A listen that would pass it answers 429 (-31005). `0`: no cap.",
  },
];
