// What an `mcp` provider is built with (src/providers/factory.ts), and what its session-era part
// takes of it.
import type { FastifyBaseLogger } from "fastify";
import type { Dispatcher } from "undici";
import type { Fetch } from "../../egress/fetch.js";
import type { Keys } from "../../store/keys.js";
import type { ReplicaLiveness } from "../../store/replicas.js";
import type { Store } from "../../store/store.js";
import type { Authorizer } from "../upstream-auth.js";
import type { BreakerFactory, SessionOutlet, UpstreamObserver } from "../types.js";
import type { SessionEraDeps } from "./session/era.js";
import type { StdioDeps } from "./stdio/stdio-part.js";

export interface McpProviderDeps {
  readonly tenantId: string;
  readonly store: Store;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  readonly outlet: SessionOutlet;
  readonly timeoutMs: number;
  /** The token endpoint of `auth` is reached through this fetch (the egress policy). */
  readonly fetch: Fetch;
  /** Upstream MCP traffic goes through this Agent (the egress policy; one pool per origin). */
  readonly dispatcher: Dispatcher;
  readonly sessionTtlSeconds: number;
  /** Catalog health probe interval. */
  readonly healthIntervalMs?: number;
  /** How long an unused dedicated upstream session stays open here (default 5 min). */
  readonly clientIdleMs?: number;
  /** How often idle and ended sessions' upstream sessions are looked at (default 60 s). */
  readonly sweepIntervalMs?: number;
  /** Sees each call made for a client request end (not the catalog's lists and pings). */
  readonly onUpstreamCall?: UpstreamObserver;
  /** This provider's circuit breaker, probed with `probe` (none: no breaker). */
  readonly breaker?: BreakerFactory;
  /** Replica heartbeats, to find what dead replicas left (absent: leases, as before heartbeats). */
  readonly liveness?: ReplicaLiveness;
  /** Whose credentials requests carry instead of the provider's `auth` (one user's: per-user.ts). */
  readonly credentials?: Authorizer;
  /** A `stdio` provider's launch and child events (docs/upstream-mcp.md "stdio upstreams"). */
  readonly stdio?: StdioDeps;
}

const SWEEP_INTERVAL_MS = 60_000;
const CLIENT_IDLE_MS = 5 * 60_000;

export function eraDeps(providerId: string, deps: McpProviderDeps): SessionEraDeps {
  return {
    tenantId: deps.tenantId,
    providerId,
    store: deps.store,
    keys: deps.keys,
    log: deps.log,
    outlet: deps.outlet,
    sessionTtlSeconds: deps.sessionTtlSeconds,
    healthIntervalMs: deps.healthIntervalMs ?? 10_000,
    clientIdleMs: deps.clientIdleMs ?? CLIENT_IDLE_MS,
    sweepIntervalMs: deps.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
    liveness: deps.liveness,
  };
}
