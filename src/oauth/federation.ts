// Federated sign-in (docs/oauth.md "Federated login"): Portico as a client of a tenant's own OpenID
// Connect provider — authorization code with PKCE S256, state and nonce, client_secret_basic
// (OpenID Connect Core 1.0 §3.1, RFC 7636, RFC 9207) — through the provider egress fetch. The
// provider's user becomes a Portico subject derived from (issuer, sub), never from the email.
import { createHash } from "node:crypto";
import { createRemoteJWKSet, customFetch, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import type { Fetch } from "../egress/fetch.js";
import type { FetchBackoff } from "../limits/fetch-backoff.js";
import { namesFromClaim } from "../policy/claims.js";
import type { TenantIdentity } from "../records/tenant.js";

export type OidcIdentity = Extract<TenantIdentity, { type: "oidc" }>;

/** A sign-in at the provider in progress; kept server-side in the Portico flow it belongs to. */
export interface PendingFederation {
  /** The provider's issuer as configured when the sign-in started. */
  readonly issuer: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  /** Epoch milliseconds after which the callback is refused. */
  readonly expiresAt: number;
}

/** Who signed in at the provider, as Portico knows them. */
export interface FederatedUser {
  /** `oidc_` + 22 characters of base64url(SHA-256(issuer + " " + provider sub)). */
  readonly sub: string;
  /** What the consent page shows: the email, else preferred_username, name or the provider's sub. */
  readonly username: string;
  readonly email?: string;
  /** From the claims the identity settings name (groupsClaim, rolesClaim); absent when empty. */
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  /** The provider's own `sub` (the connected-accounts pages compare it with an external token's). */
  readonly providerSub?: string;
}

/** "denied": the provider said no (the user cancelled); "failed": anything else. For logs, not the wire. */
export class FederationError extends Error {
  override readonly name = "FederationError";
  constructor(
    readonly kind: "denied" | "failed",
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export const FEDERATION_TTL_SECONDS = 300;
const DISCOVERY_TTL_MS = 60 * 60_000;
const TIMEOUT_MS = 10_000;
/** ID token signatures: public-key algorithms only (no "none", no HMAC keyed with the client secret). */
const ID_TOKEN_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

interface Discovered {
  readonly as: oauth.AuthorizationServer;
  readonly jwks: ReturnType<typeof createRemoteJWKSet>;
}

export interface FederationOptions {
  /** `<issuer>/oauth/callback`, registered at every tenant's provider. */
  readonly redirectUri: string;
  /** The provider egress fetch: provider URLs are operator-configured. */
  readonly fetch: Fetch;
  /** Clock in epoch milliseconds; tests inject one. */
  readonly now?: () => number;
  /** Failed discoveries, remembered per issuer across replicas (limits/fetch-backoff.ts). */
  readonly backoff?: FetchBackoff;
}

export class Federation {
  readonly #discovered = new Map<string, { value: Promise<Discovered>; expiresAt: number }>();
  readonly #now: () => number;

  constructor(private readonly options: FederationOptions) {
    this.#now = options.now ?? Date.now;
  }

  /** Starts a sign-in: the provider's authorization URL, and what the callback will need. */
  async begin(identity: OidcIdentity): Promise<{ url: URL; pending: PendingFederation }> {
    const { as } = await this.#discover(identity.issuer);
    if (!as.authorization_endpoint)
      throw new FederationError("failed", "the provider has no authorization_endpoint");
    const pending: PendingFederation = {
      issuer: identity.issuer,
      state: oauth.generateRandomState(),
      nonce: oauth.generateRandomNonce(),
      codeVerifier: oauth.generateRandomCodeVerifier(),
      expiresAt: this.#now() + FEDERATION_TTL_SECONDS * 1000,
    };
    const url = new URL(as.authorization_endpoint);
    const params = {
      response_type: "code",
      client_id: identity.clientId,
      redirect_uri: this.options.redirectUri,
      scope: scopeOf(identity),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: "S256",
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return { url, pending };
  }

  /** The provider's authorization endpoint, when discovery succeeds (cached). */
  async authorizationEndpoint(identity: OidcIdentity): Promise<string | undefined> {
    return this.#discover(identity.issuer).then(
      ({ as }) => as.authorization_endpoint,
      () => undefined,
    );
  }

  /** Finishes a sign-in from the callback URL; throws FederationError. */
  async complete(identity: OidcIdentity, pending: PendingFederation, callback: URL): Promise<FederatedUser> {
    if (this.#now() > pending.expiresAt) throw new FederationError("failed", "the sign-in took too long");
    const { as, jwks } = await this.#discover(identity.issuer);
    const client: oauth.Client = { client_id: identity.clientId };
    let params: URLSearchParams;
    try {
      // State (again) and, when the provider sends it, iss (RFC 9207: no mix-up with another provider).
      params = oauth.validateAuthResponse(as, client, callback, pending.state);
    } catch (err) {
      const error = err instanceof oauth.AuthorizationResponseError ? err.error : undefined;
      if (error === "access_denied")
        throw new FederationError("denied", "the user cancelled or was refused", { cause: err });
      const why = error ? `the provider answered ${error}` : "the provider's response is not valid";
      throw new FederationError("failed", why, { cause: err });
    }
    try {
      const http = this.#http(identity.issuer);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(identity.clientSecret),
        params,
        this.options.redirectUri,
        pending.codeVerifier,
        http,
      );
      // iss, aud, azp, exp, iat and nonce (OpenID Connect Core §3.1.3.7).
      const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: pending.nonce,
        requireIdToken: true,
      });
      const claims = oauth.getValidatedIdTokenClaims(result)!;
      // The token endpoint's TLS would vouch for the ID token; an http provider has none, so check it.
      await jwtVerify(result.id_token!, jwks, { algorithms: ID_TOKEN_ALGORITHMS, issuer: as.issuer });
      let profile: Record<string, unknown> = claims;
      // The userinfo endpoint may hold what the ID token leaves out: the e-mail, groups or roles.
      const wanted = [identity.groupsClaim, identity.rolesClaim].filter((c) => c !== undefined);
      const missing = claims.email === undefined || wanted.some((c) => !(c.split(".")[0]! in claims));
      if (missing && as.userinfo_endpoint) {
        const info = await oauth.userInfoRequest(as, client, result.access_token, http);
        profile = { ...(await oauth.processUserInfoResponse(as, client, claims.sub, info)), ...claims };
      }
      return userOf(as.issuer, claims.sub, profile, identity);
    } catch (err) {
      if (err instanceof FederationError) throw err;
      throw new FederationError("failed", `the code exchange or the ID token failed: ${String(err)}`, {
        cause: err,
      });
    }
  }

  /**
   * Discovery (OpenID Connect Discovery 1.0), cached per issuer for an hour. A failure is not
   * cached, but starts a back-off shared by the replicas: anonymous sign-ins cannot make Portico
   * fetch a failing provider again and again.
   */
  #discover(issuer: string): Promise<Discovered> {
    const cached = this.#discovered.get(issuer);
    if (cached && cached.expiresAt > this.#now()) return cached.value;
    const { backoff } = this.options;
    const value = backoff
      ? backoff.guard(
          issuer,
          () => this.#fetchMetadata(issuer),
          (seconds) =>
            new FederationError("failed", `discovery at ${issuer} failed; not tried again for ${seconds} s`),
        )
      : this.#fetchMetadata(issuer);
    this.#discovered.set(issuer, { value, expiresAt: this.#now() + DISCOVERY_TTL_MS });
    value.catch(() => this.#discovered.delete(issuer));
    return value;
  }

  async #fetchMetadata(issuer: string): Promise<Discovered> {
    let as: oauth.AuthorizationServer;
    try {
      const response = await oauth.discoveryRequest(new URL(issuer), {
        algorithm: "oidc",
        ...this.#http(issuer),
      });
      as = await oauth.processDiscoveryResponse(new URL(issuer), response);
    } catch (err) {
      throw new FederationError("failed", `discovery at ${issuer} failed: ${String(err)}`, { cause: err });
    }
    if (!as.jwks_uri) throw new FederationError("failed", `${issuer} publishes no jwks_uri`);
    const fetch = this.options.fetch;
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri), {
      timeoutDuration: TIMEOUT_MS,
      [customFetch]: (url, init) => fetch(url, init),
    });
    return { as, jwks };
  }

  #http(issuer: string) {
    return {
      [oauth.customFetch]: this.options.fetch,
      // Whether an http provider is reachable is the egress policy's call; an https one stays https.
      [oauth.allowInsecureRequests]: issuer.startsWith("http:"),
      signal: () => AbortSignal.timeout(TIMEOUT_MS),
    };
  }
}

/** "openid email" and the configured extra scopes. */
export function scopeOf(identity: OidcIdentity): string {
  return [...new Set(["openid", "email", ...(identity.scope ?? "").split(" ").filter(Boolean)])].join(" ");
}

/**
 * Portico's subject for a provider's user: stable, opaque, distinct per provider. Unambiguous
 * because an issuer is a URL (discovery checked it parses as one), which holds no space.
 */
export function federatedSub(issuer: string, sub: string): string {
  return `oidc_${createHash("sha256").update(`${issuer} ${sub}`).digest("base64url").slice(0, 22)}`;
}

function userOf(
  issuer: string,
  sub: string,
  profile: Record<string, unknown>,
  identity: OidcIdentity,
): FederatedUser {
  const text = (name: string) => {
    const v = profile[name];
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const email = text("email");
  const username = email ?? text("preferred_username") ?? text("name") ?? sub;
  const groups = namesFromClaim(profile, identity.groupsClaim);
  const roles = namesFromClaim(profile, identity.rolesClaim);
  return {
    sub: federatedSub(issuer, sub),
    username,
    ...(email && { email }),
    ...(groups.length > 0 && { groups }),
    ...(roles.length > 0 && { roles }),
    providerSub: sub,
  };
}
