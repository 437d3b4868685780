// The token endpoint (OAuth 2.1 §3.2, §4.1.3, §4.3) and revocation (RFC 7009): codes are
// exchanged once with their PKCE verifier, refresh tokens rotate and go only to clients registered
// with the refresh_token grant type (RFC 7591 §2), a replayed code or reused refresh token revokes
// everything its grant issued, and a client can revoke only its own tokens (RFC 7009 §2.1).
import { decodeJwt } from "jose";
import { sameResource } from "../auth/resource-server.js";
import type { AccessTokens } from "./access-tokens.js";
import { pkceMatches } from "./authorize.js";
import type { CodeRecord, Grant, GrantStore } from "./grants.js";
import { tenantOfSecret } from "./grants.js";

/** An RFC 6749 §5.2 error. */
export class TokenError extends Error {
  constructor(
    readonly error: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: "Bearer";
  readonly expires_in: number;
  /** Only for clients whose registered grant_types include refresh_token. */
  readonly refresh_token?: string;
  readonly scope: string;
}

/**
 * Whether a client may have refresh tokens: known (a registered client's grant_types), or asked
 * only when it matters (a metadata-document client's document, fetched once the code or refresh
 * token is known to be the client's own, so a stranger's request fetches nothing); undefined:
 * cannot tell.
 */
export type RefreshPermission = boolean | undefined | (() => Promise<boolean | undefined>);

const decided = async (p: RefreshPermission): Promise<boolean | undefined> =>
  typeof p === "function" ? p() : p;

/** A grant's user's groups and roles now (a local user's from their record). */
export type AttributesOf = (
  grant: Grant,
) => Promise<{ groups?: readonly string[]; roles?: readonly string[] }>;

/** Throws unless the code's own client presents it with its verifier (and matching redirect_uri, resource). */
function checkPresenter(record: CodeRecord, clientId: string, params: Record<string, string>): void {
  if (record.client_id !== clientId)
    throw new TokenError("invalid_grant", "the code was issued to another client");
  // OAuth 2.1 §4.1.3: with PKCE the client may omit redirect_uri; one that is sent must be the
  // authorization request's (the registered one when the request named none).
  if (params.redirect_uri !== undefined && params.redirect_uri !== record.redirect_uri)
    throw new TokenError("invalid_grant", "redirect_uri does not match the authorization request");
  if (!params.code_verifier || !pkceMatches(params.code_verifier, record.code_challenge))
    throw new TokenError("invalid_grant", "code_verifier does not match the code_challenge");
  if (params.resource !== undefined && !sameResource(params.resource, record.resource))
    throw new TokenError("invalid_target", "resource differs from the authorization request");
}

export class TokenService {
  constructor(
    private readonly grants: GrantStore,
    private readonly accessTokens: AccessTokens,
    private readonly attributesOf: AttributesOf = async (grant) => grant,
  ) {}

  /** Issues an access token under a grant, and a refresh token when `refresh` says the client may have one. */
  async #issue(grant: Grant, resource: string, scope: string, refresh: boolean): Promise<TokenResponse> {
    // Groups and roles as they are now: a refresh picks up a change (docs/policy.md).
    const { groups, roles } = await this.attributesOf(grant);
    const issued = await this.accessTokens.issue({
      sub: grant.sub,
      aud: resource,
      client_id: grant.client_id,
      scope,
      ...(groups && { groups }),
      ...(roles && { roles }),
      ...(grant.username !== undefined && { username: grant.username }),
    });
    const now = Math.floor(Date.now() / 1000);
    await this.grants.noteToken(grant.tenant, grant.id, issued.jti, now + issued.expiresIn);
    const refreshToken = refresh
      ? await this.grants.issueRefresh(grant.tenant, {
          grantId: grant.id,
          client_id: grant.client_id,
          scope,
          resource,
        })
      : undefined;
    return {
      access_token: issued.token,
      token_type: "Bearer",
      expires_in: issued.expiresIn,
      ...(refreshToken !== undefined && { refresh_token: refreshToken }),
      scope,
    };
  }

  /** Revokes a grant and every access token it issued. */
  async revokeGrant(tenant: string, grantId: string): Promise<void> {
    const revoked = await this.grants.revokeGrant(tenant, grantId);
    for (const [jti, exp] of Object.entries(revoked?.tokens ?? {})) await this.accessTokens.revoke(jti, exp);
  }

