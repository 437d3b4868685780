// One virtual server's runtime on this replica (docs/architecture.md §8): /mcp/{tenant}/{server} served
// as a tenant of its own to the MCP lanes. Its catalog under a profile is derived from the tenant's
// catalog of that profile (built once per tenant catalog, so capability profiles, preparation and
// rebuilds stay the tenant's), through ServerProvider views of the selected providers.
import type { FastifyBaseLogger } from "fastify";
import type { PolicyRuntime } from "../policy/enforcer.js";
import { Catalog, type ProviderConflict } from "../providers/catalog.js";
import type { TenantConfig } from "../records/tenant.js";
import type { VirtualServerConfig } from "../records/server.js";
import type { ListChangeKind, Provider } from "../providers/types.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import { profileLabel } from "../protocol/profile-names.js";
import type { TenantRuntime } from "./runtime.js";
import { LIST_KINDS, listsOf, type Lists } from "./lists.js";
import { ServerProvider } from "../providers/server-view.js";

/** What a server needs of its tenant's runtime. */
export interface ServerHost {
  readonly config: TenantConfig;
  /** The started providers, in catalog order. */
  readonly list: readonly Provider[];
  readonly catalog: Catalog;
  catalogFor(profile: CapabilityProfile, user?: string): Catalog | Promise<Catalog>;
  readonly profileCount: number;
  /** Every tenant catalog built now (one per profile in use). */
  currentCatalogs(): Catalog[];
  /** The tenant's policy: it decides on every URL of the tenant (docs/policy.md). */
  readonly policy?: PolicyRuntime | undefined;
}

export class ServerRuntime implements TenantRuntime {
  #server: VirtualServerConfig;
  /** The views of the selected providers, for the tenant's provider list they were made from. */
  #views: { list: readonly Provider[]; providers: ServerProvider[] } | undefined;
  /** The server's catalog of each tenant catalog (a rebuilt tenant catalog is a new key). */
  #derived = new WeakMap<Catalog, Catalog>();
  /** Each profile's lists as the server's clients last saw them: a change is announced once. */
  readonly #shown = new Map<string, Lists>();
  /** Warnings already logged (collisions that appeared at run time), each once while it lasts. */
  #warned = new Set<string>();

  constructor(
    private readonly host: ServerHost,
    server: VirtualServerConfig,
    private readonly hooks: {
      readonly log: FastifyBaseLogger;
      /** A run-time conflict appeared in the server's lists (audited once, like the tenant's). */
      readonly onConflict?: (providerId: string, conflict: ProviderConflict) => void;
    },
  ) {
    this.#server = server;
  }

  get config(): TenantConfig {
    return this.host.config;
  }

  get server(): VirtualServerConfig {
    return this.#server;
  }

  get profileCount(): number {
    return this.host.profileCount;
  }

  get policy(): PolicyRuntime | undefined {
    return this.host.policy;
  }

  get catalog(): Catalog {
    return this.#derive(this.host.catalog);
  }

  /** The server's view of the tenant's catalog for the profile (and the user's, with per-user providers). */
  catalogFor(profile: CapabilityProfile, user?: string): Catalog | Promise<Catalog> {
    const base = this.host.catalogFor(profile, user);
    return base instanceof Catalog ? this.#derive(base) : base.then((c) => this.#derive(c));
  }

  /** The server's record changed: its catalogs are derived again on their next use. */
  update(server: VirtualServerConfig): void {
    if (JSON.stringify(server) === JSON.stringify(this.#server)) return;
    this.#server = server;
    this.#views = undefined;
    this.#derived = new WeakMap();
    this.#warned = new Set();
  }

  /**
   * The selected providers as the server shows them, in the server's order: of the tenant's list,
   * or of `list` (a user's, with their own per-user providers: docs/architecture.md §3).
   */
  providers(list: readonly Provider[] = this.host.list): ServerProvider[] {
    if (this.#views?.list === list) return this.#views.providers;
    const providers = this.#server.providers.flatMap((chosen) => {
      const inner = list.find((p) => p.id === chosen.provider);
      return inner ? [new ServerProvider(inner, chosen)] : [];
    });
    if (list === this.host.list) this.#views = { list, providers };
    return providers;
  }

  /** The lists that changed for some profile since the server's clients last saw them; now they have. */
  changedLists(): ListChangeKind[] {
    const changed = new Set<ListChangeKind>();
    const current = this.host.currentCatalogs();
    for (const base of current) {
      const key = base.profile.key;
      const before = this.#shown.get(key);
      const lists = listsOf(this.#derive(base));
      this.#shown.set(key, lists);
      if (before) for (const kind of LIST_KINDS) if (before[kind] !== lists[kind]) changed.add(kind);
    }
    // Profiles the tenant no longer keeps take their records with them (bounded as its views are).
    if (this.#shown.size > current.length) {
      const kept = new Set(current.map((c) => c.profile.key));
      for (const key of [...this.#shown.keys()]) if (!kept.has(key)) this.#shown.delete(key);
      if (this.#warned.size > 1000) this.#warned = new Set();
    }
    return LIST_KINDS.filter((kind) => changed.has(kind));
  }

  #derive(base: Catalog): Catalog {
    const known = this.#derived.get(base);
    if (known) return known;
    const catalog = new Catalog(this.providers(base.providers), base.profile);
    this.#derived.set(base, catalog);
    const key = base.profile.key;
    // What the server's clients saw first: the tenant's lists for the profile, never one user's.
    if (!this.#shown.has(key) && this.host.currentCatalogs().includes(base))
      this.#shown.set(key, listsOf(catalog));
    for (const w of catalog.warnings) {
      const id = `${key}\u0000${w.provider}\u0000${w.message}`;
      if (this.#warned.has(id)) continue;
      this.#warned.add(id);
      const profile = profileLabel(base.profile);
      const server = this.#server.id;
      this.hooks.log.warn({ tenant: this.config.id, server, provider: w.provider, profile }, w.message);
      if (w.collision) this.hooks.onConflict?.(w.provider, { ...w.collision, profile, server });
    }
    return catalog;
  }
}
