// Connected accounts (docs/upstream-auth.md): each user's own OAuth grant at a per-user
// provider's upstream, as a UserTokenSource. Tokens are refreshed ahead of expiry, one refresh at
// a time across replicas (a lock in the store; the others wait for its result); a refresh the
// server refuses with invalid_grant drops the account; disconnecting revokes the tokens at the
// upstream's server when it can (RFC 7009, best effort). Every change reaches every replica.
import type { FastifyBaseLogger } from "fastify";
import * as oauth from "oauth4webapi";
import type { Fetch } from "../egress/fetch.js";
import type { AccountEvent } from "../metrics/metrics.js";
import type { ProviderConfig, UserOAuthAuth } from "../records/tenant.js";
import { withinDestination } from "../records/secret-fields.js";
import { randomId } from "../crypto/secrets.js";
import type { ResealTally } from "../tenants/sealed.js";
import { AccountStore, viewOf, type AccountTokens, type AccountView } from "./account-store.js";
import type { ClientIdentities } from "./client-identity.js";
import { httpOptions, reason, type AuthorizationServers } from "./discovery.js";
import type { ConnectLinks } from "./links.js";
import type { AccountChange, UserTokenSource } from "../providers/user-tokens.js";

/** A per-user provider as the account layer needs it. */
export interface PerUserProvider {
  readonly url: string;
  readonly auth: UserOAuthAuth;
  /** Every URL its requests (and so the user's token) go to: its `url`, or each http tool's. */
  readonly destinations: readonly string[];
}

export interface ConnectedAccountsDeps {
  readonly accounts: AccountStore;
  readonly servers: AuthorizationServers;
  readonly clients: ClientIdentities;
  readonly links: ConnectLinks;
  readonly fetch: Fetch;
  readonly publicUrl: string;
  readonly log: FastifyBaseLogger;
  /** The provider's record, when it exists and is per-user (user_oauth). */
  readonly providerOf: (tenant: string, provider: string) => PerUserProvider | undefined;
  /** Counts what happens to accounts (portico_connected_account_events_total). */
  readonly onEvent?: (event: AccountEvent) => void;
  /** Refresh this long before expiry. Default 60 s. */
  readonly refreshAheadMs?: number;
  readonly now?: () => number;
}

const WAIT_STEP_MS = 100;

export class ConnectedAccounts implements UserTokenSource {
  readonly #listeners = new Set<(change: AccountChange) => void>();
  readonly #refreshing = new Map<string, Promise<string | undefined>>();
  readonly #now: () => number;
  readonly #replica = randomId();
  #unfollow: (() => Promise<void>) | undefined;

  constructor(readonly deps: ConnectedAccountsDeps) {
    this.#now = deps.now ?? Date.now;
  }

