// Rate limits of /mcp/{tenant}: every request counts against its tenant's limit and its client's
// (the OAuth client when authenticated, else the IP), with the tenant's own limits or the
// server's defaults. Over a limit: 429 with Retry-After and a JSON-RPC error.
import type { Authenticated } from "../auth/resource-server.js";
import type { Config } from "../config/env.js";
import { fail } from "../errors.js";
import type { Limit, RateLimiter } from "../limits/rate-limiter.js";
import { clientIdSubject, ipSubject } from "../limits/subjects.js";
import type { Keys } from "../store/keys.js";
import type { TenantRuntime } from "../tenants/registry.js";

export class McpLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly keys: Keys,
    private readonly config: Config,
  ) {}

  /**
   * Counts a request; undefined (no I/O at all) when the tenant has no limits. The promise
   * rejects with PORTICO_ERR_MCP_RATE_LIMITED when a limit is exceeded.
   */
  admit(tenant: TenantRuntime, caller: Authenticated | undefined, ip: string): Promise<void> | undefined {
    const t = tenant.config.id;
    const perTenant = tenant.config.limits?.requestsPerMinute ?? this.config.tenantRequestsPerMinute;
    const perClient = tenant.config.limits?.perClientRequestsPerMinute ?? this.config.clientRequestsPerMinute;
    if (perTenant <= 0 && perClient <= 0) return undefined;
    const limits: Limit[] = [];
    if (perTenant > 0)
      limits.push({ scope: "tenant", perMinute: perTenant, key: (w) => this.keys.mcpRateLimit(t, "t", w) });
    if (perClient > 0) {
      const subject = caller ? clientIdSubject(caller.clientId) : ipSubject(ip);
      limits.push({
        scope: "client",
        perMinute: perClient,
        key: (w) => this.keys.mcpRateLimit(t, subject, w),
      });
    }
    return this.limiter.take("mcp", limits).then((refusal) => {
      if (!refusal) return;
      const who = refusal.scope === "tenant" ? "this tenant's" : "this client's";
      throw fail(
        "PORTICO_ERR_MCP_RATE_LIMITED",
        `Too Many Requests: ${who} limit of ${refusal.perMinute} requests per minute is reached; retry after ${refusal.retryAfterSeconds} s`,
        { retryAfterSeconds: refusal.retryAfterSeconds },
      );
    });
  }
}

/**
 * Waits for a request's admission and the work issued with it in the same tick (one pipelined
 * round trip); a refusal wins over the work's own error. Without limits, the work as is.
 */
export function admitted<T>(admission: Promise<void> | undefined, work: Promise<T>): Promise<T> {
  return admission === undefined ? work : both(admission, work);
}

async function both<T>(admission: Promise<void>, work: Promise<T>): Promise<T> {
  const [gate, result] = await Promise.allSettled([admission, work]);
  if (gate.status === "rejected") throw gate.reason;
  if (result.status === "rejected") throw result.reason;
  return result.value;
}
