// JSON-RPC 2.0 message shapes and validation for /mcp (MCP basic/index: ids are strings or
// integers, never null; notifications carry no id; errors carry an integer code and a message).
import { PorticoError } from "./errors.js";
import { RpcCode } from "./codes.js";
import type { Era } from "./era.js";

export type RequestId = string | number;

export interface RpcRequest {
  readonly jsonrpc: "2.0";
  readonly id: RequestId;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface RpcNotification {
  readonly jsonrpc: "2.0";
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface RpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export type RpcResponse =
  | { readonly jsonrpc: "2.0"; readonly id: RequestId; readonly result: Record<string, unknown> }
  | { readonly jsonrpc: "2.0"; readonly id: RequestId | null; readonly error: RpcErrorObject };

export type RpcMessage = RpcRequest | RpcNotification | RpcResponse;

export type Classified =
  | { readonly kind: "request"; readonly message: RpcRequest }
  | { readonly kind: "notification"; readonly message: RpcNotification }
  | { readonly kind: "response"; readonly message: RpcResponse }
  | { readonly kind: "invalid"; readonly id: RequestId | null; readonly reason: string };

/** A plain object: not null, not an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is RequestId {
  return typeof v === "string" || (typeof v === "number" && Number.isInteger(v));
}

/** Sorts one parsed JSON value into request, notification or response, or says why it is none. */
export function classify(value: unknown): Classified {
  if (!isRecord(value))
    return { kind: "invalid", id: null, reason: "a JSON-RPC message must be a JSON object" };
  const id = isId(value.id) ? value.id : null;
  if (value.jsonrpc !== "2.0")
    return { kind: "invalid", id, reason: 'the "jsonrpc" member must be exactly "2.0"' };
  if ("method" in value) {
    if (typeof value.method !== "string" || value.method === "")
      return { kind: "invalid", id, reason: 'the "method" member must be a non-empty string' };
    if (value.params !== undefined && !isRecord(value.params))
      return { kind: "invalid", id, reason: 'the "params" member must be an object when present' };
    if (!("id" in value)) return { kind: "notification", message: value as unknown as RpcNotification };
    if (!isId(value.id))
      return {
        kind: "invalid",
        id: null,
        reason: 'the "id" member must be a string or an integer (null is not allowed)',
      };
    return { kind: "request", message: value as unknown as RpcRequest };
  }
  if ("result" in value || "error" in value) {
    if (!isId(value.id) && value.id !== null)
      return { kind: "invalid", id: null, reason: 'a response "id" must be a string or an integer' };
    if ("result" in value ? !isRecord(value.result) : !isRecord(value.error))
      return { kind: "invalid", id, reason: 'a response needs an object "result" or "error"' };
    return { kind: "response", message: value as unknown as RpcResponse };
  }
  return {
    kind: "invalid",
    id,
    reason: 'a JSON-RPC message needs a "method" (request or notification) or a "result"/"error" (response)',
  };
}

export function resultResponse(id: RequestId, result: Record<string, unknown>): RpcResponse {
  return { jsonrpc: "2.0", id, result };
}

export function errorResponse(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): RpcResponse {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

/**
 * Maps anything thrown by a handler to a JSON-RPC error for a client of `era`; unexpected errors
 * become a generic -32603.
 */
export function toErrorResponse(id: RequestId | null, err: unknown, era: Era = "session"): RpcResponse {
  if (err instanceof PorticoError) {
    const { code, data } = err.rpcIn(era, err.data);
    return errorResponse(id, code, err.message, data);
  }
  if (isRpcErrorLike(err)) return errorResponse(id, err.code, err.message, err.data);
  return errorResponse(id, RpcCode.InternalError, "Internal error");
}

/** A failure that carries a code (Portico's own, or an upstream's JSON-RPC error): not a bug to log. */
export function isExpectedError(err: unknown): boolean {
  return err instanceof Error && typeof (err as { code?: unknown }).code !== "undefined";
}

/** Errors that already carry a JSON-RPC code, e.g. the SDK's McpError relayed from an upstream. */
export function isRpcErrorLike(err: unknown): err is { code: number; message: string; data?: unknown } {
  return (
    err instanceof Error &&
    typeof (err as unknown as { code?: unknown }).code === "number" &&
    Number.isInteger((err as unknown as { code: number }).code)
  );
}
