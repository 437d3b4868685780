// Validation of tenant and provider records: a record's schema (tenant.ts), then what it cannot
// say (provider-kinds.ts, the identity's URLs), then the rules between records: collisions between
// providers, servers selecting them, per-user providers needing sign-in. A record that passes
// validateTenant() is safe to build providers from.
import {
  exposedName,
  perUserAuth,
  PROVIDER_RECORDS,
  TENANT_RECORDS,
  type ProviderConfig,
  type TenantConfig,
  type TenantIdentity,
} from "./tenant.js";
import { at, bad, compact, httpUrl, isObject } from "./fields.js";
import { checkKind } from "./provider-kinds.js";
import { checkSchema } from "./schema-check.js";
import { validateServers } from "./validate-server.js";
import { validatePolicy } from "./validate-policy.js";
import { perUserRefusal } from "./user-oauth.js";

type Claim = [space: string, value: string, path: string];

/** What a provider adds to the tenant's shared namespaces. */
function claims(p: ProviderConfig): Claim[] {
  // An upstream's entries are known only at run time; a document's once it is compiled (the
  // catalog keeps names apart then, as for mcp providers).
  if (p.kind === "mcp" || p.kind === "openapi") return [];
  if (p.kind === "http")
    return p.tools.map((t, i) => ["tool name", exposedName(p, t.name), `tools[${i}].name`]);
  const prompts = (p.prompts ?? []).map((e, i): Claim => [
    "prompt name",
    exposedName(p, e.name),
    `prompts[${i}].name`,
  ]);
  return [
    ...prompts,
    ...(p.resources ?? []).map((e, i): Claim => ["resource URI", e.uri, `resources[${i}].uri`]),
  ];
}

/** Throws when `p`'s id or exposed names collide with one of `others`, naming both providers. */
export function checkAgainst(p: ProviderConfig, path: string, others: readonly ProviderConfig[]): void {
  for (const other of others) {
    if (other.id === p.id) bad(at(path, "id"), `another provider of this tenant already has id "${p.id}"`);
    const theirs = new Set(claims(other).map(([space, value]) => `${space}\n${value}`));
    for (const [space, value, inner] of claims(p)) {
      if (!theirs.has(`${space}\n${value}`)) continue;
      const fix = space === "resource URI" ? RESOURCE_COLLISION_FIX : 'give one of them a "prefix"';
      bad(
        `${path}.${inner}`,
        `${space} "${value}" of provider "${p.id}" collides with provider "${other.id}"; ${fix}`,
      );
    }
  }
}

/**
 * Validates one provider record. `others` are the tenant's other providers: ids and exposed
 * names must not collide with theirs. Throws PORTICO_ERR_CONFIG_INVALID naming the JSON path.
 */
export function validateProvider(
  input: unknown,
  where = "provider",
  others: readonly ProviderConfig[] = [],
): ProviderConfig {
  checkSchema(PROVIDER_RECORDS.Provider, input, where);
  checkKind(input, where);
  checkAgainst(input, where, others);
  return structuredClone(input);
}

/** Validates a tenant's identity settings (how its users sign in, or whose tokens it trusts). */
export function validateIdentity(input: unknown, where: string): TenantIdentity {
  checkSchema(TENANT_RECORDS.TenantIdentity, input, where);
  checkIdentityUrls(input, where);
  return structuredClone(input);
}

/** The identity's URLs are ones Portico may reach, without credentials (a schema cannot say). */
function checkIdentityUrls(identity: TenantIdentity, where: string): void {
  if (identity.type === "local") return;
  httpUrl(identity, "issuer", where);
  if (identity.type === "external") httpUrl(identity, "jwksUrl", where);
}

/** Why a tenant without sign-in refuses a per-user provider. */
/**
 * What resolves two providers serving one resource URI: a prefix renames tools and prompts only,
 * and no provider kind filters the resources it serves (architecture.md §3).
 */
export const RESOURCE_COLLISION_FIX =
  'a "prefix" renames tools and prompts, not resource URIs: remove the resource from one of the providers (a static provider\'s "resources"; an upstream MCP server serves its own list), or serve the two providers in separate tenants';

export const PER_USER_NEEDS_SIGN_IN = 'acts for each signed-in user: the tenant needs "auth": "oauth"';

/**
 * Validates a tenant record: its schema (tenant.ts), then what the schema cannot say about its
 * providers, identity, servers and policy and the rules between them. Throws
 * PORTICO_ERR_CONFIG_INVALID naming the JSON path.
 */
export function validateTenant(input: unknown, where = "tenant"): TenantConfig {
  // A tenants file may leave "providers" out: none.
  const o = isObject(input) && input.providers === undefined ? { ...input, providers: [] } : input;
  checkSchema(TENANT_RECORDS.Tenant, o, where);
  const listed = at(where, "providers");
  const providers = o.providers.map((p, i) => {
    checkKind(p, at(listed, i));
    checkAgainst(p, at(listed, i), o.providers.slice(0, i));
    return structuredClone(p);
  });
  // A per-user provider acts for the signed-in user: a tenant without sign-in has none.
  const perUser = providers.find(perUserAuth);
  if (o.auth === "none" && perUser && perUser.kind !== "static")
    bad(
      at(at(listed, providers.indexOf(perUser)), "auth"),
      `"${perUser.auth!.type}" ${PER_USER_NEEDS_SIGN_IN}`,
    );
  const identity = o.identity && structuredClone(o.identity);
  if (identity) checkIdentityUrls(identity, at(where, "identity"));
  // An empty limits object says nothing: keep records canonical without it.
  const limits = o.limits && Object.keys(o.limits).length > 0 ? { ...o.limits } : undefined;
  const servers = o.servers === undefined ? [] : validateServers(o.servers, at(where, "servers"), providers);
  // One audience for every URL would let a token for /mcp/{tenant} open each of its servers.
  if (servers.length > 0 && identity?.type === "external" && identity.audience !== undefined)
    bad(
      at(at(where, "identity"), "audience"),
      "a fixed audience cannot be set on a tenant with virtual servers: each server's tokens name its own URL",
    );
  const policy = o.policy === undefined ? undefined : validatePolicy(o.policy, at(where, "policy"));
  // A connected account needs a connect page that knows the user (docs/upstream-auth.md).
  const connected = providers.findIndex((p) => p.kind !== "static" && p.auth?.type === "user_oauth");
  const refusal = connected < 0 ? undefined : perUserRefusal({ auth: o.auth, identity });
  if (refusal) bad(at(at(listed, connected), "auth"), refusal);
  return compact({
    id: o.id,
    auth: o.auth,
    name: o.name,
    identity,
    limits,
    providers,
    servers: servers.length > 0 ? servers : undefined,
    policy,
    pinning: o.pinning,
  });
}
