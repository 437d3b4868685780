// Tenants and their live providers on this replica. Records are durable in the store
// (tenant-store.ts); every replica keeps the runtime (providers + catalog) in memory and reloads a
// tenant when its record changes anywhere (tenants channel), so the MCP hot path never reads
// tenant records. A reload keeps the providers whose record did not change and announces only the
// lists that changed. Catalogs are kept per capability profile (profile-views.ts). It also keeps
// the watches that listen streams ask for (resourceSubscriptions) on whichever provider serves
// each URI now.
import type { FastifyBaseLogger } from "fastify";
import { type Catalog, type ProviderConflict, withinResource } from "../providers/catalog.js";
import { pinningOf, type ProviderConfig, type TenantConfig } from "../records/tenant.js";
import type { ListChangeKind, Provider, ProviderEvents } from "../providers/types.js";
import { Policies } from "../policy/enforcer.js";
import type { Definition, PinBook } from "../providers/pin-book.js";
import { PinnedProvider } from "../providers/pinned.js";
import { LiveTenant } from "./live-tenant.js";
import type { TenantRuntime } from "./runtime.js";
import { canonical, type TenantChange, type TenantStore, type TenantsMessage } from "./tenant-store.js";

export interface RegistryOptions {
  readonly records: TenantStore;
  readonly log: FastifyBaseLogger;
  /** Builds a provider from its record (providers/factory.ts). */
  readonly createProvider: (tenant: TenantConfig, index: number) => Provider;
  /**
   * A tenant's catalog changed under some profile: tell its sessions (all of them: a session
   * of another profile re-lists and sees the same list, docs/architecture.md §3). With `server`:
   * that virtual server's lists changed, for its sessions only (§8).
   */
  readonly onListChanged: (tenantId: string, kind: ListChangeKind, server?: string) => void;
  /** What one user sees of a per-user provider changed: tell that user's sessions only. */
  readonly onUserListChanged?: (tenantId: string, user: string, kind: ListChangeKind) => void;
  /** A run-time conflict appeared (once per profile until it goes away and comes back). */
  readonly onConflict?: (tenantId: string, providerId: string, conflict: ProviderConflict) => void;
  /** A watched resource of a tenant (or a sub-resource of one) changed: tell its listen streams. */
  readonly onResourceUpdated?: (tenantId: string, uri: string) => void;
  /** Every tenant's compiled policy with its metrics and audit hooks (docs/policy.md); absent: without hooks. */
  readonly policies?: Policies;
}

/** Interest in one URI of a tenant: how many asked, and the provider watching it for them. */
interface Watch {
  refs: number;
  provider: Provider | undefined;
  release: (() => void) | undefined;
}

const ALL_LISTS: readonly ListChangeKind[] = ["tools", "prompts", "resources"];

/** Pause between attempts to reload the tenants after a store interruption. */
const RESYNC_RETRY_MS = 1000;

export class TenantRegistry {
  readonly #tenants = new Map<string, LiveTenant>();
  /** Reloads of one tenant run one at a time, in order. */
  readonly #queues = new Map<string, Promise<void>>();
  /** Watched URIs by tenant; kept across reloads (and a tenant's deletion), re-aimed on each rebuild. */
  readonly #watches = new Map<string, Map<string, Watch>>();
  #unsubscribe: (() => Promise<void>) | undefined;
  readonly #policies: Policies;
  /** When each provider's health last changed on this replica (its start counts): `since` on the admin API. */
  readonly #healthChangedAt = new WeakMap<Provider, number>();

  constructor(private readonly opts: RegistryOptions) {
    this.#policies = opts.policies ?? new Policies();
  }

  get(id: string): TenantRuntime | undefined {
    return this.#tenants.get(id);
  }

  /** A tenant's virtual server (docs/architecture.md §8), served as a runtime of its own. */
  server(tenantId: string, serverId: string): TenantRuntime | undefined {
    return this.#tenants.get(tenantId)?.servers.get(serverId);
  }

  /** The run-time conflicts of a provider, under every profile this replica keeps. */
  conflicts(tenantId: string, providerId: string): ProviderConflict[] {
    return this.#tenants.get(tenantId)?.conflicts(providerId) ?? [];
  }

  /** The live provider of a tenant, by id. */
  /** When a provider's health last changed on this replica (Unix ms; its start when it never did). */
  healthChangedAt(provider: Provider): number | undefined {
    return this.#healthChangedAt.get(provider);
  }

  provider(tenantId: string, providerId: string): Provider | undefined {
    return this.#tenants.get(tenantId)?.providers.get(providerId)?.provider;
  }

