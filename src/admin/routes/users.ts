// /tenants/{t}/users: a tenant's local users (oauth/users.ts), who sign in on the login page.
// Passwords go in and never come out: not in responses and not in the audit log, which records
// only that a password was set.
import { excerpt, fail } from "../../protocol/errors.js";
import type { UserRecord } from "../../oauth/users.js";
import type { UserInput, UserPatch } from "../openapi/oauth-schemas.js";
import type { Handler } from "../plugin.js";
import { revokeGrants, tenantGrants } from "../oauth-records.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

const ATTEMPTS = 10;

export function userHandlers(deps: AdminDeps): Record<string, Handler> {
  const { users } = deps.oauth;
  const missing = (tenant: string, username: string) =>
    fail("PORTICO_ERR_ADMIN_NOT_FOUND", `Tenant "${tenant}" has no user "${excerpt(username)}"`);
  const find = async (tenant: string, username: string): Promise<UserRecord> => {
    const user = await users.get(tenant, username);
    if (!user) throw missing(tenant, username);
    return user;
  };

  /** setPassword is a single compare-and-set: a concurrent write makes it false, so try again. */
  async function setPassword(tenant: string, username: string, password: string) {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (await users.setPassword(tenant, username, password)) return;
      await find(tenant, username);
    }
    throw new Error(`user ${tenant}/${username}: too many concurrent writers`);
  }

  return {
    listUsers: async ({ params, query }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const page = deps.cursors.slice(
        `users|${config.id}`,
        await users.list(config.id),
        (u) => u.username,
        query,
      );
      return { status: 200, body: page };
    },

    createUser: async ({ params, body, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const { username, password, email, groups, roles } = body as UserInput;
      const user = await users.create(config.id, {
        username,
        password,
        ...(email ? { email } : {}),
        ...(groups ? { groups } : {}),
        ...(roles ? { roles } : {}),
      });
      if (!user)
        throw fail("PORTICO_ERR_ADMIN_CONFLICT", `Tenant "${config.id}" already has a user "${username}"`);
      await deps.audit.record({
        actor: principal.actor,
        action: "user.create",
        tenant: config.id,
        target: username,
        after: user,
      });
      return { status: 201, body: user, location: `/tenants/${config.id}/users/${username}` };
    },

    getUser: async ({ params }) => {
      const { config } = await readTenant(deps, params.tenant!);
      return { status: 200, body: await find(config.id, params.user!) };
    },

    updateUser: async ({ params, body, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const username = params.user!;
      const before = await find(config.id, username);
      const patch = body as UserPatch;
      if (patch.password !== undefined) await setPassword(config.id, username, patch.password);
      if (patch.email !== undefined && !(await users.setEmail(config.id, username, patch.email)))
        throw missing(config.id, username);
      const { groups, roles } = patch;
      if (
        (groups !== undefined || roles !== undefined) &&
        !(await users.setAttributes(config.id, username, {
          ...(groups && { groups }),
          ...(roles && { roles }),
        }))
      )
        throw missing(config.id, username);
      const after = await find(config.id, username);
      await deps.audit.record({
        actor: principal.actor,
        action: "user.update",
        tenant: config.id,
        target: username,
        before,
        after: { ...after, ...(patch.password !== undefined ? { passwordChanged: true } : {}) },
      });
      return { status: 200, body: after };
    },

    clearUserThrottle: async ({ params, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const user = await find(config.id, params.user!);
      await deps.oauth.loginThrottle.clear(config.id, user.username);
      await deps.audit.record({
        actor: principal.actor,
        action: "user.throttle-clear",
        tenant: config.id,
        target: user.username,
      });
      return { status: 204 };
    },

    deleteUser: async ({ params, principal }) => {
      const tenant = await readTenant(deps, params.tenant!);
      const id = tenant.config.id;
      const user = await find(id, params.user!);
      if (!(await users.delete(id, user.username))) throw missing(id, user.username);
      // A deleted user's clients lose what the user granted them, tokens included.
      const grants = (await tenantGrants(deps, tenant)).filter((g) => g.sub === user.sub);
      await revokeGrants(deps, id, grants);
      await deps.audit.record({
        actor: principal.actor,
        action: "user.delete",
        tenant: id,
        target: user.username,
        before: user,
      });
      return { status: 204 };
    },
  };
}
