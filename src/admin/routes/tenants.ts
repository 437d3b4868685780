// /tenants: create, list, get, update and delete tenants (platform keys only). Deleting a tenant
// removes everything it owns: providers, sessions, keys, its audit log, its local users and
// pre-registered OAuth clients, and revokes its grants with their tokens.
import { excerpt, fail } from "../../protocol/errors.js";
import type { TenantConfig } from "../../records/tenant.js";
import { PROVIDER_SECRETS } from "../../records/secret-fields.js";
import type { TenantRecord } from "../../tenants/tenant-store.js";
import { keepSecrets } from "../kept-secrets.js";
import type { AdminCall, Handler } from "../plugin.js";
import { revokeGrants } from "../oauth-records.js";
import {
  checkIfMatch,
  checkProvider,
  checkTenant,
  etagOf,
  mergePatch,
  redact,
  redactIdentity,
} from "../records.js";
import { invalid } from "../openapi/validator.js";
import type { AdminDeps } from "./deps.js";
import { forgetPins } from "../../providers/pin-book.js";
import { adoptPins } from "./pins.js";

/** The tenant's own fields, as the API shows them. */
function view(deps: AdminDeps, record: TenantRecord) {
  const { id, name, auth, limits, providers, pinning } = record.config;
  return {
    id,
    ...(name !== undefined ? { name } : {}),
    auth,
    ...(limits !== undefined ? { limits } : {}),
    ...(pinning !== undefined ? { pinning } : {}),
    mcpUrl: `${deps.config.publicUrl}/mcp/${id}`,
    providers: providers.length,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The audit form of a tenant: its own fields, identity and providers, secrets redacted. */
export function auditForm(config: TenantConfig | undefined): unknown {
  return (
    config && {
      ...config,
      ...(config.identity ? { identity: redactIdentity(config.identity) } : {}),
      providers: config.providers.map((p) => redact(p)),
    }
  );
}

/** A deleted tenant's OAuth side: grants revoked with their access tokens, users and own clients removed. */
async function removeOAuth(deps: AdminDeps, id: string): Promise<void> {
  const { users, clients, grants } = deps.oauth;
  await revokeGrants(deps, id, await grants.grants(id));
  const own = await clients.listForTenant(id);
  await Promise.all([
    users.removeTenant(id),
    grants.removeTenant(id),
    ...own.map((c) => clients.delete(c.clientId)),
  ]);
}

/** What a tenant's ETag covers. */
function etagged(config: TenantConfig) {
  const { id, name, auth, limits, pinning } = config;
  return { id, name, auth, limits, ...(pinning !== undefined && { pinning }) };
}

function tenantEtag(deps: AdminDeps, config: TenantConfig): string {
  return etagOf(deps.secrets, etagged(config));
}

export async function readTenant(deps: AdminDeps, id: string): Promise<TenantRecord> {
  const record = await deps.records.read(id);
  if (!record) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(id)}"`);
  return record;
}

export function tenantHandlers(deps: AdminDeps): Record<string, Handler> {
  return {
    listTenants: async ({ query }) => {
      const records = (
        await Promise.all((await deps.records.ids()).map((id) => deps.records.read(id)))
      ).filter((r): r is TenantRecord => r !== undefined);
      const page = deps.cursors.slice("tenants", records, (r) => r.config.id, query);
      return { status: 200, body: { ...page, items: page.items.map((r) => view(deps, r)) } };
    },

    createTenant: async ({ body, principal }) => {
      const input = body as Partial<TenantConfig> & { id: string };
      // Tenants created through the API are guarded by OAuth unless asked otherwise.
      const checked: TenantConfig = { ...input, auth: input.auth ?? "oauth", providers: [] };
      const providers = (input.providers ?? []).map((p, i) => {
        try {
          // A new tenant has nothing stored: {"set": true} gets the one clear 422 of kept-secrets.ts.
          return keepSecrets(p, undefined, PROVIDER_SECRETS, (record) => checkProvider(record, [])).record;
        } catch (err) {
          throw prefixPointer(err, `/providers/${i}`);
        }
      });
      for (const [i, p] of providers.entries()) checkProvider(p, providers.slice(0, i));
      const config = checkTenant({ ...checked, providers });
      const change = await deps.records.mutate(config.id, (current) => {
        if (current) throw fail("PORTICO_ERR_ADMIN_CONFLICT", `Tenant "${config.id}" already exists`);
        return config;
      });
      await deps.registry.reload(config.id);
      await deps.audit.record(
        {
          actor: principal.actor,
          action: "tenant.create",
          tenant: config.id,
          target: config.id,
          after: auditForm(config),
        },
        true,
      );
      await adoptPins(deps, config.id, principal.actor);
      return {
        status: 201,
        body: view(deps, change.after!),
        etag: tenantEtag(deps, config),
        location: `/tenants/${config.id}`,
      };
    },

    getTenant: async ({ params }) => {
      const record = await readTenant(deps, params.tenant!);
      return { status: 200, body: view(deps, record), etag: tenantEtag(deps, record.config) };
    },

    updateTenant: async ({ params, body, ifMatch, principal }) => {
      let before: TenantConfig | undefined;
      const change = await deps.records.mutate(params.tenant!, (current) => {
        if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(params.tenant)}"`);
        checkIfMatch(ifMatch, deps.secrets, etagged(current.config));
        before = current.config;
        // Validated again: limits whose members were all set back to null disappear.
        return checkTenant(mergePatch(current.config, body));
      });
      const after = change.after!;
      if (change.before !== change.after) {
        await deps.registry.reload(after.config.id);
        await deps.audit.record(
          {
            actor: principal.actor,
            action: "tenant.update",
            tenant: after.config.id,
            target: after.config.id,
            before: auditForm(before),
            after: auditForm(after.config),
          },
          true,
        );
        await adoptPins(deps, after.config.id, principal.actor);
      }
      return { status: 200, body: view(deps, after), etag: tenantEtag(deps, after.config) };
    },

    deleteTenant: async ({ params, principal }: AdminCall) => {
      const id = params.tenant!;
      const change = await deps.records.mutate(id, (current) => {
        if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(id)}"`);
        return null;
      });
      await deps.registry.reload(id);
      // Its sessions answer 404 from now on, on every replica.
      await Promise.all((await deps.sessions.ids(id)).map((sid) => deps.endSession(id, sid)));
      await Promise.all([
        deps.apiKeys.removeTenant(id),
        deps.tenantAdmins.removeTenant(id),
        deps.audit.removeTenant(id),
        deps.sessions.forget(id),
        removeOAuth(deps, id),
        // Users' connected accounts go with it (revoked upstream, best effort).
        ...(change.before?.config.providers ?? []).map((p) => deps.accounts?.forget(id, p.id, p)),
        ...(change.before?.config.providers ?? []).map((p) => forgetPins(deps.store, deps.keys, id, p.id)),
        ...(change.before?.config.providers ?? []).map((p) => deps.openapi.forget(id, p.id)),
      ]);
      await deps.audit.record({
        actor: principal.actor,
        action: "tenant.delete",
        tenant: null,
        target: id,
        before: auditForm(change.before?.config),
      });
      return { status: 204 };
    },
  };
}

/** A 422 about a nested provider, re-pointed at its place in the tenant body. */
function prefixPointer(err: unknown, prefix: string): unknown {
  const data = (err as { data?: { errors?: { pointer: string; detail: string }[] } }).data;
  if ((err as { code?: string }).code !== "PORTICO_ERR_ADMIN_INVALID" || !data?.errors) return err;
  return invalid(data.errors.map((e) => ({ pointer: prefix + e.pointer, detail: e.detail })));
}
