// Assembles connected accounts (docs/upstream-auth.md): the token source per-user providers use,
// the connect flow, the accounts pages and their sign-in. app.ts builds one and registers its plugin.
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Fetch } from "../egress/fetch.js";
import type { AccountEvent, Metrics } from "../metrics/metrics.js";
import { Federation } from "../oauth/federation.js";
import type { GrantStore } from "../oauth/grants.js";
import type { UpstreamAuth } from "../providers/config.js";
import type { Secrets } from "../secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { AccountStore } from "./account-store.js";
import { BrowserSessions } from "./browser-sessions.js";
import { ClientIdentities } from "./client-identity.js";
import { ConnectFlows, FlowRecords } from "./connect-flow.js";
import { ConnectedAccounts, perUserOf, type PerUserProvider } from "./connected-accounts.js";
import { AuthorizationServers } from "./discovery.js";
import { ConnectLinks } from "./links.js";
import { accountsPlugin, type AccountsAudit } from "./routes.js";
import { AccountsSignIn, EXTERNAL_SIGNED_IN_PATH } from "./sign-in.js";
import type { UserTokenSource } from "./user-tokens.js";

export interface AccountsSurfaceDeps {
  readonly publicUrl: string;
  readonly store: Store;
  readonly keys: Keys;
  readonly secrets: Secrets;
  readonly registry: TenantRegistry;
  readonly grants: GrantStore;
  /** The provider egress fetch: upstreams and their servers are operator-configured. */
  readonly fetch: Fetch;
  readonly log: FastifyBaseLogger;
  /** Counts connected-account events. */
  readonly metrics?: Metrics;
  /** Where a user's own Disconnect is recorded (the tenant's audit log). */
  readonly audit?: AccountsAudit;
  /** Refresh this long before expiry (tests). Default 60 s. */
  readonly refreshAheadMs?: number;
}

export interface AccountsSurface {
  readonly accounts: ConnectedAccounts;
  /** The token source of a provider's auth type: connected accounts serve user_oauth. */
  sourceFor(auth: UpstreamAuth | undefined): UserTokenSource | undefined;
  /** Registers the pages; starts following changes. */
  register(app: FastifyInstance): Promise<void>;
}

export function accountsSurface(deps: AccountsSurfaceDeps): AccountsSurface {
  const { publicUrl, store, keys, secrets, registry, fetch, log } = deps;
  const providerOf = (tenant: string, provider: string): PerUserProvider | undefined =>
    perUserOf(registry.get(tenant)?.config.providers.find((p) => p.id === provider));
  const links = new ConnectLinks(secrets);
  const accounts = new ConnectedAccounts({
    accounts: new AccountStore(store, keys, secrets),
    servers: new AuthorizationServers(fetch),
    clients: new ClientIdentities({ store, keys, secrets, fetch, publicUrl }),
    links,
    fetch,
    publicUrl,
    log,
    providerOf,
    ...(deps.refreshAheadMs !== undefined && { refreshAheadMs: deps.refreshAheadMs }),
    ...(deps.metrics && { onEvent: (event: AccountEvent) => deps.metrics!.accountEvent(event) }),
  });
  const records = new FlowRecords(store, keys);
  const sessions = new BrowserSessions(store, keys, publicUrl);
  const signIn = new AccountsSignIn({
    publicUrl,
    registry,
    grants: deps.grants,
    flows: records,
    sessions,
    federation: new Federation({ redirectUri: `${publicUrl}${EXTERNAL_SIGNED_IN_PATH}`, fetch }),
    log,
  });
  return {
    accounts,
    sourceFor: (auth) => (auth?.type === "user_oauth" ? accounts : undefined),
    async register(app) {
      await accounts.start();
      app.addHook("onClose", () => accounts.close());
      await app.register(accountsPlugin, {
        publicUrl,
        registry,
        accounts,
        flows: new ConnectFlows(accounts, records),
        links,
        sessions,
        signIn,
        ...(deps.audit && { audit: deps.audit }),
      });
    },
  };
}
