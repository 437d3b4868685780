// The authorization endpoint (OAuth 2.1 §4.1.1, RFC 7636, RFC 8707, RFC 9207) and the login and
// consent steps behind it. The client and its redirect URI are verified before anything is
// redirected: until then errors are pages. A pending request ("flow") lives server-side, bound
// to the browser by a cookie and to its forms by a CSRF token.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { SCOPES } from "../auth/resource-server.js";
import { excerpt } from "../protocol/errors.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { PendingFederation } from "./federation.js";
import { redirectUriMatches } from "./redirect-uris.js";

export interface ResolvedClient {
  readonly clientId: string;
  readonly name: string;
  readonly redirectUris: readonly string[];
  /** Whether its registered grant_types include refresh_token (RFC 7591 §2). */
  readonly refreshTokens: boolean;
  /** Set for clients pre-registered through the admin API: they serve that tenant only. */
  readonly tenant?: string;
}

export interface Flow {
  readonly id: string;
  readonly csrf: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly redirectUri: string;
  readonly state?: string;
  readonly codeChallenge: string;
  readonly scopes: readonly string[];
  /** Whether the code's exchange issues a refresh token (ResolvedClient.refreshTokens). */
  readonly refresh: boolean;
  /** The tenant, from `resource`; chosen on the login page when the client sent none. */
  readonly tenant?: string;
  /** The tenant's virtual server `resource` named (docs/architecture.md §8): the token's audience. */
  readonly server?: string;
  /** Set once the user signed in. */
  readonly sub?: string;
  readonly username?: string;
  /** Set when the user signed in at the tenant's OpenID provider, with groups and roles from its claims. */
  readonly federated?: boolean;
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  /** A sign-in at the tenant's OpenID provider in progress: single-use, taken by the callback. */
  readonly federation?: PendingFederation;
}

/** An error page, shown because the redirect target is not (yet) trusted. */
export class PageError extends Error {
  constructor(
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * An RFC 6749 §4.1.2.1 error, sent back to `redirectUri`: only ever one parseAuthorization has
 * verified against the client's registration, so the error path never reads the query again.
 */
export class RedirectError extends Error {
  constructor(
    readonly error: string,
    message: string,
    readonly redirectUri: string,
    readonly state: string | undefined,
  ) {
    super(message);
  }
}

export const FLOW_TTL_SECONDS = 600;
const FLOW_ID = /^[A-Za-z0-9_-]{22}$/;
export const DEFAULT_SCOPES = [SCOPES.read, SCOPES.tools];
const KNOWN_SCOPES = new Set<string>(Object.values(SCOPES));
const SCOPE_DESCRIPTIONS: Record<string, string> = {
  [SCOPES.read]: "see the tools, prompts and resources, and read them",
  [SCOPES.tools]: "call tools on your behalf",
  [SCOPES.offline]: "stay signed in (refresh tokens)",
};

export function describeScopes(scopes: readonly string[]) {
  return scopes.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] ?? name }));
}

/** RFC 7636 §4.6: BASE64URL(SHA256(code_verifier)) == code_challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash("sha256").update(verifier).digest("base64url"));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value))
    throw new PageError("Invalid request", `The ${name} parameter appears more than once.`);
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** What a `resource` names: an oauth tenant's MCP URL, or one of its virtual servers' with its scopes. */
export interface ResourceTarget {
  readonly tenant: string;
  readonly server?: string;
  readonly scopes?: readonly string[];
}

