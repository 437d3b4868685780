// Access tokens (docs/oauth.md "Access tokens"): ES256 JWTs in the RFC 9068 profile, issued by the
// authorization server and verified by the resource server, with a revocation list that expires
// with the tokens it names. Verification failures carry a reason for logs, never for the wire.

import { errors, jwtVerify, SignJWT, type JWTHeaderParameters, type JWTPayload } from "jose";
import { sameResource } from "../auth/resource-server.js";
import { RevocationList } from "./revocations.js";
import { randomId } from "../crypto/secrets.js";
import type { SigningKeys } from "./signing-keys.js";

export interface AccessTokensOptions {
  /** Seconds from issue to `exp` (default 3600). */
  readonly lifetimeSeconds?: number;
  /** Clock skew tolerated on `exp`, `nbf` and `iat` (default 30). */
  readonly leewaySeconds?: number;
  /** Clock in epoch milliseconds; tests inject one. */
  readonly now?: () => number;
  /** Sees every rejected token, to log its reason (the wire gets none). */
  readonly onInvalid?: (err: InvalidToken) => void;
}

/** What a token is issued for. */
export interface AccessTokenRequest {
  readonly sub: string;
  /** The resource (RFC 8707): a tenant's MCP URL. */
  readonly aud: string;
  readonly client_id: string;
  /** Space-separated scopes (RFC 6749 §3.3). */
  readonly scope: string;
  /** The user's groups and roles at issuance (docs/policy.md); left out when empty. */
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  /** A local user's username (claim `preferred_username`), so the audit log can name them. */
  readonly username?: string;
}

/** Most groups or roles a token carries, and the longest name: a token is a header. */
export const MAX_ATTRIBUTES = 100;
const MAX_ATTRIBUTE_CHARS = 256;

/** The claims of a verified access token (RFC 9068 §2.2). */
export interface AccessTokenClaims extends AccessTokenRequest {
  readonly iss: string;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
}

export interface IssuedAccessToken {
  readonly token: string;
  /** Seconds until it expires, for the token response's `expires_in`. */
  readonly expiresIn: number;
  readonly jti: string;
}

export type InvalidTokenReason =
  "malformed" | "signature" | "type" | "issuer" | "audience" | "expired" | "not_yet_valid" | "revoked";

/** Any verification failure; `reason` is for logs only, callers answer 401 without details. */
export class InvalidToken extends Error {
  constructor(
    readonly reason: InvalidTokenReason,
    detail: string,
  ) {
    super(`invalid access token (${reason}): ${detail}`);
    this.name = "InvalidToken";
  }
}

const ALG = "ES256";
const TYP = "at+jwt";
const JTI = /^[A-Za-z0-9_-]{16,64}$/;
const REQUIRED_CLAIMS = ["iss", "sub", "aud", "client_id", "scope", "iat", "exp", "jti"];
/** jose's failed claim checks by claim; `iat` fails only when it lies in the future. */
const CLAIM_REASONS: Partial<Record<string, InvalidTokenReason>> = {
  iss: "issuer",
  typ: "type",
  nbf: "not_yet_valid",
  iat: "not_yet_valid",
};

export class AccessTokens {
  readonly lifetimeSeconds: number;
  readonly leewaySeconds: number;
  readonly #now: () => number;
  readonly #onInvalid: (err: InvalidToken) => void;
  readonly #revocations: RevocationList;

  constructor(
    private readonly signingKeys: SigningKeys,
    readonly issuer: string,
    options: AccessTokensOptions = {},
  ) {
    if (issuer === "") throw new RangeError("issuer must not be empty");
    this.lifetimeSeconds = integer("lifetimeSeconds", options.lifetimeSeconds ?? 3600, 1);
    this.leewaySeconds = integer("leewaySeconds", options.leewaySeconds ?? 30, 0);
    // A replaced key must stay published as long as any token it signed can still verify.
    if (this.lifetimeSeconds + this.leewaySeconds > signingKeys.retireAfterSeconds)
      throw new RangeError("the signing keys' retireAfterSeconds must cover lifetimeSeconds + leewaySeconds");
    this.#now = options.now ?? Date.now;
    this.#onInvalid = options.onInvalid ?? (() => {});
    this.#revocations = new RevocationList(signingKeys.store, signingKeys.keys, this.#now);
  }

  /** Stops following revocations (the subscription and its periodic reload). */
  async close(): Promise<void> {
    await this.#revocations.close();
  }

