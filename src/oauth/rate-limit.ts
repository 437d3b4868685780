// A modest per-IP limit on the token and registration endpoints (guessing codes and secrets,
// registration floods), shared by every replica. Refusals speak RFC 6749: 429 with Retry-After
// and a JSON error body.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import type { RateLimiter } from "../limits/rate-limiter.js";
import { ipSubject } from "../limits/subjects.js";
import type { Keys } from "../store/keys.js";

export type LimitedEndpoint = "token" | "register";

export interface OAuthRateLimitDeps {
  readonly limiter: RateLimiter;
  readonly keys: Keys;
  /** Requests per minute per client IP, per endpoint; 0: no limit. */
  readonly perMinute: number;
}

/** The onRequest hook limiting one endpoint; undefined when there is no limit. */
export function oauthRateLimit(
  deps: OAuthRateLimitDeps,
): (endpoint: LimitedEndpoint) => onRequestAsyncHookHandler | undefined {
  const { limiter, keys, perMinute } = deps;
  if (perMinute <= 0) return () => undefined;
  return (endpoint) => async (req: FastifyRequest, reply: FastifyReply) => {
    const subject = ipSubject(req.ip);
    const refusal = limiter.take("oauth", [
      { scope: "client", perMinute, key: (w) => keys.oauthRateLimit(endpoint, subject, w) },
    ]);
    if (!refusal) return;
    await reply
      .code(429)
      .header("retry-after", String(refusal.retryAfterSeconds))
      .header("cache-control", "no-store")
      .header("access-control-allow-origin", "*")
      .send({
        error: "temporarily_unavailable",
        error_description: `too many requests from this address; retry after ${refusal.retryAfterSeconds} s`,
      });
  };
}
