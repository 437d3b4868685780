// Validation of tenant and provider records: a provider's schema (tenant.ts), then what it cannot
// say (provider-kinds.ts), then collisions with the tenant's other providers. A record that passes
// validateTenant() is safe to build providers from.
import {
  exposedName,
  MAX_REQUESTS_PER_MINUTE,
  MAX_SESSIONS,
  perUserAuth,
  PROVIDER_RECORDS,
  type ProviderConfig,
  type TenantConfig,
  type TenantIdentity,
  type TenantLimits,
} from "./tenant.js";
import { SLUG } from "./names.js";
import { at, bad, compact, httpUrl, int, isObject, list, matching, optional, record, str } from "./fields.js";
import { checkKind } from "./provider-kinds.js";
import { checkSchema } from "./schema-check.js";
import { validateServers } from "./validate-server.js";
import { validatePolicy } from "./validate-policy.js";
import { perUserRefusal } from "./user-oauth.js";

/** A claim name, or a dotted path into nested claims (`realm_access.roles`). */
const CLAIM = /^[A-Za-z0-9_:/-]{1,64}(?:\.[A-Za-z0-9_:/-]{1,64}){0,4}$/;
const CLAIM_RULE = "a claim name, or a dotted path of up to five names (A–Z a–z 0–9 _ : / -)";
const SLUG_RULE = "a lowercase slug: a–z, 0–9 and -, starting with a letter or digit, at most 63 characters";

type Claim = [space: string, value: string, path: string];

/** What a provider adds to the tenant's shared namespaces. */
function claims(p: ProviderConfig): Claim[] {
  if (p.kind === "mcp") return []; // an upstream's entries are known only at run time
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
      const fix =
        space === "resource URI" ? "resource URIs must be unique per tenant" : 'give one of them a "prefix"';
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

/** Validates a tenant record and its providers. Throws PORTICO_ERR_CONFIG_INVALID naming the JSON path. */
/** Validates a tenant's identity settings (how its users sign in, or whose tokens it trusts). */
export function validateIdentity(input: unknown, where: string): TenantIdentity {
  if (!isObject(input)) bad(where, "must be an object");
  switch (input.type) {
    case "local":
      record(input, where, ["type"]);
      return { type: "local" };
    case "oidc": {
      const o = record(input, where, [
        "type",
        "issuer",
        "clientId",
        "clientSecret",
        "scope",
        "label",
        "groupsClaim",
        "rolesClaim",
      ]);
      return compact({
        type: "oidc" as const,
        issuer: httpUrl(o, "issuer", where),
        clientId: str(o, "clientId", where, true),
        clientSecret: str(o, "clientSecret", where, true),
        scope: str(o, "scope", where),
        label: str(o, "label", where),
        groupsClaim: optional(o, "groupsClaim", where, CLAIM, CLAIM_RULE),
        rolesClaim: optional(o, "rolesClaim", where, CLAIM, CLAIM_RULE),
      });
    }
    case "external": {
      const o = record(input, where, [
        "type",
        "issuer",
        "jwksUrl",
        "audience",
        "groupsClaim",
        "rolesClaim",
        "login",
      ]);
      return compact({
        type: "external" as const,
        issuer: httpUrl(o, "issuer", where),
        jwksUrl: httpUrl(o, "jwksUrl", where),
        audience: str(o, "audience", where),
        groupsClaim: optional(o, "groupsClaim", where, CLAIM, CLAIM_RULE),
        rolesClaim: optional(o, "rolesClaim", where, CLAIM, CLAIM_RULE),
        login: o.login === undefined ? undefined : loginClient(o.login, at(where, "login")),
      });
    }
    default:
      bad(at(where, "type"), 'must be "local", "oidc" or "external"');
  }
}

/** Portico's OpenID Connect client at an external issuer (identity.login). */
function loginClient(input: unknown, where: string): { clientId: string; clientSecret: string } {
  const o = record(input, where, ["clientId", "clientSecret"]);
  return { clientId: str(o, "clientId", where, true), clientSecret: str(o, "clientSecret", where, true) };
}

/** Validates a tenant's rate limits and session caps (whole numbers, 0 for none). */
export function validateLimits(input: unknown, where: string): TenantLimits {
  const o = record(input, where, [
    "requestsPerMinute",
    "perClientRequestsPerMinute",
    "sessionsPerPrincipal",
    "sessionsPerAddress",
  ]);
  return compact({
    requestsPerMinute: int(o, "requestsPerMinute", where, 0, MAX_REQUESTS_PER_MINUTE),
    perClientRequestsPerMinute: int(o, "perClientRequestsPerMinute", where, 0, MAX_REQUESTS_PER_MINUTE),
    sessionsPerPrincipal: int(o, "sessionsPerPrincipal", where, 0, MAX_SESSIONS),
    sessionsPerAddress: int(o, "sessionsPerAddress", where, 0, MAX_SESSIONS),
  });
}

/** Why a tenant without sign-in refuses a per-user provider. */
export const PER_USER_NEEDS_SIGN_IN = 'acts for each signed-in user: the tenant needs "auth": "oauth"';

export function validateTenant(input: unknown, where = "tenant"): TenantConfig {
  const o = record(input, where, [
    "id",
    "auth",
    "name",
    "identity",
    "limits",
    "providers",
    "servers",
    "policy",
  ]);
  const id = matching(o, "id", where, SLUG, SLUG_RULE);
  if (o.auth === undefined) bad(at(where, "auth"), 'is required: set "auth": "oauth" or "none" (no sign-in)');
  if (o.auth !== "none" && o.auth !== "oauth") bad(at(where, "auth"), 'must be "none" or "oauth"');
  const providers: ProviderConfig[] = [];
  for (const [i, p] of list(o, "providers", where).entries())
    providers.push(validateProvider(p, at(at(where, "providers"), i), providers));
  // A per-user provider acts for the signed-in user: a tenant without sign-in has none.
  const perUser = providers.find(perUserAuth);
  if (o.auth === "none" && perUser && perUser.kind !== "static")
    bad(
      at(at(at(where, "providers"), providers.indexOf(perUser)), "auth"),
      `"${perUser.auth!.type}" ${PER_USER_NEEDS_SIGN_IN}`,
    );
  const identity = o.identity === undefined ? undefined : validateIdentity(o.identity, at(where, "identity"));
  const limits = o.limits === undefined ? undefined : validateLimits(o.limits, at(where, "limits"));
  // An empty limits object says nothing: keep records canonical without it.
  const stated = limits && Object.keys(limits).length > 0 ? limits : undefined;
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
  if (refusal) bad(at(at(at(where, "providers"), connected), "auth"), refusal);
  return compact({
    id,
    auth: o.auth,
    name: str(o, "name", where),
    identity,
    limits: stated,
    providers,
    servers: servers.length > 0 ? servers : undefined,
    policy,
  });
}