  /** Signs a new access token with the current key. */
  async issue(request: AccessTokenRequest): Promise<IssuedAccessToken> {
    for (const claim of ["sub", "aud", "client_id", "scope"] as const)
      if (typeof request[claim] !== "string" || request[claim] === "")
        throw new TypeError(`${claim} must be a non-empty string`);
    const { kid, privateKey } = await this.signingKeys.current();
    const iat = Math.floor(this.#now() / 1000);
    const jti = randomId(16);
    const claims = {
      client_id: request.client_id,
      scope: request.scope,
      ...(request.groups?.length && { groups: request.groups.slice(0, MAX_ATTRIBUTES) }),
      ...(request.roles?.length && { roles: request.roles.slice(0, MAX_ATTRIBUTES) }),
      ...(request.username && { preferred_username: request.username }),
    };
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, typ: TYP, kid })
      .setIssuer(this.issuer)
      .setSubject(request.sub)
      .setAudience(request.aud)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.lifetimeSeconds)
      .setJti(jti)
      .sign(privateKey);
    return { token, expiresIn: this.lifetimeSeconds, jti };
  }

  /** The claims of a token this server issued for `expectedAudience`; throws InvalidToken otherwise. */
  async verify(token: string, expectedAudience: string): Promise<AccessTokenClaims> {
    try {
      const claims = await this.#verify(token, expectedAudience);
      if (await this.isRevoked(claims.jti)) throw new InvalidToken("revoked", `jti ${claims.jti}`);
      return claims;
    } catch (err) {
      const invalid = asInvalidToken(err);
      this.#onInvalid(invalid);
      throw invalid;
    }
  }

  /** Revokes a token by its `jti` until its `exp` (epoch seconds) has passed, leeway included. */
  async revoke(jti: string, expiresAt: number): Promise<void> {
    if (!JTI.test(jti)) throw new TypeError("not a jti this server issues");
    const ttlSeconds = Math.ceil(expiresAt + this.leewaySeconds - this.#now() / 1000);
    // A token past its expiry no longer verifies: nothing to remember.
    if (!(ttlSeconds > 0)) return;
    await this.#revocations.add(jti, expiresAt + this.leewaySeconds, ttlSeconds);
  }

  /** Whether the token with this `jti` was revoked. */
  async isRevoked(jti: string): Promise<boolean> {
    return this.#revocations.has(jti);
  }

  /** Signature, header and claims (RFC 9068 §4); the revocation list is checked by the caller. */
  async #verify(token: string, expectedAudience: string): Promise<AccessTokenClaims> {
    const { payload } = await jwtVerify(token, (header) => this.#key(header), {
      algorithms: [ALG],
      typ: TYP,
      issuer: this.issuer,
      requiredClaims: REQUIRED_CLAIMS,
      clockTolerance: this.leewaySeconds,
      maxTokenAge: this.lifetimeSeconds,
      currentDate: new Date(this.#now()),
    });
    const claims = claimsOf(payload);
    // RFC 9068 §4: the token must be meant for this resource; no lists, no prefixes. The one
    // spelling allowed besides the exact URL is its trailing-slash form (docs/oauth.md#client-quirks).
    if (!sameResource(claims.aud, expectedAudience))
      throw new InvalidToken("audience", `aud is not ${expectedAudience}`);
    return claims;
  }

  /** Only ES256 with a kid we publish: `none`, HMAC and keys named by the token itself never get a key. */
  async #key(header: JWTHeaderParameters) {
    if (header.alg !== ALG) throw new InvalidToken("signature", `alg ${String(header.alg)} is not allowed`);
    if (header.jwk !== undefined || header.jku !== undefined || header.x5u !== undefined)
      throw new InvalidToken("signature", "embedded or remote keys are not accepted");
    const key = typeof header.kid === "string" ? await this.signingKeys.publicKey(header.kid) : undefined;
    if (key === undefined) throw new InvalidToken("signature", `unknown kid ${String(header.kid)}`);
    return key;
  }
}

/** An optional list of names (groups, roles), bounded. */
export function attributeList(value: unknown, name: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.length > MAX_ATTRIBUTES ||
    !value.every((v) => typeof v === "string" && v.length > 0 && v.length <= MAX_ATTRIBUTE_CHARS)
  )
    throw new InvalidToken("malformed", `${name} is not a short list of names`);
  return value as string[];
}

function claimsOf(payload: JWTPayload): AccessTokenClaims {
  const { iss, sub, aud, client_id, scope, iat, exp, jti } = payload;
  const groups = attributeList(payload.groups, "groups");
  const roles = attributeList(payload.roles, "roles");
  const username = payload.preferred_username;
  if (username !== undefined && (typeof username !== "string" || username.length > MAX_ATTRIBUTE_CHARS))
    throw new InvalidToken("malformed", "preferred_username is not a short string");
  if (typeof aud !== "string") throw new InvalidToken("audience", "aud is not a single string");
  for (const [name, value] of Object.entries({ iss, sub, client_id, scope, jti }))
    if (typeof value !== "string") throw new InvalidToken("malformed", `${name} is not a string`);
  if (!JTI.test(jti as string)) throw new InvalidToken("malformed", "jti has an unexpected form");
  return {
    iss: iss as string,
    sub: sub as string,
    aud,
    client_id: client_id as string,
    scope: scope as string,
    iat: iat as number,
    exp: exp as number,
    jti: jti as string,
    ...(groups && { groups }),
    ...(roles && { roles }),
    ...(username && { username }),
  };
}

/** Maps whatever verification threw to one error type with a reason. */
function asInvalidToken(err: unknown): InvalidToken {
  if (err instanceof InvalidToken) return err;
  if (err instanceof errors.JWTExpired) return new InvalidToken("expired", err.message);
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.reason !== "check_failed") return new InvalidToken("malformed", err.message);
    return new InvalidToken(CLAIM_REASONS[err.claim] ?? "malformed", err.message);
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JWSSignatureVerificationFailed)
    return new InvalidToken("signature", err.message);
  if (err instanceof errors.JOSEError) return new InvalidToken("malformed", err.message);
  throw err;
}

function integer(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer ≥ ${min}`);
  return value;
}
