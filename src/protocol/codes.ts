// The JSON-RPC error codes Portico speaks or reads, in both directions, and the revision that
// defines each (basic/index §Error Codes); docs/errors.md lists the same table. No other file
// spells a code out.

/** JSON-RPC 2.0 and MCP error codes, by name. */
export const RpcCode = {
  /** JSON-RPC 2.0: the body is not valid JSON. */
  ParseError: -32700,
  /** JSON-RPC 2.0: not a valid request object. */
  InvalidRequest: -32600,
  /** JSON-RPC 2.0: the method does not exist. */
  MethodNotFound: -32601,
  /** JSON-RPC 2.0: invalid params; 2026-07-28 also says "resource not found" with it. */
  InvalidParams: -32602,
  /** JSON-RPC 2.0: internal error. */
  InternalError: -32603,
  /** Implementation range (legacy sub-range): a transport-level rejection (SDK convention). */
  ServerError: -32000,
  /** Implementation range (legacy sub-range): the TypeScript SDK's own request timeout, local. */
  RequestTimeout: -32001,
  /** 2025-03-26 … 2025-11-25: resource not found (2026-07-28 reserves it, uses -32602 instead). */
  ResourceNotFound: -32002,
  /** Implementation range: Portico's replica running the request died; it may or may not have completed. */
  RequestInterrupted: -32003,
  /** 2026-07-28: HTTP headers do not match the body, or are missing or malformed. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability the client did not declare. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the requested protocol version is not served. */
  UnsupportedProtocolVersion: -32022,
  /** 2025-11-25 only: URL elicitation required (2026-07-28 reserves it, must not emit it). */
  UrlElicitationRequired: -32042,
  /** Outside JSON-RPC's reserved range: a request the client cancelled (LSP's code). */
  RequestCancelled: -32800,
} as const;

/** -32000 … -32019: implementation-defined, legacy (2026-07-28 basic/index); no meaning assumed. */
export const IMPLEMENTATION_CODES = { first: -32019, last: -32000 } as const;

/** -32020 … -32099: reserved for the MCP specification from 2026-07-28 on (basic/index). */
export const MCP_RESERVED_CODES = { first: -32099, last: -32020 } as const;

/**
 * Portico's own codes for a 2026-07-28 client: that revision asks codes it does not define to lie
 * outside JSON-RPC's reserved range (-32768 … -32000) and new ones never in -32000 … -32019
 * (basic/index §Error Codes). Session-era clients keep the codes above, which they already handle;
 * either way the error's PORTICO_ERR_… name is in docs/errors.md, and on 2026-07-28 in `data.error`.
 */
export const StatelessCode = {
  /** The request's Origin or Host is not allowed (DNS rebinding); session era: -32000. */
  Forbidden: -31000,
  /** An HTTP method the endpoint does not serve; session era: -32000. */
  MethodNotAllowed: -31001,
  /** No valid bearer token; session era: -32000. */
  Unauthorized: -31002,
  /** The token lacks the scope the request needs; session era: -32000. */
  InsufficientScope: -31003,
  /** A rate limit or a cap on held calls is spent; session era: -32000. */
  RateLimited: -31004,
  /** A cap on listen streams or watched URIs is reached; session era: -32000. */
  TooManyStreams: -31005,
  /** The replica running the request died; it may or may not have completed; session era: -32003. */
  RequestInterrupted: -31006,
} as const;
