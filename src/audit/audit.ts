// The admin audit log: every admin write, who made it, when, and the record before and after with
// secrets redacted. One bounded stream per tenant plus one for the platform, read newest first.
// Run-time catalog conflicts are recorded too, once for all replicas.
import { createHash } from "node:crypto";
import type { Metrics } from "../metrics/metrics.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { ProviderConflict } from "../providers/catalog.js";

export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly actor: string;
  /** `<resource>.<verb>`, e.g. provider.create. */
  readonly action: string;
  readonly tenant: string | null;
  /** The id of what was written. */
  readonly target: string;
  readonly before?: unknown;
  readonly after?: unknown;
  /** Which secrets the write kept, set or removed (JSON Pointers); never their values. */
  readonly secrets?: SecretChanges;
}

/** Which secrets a write kept or set (pointers in the saved record) and removed (in the one before). */
export interface SecretChanges {
  readonly kept: string[];
  readonly set: string[];
  readonly removed: string[];
}

export type AuditInput = Omit<AuditEntry, "id" | "at">;

/** Entries kept per log; older ones are trimmed. */
const MAX_ENTRIES = 10_000;
/** How long a conflict stays recorded: one that lasts is not recorded again for a day. */
const CONFLICT_NOTED_SECONDS = 86_400;

export class AuditLog {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly metrics?: Metrics,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records a write in its tenant's log, or the platform log when it has no tenant. */
  async record(entry: AuditInput, platformToo = false): Promise<void> {
    const data = JSON.stringify({ ...entry, at: this.now().toISOString() });
    const logs = [entry.tenant === null ? this.keys.platformAudit() : this.keys.tenantAudit(entry.tenant)];
    if (platformToo && entry.tenant !== null) logs.push(this.keys.platformAudit());
    await Promise.all(logs.map((key) => this.store.streamAppend(key, data, { maxLen: MAX_ENTRIES })));
    this.metrics?.adminWrite(entry.action);
  }

  /**
   * Records a run-time catalog conflict (docs/architecture.md §3) as `provider.conflict` by
   * Portico itself, unless a replica recorded the same one within a day (docs/storage.md).
   */
  async conflict(tenant: string, provider: string, conflict: ProviderConflict): Promise<void> {
    const digest = createHash("sha256")
      .update(
        JSON.stringify([
          provider,
          conflict.kind,
          conflict.name,
          conflict.profile,
          ...(conflict.server === undefined ? [] : [conflict.server]),
        ]),
      )
      .digest("hex")
      .slice(0, 32);
    const first = await this.store.set(this.keys.conflictNoted(tenant, digest), "1", {
      ttlSeconds: CONFLICT_NOTED_SECONDS,
      onlyIfAbsent: true,
    });
    if (first)
      await this.record({
        actor: "portico",
        action: "provider.conflict",
        tenant,
        target: provider,
        after: conflict,
      });
  }

  /** A page, newest first, of entries older than `before` (an entry id). */
  async page(tenant: string | null, before: string | undefined, limit: number): Promise<AuditEntry[]> {
    const key = tenant === null ? this.keys.platformAudit() : this.keys.tenantAudit(tenant);
    const rows = await this.store.streamReadBefore(key, before, limit);
    return rows.map((row) => ({ id: row.id, ...(JSON.parse(row.data) as Omit<AuditEntry, "id">) }));
  }

  /** Drops a tenant's log (the tenant is deleted; the platform log keeps the deletion). */
  async removeTenant(tenant: string): Promise<void> {
    await this.store.del(this.keys.tenantAudit(tenant));
  }
}
