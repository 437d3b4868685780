// One tenant's runtime on this replica (docs/architecture.md §3): its live providers, its catalogs
// per capability profile, and what its clients were last shown of each list, so that a reload
// announces only what changed and a catalog's warnings and conflicts are reported once each.
import type { FastifyBaseLogger } from "fastify";
import type { Policies, PolicyRuntime } from "../policy/enforcer.js";
import type { Catalog, ProviderConflict } from "../providers/catalog.js";
import type { TenantConfig } from "../records/tenant.js";
import type { ListChangeKind, Provider } from "../providers/types.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import { profileLabel } from "../protocol/profile-names.js";
import { LIST_KINDS, listsOf, type Lists } from "./lists.js";
import { ProfileViews } from "./profile-views.js";
import { ServerRuntime, type ServerHost } from "./virtual-server.js";
import { UserViews } from "./user-views.js";
import type { TenantRuntime } from "./runtime.js";

export interface LiveTenantHooks {
  readonly log: FastifyBaseLogger;
  /** A run-time conflict appeared (once per profile until it goes away and comes back). */
  readonly onConflict?:
    ((tenantId: string, providerId: string, conflict: ProviderConflict) => void) | undefined;
  /** Every tenant's compiled policy (policy/enforcer.ts). */
  readonly policies?: Policies | undefined;
}

const EMPTY_LISTS: Lists = { tools: "[]", prompts: "[]", resources: "[[],[]]" };

/** One tenant's runtime; the same object lives across reloads, so sessions always see the latest. */
export class LiveTenant implements TenantRuntime, ServerHost {
  config: TenantConfig;
  /** Providers by id, with the canonical JSON of the record each was built from. */
  providers = new Map<string, { provider: Provider; record: string }>();
  /** The started providers, in catalog order: what the catalogs are built from. */
  #list: readonly Provider[] = [];
  /** Set when some provider's credentials are per user: catalogs of users are then their own. */
  #perUser = false;
  readonly views: ProfileViews;
  /** Each user's catalogs, used only while the tenant has a per-user provider. */
  readonly users: UserViews;
  /** Providers being started by a reload: their list changes are the reload's to announce. */
  readonly starting = new Set<Provider>();
  /** The tenant's virtual servers by id (docs/architecture.md §8). */
  readonly servers = new Map<string, ServerRuntime>();
  readonly server = undefined;
  /** Warnings already logged, by profile key: each is logged once while it lasts. */
  readonly #warned = new Map<string, Set<string>>();
  /**
   * Each profile's lists as its clients last saw them (at its first build, or when a change was
   * announced), so a reload announces what changed for any profile, one first used meanwhile too.
   */
  readonly #shown = new Map<string, Lists>();

  constructor(
    config: TenantConfig,
    private readonly hooks: LiveTenantHooks,
  ) {
    this.config = config;
    this.views = new ProfileViews(
      () => this.list,
      (catalog) => this.#built(catalog),
    );
    // A user's catalog's warnings are the tenant's too, reported once through the tenant's own.
    this.users = new UserViews(
      () => this.#list,
      () => undefined,
    );
  }

  get list(): readonly Provider[] {
    return this.#list;
  }

  set list(providers: readonly Provider[]) {
    this.#list = providers;
    this.#perUser = providers.some((p) => p.forUser !== undefined);
  }

  get catalog(): Catalog {
    return this.views.base;
  }

  get policy(): PolicyRuntime | undefined {
    return this.hooks.policies?.for(this.config);
  }

  get profileCount(): number {
    return this.views.size;
  }

  catalogFor(profile: CapabilityProfile, user?: string): Catalog | Promise<Catalog> {
    // Tenants without per-user providers pay one branch: every user sees the same catalogs.
    if (user === undefined || !this.#perUser) return this.views.get(profile);
    return this.users.get(user, profile);
  }

  currentCatalogs(): Catalog[] {
    return this.views.current();
  }

  /** Brings the servers in line with the record: new ones made, changed ones updated, others gone. */
  syncServers(): void {
    const wanted = this.config.servers ?? [];
    for (const id of [...this.servers.keys()]) if (!wanted.some((s) => s.id === id)) this.servers.delete(id);
    for (const server of wanted) {
      const known = this.servers.get(server.id);
      if (known) known.update(server);
      else
        this.servers.set(
          server.id,
          new ServerRuntime(this, server, {
            log: this.hooks.log,
            onConflict: (provider, conflict) => this.hooks.onConflict?.(this.config.id, provider, conflict),
          }),
        );
    }
  }

  /** The run-time conflicts of a provider, under every profile kept. */
  conflicts(providerId: string): ProviderConflict[] {
    return this.views
      .current()
      .flatMap((catalog) =>
        catalog.warnings.flatMap((w) =>
          w.collision && w.provider === providerId
            ? [{ ...w.collision, profile: profileLabel(catalog.profile) }]
            : [],
        ),
      );
  }

  /** The lists that changed for some profile since its clients last saw them; now they have. */
  changedLists(): ListChangeKind[] {
    const changed = new Set<ListChangeKind>();
    for (const catalog of this.views.current()) {
      const lists = listsOf(catalog);
      const before = this.#shown.get(catalog.profile.key) ?? EMPTY_LISTS;
      for (const kind of LIST_KINDS) if (before[kind] !== lists[kind]) changed.add(kind);
      this.#shown.set(catalog.profile.key, lists);
    }
    return LIST_KINDS.filter((kind) => changed.has(kind));
  }

  /** A change of `profile` (every profile without one) was announced: its clients see it now. */
  shown(profile: CapabilityProfile | undefined): void {
    for (const catalog of this.views.current())
      if (!profile || catalog.profile.base.key === profile.base.key)
        this.#shown.set(catalog.profile.key, listsOf(catalog));
  }

  /**
   * A catalog was built: its warnings are logged, and its conflicts reported, once each while
   * they last under its profile.
   */
  #built(catalog: Catalog): void {
    const key = catalog.profile.key;
    if (!this.#shown.has(key)) this.#shown.set(key, listsOf(catalog));
    const seen = this.#warned.get(key);
    const now = new Set<string>();
    for (const w of catalog.warnings) {
      const id = `${w.provider}\u0000${w.message}`;
      now.add(id);
      if (seen?.has(id)) continue;
      const profile = profileLabel(catalog.profile);
      this.hooks.log.warn({ tenant: this.config.id, provider: w.provider, profile }, w.message);
      if (w.collision) this.hooks.onConflict?.(this.config.id, w.provider, { ...w.collision, profile });
    }
    this.#warned.set(key, now);
    // Profiles dropped from the views take their records with them.
    if (this.#shown.size > this.views.size) {
      const kept = new Set(this.views.profiles().map((p) => p.key));
      for (const k of [...this.#shown.keys()]) if (!kept.has(k)) this.#shown.delete(k);
      for (const k of [...this.#warned.keys()]) if (!kept.has(k)) this.#warned.delete(k);
    }
  }
}
