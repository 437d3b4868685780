// /tenants/{t}/servers: virtual servers (docs/architecture.md §8): create, list, get, replace,
// delete, dry runs and each server's catalog. A server lives in its tenant's record, so every write
// is a compare-and-set of the tenant; each replica's registry then applies it and the server's
// clients get list_changed for the lists that changed.
import { excerpt, fail } from "../../protocol/errors.js";
import { Catalog } from "../../providers/catalog.js";
import type { TenantConfig } from "../../records/tenant.js";
import { type VirtualServerConfig } from "../../records/server.js";
import { validateServer } from "../../records/validate-server.js";
import type { Provider } from "../../providers/types.js";
import { FULL_PROFILE } from "../../protocol/profile.js";
import { profileFromLabel, profileLabel } from "../../protocol/profile-names.js";
import { ServerProvider } from "../../providers/server-view.js";
import type { Handler } from "../plugin.js";
import { invalid } from "../openapi/validator.js";
import { asProblem, checkIfMatch, etagOf, mergePatch } from "../records.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

/** A merged patch is checked against the whole server schema, like a PUT body. */
const SERVER_SCHEMA = { $ref: "#/components/schemas/VirtualServer" };

function findServer(config: TenantConfig, id: string): VirtualServerConfig {
  const server = config.servers?.find((s) => s.id === id);
  if (!server)
    throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `Tenant "${config.id}" has no server "${excerpt(id)}"`);
  return server;
}

/** The body checked beyond its schema against the tenant's providers (422 with a JSON Pointer). */
function checked(config: TenantConfig, body: unknown): VirtualServerConfig {
  const server = asProblem(() => validateServer(body, "server", config.providers), "server", "invalid");
  // One audience for every URL would let a token for /mcp/{tenant} open each of its servers.
  if (config.identity?.type === "external" && config.identity.audience !== undefined)
    throw invalid([
      {
        pointer: "",
        detail:
          "this tenant trusts an external authorization server with one fixed audience: remove identity.audience (tokens then name each URL) before adding virtual servers",
      },
    ]);
  return server;
}

/** A catalog entry as the catalog routes show it. */
function entry(provider: Provider | undefined, value: object) {
  return { provider: provider?.id ?? "", health: provider?.healthy ? "healthy" : "unhealthy", entry: value };
}

/** A catalog as the API shows it (the Catalog schema). */
export function catalogBody(catalog: Catalog, profile: string) {
  return {
    tools: catalog.tools.map((t) => entry(catalog.tool(t.name)?.provider, t)),
    prompts: catalog.prompts.map((p) => entry(catalog.prompt(p.name)?.provider, p)),
    resources: catalog.resources.map((r) => entry(catalog.resourceOwner(r.uri), r)),
    resourceTemplates: catalog.templates.map((t) => entry(catalog.templateOwner(t.uriTemplate), t)),
    profile,
  };
}

/**
 * What the server would list to a client declaring every capability, from the tenant's providers
 * as they serve now: its catalog, the names two entries would share, and listed entries missing.
 */
async function trial(deps: AdminDeps, tenantId: string, server: VirtualServerConfig) {
  const live = deps.registry.get(tenantId);
  // Every provider listed under the profile first (as the tenant's clients would have it).
  await live?.catalogFor(FULL_PROFILE);
  const views = server.providers.flatMap((chosen) => {
    const inner = deps.registry.provider(tenantId, chosen.provider);
    return inner ? [new ServerProvider(inner, chosen)] : [];
  });
  const catalog = new Catalog(views, FULL_PROFILE);
  const conflicts = [
    ...views.flatMap((v) => v.shadowed(FULL_PROFILE)),
    ...catalog.warnings.flatMap((w) => (w.collision ? [w.message] : [])),
  ];
  const missing = server.providers.flatMap((chosen) => {
    const own = deps.registry.provider(tenantId, chosen.provider)?.entries(FULL_PROFILE);
    const names = {
      tools: new Set(own?.tools.map((t) => t.name)),
      prompts: new Set(own?.prompts.map((p) => p.name)),
      resources: new Set([
        ...(own?.resources.map((r) => r.uri) ?? []),
        ...(own?.resourceTemplates.map((t) => t.uriTemplate) ?? []),
      ]),
    };
    return (["tools", "prompts", "resources"] as const).flatMap((kind) => {
      const picked = chosen[kind];
      if (picked === undefined || picked === "*") return [];
      return picked
        .filter((n) => !names[kind].has(n))
        .map((n) => `${kind.slice(0, -1)} '${n}' of provider '${chosen.provider}'`);
    });
  });
  return { catalog, conflicts, missing };
}

