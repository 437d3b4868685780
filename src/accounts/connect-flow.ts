// The connect flow (docs/upstream-auth.md "Connecting"): OAuth 2.1 authorization code with PKCE
// S256, `state` bound to the browser that started it, the RFC 8707 resource indicator (the
// upstream's MCP URL) and the provider's scopes, at the upstream's authorization server; the
// callback (one Portico URL) stores the user's tokens. Errors are ConnectError, safe to show.
import * as oauth from "oauth4webapi";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import { CALLBACK_PATH, ClientIdentityError } from "./client-identity.js";
import { tokensOf, type ConnectedAccounts } from "./connected-accounts.js";
import { DiscoveryError, httpOptions, reason } from "./discovery.js";
import type { ConnectLink } from "./links.js";

export const FLOW_TTL_SECONDS = 600;

/** A step of the flow that failed: `shown` is for the user's page, `logged` for the log. */
export class ConnectError extends Error {
  override readonly name = "ConnectError";
  constructor(
    readonly shown: string,
    readonly logged: string,
    readonly status = 502,
  ) {
    super(logged);
  }
}

/** A connect in progress, under its `state`. */
interface PendingConnect {
  readonly kind: "connect";
  readonly tenant: string;
  readonly user: string;
  readonly provider: string;
  readonly elicitationId?: string;
  readonly codeVerifier: string;
  /** The digest of the browser's accounts session: the callback must come from that browser. */
  readonly browser: string;
}

/** Single-use records under a random `state` (connect flows and sign-ins). */
export class FlowRecords {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
  ) {}

  async put(state: string, record: object): Promise<void> {
    await this.store.set(this.keys.accountFlow(state), JSON.stringify(record), {
      ttlSeconds: FLOW_TTL_SECONDS,
    });
  }

  /** The record, removed in the same step: a second callback with the same state finds nothing. */
  async take<T>(state: string | null): Promise<T | undefined> {
    if (!state || !/^[A-Za-z0-9_-]{16,128}$/.test(state)) return undefined;
    const key = this.keys.accountFlow(state);
    const raw = await this.store.get(key);
    if (raw === null || !(await this.store.compareAndSet(key, raw, null))) return undefined;
    return JSON.parse(raw) as T;
  }
}

export class ConnectFlows {
  constructor(
    private readonly accounts: ConnectedAccounts,
    private readonly flows: FlowRecords,
  ) {}

  /** Starts connecting: the upstream's authorization URL. `browser` binds the callback. */
  async begin(link: ConnectLink, browser: string): Promise<URL> {
    const { deps } = this.accounts;
    const config = deps.providerOf(link.tenant, link.provider);
    if (!config)
      throw new ConnectError(
        "This provider no longer asks you to connect an account.",
        "not a per-user provider",
        404,
      );
    const { as, resource, scopesSupported } = await discovered(this.accounts, link.tenant, link.provider);
    if (!as.authorization_endpoint || !as.token_endpoint)
      throw new ConnectError(UNAVAILABLE, `${as.issuer} has no authorization or token endpoint`);
    const { client } = await clientOf(this.accounts, link.tenant, link.provider, as);
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const pending: PendingConnect = {
      kind: "connect",
      tenant: link.tenant,
      user: link.user,
      provider: link.provider,
      ...(link.elicitationId !== undefined && { elicitationId: link.elicitationId }),
      codeVerifier,
      browser,
    };
    await this.flows.put(state, pending);
    const url = new URL(as.authorization_endpoint);
    const scope = config.auth.scope ?? scopesSupported?.join(" ");
    const params: Record<string, string> = {
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: `${deps.publicUrl}${CALLBACK_PATH}`,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      resource,
      ...(scope ? { scope } : {}),
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url;
  }

  /** Finishes at the callback; returns which account was connected. */
  async complete(callback: URL, browser: string | undefined): Promise<{ tenant: string; provider: string }> {
    const state = callback.searchParams.get("state");
    const pending = await this.flows.take<PendingConnect>(state);
    if (!pending || pending.kind !== "connect")
      throw new ConnectError(EXPIRED, "unknown, used or expired state", 400);
    if (browser !== pending.browser)
      throw new ConnectError(EXPIRED, "the callback came to another browser than the one that started", 400);
    const { tenant, user, provider } = pending;
    const { deps } = this.accounts;
    const { as, resource } = await discovered(this.accounts, tenant, provider);
    const { client, auth, mode } = await clientOf(this.accounts, tenant, provider, as);
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(as, client, callback, state!);
    } catch (err) {
      const error = err instanceof oauth.AuthorizationResponseError ? err.error : undefined;
      if (error === "access_denied")
        throw new ConnectError(
          "The connection was cancelled or refused at the provider. Nothing was connected.",
          "access_denied",
          400,
        );
      throw new ConnectError(UNAVAILABLE, `the authorization response was refused: ${error ?? reason(err)}`);
    }
    const redirectUri = `${deps.publicUrl}${CALLBACK_PATH}`;
    let result: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        redirectUri,
        pending.codeVerifier,
        {
          additionalParameters: { resource },
          ...httpOptions(deps.fetch, as.token_endpoint!),
        },
      );
      result = await oauth.processAuthorizationCodeResponse(as, client, response);
    } catch (err) {
      throw new ConnectError(UNAVAILABLE, `the token endpoint refused the code: ${reason(err)}`);
    }
    const now = Date.now();
    // Read again: the token is bound to where the provider's requests go as it is stored.
    const config = deps.providerOf(tenant, provider);
    if (!config) throw new ConnectError(UNAVAILABLE, "the provider is no longer per-user", 404);
    const base = {
      destinations: config.destinations,
      issuer: as.issuer,
      clientId: client.client_id,
      mode,
      connectedAt: new Date(now).toISOString(),
    };
    await this.accounts.connected(tenant, user, provider, tokensOf(result, base, now), pending.elicitationId);
    return { tenant, provider };
  }
}

const UNAVAILABLE =
  "The provider's sign-in did not work. Try again later; if it keeps failing, tell your administrator.";
const EXPIRED =
  "This connection attempt is no longer valid. Open the connect link again from your application.";

async function discovered(accounts: ConnectedAccounts, tenant: string, provider: string) {
  const config = accounts.deps.providerOf(tenant, provider);
  if (!config)
    throw new ConnectError(
      "This provider no longer asks you to connect an account.",
      "not a per-user provider",
      404,
    );
  try {
    return await accounts.deps.servers.discover(config.url, config.auth.issuer);
  } catch (err) {
    if (err instanceof DiscoveryError) throw new ConnectError(UNAVAILABLE, err.message);
    throw err;
  }
}

async function clientOf(
  accounts: ConnectedAccounts,
  tenant: string,
  provider: string,
  as: oauth.AuthorizationServer,
) {
  const config = accounts.deps.providerOf(tenant, provider)!;
  try {
    return await accounts.deps.clients.clientFor(tenant, provider, config.auth, as);
  } catch (err) {
    if (err instanceof ClientIdentityError) throw new ConnectError(UNAVAILABLE, err.message);
    throw err;
  }
}