  /** Follows the changes channel (every replica's changes reach onChange listeners). */
  async start(): Promise<void> {
    this.#unfollow = await this.deps.accounts.follow((change) => {
      for (const listener of this.#listeners) listener(change);
    });
  }

  async close(): Promise<void> {
    await this.#unfollow?.();
  }

  onChange(listener: (change: AccountChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async connectUrl(tenant: string, user: string, provider: string, elicitationId?: string): Promise<string> {
    const link = this.deps.links.sign(tenant, user, provider, elicitationId);
    return `${this.deps.publicUrl}/accounts/connect?link=${link}`;
  }

  async tokenFor(tenant: string, user: string, provider: string): Promise<string | undefined> {
    const config = this.deps.providerOf(tenant, provider);
    if (!config) return undefined;
    const raw = await this.deps.accounts.raw(tenant, user, provider);
    if (raw === null) return undefined;
    const tokens = this.deps.accounts.open(raw);
    if (!tokens) return undefined;
    // The provider was pointed elsewhere since the user connected (a tenant admin may rewrite its
    // url or tools): the user's token is not for that server, and the user connects again.
    if (!stillBound(config, tokens)) {
      await this.#drop(tenant, user, provider, raw, "the provider's upstream changed");
      return undefined;
    }
    if (this.#fresh(tokens)) return tokens.accessToken;
    const key = `${tenant} ${user} ${provider}`;
    let pending = this.#refreshing.get(key);
    if (!pending) {
      pending = this.#refreshOnce(tenant, user, provider, raw).finally(() => this.#refreshing.delete(key));
      this.#refreshing.set(key, pending);
    }
    return pending;
  }

  async refused(tenant: string, user: string, provider: string): Promise<void> {
    const dropped = await this.deps.accounts.remove(tenant, user, provider);
    if (!dropped) return;
    this.deps.onEvent?.("dropped");
    await this.#changed({ tenant, user, provider, connected: false });
  }

  /** Disconnects (the user, or an admin): the tokens are revoked upstream, best effort. */
  async disconnect(tenant: string, user: string, provider: string): Promise<AccountView | undefined> {
    const removed = await this.deps.accounts.remove(tenant, user, provider);
    if (!removed) return undefined;
    this.deps.onEvent?.("disconnected");
    await this.#changed({ tenant, user, provider, connected: false });
    const config = this.deps.providerOf(tenant, provider);
    if (config) void this.#revokeUpstream(tenant, provider, removed, config);
    return viewOf(provider, user, removed);
  }

  /**
   * Drops every user's account at a provider that is deleted (with its tenant, or alone), revoking
   * the tokens upstream with the provider's last `config` when it was per-user.
   */
  async forget(tenant: string, provider: string, config?: ProviderConfig): Promise<number> {
    const perUser = perUserOf(config);
    let dropped = 0;
    for (const user of await this.deps.accounts.usersOf(tenant, provider)) {
      const removed = await this.deps.accounts.remove(tenant, user, provider);
      if (!removed) continue;
      dropped++;
      this.deps.onEvent?.("disconnected");
      await this.#changed({ tenant, user, provider, connected: false });
      if (perUser) void this.#revokeUpstream(tenant, provider, removed, perUser);
    }
    await this.deps.clients.forgetAll(tenant, provider);
    return dropped;
  }

  /** Seals a provider's accounts and client registrations again under the current key. */
  async reseal(tenant: string, provider: string, tally: ResealTally): Promise<void> {
    await this.deps.accounts.reseal(tenant, provider, tally);
    await this.deps.clients.reseal(tenant, provider, tally);
  }

  /** A user's accounts, without token material. */
  async list(tenant: string, user: string): Promise<AccountView[]> {
    const views: AccountView[] = [];
    for (const provider of await this.deps.accounts.providersOf(tenant, user)) {
      const tokens = await this.deps.accounts.get(tenant, user, provider);
      if (tokens) views.push(viewOf(provider, user, tokens));
    }
    return views;
  }

  /** One account, without token material. */
  async view(tenant: string, user: string, provider: string): Promise<AccountView | undefined> {
    const tokens = await this.deps.accounts.get(tenant, user, provider);
    return tokens && viewOf(provider, user, tokens);
  }

  /** The users connected to a provider (their `sub`), sorted. */
  async users(tenant: string, provider: string): Promise<string[]> {
    return this.deps.accounts.usersOf(tenant, provider);
  }

  /** Stores a new connection (connect-flow.ts) and announces it. */
  async connected(
    tenant: string,
    user: string,
    provider: string,
    tokens: AccountTokens,
    elicitationId?: string,
  ): Promise<void> {
    await this.deps.accounts.put(tenant, user, provider, tokens);
    this.deps.onEvent?.("connected");
    const ids = elicitationId === undefined ? {} : { elicitationIds: [elicitationId] };
    await this.#changed({ tenant, user, provider, connected: true, ...ids });
  }

  #fresh(tokens: AccountTokens): boolean {
    return (
      tokens.expiresAt === undefined || tokens.expiresAt - this.#now() > (this.deps.refreshAheadMs ?? 60_000)
    );
  }

  /** One replica refreshes; the others wait (bounded) for the record it writes. */
  async #refreshOnce(
    tenant: string,
    user: string,
    provider: string,
    raw: string,
  ): Promise<string | undefined> {
    const { accounts } = this.deps;
    if (await accounts.lock(tenant, user, provider, this.#replica)) {
      try {
        // Another replica may have refreshed between our read and the lock.
        const now = await accounts.raw(tenant, user, provider);
        if (now !== raw) return now === null ? undefined : this.#usable(accounts.open(now));
        return await this.#refresh(tenant, user, provider, raw);
      } finally {
        await accounts.unlock(tenant, user, provider, this.#replica);
      }
    }
    for (let waited = 0; waited < 15_000; waited += WAIT_STEP_MS) {
      await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
      const now = await accounts.raw(tenant, user, provider);
      if (now !== raw) return now === null ? undefined : this.#usable(accounts.open(now));
      if (!(await accounts.locked(tenant, user, provider))) break;
    }
    return this.#usable(accounts.open(raw));
  }

  /** The access token while it has not expired yet. */
  #usable(tokens: AccountTokens | undefined): string | undefined {
    if (!tokens) return undefined;
    return tokens.expiresAt === undefined || tokens.expiresAt > this.#now() ? tokens.accessToken : undefined;
  }

  async #refresh(tenant: string, user: string, provider: string, raw: string): Promise<string | undefined> {
    const tokens = this.deps.accounts.open(raw);
    const config = this.deps.providerOf(tenant, provider);
    if (!tokens || !config) return undefined;
    if (!tokens.refreshToken) {
      // Nothing to refresh with: once expired, the user connects again.
      if (this.#usable(tokens)) return tokens.accessToken;
      await this.#drop(tenant, user, provider, raw, "expired without a refresh token");
      return undefined;
    }
    try {
      const { as, resource } = await this.deps.servers.discover(config.url, config.auth.issuer);
      // Only the server that issued the refresh token is sent it (the provider's issuer may change).
      if (as.issuer !== tokens.issuer) {
        await this.#drop(tenant, user, provider, raw, "the provider's authorization server changed");
        return undefined;
      }
      const { client, auth } = await this.deps.clients.clientFor(tenant, provider, config.auth, as);
      const response = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refreshToken, {
        additionalParameters: { resource },
        ...httpOptions(this.deps.fetch, as.token_endpoint ?? as.issuer),
      });
      const result = await oauth.processRefreshTokenResponse(as, client, response);
      const next = tokensOf(
        result,
        { ...tokens, refreshedAt: new Date(this.#now()).toISOString() },
        this.#now(),
      );
      await this.deps.accounts.put(tenant, user, provider, next);
      this.deps.onEvent?.("refreshed");
      return next.accessToken;
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError && err.error === "invalid_grant") {
        await this.#drop(tenant, user, provider, raw, "the refresh token was refused (invalid_grant)");
        return undefined;
      }
      this.deps.onEvent?.("refresh_failed");
      this.deps.log.warn({ tenant, provider, why: reason(err) }, "connected account not refreshed");
      return this.#usable(tokens);
    }
  }

  async #drop(tenant: string, user: string, provider: string, raw: string, why: string): Promise<void> {
    if (!(await this.deps.accounts.remove(tenant, user, provider, raw))) return;
    this.deps.onEvent?.("dropped");
    this.deps.log.info({ tenant, provider, why }, "connected account dropped");
    await this.#changed({ tenant, user, provider, connected: false });
  }

  async #changed(change: AccountChange): Promise<void> {
    await this.deps.accounts.publish(change);
  }

  /** RFC 7009 at the upstream's server, when it has a revocation endpoint; failures are logged. */
  async #revokeUpstream(
    tenant: string,
    provider: string,
    tokens: AccountTokens,
    config: PerUserProvider,
  ): Promise<void> {
    try {
      const { as } = await this.deps.servers.discover(config.url, config.auth.issuer);
      // Revoked only where they were issued: another server is never sent the user's tokens.
      if (!as.revocation_endpoint || as.issuer !== tokens.issuer) return;
      const { client, auth } = await this.deps.clients.clientFor(tenant, provider, config.auth, as);
      const options = httpOptions(this.deps.fetch, as.revocation_endpoint);
      for (const token of [tokens.refreshToken, tokens.accessToken])
        if (token)
          await oauth.processRevocationResponse(
            await oauth.revocationRequest(as, client, auth, token, options),
          );
    } catch (err) {
      this.deps.log.warn({ tenant, provider, why: reason(err) }, "connected account not revoked upstream");
    }
  }
}

