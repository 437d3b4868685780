// Upstream credentials (docs/architecture.md §3): a fixed bearer token, or an access token obtained with the
// OAuth 2.0 client credentials grant (RFC 6749 §4.4) through oauth4webapi, cached per provider and
// fetched again when it nears expiry or the upstream answers 401. Token endpoint requests go through
// the provider's egress fetch. Tokens, secrets and token endpoint bodies never reach an error message.
import * as oauth from "oauth4webapi";
import type { Fetch } from "../egress/fetch.js";
import type { ClientCredentialsAuth, UpstreamAuth } from "../records/tenant.js";

/** Lifetime assumed when the token endpoint sends no expires_in (RFC 6749 §5.1 makes it optional). */
export const DEFAULT_TOKEN_LIFETIME_MS = 5 * 60_000;
/** A token is fetched again this long before it expires (at most half its lifetime). */
const EXPIRY_MARGIN_MS = 30_000;
/** A token endpoint request gives up after this long. */
export const TOKEN_TIMEOUT_MS = 10_000;
/** Issued tokens remembered for redaction: the current one and the one it replaced. */
const REMEMBERED_TOKENS = 2;
/** Sent as a header value: visible ASCII without spaces (RFC 6750 §2.1 b64token is a subset). */
const HEADER_SAFE = /^[\x21-\x7E]+$/;
/** RFC 6749 §5.2 error codes: %x20-21 / %x23-5B / %x5D-7E; anything else is not echoed. */
const ERROR_CODE = /^[\x20\x21\x23-\x5B\x5D-\x7E]{1,64}$/;

export interface UpstreamCredentialsOptions {
  /** The provider's egress fetch: token endpoint requests go through it too. */
  readonly fetch: Fetch;
  readonly tokenTimeoutMs?: number;
  /** Clock in ms since the epoch; tests move it. */
  readonly now?: () => number;
}

/**
 * The access token of a token endpoint's answer, once it is one Portico can send: a Bearer token
 * (a DPoP-bound one would need a proof on every upstream request, RFC 9449) that is a valid header value.
 */
export function bearerTokenOf(result: oauth.TokenEndpointResponse): string {
  if (result.token_type !== "bearer")
    throw new UpstreamAuthError("the token endpoint issued a DPoP-bound token; only Bearer is supported");
  if (!HEADER_SAFE.test(result.access_token))
    throw new UpstreamAuthError("the token endpoint issued an access token that is not a valid header value");
  return result.access_token;
}

/** A configured token endpoint and Portico's client there, as oauth4webapi's requests take them. */
export interface TokenEndpoint {
  readonly as: oauth.AuthorizationServer;
  readonly client: oauth.Client;
  readonly clientAuth: oauth.ClientAuth;
  readonly options: oauth.TokenEndpointRequestOptions;
}

/**
 * The token endpoint of a provider's client credentials or token exchange auth: no discovery (the
 * endpoint is configured, and the issuer is only a required label here).
 */
export function tokenEndpoint(
  auth: Pick<ClientCredentialsAuth, "tokenUrl" | "clientId" | "clientSecret" | "authMethod">,
  fetch: Fetch,
  signal: AbortSignal,
): TokenEndpoint {
  return {
    as: { issuer: new URL(auth.tokenUrl).origin, token_endpoint: auth.tokenUrl },
    client: { client_id: auth.clientId },
    clientAuth:
      auth.authMethod === "client_secret_post"
        ? oauth.ClientSecretPost(auth.clientSecret)
        : oauth.ClientSecretBasic(auth.clientSecret),
    options: {
      [oauth.customFetch]: fetch,
      // Gateways front internal services; whether the endpoint is reachable is the egress policy's call.
      [oauth.allowInsecureRequests]: auth.tokenUrl.startsWith("http:"),
      signal,
    },
  };
}

/** When a token issued at `sentAt` (ms) is fetched again: a margin before it expires, at most half its lifetime. */
export function refreshTime(sentAt: number, expiresIn: number | undefined): number {
  const lifetimeMs = expiresIn === undefined ? DEFAULT_TOKEN_LIFETIME_MS : expiresIn * 1000;
  return sentAt + lifetimeMs - Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 2);
}

/** No access token could be had. The message is safe for clients and logs. */
export class UpstreamAuthError extends Error {
  override readonly name = "UpstreamAuthError";

