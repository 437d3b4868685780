// What the calls of both eras share (docs/upstream-mcp.md "Failures", metrics.md): how a
// provider's calls go, and each call observed for the upstream metrics.
import { isPorticoError } from "../../protocol/errors.js";
import type { UpstreamOutcome } from "../../metrics/metrics.js";
import type { CircuitBreaker } from "../circuit-breaker.js";
import type { CallContext, UpstreamObserver } from "../types.js";
import type { UpstreamFailures } from "./failures.js";

/** What a provider's calls share, built once per provider (no object per call). */
export interface CallHow {
  readonly providerId: string;
  readonly timeoutMs: number;
  readonly failures: UpstreamFailures;
  readonly breaker: CircuitBreaker | undefined;
  readonly onUpstreamCall: UpstreamObserver | undefined;
}

/** Runs an upstream call for a client request, telling `observer` how it ended (not when the client cancelled). */
export async function observed<T>(
  ctx: CallContext,
  observer: UpstreamObserver | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const observe = (outcome: UpstreamOutcome) => observer?.(outcome, (performance.now() - started) / 1000);
  try {
    const result = await work();
    observe("ok");
    return result;
  } catch (err) {
    const timedOut = isPorticoError(err) && err.code === "PORTICO_ERR_PROVIDER_TIMEOUT";
    if (!(ctx.cancellation ?? ctx.signal).aborted) observe(timedOut ? "timeout" : "error");
    throw err;
  }
}
