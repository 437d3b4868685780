// A provider's health as the admin API reports it (docs/admin-api.md, "Provider health"): checked
// now for the health endpoint and after each save (bounded, so no admin request is held long),
// read from memory for the provider list (no network per listed provider); with `since`, when its
// current state began as this replica saw it.
import type { BreakerStatus } from "../../providers/circuit-breaker.js";
import type { Provider } from "../../providers/types.js";
import { ADMIN_PREFIX } from "../openapi/document.js";

/** How long a save waits for the ping that measures a healthy upstream's latency. */
export const SAVE_CHECK_MS = 3000;

export interface ProviderStatus {
  status: "healthy" | "unhealthy";
  reason?: string;
  latencyMs?: number;
  checkedAt?: string;
  /** The provider's circuit breaker on this replica (`mcp` and `http` providers). */
  breaker?: BreakerStatus;
  /** What its configuration gets wrong that it lives with (an `openapi` document's flaws). */
  warnings?: readonly string[];
  /** When the current status began on this replica (ISO 8601). */
  since?: string;
}

/** The status each provider was last reported with, and since when (this replica's memory). */
const reported = new WeakMap<Provider, { status: ProviderStatus["status"]; since: number }>();

/**
 * When `status` began: the provider's own last health change (`changedAt`, from the registry) or,
 * for a change it did not announce (its circuit breaker opening or closing), the first report that
 * saw it.
 */
function sinceOf(live: Provider, status: ProviderStatus["status"], changedAt: number | undefined): string {
  const now = Date.now();
  const changed = changedAt ?? now;
  const before = reported.get(live);
  const since =
    before === undefined
      ? changed
      : before.status !== status
        ? changed > before.since
          ? changed
          : now
        : Math.max(before.since, changed);
  reported.set(live, { status, since });
  return new Date(since).toISOString();
}

/** A provider whose breaker is not closed is unhealthy, whatever its last ping said: its calls fail fast. */
function withBreaker(live: Provider | undefined, given: ProviderStatus, changedAt?: number): ProviderStatus {
  const status = breakerApplied(live, given);
  return live ? { ...status, since: sinceOf(live, status.status, changedAt) } : status;
}

function breakerApplied(live: Provider | undefined, given: ProviderStatus): ProviderStatus {
  const warnings = live?.warnings?.() ?? [];
  const status = warnings.length > 0 ? { ...given, warnings } : given;
  const breaker = live?.breakerStatus?.();
  if (!breaker) return status;
  if (breaker.state === "closed") return { ...status, breaker };
  const { latencyMs: _latencyMs, ...rest } = status;
  const retry =
    breaker.state === "open" ? `, retried at ${breaker.retryAt ?? "once probed"}` : ", being probed";
  const reason = `circuit breaker ${breaker.state} after ${breaker.consecutiveFailures} failures in a row (the last: ${breaker.lastFailure ?? "unknown"})${retry}`;
  return { ...rest, status: "unhealthy", reason, breaker };
}

/** The health a replica already knows (the list): its last verdict, no round trip. */
export function knownHealth(live: Provider | undefined, changedAt?: number): ProviderStatus {
  if (!live) return { status: "unhealthy", reason: "not loaded on this replica yet" };
  return withBreaker(
    live,
    live.healthy ? { status: "healthy" } : { status: "unhealthy", reason: live.healthReason ?? "unhealthy" },
    changedAt,
  );
}

/** Checks a provider now: a ping within `timeoutMs` for those that have one, else its verdict. */
export async function checkHealth(
  live: Provider | undefined,
  timeoutMs: number,
  changedAt?: () => number | undefined,
): Promise<ProviderStatus> {
  const checkedAt = new Date().toISOString();
  if (!live?.probe) return { ...knownHealth(live, changedAt?.()), checkedAt };
  try {
    const latencyMs = await live.probe(timeoutMs);
    return withBreaker(live, { status: "healthy", latencyMs, checkedAt }, changedAt?.());
  } catch (err) {
    const reason = live.healthReason ?? (err as Error).message;
    return withBreaker(live, { status: "unhealthy", reason, checkedAt }, changedAt?.());
  }
}

/** What a save answers besides the record: its health, and a warning when the upstream fails. */
export async function savedHealth(
  live: Provider | undefined,
  tenantId: string,
  providerId: string,
  changedAt?: () => number | undefined,
): Promise<{ health: ProviderStatus; warning?: string }> {
  // An upstream that could not be reached while saving is not pinged again: that would hold the
  // request for another connection attempt.
  const health =
    live && !live.healthy
      ? { ...knownHealth(live, changedAt?.()), checkedAt: new Date().toISOString() }
      : await checkHealth(live, SAVE_CHECK_MS, changedAt);
  if (health.status === "healthy") return { health };
  return {
    health,
    warning: `Saved, but the provider is unhealthy (${health.reason ?? "unhealthy"}): clients see none of its entries until it answers. GET ${ADMIN_PREFIX}/tenants/${tenantId}/providers/${providerId}/health to check again.`,
  };
}