  /** `mayRefresh`: whether the client's grant_types include refresh_token now (false: no refresh token). */
  async exchangeCode(
    clientId: string,
    params: Record<string, string>,
    mayRefresh?: RefreshPermission,
  ): Promise<TokenResponse> {
    const code = params.code;
    if (!code) throw new TokenError("invalid_request", "code is required");
    // Checked before the code is used, as a refresh token is: a stranger holding the code but not
    // its client or verifier neither burns it nor, once redeemed, revokes what it issued.
    const peeked = await this.grants.peekCode(code);
    if (peeked) checkPresenter(peeked, clientId, params);
    const redeemed = await this.grants.redeemCode(code);
    if (!redeemed.ok) {
      const tenant = tenantOfSecret(code);
      // A code used twice was stolen or replayed: what it issued is revoked (OAuth 2.1 §4.1.3).
      if (redeemed.replay && tenant) await this.revokeGrant(tenant, redeemed.replay.grantId);
      throw new TokenError("invalid_grant", "the code is invalid, expired or already used");
    }
    const record = redeemed.record;
    checkPresenter(record, clientId, params);
    const tenant = tenantOfSecret(code)!;
    const grant = await this.grants.grant(tenant, record.grantId);
    if (!grant || grant.revokedAt) throw new TokenError("invalid_grant", "the grant was revoked");
    // Allowed when the code was issued and still allowed now (a metadata document may have changed).
    const refresh = record.refresh === true && (await decided(mayRefresh)) !== false;
    return this.#issue(grant, record.resource, record.scope, refresh);
  }

  /**
   * The refresh_token grant. `mayRefresh` is false for a client whose registered grant_types lack
   * refresh_token (RFC 6749 §5.2 unauthorized_client), a metadata-document client's as its
   * document reads now; undefined when that document cannot be fetched (the client then holds a
   * refresh token only if it was allowed one at issuance).
   */
  async refresh(
    clientId: string,
    params: Record<string, string>,
    mayRefresh?: RefreshPermission,
  ): Promise<TokenResponse> {
    const unauthorized = () =>
      new TokenError("unauthorized_client", "this client is not registered for the refresh_token grant");
    if (mayRefresh === false) throw unauthorized();
    const token = params.refresh_token;
    if (!token) throw new TokenError("invalid_request", "refresh_token is required");
    const tenant = tenantOfSecret(token);
    // Another client's refresh token changes nothing: it is refused before it is used (rotated).
    const peeked = await this.grants.peekRefresh(token);
    if (peeked && peeked.client_id !== clientId)
      throw new TokenError("invalid_grant", "the refresh token is invalid, expired or already used");
    // Asked once the token is the client's own, before it is used: refused, it stays as it was.
    if (peeked && typeof mayRefresh === "function" && (await mayRefresh()) === false) throw unauthorized();
    // A resource this grant can never have (another tenant's URL) is refused before the token is
    // used, so a client's mistake does not cost it the token (a rotated one goes on to reuse detection).
    if (
      peeked &&
      !peeked.rotated &&
      params.resource !== undefined &&
      !sameResource(params.resource, peeked.resource)
    )
      throw new TokenError("invalid_target", "resource differs from the grant");
    const used = await this.grants.useRefresh(token);
    if (!used.ok) {
      // Reuse of a rotated refresh token: the family is compromised, revoke it.
      if (used.replay && tenant) await this.revokeGrant(tenant, used.replay.grantId);
      throw new TokenError("invalid_grant", "the refresh token is invalid, expired or already used");
    }
    const record = used.record;
    if (record.client_id !== clientId)
      throw new TokenError("invalid_grant", "the refresh token belongs to another client");
    const grant = await this.grants.grant(tenant!, record.grantId);
    if (!grant || grant.revokedAt) throw new TokenError("invalid_grant", "the grant was revoked");
    const granted = record.scope.split(" ");
    const asked = params.scope?.split(" ").filter(Boolean);
    if (asked?.some((s) => !granted.includes(s)))
      throw new TokenError("invalid_scope", "a refresh cannot widen the granted scope");
    if (params.resource !== undefined && !sameResource(params.resource, record.resource))
      throw new TokenError("invalid_target", "resource differs from the grant");
    return this.#issue(grant, record.resource, asked ? asked.join(" ") : record.scope, true);
  }

  /**
   * RFC 7009: revokes a refresh token (and its grant) or an access token; unknown tokens are fine.
   * §2.1: a token issued to another client is left exactly as it was (read, never used or marked).
   */
  async revoke(clientId: string, token: string): Promise<void> {
    const tenant = tenantOfSecret(token);
    if (tenant) {
      const record = await this.grants.peekRefresh(token);
      if (record && record.client_id === clientId) await this.revokeGrant(tenant, record.grantId);
      return;
    }
    let audience: unknown;
    try {
      audience = decodeJwt(token).aud;
    } catch {
      return;
    }
    if (typeof audience !== "string") return;
    const claims = await this.accessTokens.verify(token, audience).catch(() => undefined);
    if (claims && claims.client_id === clientId) await this.accessTokens.revoke(claims.jti, claims.exp);
  }
}
