// Modest per-IP limits on the OAuth endpoints a stranger can hammer, shared by every replica: the
// token and revocation endpoints (guessing codes and secrets), registration (floods), and the login and consent
// forms (password guessing; login-throttle.ts adds back-off per account), and the authorization
// endpoint (each request holds a pending sign-in in the store). Refusals speak each
// surface's language: 429 with Retry-After, an RFC 6749 JSON body or, for the forms, an HTML page.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import type { RateLimiter } from "../limits/rate-limiter.js";
import { ipSubject } from "../limits/subjects.js";
import type { Keys } from "../store/keys.js";
import { errorPage, pageHeaders } from "./pages.js";

export type LimitedEndpoint = "token" | "register" | "revoke" | "authorize" | "login" | "consent";

export interface OAuthRateLimitDeps {
  readonly limiter: RateLimiter;
  readonly keys: Keys;
  /** Requests per minute per client IP, per endpoint; 0: no limit. */
  readonly perMinute: Readonly<Record<LimitedEndpoint, number>>;
}

/** Endpoints a browser posts forms to: refused with a page, not JSON. */
const PAGES: ReadonlySet<LimitedEndpoint> = new Set(["authorize", "login", "consent"]);

/** The onRequest hook limiting one endpoint; undefined when it has no limit. */
export function oauthRateLimit(
  deps: OAuthRateLimitDeps,
): (endpoint: LimitedEndpoint) => onRequestAsyncHookHandler | undefined {
  const { limiter, keys } = deps;
  return (endpoint) => {
    const perMinute = deps.perMinute[endpoint];
    if (perMinute <= 0) return undefined;
    return async (req: FastifyRequest, reply: FastifyReply) => {
      const subject = ipSubject(req.ip);
      const refusal = limiter.take("oauth", [
        { scope: "client", perMinute, key: (w) => keys.oauthRateLimit(endpoint, subject, w) },
      ]);
      if (!refusal) return;
      const seconds = refusal.retryAfterSeconds;
      void reply.code(429).header("retry-after", String(seconds));
      if (PAGES.has(endpoint)) {
        await reply
          .headers(pageHeaders())
          .send(
            errorPage(
              "Too many requests",
              `Too many attempts from this address. Wait ${seconds} s and try again.`,
            ),
          );
        return;
      }
      await reply
        .header("cache-control", "no-store")
        .header("access-control-allow-origin", "*")
        .send({
          error: "temporarily_unavailable",
          error_description: `too many requests from this address; retry after ${seconds} s`,
        });
    };
  };
}
