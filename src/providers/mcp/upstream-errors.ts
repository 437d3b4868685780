// The ways an upstream exchange fails besides the transport itself (docs/upstream-mcp.md): an HTTP
// refusal, a broken answer, and a JSON-RPC error the upstream answered with.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../../protocol/codes.js";
import { isRecord } from "../../protocol/jsonrpc.js";

const NO_FIELDS: Record<string, unknown> = Object.freeze({});

/** A non-2xx answer (after the 401 retry) or a transport-level refusal; `status` is the HTTP status. */
export class UpstreamHttpError extends Error {
  override readonly name = "UpstreamHttpError";

  /** `body`: the start of the answer's text, to tell why (never shown: it may echo the request). */
  constructor(
    readonly status: number,
    readonly body = "",
  ) {
    super(`HTTP ${status}`);
  }

  /** HTTP status, under the name callers of the SDK's transport error used. */
  get code(): number {
    return this.status;
  }
}

/**
 * An upstream answer that breaks the transport's rules (not JSON-RPC, a stream without the
 * response, an oversized message). Its message is Portico's own words, safe for the wire.
 */
export class UpstreamProtocolError extends Error {
  override readonly name = "UpstreamProtocolError";
  /** The words alone. */
  readonly why: string;

  constructor(
    readonly code: number,
    why: string,
  ) {
    super(why);
    this.why = why;
  }
}

/**
 * The upstream cannot be reached at all, in Portico's words: a `stdio` upstream's child exited, could
 * not be started or initialized, is not defined on this replica, or stopped reading its stdin
 * (docs/upstream-mcp.md "stdio upstreams").
 */
export class UpstreamGone extends Error {
  override readonly name = "UpstreamGone";
}

/** A JSON-RPC error object as an McpError, its message as the upstream wrote it. */
export function rpcError(error: unknown): McpError {
  const e = isRecord(error) ? error : NO_FIELDS;
  const code = typeof e.code === "number" ? e.code : RpcCode.InternalError;
  const message = typeof e.message === "string" ? e.message : "Unknown error";
  return Object.assign(new McpError(code, message, e.data), { message });
}
