// Environment variables of upstream faults (docs/configuration.md, docs/upstream-mcp.md "Circuit
// breaker"): the per-provider circuit breaker, the egress Agent's connect and header timeouts, and
// the bounds on `openapi` providers' documents.
import type { VarSpec } from "./types.js";

export const UPSTREAM_VARS: readonly VarSpec[] = [
  {
    name: "PORTICO_UPSTREAM_BREAKER_FAILURES",
    key: "upstreamBreakerFailures",
    type: "int",
    default: "5",
    min: 0,
    max: 1000,
    description:
      "Upstream failures in a row (no connection, a timeout, HTTP 5xx; not a 4xx, a JSON-RPC error or a tool's `isError`) after which a replica opens an `mcp` or `http` provider's circuit breaker: its calls then fail fast until a probe succeeds. `0` turns the breaker off.",
  },
  {
    name: "PORTICO_UPSTREAM_BREAKER_OPEN_MS",
    key: "upstreamBreakerOpenMs",
    type: "int",
    default: "5000",
    min: 100,
    max: 3600000,
    description:
      "Cool-down of an open breaker before one probe (an `mcp` provider's health probe, else the next call) is let through; doubled at each reopening until a call succeeds.",
  },
  {
    name: "PORTICO_UPSTREAM_BREAKER_MAX_OPEN_MS",
    key: "upstreamBreakerMaxOpenMs",
    type: "int",
    default: "120000",
    min: 100,
    max: 3600000,
    description: "The longest cool-down of an open breaker.",
  },
  {
    name: "PORTICO_UPSTREAM_CONNECT_TIMEOUT_MS",
    key: "upstreamConnectTimeoutMs",
    type: "int",
    default: "10000",
    min: 100,
    max: 600000,
    description:
      "How long a connection to a provider's upstream (TCP and TLS) may take to open, whatever the call's own timeout.",
  },
  {
    name: "PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS",
    key: "upstreamHeadersTimeoutMs",
    type: "int",
    default: "300000",
    min: 0,
    max: 3600000,
    description:
      "How long an upstream may take to send its response headers (a JSON answer's come with the whole answer, so keep it above the longest provider `timeoutMs`; below `PORTICO_UPSTREAM_TIMEOUT_MS` Portico refuses to start); it bounds requests no call deadline covers (GET streams opening, answers to the upstream's own requests). Once headers arrived, a body is never timed out for being quiet: an SSE answer may wait on the user, a GET stream may be silent. `0` turns it off.",
  },
  {
    name: "PORTICO_OPENAPI_MAX_DOCUMENT_BYTES",
    key: "openapiMaxDocumentBytes",
    type: "int",
    default: "4194304",
    min: 1024,
    max: 104857600,
    description:
      "The largest OpenAPI document an `openapi` provider may have (its JSON or YAML text, or the JSON of an object), in bytes; a larger one is refused when the provider is saved (docs/openapi.md).",
  },
  {
    name: "PORTICO_OPENAPI_MAX_OPERATIONS",
    key: "openapiMaxOperations",
    type: "int",
    default: "1000",
    min: 1,
    max: 100000,
    description:
      "The most operations an `openapi` provider's document may have; a document with more is refused when it is saved (select fewer with `include`, on a smaller document).",
  },
];