  constructor(reason: string) {
    super(`could not obtain an upstream access token: ${reason}`);
  }
}

interface IssuedToken {
  readonly authorization: string;
  readonly refreshAt: number;
}

/** Waits for `promise`, or rejects when the caller's `signal` aborts first (the promise goes on). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Words for a failed token request: status and RFC 6749 error code at most, never a body. */
export function tokenFailure(err: unknown, timedOut: boolean, timeoutMs: number): UpstreamAuthError {
  if (timedOut) return new UpstreamAuthError(`the token endpoint did not answer within ${timeoutMs} ms`);
  if (err instanceof UpstreamAuthError) return err;
  if (err instanceof oauth.ResponseBodyError) {
    const code = typeof err.error === "string" && ERROR_CODE.test(err.error) ? ` (${err.error})` : "";
    return new UpstreamAuthError(`the token endpoint answered HTTP ${err.status}${code}`);
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError)
    return new UpstreamAuthError(`the token endpoint answered HTTP ${err.status} with a challenge`);
  // oauth4webapi's own messages hold no values; their `cause` may hold the whole body, token included.
  if (err instanceof oauth.OperationProcessingError || err instanceof oauth.UnsupportedOperationError) {
    const status = (err.cause as { status?: unknown } | undefined)?.status;
    const http = typeof status === "number" ? `HTTP ${status}: ` : "";
    return new UpstreamAuthError(`the token endpoint's reply was refused: ${http}${err.message}`);
  }
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const why = cause instanceof Error ? cause.message || (cause as { code?: string }).code : undefined;
  return new UpstreamAuthError(`the token endpoint is unreachable${why ? `: ${why}` : ""}`);
}

/**
 * Where an upstream request's Authorization header comes from: a provider's own credentials
 * (UpstreamCredentials), or one user's (providers/per-user/user-credentials.ts).
 */
export interface Authorizer {
  /** True when requests carry an Authorization header at all. */
  readonly configured: boolean;
  /** True when a token the upstream rejected can be replaced by a fresh one. */
  readonly refreshable: boolean;
  /** The header value for the next request; `signal` stops this caller's wait. Throws UpstreamAuthError. */
  authorization(signal?: AbortSignal): Promise<string | undefined>;
  /** The upstream answered 401 to `rejected`: the next request gets a new token. */
  invalidate(rejected: string): void;
  /** Optional: the replacement was refused too (a second 401). */
  refusedAgain?(rejected: string): void;
  /** Values that must not appear in text shown to clients or written to logs. */
  secrets(): string[];
}

/**
 * The Authorization header a provider sends upstream. One instance per provider: every call of
 * that provider on this process shares its token, and at most one token request is in flight.
 */
export class UpstreamCredentials implements Authorizer {
  readonly #auth: UpstreamAuth | undefined;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  #token: IssuedToken | undefined;
  #pending: Promise<IssuedToken> | undefined;
  readonly #issued: string[] = [];

  constructor(auth: UpstreamAuth | undefined, options: UpstreamCredentialsOptions) {
    this.#auth = auth;
    this.#fetch = options.fetch;
    this.#timeoutMs = options.tokenTimeoutMs ?? TOKEN_TIMEOUT_MS;
    this.#now = options.now ?? Date.now;
  }

  /** True when the provider configures `auth`. */
  get configured(): boolean {
    return this.#auth !== undefined;
  }

  /** True when a token the upstream rejected can be replaced by a fresh one. */
  get refreshable(): boolean {
    return this.#auth?.type === "client_credentials";
  }

