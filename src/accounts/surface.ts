// Assembles connected accounts (docs/upstream-auth.md): the token source per-user providers use,
// the connect flow, the accounts pages and their sign-in. app.ts builds one and registers its plugin.
import type { FastifyBaseLogger, FastifyInstance, onRequestAsyncHookHandler } from "fastify";
import type { Fetch } from "../egress/fetch.js";
import type { AccountEvent, Metrics } from "../metrics/metrics.js";
import { Federation } from "../oauth/federation.js";
import { ACCOUNTS_CLIENT_PATH, ACCOUNTS_SIGNED_IN_PATH } from "../oauth/connect-client.js";
import { GrantStore } from "../oauth/grants.js";
import type { TenantConfig } from "../records/tenant.js";
import type { Secrets } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import { AccountStore } from "./account-store.js";
import { BrowserSessions } from "./browser-sessions.js";
import { ClientIdentities } from "./client-identity.js";
import { ConnectFlows, FlowRecords } from "./connect-flow.js";
import { ConnectedAccounts, perUserOf, type PerUserProvider } from "./connected-accounts.js";
import { AuthorizationServers } from "./discovery.js";
import { FetchBackoff } from "../limits/fetch-backoff.js";
import { ConnectLinks } from "./links.js";
import { accountsPlugin, type AccountsAudit } from "./routes.js";
import { AccountsSignIn, EXTERNAL_SIGNED_IN_PATH } from "./sign-in.js";
import type { UserTokenSource } from "../providers/user-tokens.js";

export interface AccountsSurfaceDeps {
  readonly publicUrl: string;
  readonly store: Store;
  readonly keys: Keys;
  readonly secrets: Secrets;
  /** A tenant's record as this replica has it (read when used, so it may name the registry built later). */
  readonly tenant: (id: string) => TenantConfig | undefined;
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
  /** The token source of an `auth.type`: connected accounts serve "user_oauth". */
  sourceFor(authType: string): UserTokenSource | undefined;
  /** Registers the pages (`signInLimit` limits those that may start a sign-in); starts following changes. */
  register(app: FastifyInstance, signInLimit?: onRequestAsyncHookHandler): Promise<void>;
}

export function accountsSurface(deps: AccountsSurfaceDeps): AccountsSurface {
  const { publicUrl, store, keys, secrets, tenant, fetch, log } = deps;
  const providerOf = (id: string, provider: string): PerUserProvider | undefined =>
    perUserOf(tenant(id)?.providers.find((p) => p.id === provider));
  const links = new ConnectLinks(secrets);
  const accounts = new ConnectedAccounts({
    accounts: new AccountStore(store, keys, secrets),
    servers: new AuthorizationServers(fetch, undefined, new FetchBackoff(store, keys)),
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
    tenant,
    // The authorization server's codes and grants, in the store (oauth/grants.ts).
    grants: new GrantStore(store, keys),
    flows: records,
    client: {
      id: `${publicUrl}${ACCOUNTS_CLIENT_PATH}`,
      redirectUri: `${publicUrl}${ACCOUNTS_SIGNED_IN_PATH}`,
    },
    binding: sessions,
    federation: new Federation({ redirectUri: `${publicUrl}${EXTERNAL_SIGNED_IN_PATH}`, fetch }),
    log,
  });
  return {
    accounts,
    sourceFor: (authType) => (authType === "user_oauth" ? accounts : undefined),
    async register(app, signInLimit) {
      await accounts.start();
      app.addHook("onClose", () => accounts.close());
      await app.register(accountsPlugin, {
        publicUrl,
        tenant,
        accounts,
        flows: new ConnectFlows(accounts, records),
        links,
        sessions,
        signIn,
        ...(deps.audit && { audit: deps.audit }),
        ...(signInLimit && { signInLimit }),
      });
    },
  };
}