export function serverHandlers(deps: AdminDeps): Record<string, Handler> {
  const etag = (server: VirtualServerConfig) => etagOf(deps.secrets, server);

  /** Refuses a server two of whose entries would share a name (409 naming them). */
  async function refuseConflicts(tenantId: string, server: VirtualServerConfig) {
    const { conflicts } = await trial(deps, tenantId, server);
    if (conflicts.length > 0)
      throw fail(
        "PORTICO_ERR_ADMIN_CONFLICT",
        `Server "${server.id}" would list two entries under one name: ${conflicts.join("; ")}. Rename one ("overrides") or leave one out.`,
      );
  }

  async function dryRun(tenantId: string, server: VirtualServerConfig) {
    const { catalog, conflicts, missing } = await trial(deps, tenantId, server);
    return {
      valid: true,
      server,
      catalog: catalogBody(catalog, profileLabel(FULL_PROFILE)),
      conflicts,
      missing,
    };
  }

  /** Saves a server with compare-and-set; `id` set: replaces that one (404 when gone). */
  async function save(tenantId: string, body: unknown, actor: string, id?: string, ifMatch?: string) {
    let before: VirtualServerConfig | undefined;
    let saved: VirtualServerConfig | undefined;
    const change = await deps.records.mutate(tenantId, (current) => {
      if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(tenantId)}"`);
      const servers = current.config.servers ?? [];
      before = id === undefined ? undefined : findServer(current.config, id);
      if (before) checkIfMatch(ifMatch, deps.secrets, before);
      saved = checked(current.config, id === undefined ? body : { ...(body as object), id });
      if (saved.id !== id && servers.some((s) => s.id === saved!.id))
        throw fail("PORTICO_ERR_ADMIN_CONFLICT", `Tenant "${tenantId}" already has a server "${saved.id}"`);
      const list = before ? servers.map((s) => (s === before ? saved! : s)) : [...servers, saved];
      return { ...current.config, servers: list };
    });
    if (change.before !== change.after) {
      await deps.registry.reload(tenantId);
      await deps.audit.record({
        actor,
        action: `server.${before ? "update" : "create"}`,
        tenant: tenantId,
        target: saved!.id,
        ...(before ? { before } : {}),
        after: saved,
      });
    }
    return saved!;
  }

  return {
    listServers: async ({ params, query }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const indexed = (config.servers ?? []).map((s, i) => ({ s, key: String(i).padStart(6, "0") }));
      const page = deps.cursors.slice(`servers|${config.id}`, indexed, (e) => e.key, query);
      return { status: 200, body: { ...page, items: page.items.map((e) => e.s) } };
    },

    createServer: async ({ params, body, query, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const server = checked(config, body);
      if (query.dryRun === true) return { status: 200, body: await dryRun(config.id, server) };
      await refuseConflicts(config.id, server);
      const saved = await save(config.id, body, principal.actor);
      return {
        status: 201,
        body: saved,
        etag: etag(saved),
        location: `/tenants/${config.id}/servers/${saved.id}`,
      };
    },

    getServer: async ({ params }) => {
      const server = findServer((await readTenant(deps, params.tenant!)).config, params.server!);
      return { status: 200, body: server, etag: etag(server) };
    },

    replaceServer: async (call) => update("replace", call),
    patchServer: async (call) => update("patch", call),

    deleteServer: async ({ params, ifMatch, principal }) => {
      let removed: VirtualServerConfig | undefined;
      await deps.records.mutate(params.tenant!, (current) => {
        if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(params.tenant)}"`);
        removed = findServer(current.config, params.server!);
        checkIfMatch(ifMatch, deps.secrets, removed);
        const servers = (current.config.servers ?? []).filter((s) => s !== removed);
        const { servers: _gone, ...rest } = current.config;
        return servers.length > 0 ? { ...rest, servers } : rest;
      });
      await deps.registry.reload(params.tenant!);
      await deps.audit.record({
        actor: principal.actor,
        action: "server.delete",
        tenant: params.tenant!,
        target: params.server!,
        before: removed,
      });
      return { status: 204 };
    },

    getServerCatalog: async ({ params, query }) => {
      const label = query.profile;
      const profile = typeof label === "string" ? profileFromLabel(label) : FULL_PROFILE;
      if (!profile)
        throw fail("PORTICO_ERR_ADMIN_MALFORMED", `Query parameter profile: unknown capability name`);
      const { config } = await readTenant(deps, params.tenant!);
      findServer(config, params.server!);
      const runtime = deps.registry.server(config.id, params.server!);
      const catalog = runtime ? await runtime.catalogFor(profile) : new Catalog([], profile);
      return { status: 200, body: catalogBody(catalog, profileLabel(profile)) };
    },
  };

  /** PUT or PATCH: the id stays the path's; a dry run saves nothing and keeps the stored ETag. */
  async function update(kind: "replace" | "patch", call: Parameters<Handler>[0]) {
    const { params, query, ifMatch, principal } = call;
    const { config } = await readTenant(deps, params.tenant!);
    const current = findServer(config, params.server!);
    checkIfMatch(ifMatch, deps.secrets, current);
    const body = kind === "patch" ? mergePatch(current, call.body) : call.body;
    // A body naming another id is refused rather than moving the server's URL.
    if ((body as { id?: unknown }).id !== current.id)
      throw invalid([{ pointer: "/id", detail: `must be "${current.id}", the server's id in the path` }]);
    if (kind === "patch") deps.validator.body(SERVER_SCHEMA, body);
    const server = checked(config, body);
    if (query.dryRun === true)
      return { status: 200, body: await dryRun(config.id, server), etag: etag(current) };
    await refuseConflicts(config.id, server);
    const saved = await save(config.id, body, principal.actor, current.id, ifMatch);
    return { status: 200, body: saved, etag: etag(saved) };
  }
}
