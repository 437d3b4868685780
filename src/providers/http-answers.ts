// What the providers that call plain HTTP endpoints (`http`, `openapi`) share: one call as a tool
// call (breaker, timeout, cancellation, failures as tool errors), reading a reply within a cap,
// and turning it into a tool result. A 2xx JSON reply becomes structuredContent (an
// object, as MCP asks: other values wrapped as {"result": …}) and its text; other replies text,
// an image, or (when asked for) an embedded resource; error pages an excerpt with every header
// value and credential redacted.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamOutcome } from "../metrics/metrics.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import type { UpstreamObserver } from "./types.js";
import { redact, UpstreamAuthError } from "./upstream-auth.js";

/** Enough of an error reply to tell what went wrong, without reading a whole error page. */
export const ERROR_READ_BYTES = 8 * 1024;
const EXCERPT_CHARS = 200;

export function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

/** Reads at most `limit` bytes of the body; `complete` is false when there was more. */
export async function readBody(
  response: Response,
  limit: number,
): Promise<{ bytes: Buffer; complete: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), complete: true };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks), complete: true };
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return { bytes: Buffer.concat(chunks).subarray(0, limit), complete: false };
    }
  }
}

/**
 * The start of an error page. It may echo the request: header values and credentials (often
 * secrets) are redacted before it is cut, so no part of one reaches the client.
 */
export function pageStart(bytes: Buffer, secrets: readonly string[]): string {
  const text = redact(bytes.toString("utf8"), secrets).replace(/\s+/g, " ").trim();
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS - 1)}…` : text;
}

export function mediaType(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A 2xx reply as a tool result. structuredContent must be an object (MCP 2025-06-18 tools). */
export function successResult(label: string, type: string, bytes: Buffer): CallToolResult {
  if (type.startsWith("image/"))
    return { content: [{ type: "image", data: bytes.toString("base64"), mimeType: type }] };
  const text = bytes.toString("utf8");
  if (!(type === "application/json" || type.endsWith("+json")) || text.trim() === "")
    return { content: [{ type: "text", text }] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return toolError(`${label}: upstream sent invalid JSON: ${(err as Error).message}`);
  }
  const structuredContent = isObject(value) ? value : { result: value };
  return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
}

/** Why a fetch failed, without a stack (undici hides the reason in `cause`). */
export function reason(err: unknown): string {
  const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
  if (!(cause instanceof Error)) return String(cause);
  // An AggregateError (one per address tried) has an empty message but a code.
  return cause.message || (cause as Error & { code?: string }).code || cause.name;
}

/** One tool call of an HTTP endpoint: who it is, how long it may take, what watches it. */
export interface EndpointCall {
  /** `provider/tool`, what its errors start with. */
  readonly label: string;
  readonly timeoutMs: number;
  /** The client's cancellation. */
  readonly signal: AbortSignal;
  readonly breaker: CircuitBreaker | undefined;
  readonly onUpstreamCall: UpstreamObserver | undefined;
}

/**
 * Makes one call: `send` with the signal that ends it (the client's cancellation or the
 * timeout), `read` turning the answer into the result. The breaker hears how it went (a 5xx or
 * no answer is a failure, a cancellation neither), the outcome is observed, and every failure is
 * a tool error the model can read.
 */
export async function callEndpoint(
  call: EndpointCall,
  send: (signal: AbortSignal) => Promise<Response>,
  read: (response: Response) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const { label, breaker, timeoutMs } = call;
  if (breaker && !breaker.admits()) return toolError(`${label}: ${breaker.refusal().message}`);
  const timeout = AbortSignal.timeout(timeoutMs);
  const started = performance.now();
  const observe = (outcome: UpstreamOutcome) =>
    call.onUpstreamCall?.(outcome, (performance.now() - started) / 1000);
  try {
    const response = await send(AbortSignal.any([call.signal, timeout]));
    // An answer says the upstream is there, unless it is a server error (5xx).
    if (response.status >= 500) breaker?.failed(`HTTP ${response.status}`);
    else breaker?.succeeded();
    const result = await read(response);
    observe(result.isError ? "error" : "ok");
    return result;
  } catch (err) {
    if (timeout.aborted) {
      breaker?.failed("timed out");
      observe("timeout");
      return toolError(`${label}: upstream timed out after ${timeoutMs} ms`);
    }
    if (call.signal.aborted) {
      breaker?.released();
      return toolError(`${label}: cancelled by the client`);
    }
    observe("error");
    if (err instanceof UpstreamAuthError) {
      breaker?.released();
      return toolError(`${label}: ${err.message}`);
    }
    breaker?.failed(reason(err));
    return toolError(`${label}: could not reach upstream: ${reason(err)}`);
  }
}
