// Per-user upstream authorization (docs/upstream-auth.md): what the schema of `auth: {type:
// "user_oauth"}` (tenant.ts) cannot say, where each user connects their own account at the
// upstream, and the tenant rule that makes it possible (the connect page must know who opens it).
import type { TenantConfig, UserOAuthAuth } from "./tenant.js";
import { at, bad, httpUrl } from "./fields.js";

/** What the schema of an `auth` object of type user_oauth cannot say. */
export function checkUserOAuth(auth: UserOAuthAuth, path: string): void {
  if (auth.issuer !== undefined) httpUrl(auth, "issuer", path, "clientSecret");
  // RFC 8414 §2: an issuer has no query or fragment.
  if (auth.issuer !== undefined && /[?#]/.test(auth.issuer))
    bad(at(path, "issuer"), "must have no query or fragment (RFC 8414 §2)");
  if (auth.registration === "preregistered" && auth.clientId === undefined)
    bad(at(path, "clientId"), 'is required with "registration": "preregistered"');
  if (auth.clientSecret !== undefined && auth.clientId === undefined)
    bad(at(path, "clientSecret"), 'needs "clientId": a secret belongs to a pre-registered client');
}

/**
 * Why a tenant cannot have per-user providers, or undefined when it can: the connect page signs
 * the user in to compare them with the MCP caller, so the tenant needs users (auth "oauth") and,
 * when it trusts an external authorization server, a client registration there to sign them in
 * with OpenID Connect (`identity.login`).
 */
export function perUserRefusal(tenant: Pick<TenantConfig, "auth" | "identity">): string | undefined {
  if (tenant.auth !== "oauth")
    return 'per-user authorization needs a tenant with "auth": "oauth": without sign-in there is no user to connect an account for';
  const identity = tenant.identity;
  if (identity?.type === "external" && identity.login === undefined)
    return 'per-user authorization on a tenant whose identity is "external" needs "identity.login" ({clientId, clientSecret} at that issuer), so the connect page can sign the user in and check who they are';
  return undefined;
}
