// Tenants and their live providers on this replica. Records are durable in the store; every
// replica keeps the runtime (providers + catalog) in memory and reloads a tenant when its record
// changes anywhere (tenants channel), so the MCP hot path never reads tenant records.
import type { FastifyBaseLogger } from "fastify";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import { Catalog } from "../providers/catalog.js";
import type { TenantConfig } from "../providers/config.js";
import type { ListChangeKind, Provider, ProviderEvents } from "../providers/types.js";
import type { Secrets } from "../secrets.js";
import { sealTenant, unsealTenant } from "./sealed.js";

export interface TenantRuntime {
  readonly config: TenantConfig;
  readonly catalog: Catalog;
}

export interface RegistryOptions {
  readonly store: Store;
  readonly secrets: Secrets;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  /** Builds a provider from its record (providers/factory.ts). */
  readonly createProvider: (tenant: TenantConfig, index: number) => Provider;
  /** A tenant's catalog changed: tell its sessions. */
  readonly onListChanged: (tenantId: string, kind: ListChangeKind) => void;
}

interface Entry {
  config: TenantConfig;
  providers: Provider[];
  catalog: Catalog;
}

export class TenantRegistry {
  readonly #tenants = new Map<string, Entry>();
  #unsubscribe: (() => Promise<void>) | undefined;

  constructor(private readonly opts: RegistryOptions) {}

  get(id: string): TenantRuntime | undefined {
    return this.#tenants.get(id);
  }

  ids(): string[] {
    return [...this.#tenants.keys()];
  }

  /** Loads every tenant from the store and follows changes made by other replicas. */
  async start(): Promise<void> {
    this.#unsubscribe = await this.opts.store.subscribe(this.opts.keys.tenantsChannel(), (id) => {
      void this.#reload(id).catch((err: unknown) =>
        this.opts.log.error({ err, tenant: id }, "tenant reload failed"),
      );
    });
    const ids = await this.opts.store.setMembers(this.opts.keys.tenantIndex());
    await Promise.all(ids.map((id) => this.#reload(id)));
  }

  /** Creates or replaces a tenant record (idempotent) and applies it on every replica. */
  async upsert(config: TenantConfig): Promise<void> {
    const { store, keys } = this.opts;
    await store.set(keys.tenant(config.id), sealTenant(this.opts.secrets, config));
    await store.setAdd(keys.tenantIndex(), config.id);
    await this.#apply(config);
    await store.publish(keys.tenantsChannel(), config.id);
  }

  async close(): Promise<void> {
    await this.#unsubscribe?.();
    await Promise.all([...this.#tenants.values()].map((e) => closeAll(e.providers)));
    this.#tenants.clear();
  }

  async #reload(id: string): Promise<void> {
    const raw = await this.opts.store.get(this.opts.keys.tenant(id));
    if (raw === null) {
      const old = this.#tenants.get(id);
      this.#tenants.delete(id);
      if (old) await closeAll(old.providers);
      return;
    }
    let config: TenantConfig;
    try {
      config = unsealTenant(this.opts.secrets, raw);
    } catch (err) {
      this.opts.log.error(
        { err, tenant: id },
        "cannot open the tenant record: was it sealed with another PORTICO_SECRET_KEY?",
      );
      return;
    }
    const current = this.#tenants.get(id);
    if (current && JSON.stringify(current.config) === JSON.stringify(config)) return; // already applied (our own upsert)
    await this.#apply(config);
  }

  async #apply(config: TenantConfig): Promise<void> {
    const old = this.#tenants.get(config.id);
    const providers = config.providers.map((_, i) => this.opts.createProvider(config, i));
    const entry: Entry = { config, providers, catalog: new Catalog([]) };
    const rebuild = () => {
      entry.catalog = new Catalog(entry.providers);
      for (const w of entry.catalog.warnings)
        this.opts.log.warn({ tenant: config.id, provider: w.provider }, w.message);
    };
    const events = (provider: Provider): ProviderEvents => ({
      listChanged: (kind) => {
        if (this.#tenants.get(config.id) !== entry) return;
        rebuild();
        this.opts.onListChanged(config.id, kind);
      },
      healthChanged: (healthy, reason) =>
        this.opts.log[healthy ? "info" : "warn"](
          { tenant: config.id, provider: provider.id, reason },
          healthy ? "provider healthy" : "provider unhealthy",
        ),
    });
    await Promise.all(providers.map((p) => p.start(events(p))));
    rebuild();
    this.#tenants.set(config.id, entry);
    if (old) {
      await closeAll(old.providers);
      for (const kind of ["tools", "prompts", "resources"] as const) this.opts.onListChanged(config.id, kind);
    }
  }
}

async function closeAll(providers: Provider[]): Promise<void> {
  await Promise.allSettled(providers.map((p) => p.close()));
}
