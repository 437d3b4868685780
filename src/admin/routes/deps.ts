// What the admin route handlers work with.
import type { FastifyBaseLogger } from "fastify";
import type { AccountView } from "../../accounts/account-store.js";
import type { Config } from "../../config/env.js";
import type { ProviderConfig } from "../../records/tenant.js";
import type { SessionStore } from "../../mcp/sessions.js";
import type { ClientStore } from "../../oauth/clients.js";
import type { GrantStore } from "../../oauth/grants.js";
import type { LoginThrottle } from "../../oauth/login-throttle.js";
import type { SigningKeys } from "../../oauth/signing-keys.js";
import type { TokenService } from "../../oauth/token.js";
import type { UserStore } from "../../oauth/users.js";
import type { Secrets } from "../../crypto/secrets.js";
import type { Keys } from "../../store/keys.js";
import type { Store } from "../../store/store.js";
import type { TenantRegistry } from "../../tenants/registry.js";
import type { TenantRuntime } from "../../tenants/runtime.js";
import type { ResealTally } from "../../tenants/sealed.js";
import type { TenantStore } from "../../tenants/tenant-store.js";
import type { ApiKeyStore } from "../api-keys.js";
import type { AuditLog } from "../../audit/audit.js";
import type { AdminValidator } from "../openapi/validator.js";
import type { PageCursors } from "../pagination.js";
import type { OpenApiDocuments } from "../../providers/factory.js";
import type { PlatformUsers } from "../platform-users.js";
import type { TenantAdmins } from "../tenant-admins.js";
import type { TryIt } from "../try-it.js";
import type { ConsoleSessionSource } from "../auth.js";
import type { TrafficSource } from "../../metrics/traffic.js";

/** The authorization server's stores the admin API manages (oauth/surface.ts builds them). */
export interface AdminOAuth {
  readonly users: UserStore;
  readonly clients: ClientStore;
  readonly grants: GrantStore;
  /** Revokes a grant with its access tokens. */
  readonly tokens: TokenService;
  /** Clears a user's login back-off. */
  readonly loginThrottle: LoginThrottle;
  /** Sealed with PORTICO_SECRET_KEY, so re-sealed with the tenants' secrets. */
  readonly signingKeys: SigningKeys;
}

/** Connected accounts as the admin API manages them (accounts/connected-accounts.ts). */
export interface AdminAccounts {
  list(tenant: string, user: string): Promise<AccountView[]>;
  view(tenant: string, user: string, provider: string): Promise<AccountView | undefined>;
  users(tenant: string, provider: string): Promise<string[]>;
  disconnect(tenant: string, user: string, provider: string): Promise<AccountView | undefined>;
  /** Drops every account at a deleted provider (its last record given, to revoke them upstream). */
  forget(tenant: string, provider: string, config?: ProviderConfig): Promise<number>;
  /** Seals a provider's accounts and client registrations again under the current key. */
  reseal(tenant: string, provider: string, tally: ResealTally): Promise<void>;
}

/**
 * Ends an MCP session as the client's DELETE would, on every replica: the session lane's end(),
 * which app.ts wires in. Resolves whether the session existed.
 */
export type EndSession = (tenant: string, session: string, runtime?: TenantRuntime) => Promise<boolean>;

export interface AdminDeps {
  readonly config: Config;
  /** `openapi` providers' documents: checked before a save, fetched again for a refresh. */
  readonly openapi: OpenApiDocuments;
  readonly records: TenantStore;
  readonly registry: TenantRegistry;
  readonly sessions: SessionStore;
  readonly endSession: EndSession;
  readonly apiKeys: ApiKeyStore;
  readonly audit: AuditLog;
  readonly cursors: PageCursors;
  readonly validator: AdminValidator;
  readonly secrets: Secrets;
  readonly oauth: AdminOAuth;
  readonly store: Store;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  /** Absent: connected accounts are not served (their operations answer 404). */
  readonly accounts?: AdminAccounts;
  readonly platformUsers: PlatformUsers;
  readonly tenantAdmins: TenantAdmins;
  /** Calls a tenant's MCP endpoint as an admin (absent: try it answers an error). */
  readonly tryIt?: TryIt;
  /** Where the traffic overview comes from: Prometheus or this replica. */
  readonly traffic: TrafficSource;
  /** The console's sessions, for signing out (absent: there is no console here). */
  readonly console?: ConsoleSessionSource;
}
