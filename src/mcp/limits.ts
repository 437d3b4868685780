// Rate limits of /mcp/{tenant}: every request counts against its tenant's limit and its client's
// (the user, whatever the OAuth client, when authenticated, else the IP), with the tenant's own limits or
// the server's defaults. Counted in memory (src/limits/rate-limiter.ts): no store round trip.
// Over a limit: 429 with Retry-After and a JSON-RPC error.
import type { Authenticated } from "../auth/resource-server.js";
import type { Config } from "../config/env.js";
import { fail } from "../errors.js";
import type { Limit, RateLimiter } from "../limits/rate-limiter.js";
import { ipSubject, principalSubject } from "../limits/subjects.js";
import type { Keys } from "../store/keys.js";
import type { TenantRuntime } from "../tenants/registry.js";
import type { SessionOwner } from "./sessions.js";

export class McpLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly keys: Keys,
    private readonly config: Config,
    /** Sees each refusal by a cap (sessions, streams), for metrics; rate limits count in the limiter. */
    private readonly onCapped: (scope: "sessions" | "streams") => void = () => undefined,
  ) {}

  /** Counts an error the /mcp edge answers, when it is a cap's refusal. */
  refused(code: string): void {
    if (code === "PORTICO_ERR_MCP_TOO_MANY_SESSIONS") this.onCapped("sessions");
    else if (code === "PORTICO_ERR_MCP_TOO_MANY_STREAMS") this.onCapped("streams");
  }

  /** Counts a request; throws PORTICO_ERR_MCP_RATE_LIMITED when a limit is exceeded. */
  admit(tenant: TenantRuntime, caller: Authenticated | undefined, ip: string): void {
    const t = tenant.config.id;
    const perTenant = tenant.config.limits?.requestsPerMinute ?? this.config.tenantRequestsPerMinute;
    const perClient = tenant.config.limits?.perClientRequestsPerMinute ?? this.config.clientRequestsPerMinute;
    if (perTenant <= 0 && perClient <= 0) return;
    const limits: Limit[] = [];
    if (perTenant > 0)
      limits.push({ scope: "tenant", perMinute: perTenant, key: (w) => this.keys.mcpRateLimit(t, "t", w) });
    if (perClient > 0) {
      // The user, whatever the client: anyone may register clients, so a budget per client would
      // let one user multiply theirs (the session cap counts the same way).
      const subject = caller ? principalSubject(caller.user) : ipSubject(ip);
      limits.push({
        scope: "client",
        perMinute: perClient,
        key: (w) => this.keys.mcpRateLimit(t, subject, w),
      });
    }
    const refusal = this.limiter.take("mcp", limits);
    if (!refusal) return;
    const who = refusal.scope === "tenant" ? "this tenant's" : "this client's";
    const what = refusal.burst
      ? `${who} requests come faster than its limit of ${refusal.perMinute} per minute can be counted`
      : `${who} limit of ${refusal.perMinute} requests per minute is reached`;
    throw fail(
      "PORTICO_ERR_MCP_RATE_LIMITED",
      `Too Many Requests: ${what}; retry after ${refusal.retryAfterSeconds} s`,
      { retryAfterSeconds: refusal.retryAfterSeconds },
    );
  }

  /**
   * Whose session cap an initialize counts against: the user, whatever the client (anyone may
   * register clients), or on a tenant without authentication the client address
   * (docs/security.md "Bounded by default").
   */
  sessionOwner(tenant: TenantRuntime, caller: Authenticated | undefined, ip: string): SessionOwner {
    const limits = tenant.config.limits;
    return caller
      ? {
          subject: principalSubject(caller.user),
          max: limits?.sessionsPerPrincipal ?? this.config.maxSessionsPerPrincipal,
        }
      : { subject: ipSubject(ip), max: limits?.sessionsPerAddress ?? this.config.maxSessionsPerAddress };
  }
}