/** A provider record as the account layer needs it, when it is per-user (user_oauth). */
export function perUserOf(config: ProviderConfig | undefined): PerUserProvider | undefined {
  if (config === undefined || config.kind === "static" || config.auth?.type !== "user_oauth")
    return undefined;
  const destinations = destinationsOf(config);
  // Discovery and the resource indicator use the first: an http provider's first tool's URL.
  const url = destinations[0];
  return url === undefined ? undefined : { url, auth: config.auth, destinations };
}

/**
 * Where a provider's requests go. An `openapi` provider's go below its `baseUrl`; one calling the
 * servers its document names (no `baseUrl`) is not known here, and cannot be connected.
 */
function destinationsOf(config: Exclude<ProviderConfig, { kind: "static" }>): string[] {
  switch (config.kind) {
    case "mcp":
      return config.url === undefined ? [] : [config.url]; // a stdio upstream has no URL
    case "http":
      return config.tools.map((t) => t.url);
    case "openapi":
      return config.baseUrl === undefined ? [] : [config.baseUrl];
  }
}

/** Whether every place the provider sends requests now is one (or below one) it sent them to at connect. */
function stillBound(config: PerUserProvider, tokens: AccountTokens): boolean {
  const bound = Array.isArray(tokens.destinations) ? tokens.destinations : [];
  return config.destinations.every((url) => bound.some((at) => withinDestination(url, at)));
}

/** The record of a token response; what it leaves out (a rotated refresh token, scope) is kept. */
export function tokensOf(
  result: oauth.TokenEndpointResponse,
  base: Omit<AccountTokens, "accessToken">,
  now: number,
): AccountTokens {
  const { expiresAt: _previous, ...rest } = base;
  return {
    ...rest,
    accessToken: result.access_token,
    ...(result.refresh_token !== undefined && { refreshToken: result.refresh_token }),
    ...(result.scope !== undefined && { scope: result.scope }),
    ...(typeof result.expires_in === "number" && { expiresAt: now + result.expires_in * 1000 }),
  };
}