  /** A tenant's provider whose tool definitions are pinned, by id. */
  #pinned(tenantId: string, providerId: string): PinnedProvider | undefined {
    const provider = this.provider(tenantId, providerId);
    return provider instanceof PinnedProvider ? provider : undefined;
  }

  #allPinned(): PinnedProvider[] {
    return [...this.#tenants.values()].flatMap((t) =>
      [...t.providers.values()].flatMap((e) => (e.provider instanceof PinnedProvider ? [e.provider] : [])),
    );
  }

  /** The pin book of a tenant's provider, when its tool definitions are pinned. */
  pins(tenantId: string, providerId: string): PinBook | undefined {
    return this.#pinned(tenantId, providerId)?.book;
  }

  /**
   * Approves what each pinned provider of a tenant lists now (and its instructions), for those
   * with nothing approved yet (just saved): every replica is told. Resolves with the definitions
   * approved, by provider.
   */
  async adoptPins(
    tenantId: string,
    actor: string,
  ): Promise<Array<{ provider: string; tools: Definition[] }>> {
    const live = this.#tenants.get(tenantId);
    const pinned = [...(live?.providers.values() ?? [])].flatMap((e) =>
      e.provider instanceof PinnedProvider && !e.provider.book.adopted ? [e.provider] : [],
    );
    const out: Array<{ provider: string; tools: Definition[] }> = [];
    for (const provider of pinned) {
      const tools = await provider.adopt(actor);
      if (!tools) continue;
      out.push({ provider: provider.id, tools });
      await this.opts.records.announce({ tenant: tenantId, pins: provider.id });
    }
    return out;
  }

  /**
   * Approves a pinned provider's pending definitions (all, or the named tools'); with nothing
   * approved yet, what it lists now. Every replica re-reads the set and re-lists.
   */
  async approvePins(
    tenantId: string,
    providerId: string,
    choice: ReadonlyArray<{ readonly name: string; readonly digest?: string }> | undefined,
    actor: string,
  ): Promise<{ approved: Definition[]; missing: string[]; stale: string[] }> {
    const provider = this.#pinned(tenantId, providerId);
    if (!provider) return { approved: [], missing: [], stale: [] };
    if (!provider.book.adopted) {
      const tools = await provider.adopt(actor);
      if (tools) {
        await this.opts.records.announce({ tenant: tenantId, pins: providerId });
        return { approved: tools, missing: [], stale: [] };
      }
    }
    const { approved, missing, stale } = await provider.book.approve(choice, actor);
    if (approved.length > 0) {
      await provider.reloadPins();
      await this.opts.records.announce({ tenant: tenantId, pins: providerId });
    }
    return { approved: approved.map((p) => p.definition), missing, stale };
  }

  ids(): string[] {
    return [...this.#tenants.keys()];
  }

  /**
   * Keeps the provider serving `uri` in a tenant posted about its updates (onResourceUpdated)
   * until the returned function is called. Callers need not count: each call takes a reference,
   * and the provider's watch is taken once per URI, moved when another provider serves the URI
   * after a reload, and released with the last reference.
   */
  watch(tenantId: string, uri: string): () => void {
    const uris = this.#watches.get(tenantId) ?? new Map<string, Watch>();
    this.#watches.set(tenantId, uris);
    const watch = uris.get(uri) ?? { refs: 0, provider: undefined, release: undefined };
    if (watch.refs++ === 0) {
      uris.set(uri, watch);
      this.#aim(tenantId, uri, watch, this.#tenants.get(tenantId)?.catalog);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--watch.refs > 0) return;
      uris.delete(uri);
      if (uris.size === 0 && this.#watches.get(tenantId) === uris) this.#watches.delete(tenantId);
      this.#aim(tenantId, uri, watch, undefined);
    };
  }

  /** Loads every tenant from the store and follows changes made by any replica. */
  async start(): Promise<void> {
    this.#unsubscribe = await this.opts.records.follow(
      (message) => this.#onMessage(message),
      () => void this.#resync(),
    );
    const ids = await this.opts.records.ids();
    await Promise.all(ids.map((id) => this.reload(id)));
  }

  /**
   * Reloads every tenant, known here or stored, after changes may have been missed: a tenant
   * deleted or switched to OAuth elsewhere must not go on being served from memory. Retried
   * until the store answers.
   */
  async #resync(): Promise<void> {
    for (let attempt = 0; this.#unsubscribe !== undefined; attempt++) {
      try {
        const ids = new Set([...this.ids(), ...(await this.opts.records.ids())]);
        await Promise.all([...ids].map((id) => this.reload(id)));
        // Approvals announced meanwhile were missed too.
        await Promise.all(this.#allPinned().map((p) => p.reloadPins()));
        this.opts.log.info({ tenants: ids.size }, "tenants reloaded after a store interruption");
        return;
      } catch (err) {
        if (attempt % 10 === 0)
          this.opts.log.warn({ err }, "tenant reload after a store interruption failed");
        await new Promise((resolve) => setTimeout(resolve, RESYNC_RETRY_MS).unref());
      }
    }
  }

  /**
   * Seeds a tenant from the bootstrap file (docs/architecture.md §6): its fields and the providers
   * and virtual servers it lists are created or replaced by id; those added through the admin API stay.
   */
  async seed(config: TenantConfig): Promise<TenantChange> {
    const change = await this.opts.records.mutate(config.id, (current) => {
      if (!current) return config;
      const seeded = new Set(config.providers.map((p) => p.id));
      const added = current.config.providers.filter((p) => !seeded.has(p.id));
      // Servers likewise: the file's replace theirs by id, the admin API's stay.
      const named = new Set((config.servers ?? []).map((s) => s.id));
      const servers = [
        ...(config.servers ?? []),
        ...(current.config.servers ?? []).filter((s) => !named.has(s.id)),
      ];
      return {
        ...config,
        providers: [...config.providers, ...added],
        ...(servers.length > 0 && { servers }),
      };
    });
    await this.reload(config.id);
    return change;
  }

  /** Re-reads a tenant's record and applies it here (also what a tenants-channel message does). */
  reload(id: string): Promise<void> {
    const run = async () => this.#apply(id, (await this.opts.records.read(id))?.config);
    const queued = (this.#queues.get(id) ?? Promise.resolve()).then(run, run);
    this.#queues.set(id, queued);
    const forget = () => {
      if (this.#queues.get(id) === queued) this.#queues.delete(id);
    };
    queued.then(forget, forget);
    return queued;
  }

  /**
   * Starts a provider that is not saved (a dry run), hands it to `use`, then closes it. It raises
   * no events: nothing it does reaches clients.
   */
  async trial<T>(
    tenant: TenantConfig,
    cfg: ProviderConfig,
    use: (provider: Provider) => Promise<T>,
  ): Promise<T> {
    const provider = this.opts.createProvider({ ...tenant, providers: [cfg] }, 0);
    await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
    try {
      return await use(provider);
    } finally {
      await provider.close();
    }
  }

  async close(): Promise<void> {
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = undefined;
    await unsubscribe?.();
    const all = [...this.#tenants.values()];
    this.#tenants.clear();
    for (const id of this.#watches.keys()) this.#rewatch(id);
    await Promise.all(all.map((t) => closeAll([...t.providers.values()].map((e) => e.provider))));
  }

  #onMessage(message: TenantsMessage): void {
    const task = message.refresh
      ? this.provider(message.tenant, message.refresh)?.refresh?.()
      : message.pins
        ? this.#pinned(message.tenant, message.pins)?.reloadPins()
        : this.reload(message.tenant);
    void task?.catch((err: unknown) =>
      this.opts.log.warn({ err, tenant: message.tenant, provider: message.refresh }, "tenant reload failed"),
    );
  }

  async #apply(id: string, config: TenantConfig | undefined): Promise<void> {
    let live = this.#tenants.get(id);
    if (!config) {
      this.#tenants.delete(id);
      this.#rewatch(id);
      if (live) await closeAll([...live.providers.values()].map((e) => e.provider));
      return;
    }
    if (!live) {
      live = new LiveTenant(config, {
        log: this.opts.log,
        onConflict: this.opts.onConflict,
        policies: this.#policies,
      });
      this.#tenants.set(id, live);
    }
    const policyBefore = JSON.stringify(live.config.policy ?? null);
    const { added, removed } = this.#swapProviders(live, config);
    added.forEach((p) => live.starting.add(p));
    try {
      await Promise.all(
        added.map(async (p) => {
          await p.start(this.#events(live, p));
          if (!this.#healthChangedAt.has(p)) this.#healthChangedAt.set(p, Date.now());
        }),
      );
      live.config = config;
      // Catalogs take the new providers once started: nothing prepares a provider before its start.
      live.list = [...live.providers.values()].map((e) => e.provider);
      // Every profile in use lists the new providers before anything is announced.
      await live.views.settle();
    } finally {
      added.forEach((p) => live.starting.delete(p));
    }
    live.syncServers();
    this.#rewatch(id);
    await closeAll(removed);
    const changed = live.changedLists();
    // A new policy may change what any caller sees of every list (docs/policy.md), on every URL.
    const policyChanged = JSON.stringify(config.policy ?? null) !== policyBefore;
    for (const kind of policyChanged ? ALL_LISTS : changed) this.opts.onListChanged(id, kind);
    this.#announceServers(live, policyChanged);
  }

  /** Each virtual server whose lists changed tells its own sessions (docs/architecture.md §8). */
  #announceServers(live: LiveTenant, all = false): void {
    for (const server of live.servers.values()) {
      const changed = server.changedLists();
      for (const kind of all ? ALL_LISTS : changed)
        this.opts.onListChanged(live.config.id, kind, server.server.id);
    }
  }

  /** Keeps providers whose record is unchanged; builds the others. */
  #swapProviders(live: LiveTenant, config: TenantConfig): { added: Provider[]; removed: Provider[] } {
    const next = new Map<string, { provider: Provider; record: string }>();
    const added: Provider[] = [];
    config.providers.forEach((cfg: ProviderConfig, index) => {
      // The tenant's default pinning is part of what builds an mcp provider: changing it rebuilds them.
      const record = canonical(cfg.kind === "mcp" ? { ...cfg, pinning: pinningOf(config, cfg) } : cfg);
      const kept = live.providers.get(cfg.id);
      if (kept && kept.record === record) next.set(cfg.id, kept);
      else {
        const provider = this.opts.createProvider(config, index);
        added.push(provider);
        next.set(cfg.id, { provider, record });
      }
    });
    const removed = [...live.providers.values()]
      .filter((e) => next.get(e.provider.id) !== e)
      .map((e) => e.provider);
    live.providers = next;
    return { added, removed };
  }

  #events(live: LiveTenant, provider: Provider): ProviderEvents {
    const { log } = this.opts;
    return {
      listChanged: (kind, profile) => {
        if (live.providers.get(provider.id)?.provider !== provider) return; // replaced meanwhile
        if (live.starting.has(provider)) return; // the reload starting it announces what changed
        live.views.rebuild(profile);
        live.users.rebuild(profile);
        live.shown(profile);
        this.#rewatch(live.config.id);
        this.opts.onListChanged(live.config.id, kind);
        this.#announceServers(live);
      },
      userChanged: (user) => {
        if (live.providers.get(provider.id)?.provider !== provider) return;
        void live.users.changed(user).then(
          (kinds) => kinds.forEach((kind) => this.opts.onUserListChanged?.(live.config.id, user, kind)),
          (err: unknown) =>
            log.warn({ err, tenant: live.config.id, provider: provider.id }, "user catalog rebuild failed"),
        );
      },
      resourceUpdated: (own) => {
        if (live.providers.get(provider.id)?.provider !== provider) return;
        // Clients know the URI as the catalog shows it (a `ui://` namespace applied).
        const uri = live.catalog.exposedUri(provider, own);
        // Only what was asked of this provider: an upstream cannot announce another's resources.
        const asked = [...(this.#watches.get(live.config.id) ?? [])].some(
          ([watched, w]) => w.provider === provider && withinResource(watched, uri),
        );
        if (asked) this.opts.onResourceUpdated?.(live.config.id, uri);
      },
      healthChanged: (healthy, reason) => {
        this.#healthChangedAt.set(provider, Date.now());
        log[healthy ? "info" : "warn"](
          { tenant: live.config.id, provider: provider.id, reason },
          healthy ? "provider healthy" : "provider unhealthy",
        );
      },
    };
  }

  /** Points every watch of a tenant at the provider serving its URI now (none once it is gone). */
  #rewatch(tenantId: string): void {
    const catalog = this.#tenants.get(tenantId)?.catalog;
    for (const [uri, watch] of this.#watches.get(tenantId) ?? []) this.#aim(tenantId, uri, watch, catalog);
  }

  /**
   * Moves a watch to the provider serving its URI in `catalog` (none without one), asked by the
   * URI it knows: the old provider's watch is released first.
   */
  #aim(tenantId: string, uri: string, watch: Watch, catalog: Catalog | undefined): void {
    const target = catalog?.watcher(uri);
    const provider = target?.provider;
    if (watch.provider === provider) return;
    const { provider: previous, release } = watch;
    watch.provider = provider;
    watch.release = undefined;
    // Provider code: a throw here must not stop the other watches from moving.
    const safely = (what: string, owner: Provider | undefined, f: () => void) => {
      try {
        f();
      } catch (err) {
        this.opts.log.warn({ err, tenant: tenantId, provider: owner?.id, uri }, what);
      }
    };
    if (release) safely("resource watch release failed", previous, release);
    if (provider)
      safely("resource watch failed", provider, () => (watch.release = provider.watch?.(target.uri)));
  }
}

async function closeAll(providers: Provider[]): Promise<void> {
  await Promise.allSettled(providers.map((p) => p.close()));
}
