// How an upstream's failures reach clients and logs (docs/upstream-mcp.md "Failures"): transport
// failures in Portico's words, JSON-RPC errors relayed without the provider's secrets, and log
// entries without them either (an upstream's error page may echo the request).
import { McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import { fail, isPorticoError } from "../../protocol/errors.js";
import { RpcCode } from "../../protocol/codes.js";
import type { CircuitBreaker } from "../circuit-breaker.js";
import { describeFailure, upstreamRpcError } from "./upstream.js";
import type { CallContext } from "../types.js";
import { redact, UpstreamAuthError } from "../upstream-auth.js";
import { UpstreamHttpError, UpstreamProtocolError } from "./upstream-errors.js";
import { parsed } from "./bridge.js";

export class UpstreamFailures {
  constructor(
    private readonly providerId: string,
    private readonly tenantId: string,
    private readonly log: FastifyBaseLogger,
    /** The provider's header values and credentials, as they are now. */
    private readonly secrets: () => string[],
  ) {}

  /** A failed upstream request as the client gets it. */
  of(err: unknown, ctx: CallContext): unknown {
    if (isPorticoError(err) || (ctx.cancellation ?? ctx.signal).aborted) return err;
    return (
      upstreamRpcError(this.scrubbed(err), this.providerId, ctx.protocolVersion, ctx.keepsUrlElicitation) ??
      this.unavailable(err)
    );
  }

  /**
   * A failure of refresh or probe as the admin API may show it (health, refresh, dry runs): an
   * HTTP failure is told by its status only, and anything else loses the provider's secrets.
   */
  shown(err: unknown): unknown {
    const described = describeFailure(err);
    if (described !== "unreachable") return new Error(described);
    return this.withoutSecrets(err);
  }

  unavailable(err: unknown) {
    if (isPorticoError(err)) return err;
    this.log.warn(
      { tenant: this.tenantId, provider: this.providerId, err: this.withoutSecrets(err) },
      "upstream call failed",
    );
    return fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${this.providerId}' is unavailable: ${describeFailure(err)}`,
    );
  }

  /**
   * A JSON-RPC error relayed to the client without the provider's secrets: an upstream may repeat
   * the request's API key or token in its error message or data, and the client must not learn it.
   */
  scrubbed<E>(err: E): E {
    if (!(err instanceof McpError)) return err;
    const secrets = this.secrets();
    if (secrets.length === 0) return err;
    const message = err.message;
    const data = err.data === undefined ? undefined : JSON.stringify(err.data);
    const cleanMessage = redact(message, secrets);
    const cleanData = data === undefined ? undefined : redact(data, secrets);
    if (cleanMessage === message && cleanData === data) return err;
    const clean = new McpError(err.code, cleanMessage, cleanData === data ? err.data : parsed(cleanData));
    // McpError prefixes its message; the client gets the upstream's words (without the secrets).
    return Object.assign(clean, { message: cleanMessage }) as E;
  }

  /** An upstream's error page may echo the request: its headers and credentials stay out of the log. */
  withoutSecrets(err: unknown): unknown {
    if (!(err instanceof Error)) return err;
    const secrets = this.secrets();
    const message = redact(err.message, secrets);
    if (message === err.message) return err;
    const code = (err as Error & { code?: unknown }).code;
    return Object.assign(new Error(message), {
      name: err.name,
      code,
      stack: redact(err.stack ?? "", secrets),
    });
  }
}

/**
 * A tools/call failure as the client gets it: an unreachable or slow upstream (or an open breaker)
 * is a failed tool execution the model can read (server/tools "Error Handling"); JSON-RPC errors the
 * upstream answered with stay protocol errors (thrown).
 */
export function toolErrorOf(err: unknown): CallToolResult {
  if (
    isPorticoError(err) &&
    (err.code === "PORTICO_ERR_PROVIDER_UNAVAILABLE" || err.code === "PORTICO_ERR_PROVIDER_TIMEOUT")
  )
    return { isError: true, content: [{ type: "text", text: err.message }] };
  throw err;
}

/**
 * What a failed upstream request tells the circuit breaker (docs/upstream-mcp.md "Circuit
 * breaker"): "down" for no answer, a timeout or HTTP 5xx; "up" for any other answer (a JSON-RPC
 * error, a 4xx, a malformed body: the upstream is there); "none" for a failure before the
 * upstream (its token endpoint).
 */
export function breakerVerdict(err: unknown): "down" | "up" | "none" {
  if (err instanceof McpError) return err.code === RpcCode.RequestTimeout ? "down" : "up";
  if (isPorticoError(err)) return err.code === "PORTICO_ERR_PROVIDER_TIMEOUT" ? "down" : "none";
  if (err instanceof UpstreamHttpError) return err.status >= 500 ? "down" : "up";
  if (err instanceof UpstreamProtocolError) return err.code >= 500 ? "down" : "up";
  if (err instanceof UpstreamAuthError) return "none";
  return "down";
}

function timedOut(err: unknown): boolean {
  return (
    (isPorticoError(err) && err.code === "PORTICO_ERR_PROVIDER_TIMEOUT") ||
    (err instanceof McpError && err.code === RpcCode.RequestTimeout)
  );
}

/** Tells the breaker how a request for a client ended; a request the client cancelled tells nothing. */
export function tellBreaker(breaker: CircuitBreaker | undefined, err: unknown, cancelled: boolean): void {
  if (!breaker) return;
  const verdict = cancelled ? "none" : breakerVerdict(err);
  if (verdict === "down") breaker.failed(timedOut(err) ? "timed out" : describeFailure(err));
  else if (verdict === "up") breaker.succeeded();
  else breaker.released();
}
