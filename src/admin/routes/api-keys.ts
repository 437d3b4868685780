// /api-keys (platform) and /tenants/{t}/api-keys: create (the key is shown once), list, revoke.
import { excerpt, fail } from "../../protocol/errors.js";
import type { ApiKeyRecord } from "../api-keys.js";
import type { AdminCall, Handler } from "../plugin.js";
import type { ApiKeyInput } from "../openapi/schemas.js";
import { invalid } from "../openapi/validator.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

function newestFirst(key: ApiKeyRecord): string {
  return `${String(9_999_999_999_999 - Date.parse(key.createdAt)).padStart(13, "0")}|${key.id}`;
}

export function apiKeyHandlers(deps: AdminDeps): Record<string, Handler> {
  /** The scope a call works on: its tenant (checked to exist) or the platform. */
  async function scope(call: AdminCall): Promise<string | null> {
    const tenant = call.params.tenant;
    if (tenant === undefined) return null;
    await readTenant(deps, tenant);
    return tenant;
  }
  const base = (tenant: string | null) => (tenant === null ? "/api-keys" : `/tenants/${tenant}/api-keys`);

  const list: Handler = async (call) => {
    const tenant = await scope(call);
    const all = await deps.apiKeys.list(tenant);
    const page = deps.cursors.slice(`keys|${tenant ?? ""}`, all, newestFirst, call.query);
    return { status: 200, body: page };
  };

  const create: Handler = async (call) => {
    const tenant = await scope(call);
    const input = call.body as ApiKeyInput;
    if (input.expiresAt !== undefined && Date.parse(input.expiresAt) <= Date.now())
      throw invalid([{ pointer: "/expiresAt", detail: "must be in the future" }]);
    const { key, token } = await deps.apiKeys.create(tenant, input, call.principal.actor);
    await deps.audit.record({
      actor: call.principal.actor,
      action: "api-key.create",
      tenant,
      target: key.id,
      after: key,
    });
    return { status: 201, body: { ...key, token }, location: `${base(tenant)}/${key.id}` };
  };

  const revoke: Handler = async (call) => {
    const tenant = await scope(call);
    const before = await deps.apiKeys.get(tenant, call.params.key!);
    const key = await deps.apiKeys.revoke(tenant, call.params.key!);
    if (!key || !before)
      throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No API key "${excerpt(call.params.key)}" here`);
    if (!before.revokedAt)
      await deps.audit.record({
        actor: call.principal.actor,
        action: "api-key.revoke",
        tenant,
        target: key.id,
        before,
        after: key,
      });
    return { status: 204 };
  };

  return {
    listTenantApiKeys: list,
    createTenantApiKey: create,
    revokeTenantApiKey: revoke,
    listPlatformApiKeys: list,
    createPlatformApiKey: create,
    revokePlatformApiKey: revoke,
  };
}
