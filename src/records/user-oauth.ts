// Validation of per-user upstream authorization (docs/upstream-auth.md): `auth: {type:
// "user_oauth"}`, where each user connects their own account at the upstream, and the tenant rule
// that makes it possible (the connect page must know who opens it).
import type { TenantConfig, UserOAuthAuth } from "./tenant.js";
import { at, bad, compact, httpUrl, optional, type Obj, str } from "./fields.js";

export const USER_OAUTH_KEYS = [
  "type",
  "issuer",
  "scope",
  "registration",
  "clientId",
  "clientSecret",
] as const;
const REGISTRATIONS = ["auto", "metadata_document", "dynamic", "preregistered"] as const;
const REGISTRATION = new RegExp(`^(?:${REGISTRATIONS.join("|")})$`);
/** RFC 6749 §3.3: space-delimited scope-tokens of %x21 / %x23-5B / %x5D-7E. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/;

/** An `auth` object of type user_oauth, its keys already checked. */
export function userOAuth(o: Obj, path: string): UserOAuthAuth {
  const issuer = o.issuer === undefined ? undefined : httpUrl(o, "issuer", path, "clientSecret");
  // RFC 8414 §2: an issuer has no query or fragment.
  if (issuer !== undefined && /[?#]/.test(issuer))
    bad(at(path, "issuer"), "must have no query or fragment (RFC 8414 §2)");
  const registration = optional(
    o,
    "registration",
    path,
    REGISTRATION,
    '"auto", "metadata_document", "dynamic" or "preregistered"',
  ) as UserOAuthAuth["registration"];
  const clientId = str(o, "clientId", path);
  const clientSecret = str(o, "clientSecret", path);
  if (registration === "preregistered" && clientId === undefined)
    bad(at(path, "clientId"), 'is required with "registration": "preregistered"');
  if (clientSecret !== undefined && clientId === undefined)
    bad(at(path, "clientSecret"), 'needs "clientId": a secret belongs to a pre-registered client');
  return compact({
    type: "user_oauth" as const,
    issuer,
    scope: optional(o, "scope", path, SCOPE, "space-separated scope tokens (RFC 6749 §3.3)"),
    registration,
    clientId,
    clientSecret,
  });
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
