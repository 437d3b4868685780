// Requests to a session-era upstream for a client request (docs/upstream-mcp.md "Healing and
// health", "Circuit breaker"): gated by the provider's breaker, observed for metrics, a transport
// failure marking the upstream session failed, failures told in Portico's words.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { fail, isPorticoError } from "../../../protocol/errors.js";
import type { CircuitBreaker } from "../../circuit-breaker.js";
import { describeFailure } from "../upstream.js";
import { UpstreamProtocolError } from "../upstream-errors.js";
import type { CallContext } from "../../types.js";
import { declinedUrl, urlElicitationRound } from "../bridge.js";
import { tellBreaker } from "../failures.js";
import type { SessionEra } from "./era.js";
import { observed } from "../calls.js";
import type { CallHow } from "../calls.js";

/** The refusal of an open breaker, or undefined when the call may go upstream. */
export function refusedBy(breaker: CircuitBreaker | undefined): Promise<never> | undefined {
  return breaker && !breaker.admits() ? Promise.reject(breaker.refusal()) : undefined;
}

/** A request to the session-era upstream for a client request. */
export function callSession(
  session: SessionEra,
  method: string,
  params: Record<string, unknown>,
  ctx: CallContext,
  how: CallHow,
): Promise<Record<string, unknown>> {
  const breaker = how.breaker;
  const refused = refusedBy(breaker);
  if (refused) return refused;
  const declined = declinedUrl(ctx);
  if (declined)
    return Promise.reject(
      fail(
        "PORTICO_ERR_PROVIDER_UNAVAILABLE",
        `Provider '${how.providerId}' needs the user to open a URL first, and the answer was "${declined}"`,
      ),
    );
  return observed(ctx, how.onUpstreamCall, async () => {
    try {
      const result = await session.call(ctx, method, params);
      breaker?.succeeded();
      return result;
    } catch (err) {
      const cancelled = (ctx.cancellation ?? ctx.signal).aborted;
      tellBreaker(breaker, err, cancelled);
      const round = ctx.mrtr && urlElicitationRound(err, ctx, how.providerId);
      if (round) return round;
      // Transport failures (no answer, a refused exchange) say the upstream is down; an
      // answer, even a malformed one for one tool, says it is up.
      if (!isPorticoError(err) && !(err instanceof McpError) && !(err instanceof UpstreamProtocolError))
        if (!cancelled) session.failed(describeFailure(err));
      throw how.failures.of(err, ctx);
    }
  });
}
