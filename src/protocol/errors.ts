// One registry of coded errors (docs/errors.md): each has a code, an HTTP status and, on /mcp,
// a JSON-RPC error code. Surfaces map a PorticoError to their own wire format at their edge.

import { RpcCode, StatelessCode } from "./codes.js";
import type { Era } from "./era.js";

export interface ErrorSpec {
  /** HTTP status when the error ends the whole HTTP exchange. */
  readonly status: number;
  /** JSON-RPC code when the error is reported inside a JSON-RPC response (/mcp errors only). */
  readonly rpc?: number;
  /** The code a 2026-07-28 client gets instead, for codes that revision keeps for itself. */
  readonly statelessRpc?: number;
}

/** Every coded error Portico raises; docs/errors.md lists the same table. */
export const ErrorCodes = {
  PORTICO_ERR_CONFIG_INVALID: { status: 500, rpc: RpcCode.InternalError },
  PORTICO_ERR_MCP_PARSE: { status: 400, rpc: RpcCode.ParseError },
  PORTICO_ERR_MCP_INVALID_REQUEST: { status: 400, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_METHOD_NOT_FOUND: { status: 200, rpc: RpcCode.MethodNotFound },
  PORTICO_ERR_MCP_INVALID_PARAMS: { status: 200, rpc: RpcCode.InvalidParams },
  PORTICO_ERR_MCP_RESOURCE_NOT_FOUND: { status: 200, rpc: RpcCode.ResourceNotFound },
  PORTICO_ERR_MCP_INTERNAL: { status: 500, rpc: RpcCode.InternalError },
  PORTICO_ERR_MCP_TENANT_NOT_FOUND: { status: 404, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_TENANT_REQUIRED: { status: 404, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_SESSION_REQUIRED: { status: 400, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_SESSION_NOT_FOUND: { status: 404, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_LEGACY_SSE_DISABLED: { status: 404, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_PROTOCOL_VERSION: { status: 400, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_BATCH_NOT_ALLOWED: { status: 400, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_ORIGIN_FORBIDDEN: {
    status: 403,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.Forbidden,
  },
  PORTICO_ERR_MCP_HOST_FORBIDDEN: {
    status: 403,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.Forbidden,
  },
  PORTICO_ERR_MCP_BODY_TOO_LARGE: { status: 413, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_HEADERS_TOO_LARGE: { status: 431, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_CONTENT_TYPE: { status: 415, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_NOT_ACCEPTABLE: { status: 406, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_METHOD_NOT_ALLOWED: {
    status: 405,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.MethodNotAllowed,
  },
  PORTICO_ERR_MCP_UNAUTHORIZED: {
    status: 401,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.Unauthorized,
  },
  PORTICO_ERR_MCP_INSUFFICIENT_SCOPE: {
    status: 403,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.InsufficientScope,
  },
  PORTICO_ERR_MCP_RATE_LIMITED: {
    status: 429,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.RateLimited,
  },
  PORTICO_ERR_MCP_TOO_MANY_SESSIONS: { status: 429, rpc: RpcCode.ServerError },
  PORTICO_ERR_MCP_TOO_MANY_STREAMS: {
    status: 429,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.TooManyStreams,
  },
  PORTICO_ERR_MCP_CLIENT_CAPABILITY: { status: 200, rpc: RpcCode.InvalidRequest },
  PORTICO_ERR_MCP_META_INVALID: { status: 400, rpc: RpcCode.InvalidParams },
  PORTICO_ERR_MCP_HEADER_MISMATCH: { status: 400, rpc: RpcCode.HeaderMismatch },
  PORTICO_ERR_MCP_MISSING_CAPABILITY: { status: 400, rpc: RpcCode.MissingRequiredClientCapability },
  PORTICO_ERR_MCP_UNSUPPORTED_VERSION: { status: 400, rpc: RpcCode.UnsupportedProtocolVersion },
  PORTICO_ERR_MCP_REQUEST_INTERRUPTED: {
    status: 200,
    rpc: RpcCode.RequestInterrupted,
    statelessRpc: StatelessCode.RequestInterrupted,
  },
  PORTICO_ERR_MCP_URL_ELICITATION_REQUIRED: { status: 200, rpc: RpcCode.UrlElicitationRequired },
  PORTICO_ERR_MCP_TASK_NOT_FOUND: { status: 200, rpc: RpcCode.InvalidParams },
  PORTICO_ERR_MCP_TASK_TERMINAL: { status: 200, rpc: RpcCode.InvalidParams },
  PORTICO_ERR_MCP_TASK_REQUIRED: { status: 200, rpc: RpcCode.MethodNotFound },
  PORTICO_ERR_MCP_TASK_RESULT_TOO_LARGE: { status: 200, rpc: RpcCode.InternalError },
  PORTICO_ERR_MCP_TOO_MANY_TASKS: {
    status: 429,
    rpc: RpcCode.ServerError,
    statelessRpc: StatelessCode.RateLimited,
  },
  PORTICO_ERR_PROVIDER_UNAVAILABLE: { status: 200, rpc: RpcCode.InternalError },
  PORTICO_ERR_PROVIDER_TIMEOUT: { status: 200, rpc: RpcCode.InternalError },
  PORTICO_ERR_PROVIDER_FAILED: { status: 200, rpc: RpcCode.InternalError },
  PORTICO_ERR_STORE_UNAVAILABLE: { status: 503, rpc: RpcCode.InternalError },
  PORTICO_ERR_ADMIN_UNAUTHENTICATED: { status: 401 },
  PORTICO_ERR_ADMIN_FORBIDDEN: { status: 403 },
  PORTICO_ERR_ADMIN_CSRF: { status: 403 },
  PORTICO_ERR_ADMIN_NOT_FOUND: { status: 404 },
  PORTICO_ERR_ADMIN_METHOD_NOT_ALLOWED: { status: 405 },
  PORTICO_ERR_ADMIN_MALFORMED: { status: 400 },
  PORTICO_ERR_ADMIN_OPERATOR_ONLY: { status: 400 },
  PORTICO_ERR_ADMIN_INVALID: { status: 422 },
  PORTICO_ERR_ADMIN_CONFLICT: { status: 409 },
  PORTICO_ERR_ADMIN_PRECONDITION_FAILED: { status: 412 },
  PORTICO_ERR_ADMIN_BODY_TOO_LARGE: { status: 413 },
  PORTICO_ERR_ADMIN_HEADERS_TOO_LARGE: { status: 431 },
  PORTICO_ERR_ADMIN_CONTENT_TYPE: { status: 415 },
  PORTICO_ERR_ADMIN_UPSTREAM: { status: 502 },
  PORTICO_ERR_ADMIN_INTERNAL: { status: 500 },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ErrorCodes;

/** An expected failure with a safe, client-facing message. */
export class PorticoError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly rpc: number;
  readonly data: unknown;

  constructor(code: ErrorCode, message: string, data?: unknown) {
    super(message);
    this.name = "PorticoError";
    this.code = code;
    this.status = ErrorCodes[code].status;
    const spec: ErrorSpec = ErrorCodes[code];
    this.rpc = spec.rpc ?? RpcCode.InternalError;
    this.data = data;
  }

  /**
   * The JSON-RPC code and data a client of `era` gets, `data` being the error's own or what the
   * edge keeps of it: a 2026-07-28 client gets Portico's codes outside the range that revision
   * reserves, with the error's name in `data.error` (docs/errors.md).
   */
  rpcIn(era: Era, data: unknown): { readonly code: number; readonly data: unknown } {
    const moved = era === "stateless" ? (ErrorCodes[this.code] as ErrorSpec).statelessRpc : undefined;
    if (moved === undefined) return { code: this.rpc, data };
    const more = typeof data === "object" && data !== null && !Array.isArray(data) ? data : { detail: data };
    return { code: moved, data: data === undefined ? { error: this.code } : { ...more, error: this.code } };
  }
}

/** Shorthand used throughout: `throw fail("PORTICO_ERR_…", "what went wrong")`. */
export function fail(code: ErrorCode, message: string, data?: unknown): PorticoError {
  return new PorticoError(code, message, data);
}

export function isPorticoError(err: unknown): err is PorticoError {
  return err instanceof PorticoError;
}

/** Longest piece of client (or upstream) input an error message quotes. */
export const EXCERPT_CHARS = 80;

/**
 * A short excerpt of untrusted text for an error message (docs/security.md "Bounded by default"):
 * past `max` characters it is cut and says how long it was, so a 1 MB method name is not echoed.
 */
export function excerpt(text: unknown, max = EXCERPT_CHARS): string {
  const s = typeof text === "string" ? text : String(text);
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length} characters)`;
}
