// /tenants/{t}/providers: create, list, get, replace, patch, delete, dry runs, refresh and health.
// Every write is a compare-and-set of the tenant record (tenant-store.ts); the registry of each
// replica then applies it and clients get list_changed for the lists that changed.
import { excerpt, fail } from "../../protocol/errors.js";
import { exposedName, perUserAuth, type ProviderConfig, type TenantConfig } from "../../records/tenant.js";
import { PER_USER_NEEDS_SIGN_IN, RESOURCE_COLLISION_FIX } from "../../records/validate.js";
import type { Catalog } from "../../providers/catalog.js";
import { EMPTY_ENTRIES, type Provider, type ProviderEntries } from "../../providers/types.js";
import { FULL_PROFILE } from "../../protocol/profile.js";
import { isUiUri } from "../../providers/ui-resources.js";
import type { Handler } from "../plugin.js";
import { PROVIDER_SECRETS } from "../../records/secret-fields.js";
import { keepSecrets, secretChanges } from "../kept-secrets.js";
import { checkIfMatch, checkProvider, etagOf, mergePatch, redact } from "../records.js";
import { invalid } from "../openapi/validator.js";
import { perUserRefusal } from "../../records/user-oauth.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";
import { checkHealth, knownHealth, savedHealth } from "./provider-health.js";
import { forgetPins } from "../../providers/pin-book.js";
import { adoptPins } from "./pins.js";
import { refuseStdioChange } from "../operator-only.js";

/** A per-user provider where the connect page could not tell who opens it (records/user-oauth.ts): 422. */
function refusePerUser(tenant: TenantConfig, provider: ProviderConfig): void {
  if (provider.kind === "static" || provider.auth?.type !== "user_oauth") return;
  const why = perUserRefusal(tenant);
  if (why) throw invalid([{ pointer: "/auth/type", detail: why }]);
}

/** A merged patch is checked against the whole provider schema, like a PUT body. */
const PROVIDER_SCHEMA = { $ref: "#/components/schemas/Provider" };

type Write = "create" | "replace" | "patch";

/** The members answers add to a record (provider-health.ts): a client may send them back; never saved. */
function withoutReadOnly(body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  if (!("health" in body) && !("warning" in body)) return body;
  const { health: _health, warning: _warning, ...record } = body as Record<string, unknown>;
  return record;
}

function findProvider(config: TenantConfig, id: string): ProviderConfig {
  const provider = config.providers.find((p) => p.id === id);
  if (!provider)
    throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `Tenant "${config.id}" has no provider "${excerpt(id)}"`);
  return provider;
}

/**
 * The catalog saves are checked against: what a client declaring every capability sees, the
 * most any profile lists (docs/architecture.md §3).
 */
/**
 * Refuses, as the fields' problems, a document Portico cannot serve and credentials that do not
 * fit its security schemes (docs/openapi.md). A save that kept a stored secret keeps a fetched
 * document's credentials bound to the servers they were bound to; one that sent them binds anew.
 * Answers how to put back the copy that was kept before, for a save that fails after all.
 */
async function checkDocument(
  deps: AdminDeps,
  tenant: string,
  provider: Extract<ProviderConfig, { kind: "openapi" }>,
  kept: readonly string[],
): Promise<() => Promise<void>> {
  const { problems, undo } = await deps.openapi.problems(tenant, provider, kept.length > 0 ? "keep" : "bind");
  if (problems.length > 0) {
    await undo();
    throw invalid(problems);
  }
  return undo;
}

async function fullCatalog(deps: AdminDeps, tenantId: string): Promise<Catalog | undefined> {
  return deps.registry.get(tenantId)?.catalogFor(FULL_PROFILE);
}

/** A trial provider's entries as a client declaring every capability sees them. */
async function fullEntries(trial: Provider) {
  await trial.prepare?.(FULL_PROFILE);
  return trial.entries(FULL_PROFILE);
}

/** Names the provider would expose that another provider already serves at run time (upstreams). */
function liveConflicts(
  catalog: Catalog | undefined,
  provider: ProviderConfig,
  own: Pick<ProviderEntries, "tools" | "prompts" | "resources"> = EMPTY_ENTRIES,
): string[] {
  if (!catalog) return [];
  const tools = provider.kind === "http" ? provider.tools.map((t) => t.name) : own.tools.map((t) => t.name);
  const prompts =
    provider.kind === "static" ? (provider.prompts ?? []).map((p) => p.name) : own.prompts.map((p) => p.name);
  const resources =
    provider.kind === "static"
      ? (provider.resources ?? []).map((r) => r.uri)
      : own.resources.map((r) => r.uri);
  const out: string[] = [];
  for (const name of tools.map((n) => exposedName(provider, n))) {
    const holder = catalog.tool(name)?.provider.id;
    if (holder && holder !== provider.id) out.push(`tool "${name}" is served by provider "${holder}"`);
  }
  for (const name of prompts.map((n) => exposedName(provider, n))) {
    const holder = catalog.prompt(name)?.provider.id;
    if (holder && holder !== provider.id) out.push(`prompt "${name}" is served by provider "${holder}"`);
  }
  for (const uri of resources) {
    // Two providers' `ui://` views do not collide: the later one's are namespaced (MCP Apps).
    if (isUiUri(uri)) continue;
    const holder = catalog.resourceOwner(uri)?.id;
    if (holder && holder !== provider.id && catalog.resources.some((r) => r.uri === uri))
      out.push(`resource "${uri}" is served by provider "${holder}"`);
  }
  return out;
}

