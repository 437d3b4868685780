// Per-user upstream tokens by OAuth 2.0 Token Exchange (RFC 8693; docs/upstream-auth.md "Token
// exchange"): Portico signs a short-lived assertion of the MCP user with its own OAuth signing keys
// and exchanges it at the provider's STS for a token of the upstream's audience. The client's own
// token is never sent. Tokens are cached per (tenant, user, provider) on this replica until shortly
// before they expire, one exchange at a time per key.
import { SignJWT, type CryptoKey } from "jose";
import * as oauth from "oauth4webapi";
import type { Fetch } from "../egress/fetch.js";
import type { TenantConfig, TokenExchangeAuth } from "../records/tenant.js";
import {
  bearerTokenOf,
  refreshTime,
  TOKEN_TIMEOUT_MS,
  tokenEndpoint,
  tokenFailure,
} from "../providers/upstream-auth.js";
import { randomId } from "../crypto/secrets.js";
import type { AccountChange, UserTokenSource } from "../providers/user-tokens.js";

/** RFC 8693 §3 token type identifiers. */
export const TOKEN_TYPE = {
  jwt: "urn:ietf:params:oauth:token-type:jwt",
  accessToken: "urn:ietf:params:oauth:token-type:access_token",
} as const;
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";

/** How long Portico's assertion of the user is valid: one exchange, with some clock skew. */
export const ASSERTION_LIFETIME_SECONDS = 60;
/** Tokens kept per replica; the least recently issued go first past it. */
export const MAX_CACHED_TOKENS = 10_000;

/** What signs Portico's assertions: its issuer, and the OAuth signing key in use (oauth/signing-keys.ts). */
export interface AssertionSigner {
  readonly issuer: string;
  key(): Promise<{ readonly kid: string; readonly privateKey: CryptoKey }>;
}

export interface TokenExchangeOptions {
  readonly signer: AssertionSigner;
  /** The STS is reached through the providers' egress fetch. */
  readonly fetch: Fetch;
  /** The `token_exchange` auth of a tenant's provider now (undefined: none, or another type). */
  readonly authOf: (tenant: string, provider: string) => TokenExchangeAuth | undefined;
  readonly timeoutMs?: number;
  /** The cache's clock in ms (tests move it); assertions always carry real time. */
  readonly now?: () => number;
}

interface Cached {
  readonly token: string;
  readonly refreshAt: number;
  /** The auth record it was exchanged under: a changed record exchanges again. */
  readonly auth: TokenExchangeAuth;
}

export class TokenExchangeSource implements UserTokenSource {
  readonly #cache = new Map<string, Cached>();
  readonly #pending = new Map<string, Promise<Cached>>();
  readonly #now: () => number;
  readonly #timeoutMs: number;

  constructor(private readonly opts: TokenExchangeOptions) {
    this.#now = opts.now ?? Date.now;
    this.#timeoutMs = opts.timeoutMs ?? TOKEN_TIMEOUT_MS;
  }

  /** A token for the user at the provider's upstream; throws UpstreamAuthError when the STS refuses. */
  async tokenFor(tenant: string, user: string, provider: string): Promise<string | undefined> {
    const auth = this.opts.authOf(tenant, provider);
    if (!auth) return undefined;
    const key = `${tenant}\u0000${user}\u0000${provider}`;
    const cached = this.#cache.get(key);
    if (cached && cached.auth === auth && this.#now() < cached.refreshAt) return cached.token;
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = this.#exchange(tenant, user, auth).finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    const issued = await pending;
    this.#remember(key, issued);
    return issued.token;
  }

  async refused(tenant: string, user: string, provider: string): Promise<void> {
    this.#cache.delete(`${tenant}\u0000${user}\u0000${provider}`);
  }

  /** Nothing for a user to connect: an exchange needs no action, so nothing changes. */
  onChange(_listener: (change: AccountChange) => void): () => void {
    return () => undefined;
  }

  #remember(key: string, issued: Cached): void {
    this.#cache.delete(key);
    this.#cache.set(key, issued);
    while (this.#cache.size > MAX_CACHED_TOKENS) this.#cache.delete(this.#cache.keys().next().value!);
  }

  /**
   * Portico's assertion of the user (RFC 8693 §2.1 subject_token, a JWT as RFC 7523 §3 shapes
   * one): its issuer, the user as `sub`, the STS's token endpoint as `aud`, one minute of life.
   */
  async assertion(tenant: string, user: string, auth: TokenExchangeAuth): Promise<string> {
    const { kid, privateKey } = await this.opts.signer.key();
    // The STS checks it against its own clock: real time, whatever clock the cache follows.
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ tenant })
      .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
      .setIssuer(this.opts.signer.issuer)
      .setSubject(user)
      .setAudience(auth.tokenUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + ASSERTION_LIFETIME_SECONDS)
      .setJti(randomId())
      .sign(privateKey);
  }

  async #exchange(tenant: string, user: string, auth: TokenExchangeAuth): Promise<Cached> {
    const sentAt = this.#now();
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let result: oauth.TokenEndpointResponse;
    try {
      result = await this.#request(await this.assertion(tenant, user, auth), auth, timeout);
    } catch (err) {
      throw tokenFailure(err, timeout.aborted, this.#timeoutMs);
    }
    return { token: bearerTokenOf(result), refreshAt: refreshTime(sentAt, result.expires_in), auth };
  }

  /** One token exchange request (RFC 8693 §2.1) to the configured STS. */
  async #request(subjectToken: string, auth: TokenExchangeAuth, signal: AbortSignal) {
    const { as, client, clientAuth, options } = tokenEndpoint(auth, this.opts.fetch, signal);
    const parameters = new URLSearchParams({
      subject_token: subjectToken,
      subject_token_type: TOKEN_TYPE.jwt,
      requested_token_type: TOKEN_TYPE.accessToken,
    });
    if (auth.audience !== undefined) parameters.set("audience", auth.audience);
    if (auth.resource !== undefined) parameters.set("resource", auth.resource);
    if (auth.scope !== undefined) parameters.set("scope", auth.scope);
    const response = await oauth.genericTokenEndpointRequest(
      as,
      client,
      clientAuth,
      TOKEN_EXCHANGE_GRANT,
      parameters,
      options,
    );
    return oauth.processGenericTokenEndpointResponse(as, client, response);
  }
}

/** The `token_exchange` auth of a tenant's provider, if it has one. */
export function tokenExchangeOf(
  tenant: TenantConfig | undefined,
  provider: string,
): TokenExchangeAuth | undefined {
  const cfg = tenant?.providers.find((p) => p.id === provider);
  return cfg && cfg.kind !== "static" && cfg.auth?.type === "token_exchange" ? cfg.auth : undefined;
}
