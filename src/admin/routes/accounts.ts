// /tenants/{t}/subjects/{sub}/accounts and /tenants/{t}/providers/{p}/accounts: connected accounts
// (docs/upstream-auth.md "Admin API"): what a user connected, revoking one (audited as
// account.revoke), and who is connected to a provider. No token material ever leaves.
import { excerpt, fail } from "../../protocol/errors.js";
import type { Handler } from "../plugin.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

export function accountHandlers(deps: AdminDeps): Record<string, Handler> {
  const accounts = () => {
    if (!deps.accounts) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", "Connected accounts are not served here");
    return deps.accounts;
  };
  const perUserProvider = async (tenantId: string, providerId: string) => {
    const { config } = await readTenant(deps, tenantId);
    const provider = config.providers.find((p) => p.id === providerId);
    if (!provider)
      throw fail(
        "PORTICO_ERR_ADMIN_NOT_FOUND",
        `Tenant "${config.id}" has no provider "${excerpt(providerId)}"`,
      );
    return config.id;
  };
  return {
    listUserAccounts: async ({ params }) => {
      const { config } = await readTenant(deps, params.tenant!);
      return { status: 200, body: { items: await accounts().list(config.id, params.subject!) } };
    },

    revokeUserAccount: async ({ params, principal }) => {
      const tenant = await perUserProvider(params.tenant!, params.provider!);
      const user = params.subject!;
      const revoked = await accounts().disconnect(tenant, user, params.provider!);
      if (!revoked)
        throw fail(
          "PORTICO_ERR_ADMIN_NOT_FOUND",
          `User "${excerpt(user)}" has no connected account at provider "${params.provider}"`,
        );
      await deps.audit.record({
        actor: principal.actor,
        action: "account.revoke",
        tenant,
        target: `${params.provider} ${user}`,
        before: { ...revoked },
      });
      return { status: 204 };
    },

    listProviderAccounts: async ({ params, query }) => {
      const tenant = await perUserProvider(params.tenant!, params.provider!);
      const users = await accounts().users(tenant, params.provider!);
      const page = deps.cursors.slice(`accounts|${tenant}|${params.provider}`, users, (u) => u, query);
      const items = [];
      for (const user of page.items) {
        const view = await accounts().view(tenant, user, params.provider!);
        if (view) items.push(view);
      }
      return { status: 200, body: { ...page, items, count: users.length } };
    },
  };
}