/** The 409's detail: what collides, and what can resolve it (a prefix only for names). */
function collisionDetail(provider: ProviderConfig, conflicts: readonly string[]): string {
  const named = conflicts.some((c) => !c.startsWith("resource "));
  const uris = conflicts.some((c) => c.startsWith("resource "));
  const fixes = [
    ...(named
      ? [`give it ${provider.prefix === undefined ? "a" : "another"} "prefix" for its tools and prompts`]
      : []),
    ...(uris ? [RESOURCE_COLLISION_FIX] : []),
  ];
  const fix = fixes.join("; ");
  return `Provider "${provider.id}" collides with a served name: ${conflicts.join("; ")}. To fix: ${fix}.`;
}

async function latency(provider: Provider): Promise<{ latencyMs?: number }> {
  try {
    return provider.probe ? { latencyMs: await provider.probe(5000) } : {};
  } catch {
    return {};
  }
}

export function providerHandlers(deps: AdminDeps): Record<string, Handler> {
  const etag = (p: ProviderConfig) => etagOf(deps.secrets, p);

  /**
   * The next record of a write: checked against the schema, the rules and the other providers,
   * with the pointers of the secrets it kept. A patch merges into the record as the API shows it,
   * so every secret it does not send is a {"set": true} under the same rule as in a PUT.
   */
  function next(
    kind: Write,
    body: unknown,
    current: ProviderConfig | undefined,
    others: readonly ProviderConfig[],
    pathId?: string,
  ): { provider: ProviderConfig; kept: readonly string[] } {
    if (kind !== "create" && current?.kind === "mcp") refuseStdioChange(current);
    const input = withoutReadOnly(kind === "patch" ? mergePatch(redact(current), body) : body);
    if (kind !== "create") {
      const o = input as { id?: unknown; kind?: unknown };
      if (o.id !== pathId)
        throw invalid([
          {
            pointer: "/id",
            detail: `must stay "${pathId}" (the id in the path); create a new provider to change it`,
          },
        ]);
      if (o.kind !== current?.kind)
        throw invalid([
          {
            pointer: "/kind",
            detail: `must stay "${current?.kind}"; delete the provider and create one of the new kind`,
          },
        ]);
    }
    const { record, kept } = keepSecrets(input, current, PROVIDER_SECRETS, (record) => {
      if (kind === "patch") deps.validator.body(PROVIDER_SCHEMA, record);
      return checkProvider(record, others);
    });
    return { provider: record, kept };
  }

  /** A dry run: what saving would do, without saving. mcp providers are connected to. */
  async function dryRun(tenant: TenantConfig, provider: ProviderConfig) {
    const report: Record<string, unknown> = { valid: true, provider: redact(provider) };
    const catalog = await fullCatalog(deps, tenant.id);
    if (provider.kind !== "mcp") return { ...report, conflicts: liveConflicts(catalog, provider) };
    return deps.registry.trial(tenant, provider, async (trial) => {
      const entries = await fullEntries(trial);
      const connection = trial.healthy
        ? { ok: true, ...(await latency(trial)) }
        : { ok: false, error: trial.healthReason ?? "unreachable" };
      return {
        ...report,
        connection,
        catalog: {
          tools: entries.tools.map((t) => exposedName(provider, t.name)),
          prompts: entries.prompts.map((p) => exposedName(provider, p.name)),
          resources: entries.resources.map((r) => r.uri),
          resourceTemplates: entries.resourceTemplates.map((t) => t.uriTemplate),
        },
        conflicts: liveConflicts(catalog, provider, entries),
      };
    });
  }

  /**
   * An upstream's names are known only once connected: before saving an mcp provider, connect to
   * it (as a dry run does) and refuse names another provider already serves. An upstream that
   * cannot be reached now is saved anyway; the catalog then keeps the first provider's entry.
   */
  async function refuseUpstreamCollisions(
    kind: Write,
    tenantId: string,
    body: unknown,
    providerId?: string,
  ): Promise<() => Promise<void>> {
    const nothing = async () => {};
    const { config } = await readTenant(deps, tenantId);
    const current = providerId === undefined ? undefined : findProvider(config, providerId);
    const candidateKind = kind === "patch" ? current?.kind : (body as { kind?: unknown }).kind;
    if (candidateKind !== "mcp" && candidateKind !== "openapi") return nothing;
    const { provider: candidate, kept } = next(
      kind,
      body,
      current,
      config.providers.filter((p) => p !== current),
      providerId,
    );
    // A document is read before anything is saved: one Portico cannot serve is refused here.
    const undo =
      candidate.kind === "openapi" ? await checkDocument(deps, tenantId, candidate, kept) : nothing;
    const catalog = await fullCatalog(deps, tenantId);
    const conflicts = await deps.registry.trial(config, candidate, async (trial) =>
      trial.healthy ? liveConflicts(catalog, candidate, await fullEntries(trial)) : [],
    );
    if (conflicts.length > 0) {
      await undo();
      throw fail("PORTICO_ERR_ADMIN_CONFLICT", collisionDetail(candidate, conflicts));
    }
    return undo;
  }

  /** Saves a write with compare-and-set; the mutation re-runs if another admin wrote meanwhile. */
  async function write(
    kind: Write,
    tenantId: string,
    body: unknown,
    actor: string,
    ifMatch?: string,
    providerId?: string,
  ) {
    // A save that fails from here on puts back the document copy (and the binding) it replaced.
    const undo = await refuseUpstreamCollisions(kind, tenantId, body, providerId);
    const catalog = await fullCatalog(deps, tenantId);
    let before: ProviderConfig | undefined;
    let saved: ProviderConfig | undefined;
    let kept: readonly string[] = [];
    const change = await deps.records
      .mutate(tenantId, (current) => {
        if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(tenantId)}"`);
        const providers = current.config.providers;
        before = providerId === undefined ? undefined : findProvider(current.config, providerId);
        if (before) checkIfMatch(ifMatch, deps.secrets, before);
        const others = providers.filter((p) => p !== before);
        ({ provider: saved, kept } = next(kind, body, before, others, providerId));
        if (current.config.auth === "none" && perUserAuth(saved))
          throw invalid([{ pointer: "/auth/type", detail: PER_USER_NEEDS_SIGN_IN }]);
        refusePerUser(current.config, saved);
        const conflicts = liveConflicts(catalog, saved);
        if (conflicts.length > 0) throw fail("PORTICO_ERR_ADMIN_CONFLICT", collisionDetail(saved, conflicts));
        const list = before ? providers.map((p) => (p === before ? saved! : p)) : [...providers, saved];
        return { ...current.config, providers: list };
      })
      .catch(async (err: unknown) => {
        await undo();
        throw err;
      });
    if (change.before !== change.after) {
      await deps.registry.reload(tenantId);
      await deps.audit.record({
        actor,
        action: `provider.${kind === "create" ? "create" : "update"}`,
        tenant: tenantId,
        target: saved!.id,
        ...(before ? { before: redact(before) } : {}),
        after: redact(saved!),
        secrets: secretChanges(before, saved, kept, PROVIDER_SECRETS),
      });
      await adoptPins(deps, tenantId, actor);
    }
    return saved!;
  }

  /** When a live provider's health last changed, read when a report is made. */
  const changedAt = (live: Provider | undefined) => () =>
    live ? deps.registry.healthChangedAt(live) : undefined;
  const savedHealthOf = (tenant: string, id: string) => {
    const live = deps.registry.provider(tenant, id);
    return savedHealth(live, tenant, id, changedAt(live));
  };

  return {
    listProviders: async ({ params, query }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const indexed = config.providers.map((p, i) => ({ p, key: String(i).padStart(6, "0") }));
      const page = deps.cursors.slice(`providers|${config.id}`, indexed, (e) => e.key, query);
      const items = page.items.map((e) => {
        const live = deps.registry.provider(config.id, e.p.id);
        return { ...redact(e.p), health: knownHealth(live, live && deps.registry.healthChangedAt(live)) };
      });
      return { status: 200, body: { ...page, items } };
    },

    createProvider: async ({ params, body, query, principal }) => {
      const tenantId = params.tenant!;
      if (query.dryRun === true) {
        const { config } = await readTenant(deps, tenantId);
        return {
          status: 200,
          body: await dryRun(config, next("create", body, undefined, config.providers).provider),
        };
      }
      const saved = await write("create", tenantId, body, principal.actor);
      return {
        status: 201,
        body: { ...redact(saved), ...(await savedHealthOf(tenantId, saved.id)) },
        etag: etag(saved),
        location: `/tenants/${tenantId}/providers/${saved.id}`,
      };
    },

    getProvider: async ({ params }) => {
      const provider = findProvider((await readTenant(deps, params.tenant!)).config, params.provider!);
      return { status: 200, body: redact(provider), etag: etag(provider) };
    },

    replaceProvider: async (call) => update("replace", call),
    patchProvider: async (call) => update("patch", call),

    deleteProvider: async ({ params, ifMatch, principal }) => {
      let removed: ProviderConfig | undefined;
      await deps.records.mutate(params.tenant!, (current) => {
        if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(params.tenant)}"`);
        removed = findProvider(current.config, params.provider!);
        checkIfMatch(ifMatch, deps.secrets, removed);
        // A virtual server naming it would name nothing (docs/architecture.md §8).
        const user = current.config.servers?.find((s) => s.providers.some((p) => p.provider === removed!.id));
        if (user)
          throw fail(
            "PORTICO_ERR_ADMIN_CONFLICT",
            `Provider "${removed.id}" is selected by server "${user.id}": remove it from the server first`,
          );
        return { ...current.config, providers: current.config.providers.filter((p) => p !== removed) };
      });
      await deps.registry.reload(params.tenant!);
      await deps.accounts?.forget(params.tenant!, params.provider!, removed);
      await forgetPins(deps.store, deps.keys, params.tenant!, params.provider!);
      await deps.openapi.forget(params.tenant!, params.provider!);
      await deps.audit.record({
        actor: principal.actor,
        action: "provider.delete",
        tenant: params.tenant!,
        target: params.provider!,
        before: redact(removed),
      });
      return { status: 204 };
    },

    refreshProvider: async ({ params, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const record = findProvider(config, params.provider!);
      // A document fetched from its URL is fetched again here, once; every replica then reads the copy.
      const { problem, disabled } =
        record.kind === "openapi" ? await deps.openapi.refetch(config.id, record) : { disabled: [] };
      if (problem !== undefined)
        throw fail(
          "PORTICO_ERR_ADMIN_UPSTREAM",
          `Provider "${params.provider}" could not be refreshed: the document ${problem}`,
        );
      // Operations the new document moves away from where the credentials were bound are off.
      if (disabled.length > 0)
        await deps.audit.record({
          actor: principal.actor,
          action: "provider.refresh",
          tenant: config.id,
          target: record.id,
          after: { disabled },
        });
      const live = deps.registry.provider(config.id, params.provider!);
      if (live?.refresh) {
        try {
          await live.refresh();
        } catch (err) {
          throw fail(
            "PORTICO_ERR_ADMIN_UPSTREAM",
            `Provider "${params.provider}" could not be refreshed: ${(err as Error).message}`,
          );
        }
        await deps.records.announce({ tenant: config.id, refresh: params.provider! });
      }
      const entries = live?.entries() ?? { tools: [], prompts: [], resources: [], resourceTemplates: [] };
      return {
        status: 200,
        body: {
          provider: params.provider!,
          tools: entries.tools.length,
          prompts: entries.prompts.length,
          resources: entries.resources.length,
          resourceTemplates: entries.resourceTemplates.length,
          ...(disabled.length > 0 && { disabled }),
        },
      };
    },

    getProviderHealth: async ({ params }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const cfg = findProvider(config, params.provider!);
      const pins = deps.registry.pins(config.id, cfg.id);
      const live = deps.registry.provider(config.id, cfg.id);
      const { status, reason, latencyMs, checkedAt, breaker, since } = await checkHealth(
        live,
        5000,
        changedAt(live),
      );
      return {
        status: 200,
        body: {
          provider: cfg.id,
          kind: cfg.kind,
          status,
          ...(reason !== undefined ? { reason } : {}),
          ...(latencyMs !== undefined ? { latencyMs } : {}),
          ...(breaker !== undefined ? { breaker } : {}),
          ...(since !== undefined ? { since } : {}),
          conflicts: deps.registry
            .conflicts(config.id, cfg.id)
            .map(({ kind, name, heldBy, profile }) => ({ kind, name, heldBy, profile })),
          ...(pins && { pins: { pinning: pins.mode, pending: (await pins.pending()).map((p) => p.name) } }),
          checkedAt,
        },
      };
    },
  };

  async function update(kind: "replace" | "patch", call: Parameters<Handler>[0]) {
    const { params, body, query, ifMatch, principal } = call;
    const tenantId = params.tenant!;
    if (query.dryRun === true) {
      const { config } = await readTenant(deps, tenantId);
      const current = findProvider(config, params.provider!);
      checkIfMatch(ifMatch, deps.secrets, current);
      const others = config.providers.filter((p) => p !== current);
      const report = await dryRun(config, next(kind, body, current, others, current.id).provider);
      // Nothing changed: the ETag is still the stored record's.
      return { status: 200, body: report, etag: etag(current) };
    }
    const saved = await write(kind, tenantId, body, principal.actor, ifMatch, params.provider);
    const health = await savedHealthOf(tenantId, saved.id);
    return { status: 200, body: { ...redact(saved), ...health }, etag: etag(saved) };
  }
}