  /**
   * The Authorization header value for the next upstream request (undefined without `auth`).
   * `signal` stops this caller's wait, not the shared token request. Throws UpstreamAuthError.
   */
  async authorization(signal?: AbortSignal): Promise<string | undefined> {
    const auth = this.#auth;
    if (!auth) return undefined;
    if (auth.type === "bearer") return `Bearer ${auth.token}`;
    // Per-user credentials are never the provider's: they come from the user's own source.
    if (auth.type !== "client_credentials")
      throw new UpstreamAuthError("this provider's credentials are per user (no user here)");
    const token = this.#token;
    if (token && this.#now() < token.refreshAt) return token.authorization;
    this.#pending ??= this.#obtain(auth).finally(() => (this.#pending = undefined));
    return (await abortable(this.#pending, signal)).authorization;
  }

  /** The upstream answered 401 to `rejected`: the next request gets a new token. */
  invalidate(rejected: string): void {
    if (this.#token?.authorization === rejected) this.#token = undefined;
  }

  /** Values that must not appear in text shown to clients or written to logs. */
  secrets(): string[] {
    const auth = this.#auth;
    if (!auth) return [];
    if (auth.type === "bearer") return [auth.token];
    if (auth.type === "user_oauth") return auth.clientSecret === undefined ? [] : [auth.clientSecret];
    return [auth.clientSecret, ...this.#issued];
  }

  async #obtain(auth: ClientCredentialsAuth): Promise<IssuedToken> {
    const sentAt = this.#now();
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let result: oauth.TokenEndpointResponse;
    try {
      result = await this.#grant(auth, timeout);
    } catch (err) {
      throw tokenFailure(err, timeout.aborted, this.#timeoutMs);
    }
    const token = bearerTokenOf(result);
    this.#issued.unshift(token);
    this.#issued.length = Math.min(this.#issued.length, REMEMBERED_TOKENS);
    const refreshAt = refreshTime(sentAt, result.expires_in);
    this.#token = { authorization: `Bearer ${result.access_token}`, refreshAt };
    return this.#token;
  }

  /** One client credentials grant request (RFC 6749 §4.4.2) to the configured token endpoint. */
  async #grant(auth: ClientCredentialsAuth, signal: AbortSignal): Promise<oauth.TokenEndpointResponse> {
    const { as, client, clientAuth, options } = tokenEndpoint(auth, this.#fetch, signal);
    const parameters = new URLSearchParams();
    if (auth.scope !== undefined) parameters.set("scope", auth.scope);
    if (auth.resource !== undefined) parameters.set("resource", auth.resource);
    const response = await oauth.clientCredentialsGrantRequest(as, client, clientAuth, parameters, options);
    return oauth.processClientCredentialsResponse(as, client, response);
  }
}

/**
 * `fetch` with the provider's Authorization header on every request. After a 401 to a token that
 * can be replaced, the request is sent once more with a new token. Request bodies must be
 * replayable (strings), as the http provider's and the MCP SDK's are.
 */
export function authorizedFetch(fetch: Fetch, credentials: Authorizer): Fetch {
  if (!credentials.configured) return fetch;
  const send = async (input: Parameters<Fetch>[0], init: RequestInit | undefined) => {
    const authorization = (await credentials.authorization(init?.signal ?? undefined)) ?? "";
    const headers = new Headers(init?.headers);
    headers.set("authorization", authorization);
    return { authorization, response: await fetch(input, { ...init, headers }) };
  };
  return async (input, init) => {
    const first = await send(input, init);
    if (first.response.status !== 401 || !credentials.refreshable) return first.response;
    await first.response.body?.cancel().catch(() => undefined);
    credentials.invalidate(first.authorization);
    const second = await send(input, init);
    if (second.response.status === 401) credentials.refusedAgain?.(second.authorization);
    return second.response;
  };
}

/**
 * `text` with every secret of at least 4 characters replaced by "[redacted]", in each spelling an
 * upstream echoing a request may give it: as sent, JSON-escaped (with `\/`, and `\uXXXX` for
 * non-ASCII, as PHP and Python write it), percent- and form-encoded, and HTML-escaped.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  const all = secrets.filter((s) => s.length >= 4).flatMap(spellings);
  // Longest first: a spelling that contains another is replaced whole.
  for (const spelling of [...new Set(all)].sort((a, b) => b.length - a.length))
    out = out.split(spelling).join("[redacted]");
  return out;
}

function spellings(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const escaped = (hex: (code: string) => string) =>
    json.replace(/[\u007f-\uffff]/g, (c) => `\\u${hex(c.charCodeAt(0).toString(16).padStart(4, "0"))}`);
  const jsons = [json, escaped((h) => h), escaped((h) => h.toUpperCase())];
  const percent = encodeURIComponent(secret);
  return [
    secret,
    ...jsons,
    ...jsons.map((j) => j.replaceAll("/", "\\/")),
    percent,
    percent.replaceAll("%20", "+"),
    secret.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
    secret.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;"),
  ];
}
