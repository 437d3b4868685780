// Durable tenant records (docs/architecture.md §4): one sealed JSON record per tenant, providers included,
// changed only through compare-and-set so concurrent admins on any replica never lose a write.
// Every change is announced on the tenants channel; each replica's registry then reloads it.
import type { TenantConfig } from "../records/tenant.js";
import type { Secrets } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store, Unsubscribe } from "../store/store.js";
import { IDENTITY_SECRETS, mapSecrets } from "../records/secret-fields.js";
import {
  addTally,
  emptyTally,
  openProviders,
  resealValue,
  seal,
  sealProviders,
  unseal,
  type ResealTally,
} from "./sealed.js";

export interface TenantRecord {
  readonly config: TenantConfig;
  /** RFC 3339 timestamps. */
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface TenantChange {
  readonly before: TenantRecord | undefined;
  readonly after: TenantRecord | undefined;
}

/** What a mutation decides: the next config, `null` to delete, `undefined` to leave it as it is. */
export type Mutation = (current: TenantRecord | undefined) => TenantConfig | null | undefined;

/** Messages on the tenants channel. */
export interface TenantsMessage {
  readonly tenant: string;
  /** Re-read this provider's upstream catalog (admin "refresh") rather than the record. */
  readonly refresh?: string;
  /** Re-read this provider's approved tool definitions (pinning: an admin approved some). */
  readonly pins?: string;
}

const MAX_ATTEMPTS = 20;

export class TenantStore {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly secrets: Secrets,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Every tenant id, sorted. */
  async ids(): Promise<string[]> {
    return (await this.store.setMembers(this.keys.tenantIndex())).sort();
  }

  async read(id: string): Promise<TenantRecord | undefined> {
    const raw = await this.store.get(this.keys.tenant(id));
    return raw === null ? undefined : this.#open(raw);
  }

  /**
   * Applies `mutate` to the current record atomically: when another writer got there first, the
   * mutation runs again on what they wrote. Errors thrown by `mutate` abort without writing.
   */
  async mutate(id: string, mutate: Mutation): Promise<TenantChange> {
    const key = this.keys.tenant(id);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const raw = await this.store.get(key);
      const before = raw === null ? undefined : this.#open(raw);
      const next = mutate(before);
      if (next === undefined) return { before, after: before };
      if (next === null && before === undefined) return { before, after: undefined };
      const stamp = this.now().toISOString();
      const after =
        next === null ? undefined : { config: next, createdAt: before?.createdAt ?? stamp, updatedAt: stamp };
      if (before && after && sameConfig(before.config, after.config)) return { before, after: before };
      if (!(await this.store.compareAndSet(key, raw, after ? this.#seal(after) : null))) continue;
      if (after) await this.store.setAdd(this.keys.tenantIndex(), id);
      else await this.store.setRemove(this.keys.tenantIndex(), id);
      await this.announce({ tenant: id });
      return { before, after };
    }
    throw new Error(`tenant ${id}: too many concurrent writers, try again`);
  }

  /**
   * Seals every secret of a tenant's record under the current PORTICO_SECRET_KEY (compare-and-set;
   * the config itself does not change, so nothing is announced). Values no key opens stay as they
   * are and are reported in `tally.failed`.
   */
  async reseal(id: string, tally: ResealTally): Promise<void> {
    const key = this.keys.tenant(id);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const raw = await this.store.get(key);
      if (raw === null) return;
      const round = emptyTally();
      const next = this.#resealed(id, raw, round);
      if (round.resealed === 0 || (await this.store.compareAndSet(key, raw, next)))
        return addTally(tally, round);
    }
    throw new Error(`tenant ${id}: too many concurrent writers, try again`);
  }

  /** The ids of a tenant's providers, read without opening a secret (a reseal's next step). */
  async providerIds(id: string): Promise<string[]> {
    const raw = await this.store.get(this.keys.tenant(id));
    if (raw === null) return [];
    const { providers } = JSON.parse(raw) as { providers?: Array<{ id: string }> };
    return (providers ?? []).map((p) => p.id);
  }

  #resealed(tenant: string, raw: string, tally: ResealTally): string {
    const record = JSON.parse(raw) as { providers?: unknown[]; identity?: { clientSecret?: unknown } };
    const at = (pointer: string) => () => ({ tenant, pointer });
    const providers = (record.providers ?? []).map((p, i) =>
      mapSecrets(p, (v, pointer) => resealValue(this.secrets, v, tally, at(`/providers/${i}${pointer}`))),
    );
    const { identity } = record;
    return JSON.stringify({
      ...record,
      ...(identity !== undefined
        ? {
            identity: mapSecrets(
              identity,
              (v, pointer) => resealValue(this.secrets, v, tally, at(`/identity${pointer}`)),
              IDENTITY_SECRETS.pointers,
            ),
          }
        : {}),
      providers,
    });
  }

  /** Tells every replica (this one included) about a change. */
  async announce(message: TenantsMessage): Promise<void> {
    await this.store.publish(this.keys.tenantsChannel(), JSON.stringify(message));
  }

  /**
   * Calls `listener` for every announcement, from any replica, and `onMissed` when announcements
   * may have been missed (the store's connection was lost and is back).
   */
  async follow(listener: (message: TenantsMessage) => void, onMissed?: () => void): Promise<Unsubscribe> {
    return this.store.subscribe(
      this.keys.tenantsChannel(),
      (raw) => {
        let message: TenantsMessage;
        try {
          message = JSON.parse(raw) as TenantsMessage;
        } catch {
          return; // not ours
        }
        listener(message);
      },
      onMissed,
    );
  }

  #seal(record: TenantRecord): string {
    const { config, createdAt, updatedAt } = record;
    const { identity } = config;
    return JSON.stringify({
      ...config,
      ...(identity
        ? { identity: mapSecrets(identity, sealString(this.secrets), IDENTITY_SECRETS.pointers) }
        : {}),
      providers: sealProviders(this.secrets, config.providers),
      createdAt,
      updatedAt,
    });
  }

  #open(raw: string): TenantRecord {
    const { createdAt, updatedAt, ...config } = JSON.parse(raw) as TenantConfig & {
      createdAt?: string;
      updatedAt?: string;
    };
    const epoch = new Date(0).toISOString();
    const { identity } = config;
    return {
      config: {
        ...config,
        ...(identity
          ? { identity: mapSecrets(identity, openString(this.secrets), IDENTITY_SECRETS.pointers) }
          : {}),
        providers: openProviders(this.secrets, config.providers),
      },
      createdAt: createdAt ?? epoch,
      updatedAt: updatedAt ?? epoch,
    };
  }
}

/** Seals a string secret value (identity secrets: tenants/sealed.ts). */
function sealString(secrets: Secrets) {
  return (v: unknown) => (typeof v === "string" ? seal(secrets, v) : v);
}

function openString(secrets: Secrets) {
  return (v: unknown) => (typeof v === "string" ? unseal(secrets, v) : v);
}

/** Key order never matters: configs are compared as canonical JSON. */
export function sameConfig(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}