/** Reads an authorization request; `tenantOf` maps a resource URL to an oauth tenant (and server). */
export async function parseAuthorization(
  query: Record<string, unknown>,
  resolveClient: (clientId: string) => Promise<ResolvedClient | undefined>,
  tenantOf: (resource: string) => ResourceTarget | undefined,
): Promise<Omit<Flow, "id" | "csrf">> {
  const clientId = single(query, "client_id");
  if (!clientId) throw new PageError("Invalid request", "The client_id parameter is missing.");
  const client = await resolveClient(clientId);
  // Dynamic registrations expire unused (clients.ts): the application should register again.
  if (!client)
    throw new PageError(
      "Unknown client",
      "This application is not registered with this server, or its registration expired after going unused. The application must register again: close this page and connect it again (if it keeps coming back here, remove this server from the application and add it back).",
    );
  const presented = single(query, "redirect_uri");
  // An empty redirect_uri is refused, not read as absent: the request named a target it did not spell.
  const empty = query.redirect_uri !== undefined && presented === undefined;
  const redirectUri = presented ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (empty || !redirectUri || !redirectUriMatches(client.redirectUris, redirectUri))
    throw new PageError(
      "Invalid redirect URI",
      "The redirect_uri is missing or is not one this application registered, so you are not sent back to it.",
    );
  // From here on, errors go back to the client at its verified redirect URI.
  const state = single(query, "state");
  const fail = (error: string, message: string) => new RedirectError(error, message, redirectUri, state);
  if (single(query, "response_type") !== "code")
    throw fail("unsupported_response_type", "response_type must be code");
  const codeChallenge = single(query, "code_challenge");
  const method = single(query, "code_challenge_method");
  if (!codeChallenge || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge))
    throw fail("invalid_request", "PKCE is required: send a code_challenge (S256)");
  if (method !== "S256") throw fail("invalid_request", "code_challenge_method must be S256");
  const resource = single(query, "resource");
  const target = resource === undefined ? undefined : tenantOf(resource);
  if (resource !== undefined && !target)
    throw fail("invalid_target", "resource is not an MCP URL served here");
  // A virtual server's own scopes are known for it, and asked for by default with the standard ones.
  const own = target?.scopes ?? [];
  const requested = single(query, "scope")?.split(" ").filter(Boolean) ?? [...DEFAULT_SCOPES, ...own];
  const unknown = requested.filter((s) => !KNOWN_SCOPES.has(s) && !own.includes(s));
  if (unknown.length > 0) throw fail("invalid_scope", `unknown scope: ${excerpt(unknown.join(" "))}`);
  const named = target?.tenant;
  if (client.tenant !== undefined && named !== undefined && named !== client.tenant)
    throw fail("invalid_target", "this client is registered for another tenant");
  const tenant = named ?? client.tenant;
  return {
    clientId,
    clientName: client.name,
    redirectUri,
    ...(state !== undefined ? { state } : {}),
    codeChallenge,
    scopes: [...new Set(requested)],
    refresh: client.refreshTokens,
    ...(tenant ? { tenant } : {}),
    ...(target?.server !== undefined && { server: target.server }),
  };
}

/** Pending authorization requests, held server-side for ten minutes. */
export class FlowStore {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
  ) {}

  async create(request: Omit<Flow, "id" | "csrf">): Promise<Flow> {
    const flow: Flow = {
      ...request,
      id: randomBytes(16).toString("base64url"),
      csrf: randomBytes(16).toString("base64url"),
    };
    await this.store.set(this.keys.oauthFlow(flow.id), JSON.stringify(flow), {
      ttlSeconds: FLOW_TTL_SECONDS,
    });
    return flow;
  }

  /** The flow a form names, if the browser's cookie and the form's CSRF token both match it. */
  async check(id: unknown, csrf: unknown, cookie: string | undefined): Promise<Flow | undefined> {
    if (typeof id !== "string" || typeof csrf !== "string" || !FLOW_ID.test(id)) return undefined;
    if (cookie !== id) return undefined;
    const raw = await this.store.get(this.keys.oauthFlow(id));
    if (raw === null) return undefined;
    const flow = JSON.parse(raw) as Flow;
    return safeEqual(flow.csrf, csrf) ? flow : undefined;
  }

  /**
   * Takes the pending federated sign-in of the flow the browser's cookie names, when `state` is
   * its state: once. Two callbacks racing with one state cannot both win: the flow is removed by
   * compare-and-set, then written back without it for the rest of its lifetime.
   */
  async takeFederation(
    id: string,
    state: string,
  ): Promise<{ flow: Flow; pending: PendingFederation } | undefined> {
    if (!FLOW_ID.test(id)) return undefined;
    const key = this.keys.oauthFlow(id);
    const raw = await this.store.get(key);
    if (raw === null) return undefined;
    const { federation: pending, ...flow } = JSON.parse(raw) as Flow;
    if (!pending || !safeEqual(pending.state, state)) return undefined;
    const ttlSeconds = await this.store.ttl(key);
    if (ttlSeconds <= 0 || !(await this.store.compareAndSet(key, raw, null))) return undefined;
    await this.store.set(key, JSON.stringify(flow), { ttlSeconds, onlyIfAbsent: true });
    return { flow, pending };
  }

  async update(flow: Flow): Promise<void> {
    await this.store.set(this.keys.oauthFlow(flow.id), JSON.stringify(flow), {
      onlyIfPresent: true,
      keepTtl: true,
    });
  }

  /** Ends a flow: its forms cannot be replayed. */
  async end(flow: Flow): Promise<void> {
    await this.store.del(this.keys.oauthFlow(flow.id));
  }
}

function safeEqual(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The redirect back to the client: code or error, with state and iss (RFC 9207). */
export function redirectBack(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
