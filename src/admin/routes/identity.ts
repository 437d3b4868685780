// /tenants/{t}/identity: how an oauth tenant's users sign in (local users, its own OpenID
// provider, or an external authorization server). Saved by compare-and-set of the tenant record,
// with If-Match; the OIDC client secret is write-only (kept only for the same issuer,
// kept-secrets.ts), sealed at rest by the tenant store.
import { excerpt, fail } from "../../protocol/errors.js";
import type { TenantConfig, TenantIdentity } from "../../records/tenant.js";
import { IDENTITY_SECRETS } from "../../records/secret-fields.js";
import { perUserRefusal } from "../../records/user-oauth.js";
import { secretChanges } from "../kept-secrets.js";
import type { Handler } from "../plugin.js";
import { invalid } from "../openapi/validator.js";
import { checkIdentity, checkIfMatch, etagOf, redactIdentity } from "../records.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

/** The config with `identity` as given; local users are the default, so "local" is stored as absent. */
function withIdentity(config: TenantConfig, identity: TenantIdentity): TenantConfig {
  const { identity: _previous, ...rest } = config;
  return identity.type === "local" ? rest : { ...rest, identity };
}

export function identityHandlers(deps: AdminDeps): Record<string, Handler> {
  // A MAC over the settings, secret included: a new secret is a new version, and the tag reveals nothing.
  const etag = (identity: TenantIdentity | undefined) => etagOf(deps.secrets, identity ?? { type: "local" });

  return {
    getIdentity: async ({ params }) => {
      const { identity } = (await readTenant(deps, params.tenant!)).config;
      return { status: 200, body: redactIdentity(identity), etag: etag(identity) };
    },

    replaceIdentity: async ({ params, body, ifMatch, principal }) => {
      const id = params.tenant!;
      let before: TenantIdentity | undefined;
      let saved: TenantIdentity | undefined;
      let kept: readonly string[] = [];
      const change = await deps.records.mutate(id, (current) => {
        if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(id)}"`);
        before = current.config.identity;
        checkIfMatch(ifMatch, deps.secrets, before ?? { type: "local" });
        ({ identity: saved, kept } = checkIdentity(body, before));
        // Each virtual server's tokens name its own URL (docs/architecture.md §8).
        if (saved.type === "external" && saved.audience !== undefined && current.config.servers?.length)
          throw invalid([
            {
              pointer: "/audience",
              detail: "cannot be set on a tenant with virtual servers: each server's tokens name its own URL",
            },
          ]);
        const perUser = current.config.providers.some(
          (p) => p.kind !== "static" && p.auth?.type === "user_oauth",
        );
        const why = perUser ? perUserRefusal({ auth: current.config.auth, identity: saved }) : undefined;
        if (why) throw invalid([{ pointer: "/login", detail: why }]);
        return withIdentity(current.config, saved);
      });
      if (change.before !== change.after) {
        await deps.registry.reload(id);
        await deps.audit.record({
          actor: principal.actor,
          action: "identity.update",
          tenant: id,
          target: id,
          before: redactIdentity(before),
          after: redactIdentity(saved),
          secrets: secretChanges(before, saved, kept, IDENTITY_SECRETS),
        });
      }
      return { status: 200, body: redactIdentity(saved), etag: etag(saved) };
    },
  };
}
