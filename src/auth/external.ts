// Tokens from an external authorization server (docs/oauth.md "External authorization server"):
// a tenant whose identity is "external" trusts JWTs that server signs, verified against its JWKS
// (fetched through the provider egress policy, cached per tenant) for issuer, audience, lifetime
// and an asymmetric algorithm (RFC 9068 §4, RFC 8725 §3.1: never "none" or HMAC).
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from "jose";
import type { Fetch } from "../egress/fetch.js";
import { namesFromClaim } from "../policy/claims.js";
import type { TenantIdentity } from "../records/tenant.js";
import type { TokenClaims, TokenVerifier } from "./resource-server.js";

export type ExternalIdentity = Extract<TenantIdentity, { type: "external" }>;

/** Public-key algorithms only: a shared-secret (HS*) or unsigned token never verifies. */
export const EXTERNAL_ALGORITHMS = ["RS256", "ES256", "PS256", "EdDSA"];
const LEEWAY_SECONDS = 30;

export interface ExternalVerifierOptions {
  /** The provider egress fetch (operator-configured URLs). */
  readonly fetch: Fetch;
  /** Clock in epoch milliseconds; tests inject one. */
  readonly now?: () => number;
  /** Sees every rejected token with its reason (the wire gets none). */
  readonly onInvalid?: (err: Error, tenant: string) => void;
}

/** Why an external token was refused; for logs only. */
export class ExternalTokenInvalid extends Error {
  override readonly name = "ExternalTokenInvalid";
}

/** Verifies one tenant's tokens against its external authorization server's JWKS. */
export class ExternalTokenVerifier implements TokenVerifier {
  readonly #jwks: ReturnType<typeof createRemoteJWKSet>;

  constructor(
    readonly identity: ExternalIdentity,
    private readonly options: ExternalVerifierOptions,
  ) {
    const fetch = options.fetch;
    this.#jwks = createRemoteJWKSet(new URL(identity.jwksUrl), {
      timeoutDuration: 5_000,
      // An unknown kid refetches the set at most every 30 s: a flood of forged kids costs nothing.
      cooldownDuration: 30_000,
      cacheMaxAge: 10 * 60_000,
      [customFetch]: (url, init) => fetch(url, init),
    });
  }

  /**
   * `audience` is the tenant's MCP URL, matched with or without a trailing slash
   * (docs/oauth.md#client-quirks); a configured audience replaces it, matched exactly.
   */
  async verify(token: string, audience: string): Promise<TokenClaims> {
    const { payload } = await jwtVerify(token, this.#jwks, {
      algorithms: EXTERNAL_ALGORITHMS,
      issuer: this.identity.issuer,
      audience: this.identity.audience ?? [audience, `${audience}/`],
      requiredClaims: ["sub", "exp"],
      clockTolerance: LEEWAY_SECONDS,
      ...(this.options.now && { currentDate: new Date(this.options.now()) }),
    });
    return claimsOf(payload, this.identity);
  }
}

/**
 * The claims Portico uses: `sub`, the client (`client_id`, else `azp`), the scopes, and the groups
 * and roles from the claims the identity settings name (docs/policy.md).
 */
export function claimsOf(payload: JWTPayload, identity?: ExternalIdentity): TokenClaims {
  const { sub, client_id, azp } = payload;
  if (typeof sub !== "string" || sub === "") throw new ExternalTokenInvalid("sub is not a string");
  const client = client_id ?? azp ?? "external";
  if (typeof client !== "string" || client === "")
    throw new ExternalTokenInvalid("client_id or azp is not a string");
  const groups = namesFromClaim(payload, identity?.groupsClaim);
  const roles = namesFromClaim(payload, identity?.rolesClaim);
  return {
    sub,
    client_id: client,
    scope: scopesOf(payload).join(" "),
    ...(groups.length > 0 && { groups }),
    ...(roles.length > 0 && { roles }),
  };
}

/** RFC 9068 `scope` (space-separated), or `scp` as some servers send it (array or string). */
function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload;
  if (typeof scope === "string") return scope.split(" ").filter(Boolean);
  if (typeof scp === "string") return scp.split(" ").filter(Boolean);
  if (Array.isArray(scp) && scp.every((s) => typeof s === "string")) return scp;
  if (scope === undefined && scp === undefined) return [];
  throw new ExternalTokenInvalid("scope or scp has an unexpected form");
}

/** One verifier per external tenant, kept while its identity settings stay the same. */
export class ExternalVerifiers {
  readonly #byTenant = new Map<string, { settings: string; verifier: ExternalTokenVerifier }>();

  constructor(private readonly options: ExternalVerifierOptions) {}

  for(tenant: string, identity: ExternalIdentity): TokenVerifier {
    const settings = JSON.stringify([
      identity.issuer,
      identity.jwksUrl,
      identity.audience,
      identity.groupsClaim,
      identity.rolesClaim,
    ]);
    let entry = this.#byTenant.get(tenant);
    if (entry?.settings !== settings) {
      entry = { settings, verifier: new ExternalTokenVerifier(identity, this.options) };
      this.#byTenant.set(tenant, entry);
    }
    const { verifier } = entry;
    const onInvalid = this.options.onInvalid;
    return {
      verify: (token, audience) =>
        verifier.verify(token, audience).catch((err: unknown) => {
          if (err instanceof errors.JOSEError || err instanceof ExternalTokenInvalid)
            onInvalid?.(err, tenant);
          throw err;
        }),
    };
  }
}
