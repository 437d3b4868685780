// Assembles the authorization server and the resource server from the configuration: signing
// keys, token issuing and verification (Portico's own, or a tenant's external server's), clients,
// users, grants, pending sign-ins and federated sign-in at tenants' OpenID providers.
import type { Config } from "../config/env.js";
import { ExternalVerifiers } from "../auth/external.js";
import { ResourceServer, type TokenVerifier } from "../auth/resource-server.js";
import { egressFetch } from "../egress/fetch.js";
import { EgressPolicy } from "../egress/policy.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Secrets } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { AccessTokens } from "./access-tokens.js";
import { FlowStore } from "./authorize.js";
import { ClientMetadataFetcher } from "./client-metadata.js";
import { RegistrationBudget } from "./registration-budget.js";
import { FetchBackoff } from "../limits/fetch-backoff.js";
import { ClientStore } from "./clients.js";
import { accountsClientDocument, connectClientDocument, consoleClientDocument } from "./connect-client.js";
import { Federation } from "./federation.js";
import { GrantStore } from "./grants.js";
import { LoginThrottle } from "./login-throttle.js";
import type { OAuthPluginOptions } from "./plugin.js";
import { SigningKeys } from "./signing-keys.js";
import { TokenError, TokenService } from "./token.js";
import { UserStore } from "./users.js";

export interface OAuthSurfaceDeps {
  readonly config: Config;
  readonly store: Store;
  readonly keys: Keys;
  readonly secrets: Secrets;
  readonly registry: TenantRegistry;
  readonly metrics: Metrics;
  /** Where a login back-off's start is recorded (the tenant's audit log). */
  readonly audit?: LoginAudit;
}

/** The audit log as the login back-off writes to it (audit/audit.ts AuditLog fits). */
export interface LoginAudit {
  record(entry: {
    actor: string;
    action: string;
    tenant: string;
    target: string;
    after: Record<string, unknown>;
  }): Promise<void>;
}

export interface OAuthSurface {
  readonly plugin: OAuthPluginOptions;
  readonly resourceServer: ResourceServer;
  readonly users: UserStore;
  readonly clients: ClientStore;
  readonly grants: GrantStore;
  readonly tokens: TokenService;
  readonly loginThrottle: LoginThrottle;
  readonly signingKeys: SigningKeys;
}

export async function oauthSurface(deps: OAuthSurfaceDeps): Promise<OAuthSurface> {
  const { config, store, keys, secrets, registry, metrics } = deps;
  const issuer = config.publicUrl;
  const lifetime = config.accessTokenTtlSeconds;
  const signingKeys = new SigningKeys(store, keys, secrets, {
    retireAfterSeconds: Math.max(86_400, lifetime + 60),
  });
  // Fails fast when the stored keys were sealed under another PORTICO_SECRET_KEY.
  await signingKeys.current();
  const accessTokens = new AccessTokens(signingKeys, issuer, { lifetimeSeconds: lifetime });
  const clients = new ClientStore(store, keys, undefined, {
    unusedSeconds: config.oauthUnusedClientTtlSeconds,
    idleSeconds: config.oauthIdleClientTtlSeconds,
  });
  const users = new UserStore(store, keys);
  const grants = new GrantStore(store, keys);
  // A local user's groups and roles are read at each issuance; a federated user's come from the grant.
  // A local user who is gone (deleted, or the name now someone else's) gets nothing: a sign-in
  // finished after the deletion would otherwise hold a grant the deletion never revoked.
  const tokens = new TokenService(grants, accessTokens, async (grant) => {
    if (grant.username === undefined) return grant;
    const user = await users.get(grant.tenant, grant.username);
    if (user?.sub === grant.sub) return user;
    await tokens.revokeGrant(grant.tenant, grant.id);
    throw new TokenError("invalid_grant", "the user no longer exists");
  });
  const loginThrottle = new LoginThrottle({
    store,
    keys,
    failures: config.loginThrottleFailures,
    accountFailures: config.loginThrottleAccountFailures,
    maxSeconds: config.loginThrottleMaxSeconds,
    metrics,
    // Audited once per back-off started on a user that exists: names a stranger makes up stay out
    // of the tenant's log (the app log and the metric see every one).
    onStart: async ({ tenant, username, scope, address, failures }) => {
      if (!deps.audit || !(await users.get(tenant, username))) return;
      await deps.audit.record({
        actor: "portico",
        action: "user.login-throttled",
        tenant,
        target: username,
        after: { scope, address, failures },
      });
    },
  });
  // Identity providers and external authorization servers are operator-configured, like upstreams.
  const providerFetch = egressFetch(
    new EgressPolicy({ allowCidrs: config.providerAllowCidrs, denyCidrs: config.providerDenyCidrs }),
  );
  const external = new ExternalVerifiers({ fetch: providerFetch });
  // Chosen from the tenant's in-memory record: no store round trip per request.
  const verifierFor = (tenant: string): TokenVerifier => {
    const identity = registry.get(tenant)?.config.identity;
    return identity?.type === "external" ? external.for(tenant, identity) : accessTokens;
  };
  return {
    resourceServer: new ResourceServer(issuer, verifierFor, metrics),
    users,
    clients,
    grants,
    tokens,
    loginThrottle,
    signingKeys,
    plugin: {
      issuer,
      registry,
      clients,
      registration: {
        budget: new RegistrationBudget(store, keys, config.oauthRegistrationsPerHour),
        maxBytes: config.oauthRegistrationMaxBytes,
      },
      clientMetadata: new ClientMetadataFetcher({
        allowCidrs: config.clientMetadataAllowCidrs,
        builtIn: [
          connectClientDocument(issuer),
          accountsClientDocument(issuer),
          consoleClientDocument(issuer),
        ],
      }),
      users,
      grants,
      flows: new FlowStore(store, keys),
      tokens,
      accessTokens,
      signingKeys,
      federation: new Federation({
        redirectUri: `${issuer}/oauth/callback`,
        fetch: providerFetch,
        backoff: new FetchBackoff(store, keys),
      }),
      // The accounts pages' and the console's sign-ins go through the login page without a consent step.
      trustedClients: [accountsClientDocument(issuer).client_id, consoleClientDocument(issuer).client_id],
      loginThrottle,
      metrics,
    },
  };
}
