// Rate limits of /mcp/{tenant}: every request counts against its tenant's limit and its client's
// (the user, whatever the OAuth client, when authenticated, else the IP), with the tenant's own limits or
// the server's defaults. Counted in memory (src/limits/rate-limiter.ts): no store round trip.
// Over a limit: 429 with Retry-After and a JSON-RPC error.
import type { Authenticated } from "../policy/caller.js";
import type { Config } from "../config/env.js";
import { fail } from "../protocol/errors.js";
import type { Limit, RateLimiter } from "../limits/rate-limiter.js";
import { ipSubject, principalSubject } from "../limits/subjects.js";
import type { Keys } from "../store/keys.js";
import type { TenantConfig } from "../records/tenant.js";
import type { TenantRuntime } from "../tenants/runtime.js";
import type { SessionOwner } from "./sessions.js";

/** The limiters of a tenant, built from one version of its record's limits (records/tenant.ts TenantLimits). */
interface TenantLimiters {
  readonly tenant: Limit | undefined;
  readonly perClient: number;
  /** Per-client limits by user or address; cleared when it grows past MAX_REMEMBERED_CLIENTS. */
  readonly clients: Map<string, Limit>;
}

/** Bound on the client limits kept per tenant (each is rebuilt when needed again). */
const MAX_REMEMBERED_CLIENTS = 10_000;

/** A counter key function that builds its string once per minute, not once per request. */
function minuteKey(build: (window: number) => string): (window: number) => string {
  let window = Number.NaN;
  let key = "";
  return (w) => {
    if (w !== window) {
      window = w;
      key = build(w);
    }
    return key;
  };
}

export class McpLimits {
  readonly #byConfig = new WeakMap<TenantConfig, TenantLimiters>();
  /** The limits one admit() takes (reused: take() is synchronous). */
  readonly #taking: Limit[] = [];

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
    const limits = this.#limitsOf(tenant.config);
    const taking = this.#taking;
    taking.length = 0;
    if (limits.tenant) taking.push(limits.tenant);
    if (limits.perClient > 0) taking.push(this.#clientLimit(tenant.config.id, limits, caller, ip));
    if (taking.length === 0) return;
    const refusal = this.limiter.take("mcp", taking);
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

  /** A tenant's limits, built once per version of its record (an update builds them anew). */
  #limitsOf(config: TenantConfig): TenantLimiters {
    let limits = this.#byConfig.get(config);
    if (limits === undefined) {
      const t = config.id;
      const perTenant = config.limits?.requestsPerMinute ?? this.config.tenantRequestsPerMinute;
      limits = {
        tenant:
          perTenant > 0
            ? {
                scope: "tenant",
                perMinute: perTenant,
                key: minuteKey((w) => this.keys.mcpRateLimit(t, "t", w)),
              }
            : undefined,
        perClient: config.limits?.perClientRequestsPerMinute ?? this.config.clientRequestsPerMinute,
        clients: new Map(),
      };
      this.#byConfig.set(config, limits);
    }
    return limits;
  }

  /**
   * The per-client limit of a caller: the user, whatever the client (anyone may register
   * clients, so a budget per client would let one user multiply theirs; the session cap counts
   * the same way), else the address. Kept per tenant, so a busy client's request builds nothing.
   */
  #clientLimit(t: string, limits: TenantLimiters, caller: Authenticated | undefined, ip: string): Limit {
    // A tenant's callers are all users (oauth) or all addresses (none): one map serves either.
    const who = caller ? caller.user : ip;
    let limit = limits.clients.get(who);
    if (limit === undefined) {
      if (limits.clients.size >= MAX_REMEMBERED_CLIENTS) limits.clients.clear();
      const subject = caller ? principalSubject(caller.user) : ipSubject(ip);
      limit = {
        scope: "client",
        perMinute: limits.perClient,
        key: minuteKey((w) => this.keys.mcpRateLimit(t, subject, w)),
      };
      limits.clients.set(who, limit);
    }
    return limit;
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
