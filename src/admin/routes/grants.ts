// /tenants/{t}/grants: what users granted OAuth clients on the tenant, and revoking a grant, which
// ends its refresh tokens and its access tokens at once (oauth/token.ts revokeGrant).
import { excerpt, fail } from "../../protocol/errors.js";
import type { Grant } from "../../oauth/grants.js";
import type { Handler } from "../plugin.js";
import { grantView, revokeGrants, tenantGrants } from "../oauth-records.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

function newestFirst(grant: Grant): string {
  return `${String(9_999_999_999_999 - Date.parse(grant.createdAt)).padStart(13, "0")}|${grant.id}`;
}

export function grantHandlers(deps: AdminDeps): Record<string, Handler> {
  return {
    listGrants: async ({ params, query }) => {
      const tenant = await readTenant(deps, params.tenant!);
      const all = (await tenantGrants(deps, tenant)).sort((a, b) =>
        newestFirst(a) < newestFirst(b) ? -1 : 1,
      );
      const page = deps.cursors.slice(`grants|${tenant.config.id}`, all, newestFirst, query);
      return { status: 200, body: { ...page, items: page.items.map(grantView) } };
    },

    revokeGrant: async ({ params, principal }) => {
      const tenant = await readTenant(deps, params.tenant!);
      const id = tenant.config.id;
      const grant = (await tenantGrants(deps, tenant)).find((g) => g.id === params.grant);
      if (!grant)
        throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `Tenant "${id}" has no grant "${excerpt(params.grant)}"`);
      const [revoked] = await revokeGrants(deps, id, [grant]);
      if (revoked) {
        const after = await deps.oauth.grants.grant(id, grant.id);
        await deps.audit.record({
          actor: principal.actor,
          action: "grant.revoke",
          tenant: id,
          target: grant.id,
          before: grantView(grant),
          ...(after ? { after: grantView(after) } : {}),
        });
      }
      return { status: 204 };
    },
  };
}
