// /tenants/{t}/clients: OAuth clients pre-registered for the tenant (RFC 7591 metadata checked as
// /oauth/register checks it; a confidential client's secret shown once) and the other clients
// holding live grants on it. Deleting one revokes its grants here, and a pre-registered one with them.
// /clients/{c} (platform keys): a client deleted everywhere, its grants on every tenant revoked.
import { excerpt, fail } from "../../protocol/errors.js";
import { validateRegistration, type ClientMetadata } from "../../oauth/clients.js";
import type { Grant } from "../../oauth/grants.js";
import type { TenantRecord } from "../../tenants/tenant-store.js";
import type { Handler } from "../plugin.js";
import { clientView, registrationProblem, revokeGrants, tenantGrants } from "../oauth-records.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

/** Live grants on the tenant, by client id. */
function liveByClient(grants: readonly Grant[]): Map<string, Grant[]> {
  const out = new Map<string, Grant[]>();
  for (const g of grants)
    if (g.revokedAt === undefined) out.set(g.client_id, [...(out.get(g.client_id) ?? []), g]);
  return out;
}

type ClientView = ReturnType<typeof clientView>;

export function clientHandlers(deps: AdminDeps): Record<string, Handler> {
  const { clients } = deps.oauth;

  /** Pre-registered clients (oldest first), then the others holding grants (by id), each with a list key. */
  async function all(tenant: TenantRecord): Promise<{ key: string; view: ClientView }[]> {
    const id = tenant.config.id;
    const [own, grants] = await Promise.all([clients.listForTenant(id), tenantGrants(deps, tenant)]);
    const live = liveByClient(grants);
    const ownIds = new Set(own.map((c) => c.clientId));
    const others = [...live.keys()].filter((c) => !ownIds.has(c)).sort();
    const records = await Promise.all(others.map((c) => clients.get(c)));
    return [
      ...own.map((c) => ({
        key: `0|${String(c.issuedAt).padStart(12, "0")}|${c.clientId}`,
        view: clientView(c.clientId, c, true, live.get(c.clientId)?.length ?? 0),
      })),
      ...others.map((c, i) => ({
        key: `1|${c}`,
        view: clientView(c, records[i], false, live.get(c)?.length ?? 0),
      })),
    ];
  }

  /** One client of the tenant, with its live grants here; 404 when it is none of the tenant's. */
  async function find(tenant: TenantRecord, clientId: string) {
    const id = tenant.config.id;
    const [record, grants] = await Promise.all([clients.get(clientId), tenantGrants(deps, tenant)]);
    const preRegistered = record?.tenant === id;
    const live = liveByClient(grants).get(clientId) ?? [];
    if (!preRegistered && live.length === 0)
      throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `Tenant "${id}" has no client "${excerpt(clientId)}"`);
    return { view: clientView(clientId, record, preRegistered, live.length), preRegistered, live };
  }

  return {
    listClients: async ({ params, query }) => {
      const tenant = await readTenant(deps, params.tenant!);
      const page = deps.cursors.slice(`clients|${tenant.config.id}`, await all(tenant), (c) => c.key, query);
      return { status: 200, body: { ...page, items: page.items.map((c) => c.view) } };
    },

    createClient: async ({ params, body, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      let metadata: ClientMetadata;
      try {
        metadata = validateRegistration(body);
      } catch (err) {
        throw registrationProblem(err);
      }
      const registered = await clients.preRegister(config.id, metadata);
      const { client_secret: _secret, ...shown } = registered;
      await deps.audit.record({
        actor: principal.actor,
        action: "client.create",
        tenant: config.id,
        target: registered.client_id,
        after: shown,
      });
      return {
        status: 201,
        body: { ...registered, preRegistered: true, grants: 0 },
        location: `/tenants/${config.id}/clients/${registered.client_id}`,
      };
    },

    getClient: async ({ params }) => {
      const tenant = await readTenant(deps, params.tenant!);
      return { status: 200, body: (await find(tenant, params.client!)).view };
    },

    deleteClient: async ({ params, principal }) => {
      const tenant = await readTenant(deps, params.tenant!);
      const id = tenant.config.id;
      const { view, preRegistered, live } = await find(tenant, params.client!);
      // Grants first: should the delete fail halfway, the client is still listed and can be deleted again.
      await revokeGrants(deps, id, live);
      if (preRegistered) await clients.delete(view.client_id);
      await deps.audit.record({
        actor: principal.actor,
        action: preRegistered ? "client.delete" : "client.revoke",
        tenant: id,
        target: view.client_id,
        before: view,
      });
      return { status: 204 };
    },

    deleteRegisteredClient: async ({ params, principal }) => {
      const clientId = params.client!;
      const record = await clients.get(clientId);
      const tenants = [...new Set([...(await deps.records.ids()), ...deps.registry.ids()])];
      const revoked = await Promise.all(
        tenants.map(async (tenant) => {
          const grants = await deps.oauth.grants.grants(tenant);
          return revokeGrants(
            deps,
            tenant,
            grants.filter((g) => g.client_id === clientId),
          );
        }),
      );
      const grants = revoked.reduce((n, r) => n + r.length, 0);
      if (!record && grants === 0)
        throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No client "${excerpt(clientId)}" is registered`);
      // Grants first: should the delete fail halfway, the client can be deleted again.
      if (record) await clients.delete(clientId);
      await deps.audit.record({
        actor: principal.actor,
        action: "client.delete",
        tenant: null,
        target: clientId,
        before: {
          ...clientView(clientId, record, record?.tenant !== undefined, grants),
          tenant: record?.tenant,
        },
      });
      return { status: 204 };
    },
  };
}
