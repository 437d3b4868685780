// The console's operations (docs/admin-api.md "Console sessions"): who is calling and signing out,
// platform users (platform principals only; audited in the platform log), a tenant's named admins,
// try it, and the traffic overview. Passwords go in and never come out.
import { excerpt, fail } from "../../protocol/errors.js";
import type { Handler } from "../plugin.js";
import type { TryMethod } from "../try-it.js";
import { MAX_NAMED_ADMINS } from "../tenant-admins.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

export function consoleHandlers(deps: AdminDeps): Record<string, Handler> {
  const { platformUsers, tenantAdmins } = deps;
  const noUser = (username: string) =>
    fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No platform user "${excerpt(username)}"`);

  return {
    getConsoleSession: async ({ principal }) => ({
      status: 200,
      body: {
        via: principal.via ?? "key",
        platform: principal.tenant === null,
        tenant: principal.tenant,
        name: principal.name ?? principal.actor,
        ...(principal.session && { csrf: principal.session.csrf, expiresAt: principal.session.expiresAt }),
      },
    }),

    endConsoleSession: async ({ sessionCookie }) => {
      if (sessionCookie === undefined || !deps.console) return { status: 204 };
      await deps.console.end(sessionCookie);
      return { status: 204, setCookie: deps.console.clearCookie };
    },

    listPlatformUsers: async () => ({ status: 200, body: { items: await platformUsers.list() } }),

    createPlatformUser: async ({ body, principal }) => {
      const { username, password } = body as { username: string; password: string };
      const user = await platformUsers.create(username, { password });
      if (!user) throw fail("PORTICO_ERR_ADMIN_CONFLICT", `There is already a platform user "${username}"`);
      await deps.audit.record({
        actor: principal.actor,
        action: "platform-user.create",
        tenant: null,
        target: username,
        after: user,
      });
      return { status: 201, body: user, location: `/platform-users/${username}` };
    },

    updatePlatformUser: async ({ params, body, principal }) => {
      const username = params.user!;
      const { password } = body as { password: string };
      if (!(await platformUsers.setPassword(username, { password }))) throw noUser(username);
      await deps.audit.record({
        actor: principal.actor,
        action: "platform-user.update",
        tenant: null,
        target: username,
        after: { passwordChanged: true },
      });
      return { status: 200, body: (await platformUsers.get(username)) ?? { username } };
    },

    deletePlatformUser: async ({ params, principal }) => {
      const username = params.user!;
      const before = await platformUsers.get(username);
      if (!before || !(await platformUsers.delete(username))) throw noUser(username);
      await deps.audit.record({
        actor: principal.actor,
        action: "platform-user.delete",
        tenant: null,
        target: username,
        before,
      });
      return { status: 204 };
    },

    listTenantAdmins: async ({ params }) => {
      const { config } = await readTenant(deps, params.tenant!);
      return { status: 200, body: { items: await tenantAdmins.named(config.id) } };
    },

    addTenantAdmin: async ({ params, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const subject = params.subject!;
      const named = await tenantAdmins.named(config.id);
      if (!named.includes(subject)) {
        if (named.length >= MAX_NAMED_ADMINS)
          throw fail(
            "PORTICO_ERR_ADMIN_CONFLICT",
            `Tenant "${config.id}" already names ${MAX_NAMED_ADMINS} admins, the most it may: remove one first`,
          );
        await tenantAdmins.add(config.id, subject);
        await deps.audit.record({
          actor: principal.actor,
          action: "admin.add",
          tenant: config.id,
          target: subject,
        });
      }
      return { status: 204 };
    },

    removeTenantAdmin: async ({ params, principal }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const subject = params.subject!;
      if (!(await tenantAdmins.remove(config.id, subject)))
        throw fail(
          "PORTICO_ERR_ADMIN_NOT_FOUND",
          `"${excerpt(subject)}" is not a named admin of tenant "${config.id}"`,
        );
      await deps.audit.record({
        actor: principal.actor,
        action: "admin.remove",
        tenant: config.id,
        target: subject,
      });
      return { status: 204 };
    },

    tryTenant: async ({ params, body, principal }) => {
      const tenant = params.tenant!;
      const live = deps.registry.get(tenant);
      if (!live) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(tenant)}"`);
      const request = body as { method: TryMethod; params?: Record<string, unknown>; server?: string };
      const server = request.server === undefined ? undefined : deps.registry.server(tenant, request.server);
      if (request.server !== undefined && !server)
        throw fail(
          "PORTICO_ERR_ADMIN_NOT_FOUND",
          `Tenant "${tenant}" has no virtual server "${excerpt(request.server)}"`,
        );
      if (!deps.tryIt) throw new Error("try it is not wired in");
      const caller = principal.caller ?? { sub: `admin:${principal.actor}` };
      const answer = await deps.tryIt.run(
        {
          tenant,
          server: request.server,
          method: request.method,
          params: request.params,
          serverScopes: server?.server?.scopes,
        },
        caller,
      );
      const name = request.params?.name ?? request.params?.uri;
      await deps.audit.record({
        actor: principal.actor,
        action: "console.try",
        tenant,
        target: typeof name === "string" ? `${request.method} ${excerpt(name)}` : request.method,
        user: { sub: caller.sub, ...(caller.username !== undefined && { username: caller.username }) },
        client: "portico-admin",
        ...(request.server !== undefined && { server: request.server }),
        after:
          "error" in answer
            ? { error: { code: answer.error.code, message: answer.error.message } }
            : { ok: true },
      });
      return { status: 200, body: answer };
    },

    getTraffic: async ({ query, principal }) => {
      const asked = query.tenant as string | undefined;
      if (principal.tenant !== null && asked !== undefined && asked !== principal.tenant)
        throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(asked)}"`);
      const tenant = principal.tenant ?? asked;
      const minutes = (query.minutes as number | undefined) ?? 60;
      try {
        return {
          status: 200,
          body: await deps.traffic.read({ minutes, ...(tenant !== undefined && { tenant }) }),
        };
      } catch (err) {
        deps.log.warn({ err }, "traffic overview: Prometheus could not be queried");
        throw fail(
          "PORTICO_ERR_ADMIN_UPSTREAM",
          "Prometheus (PORTICO_PROMETHEUS_URL) could not be queried; the server log says why",
        );
      }
    },
  };
}
