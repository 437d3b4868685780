// Assembles the admin API: its stores, the OpenAPI document and validator, the platform key and
// the handlers of every operation; and records bootstrap seeds in the audit logs.
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config/env.js";
import type { Metrics } from "../metrics/metrics.js";
import type { SessionStore } from "../mcp/sessions.js";
import type { EndSession } from "./routes/deps.js";
import { randomId, type Secrets } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { TenantRegistry } from "../tenants/registry.js";
import type { TenantChange, TenantStore } from "../tenants/tenant-store.js";
import { ApiKeyStore, KEY_PREFIX } from "./api-keys.js";
import { AuditLog } from "../audit/audit.js";
import { AdminAuth, type ConsoleSessionSource } from "./auth.js";
import type { PlatformUsers } from "./platform-users.js";
import type { PlatformUserSeed } from "../config/bootstrap.js";
import type { TenantAdmins } from "./tenant-admins.js";
import { TryIt, type Inject } from "./try-it.js";
import { consoleHandlers } from "./routes/console.js";
import type { InternalCallers } from "../mcp/internal-callers.js";
import type { TrafficSource } from "../metrics/traffic.js";
import { openApiDocument } from "./openapi/document.js";
import { AdminValidator } from "./openapi/validator.js";
import { PageCursors } from "./pagination.js";
import type { AdminPluginOptions } from "./plugin.js";
import { accountHandlers } from "./routes/accounts.js";
import { apiKeyHandlers } from "./routes/api-keys.js";
import { auditHandlers } from "./routes/audit.js";
import { catalogHandlers } from "./routes/catalog.js";
import { clientHandlers } from "./routes/clients.js";
import type { AdminAccounts, AdminDeps, AdminOAuth } from "./routes/deps.js";
import { grantHandlers } from "./routes/grants.js";
import { identityHandlers } from "./routes/identity.js";
import { policyHandlers } from "./routes/policy.js";
import { providerHandlers } from "./routes/providers.js";
import { adoptPins, pinHandlers } from "./routes/pins.js";
import { secretHandlers } from "./routes/secrets.js";
import { serverHandlers } from "./routes/servers.js";
import { sessionHandlers } from "./routes/sessions.js";
import { auditForm, tenantHandlers } from "./routes/tenants.js";
import { userHandlers } from "./routes/users.js";
import type { OpenApiDocuments } from "../providers/factory.js";

export interface SurfaceDeps {
  readonly config: Config;
  readonly records: TenantStore;
  readonly registry: TenantRegistry;
  readonly sessions: SessionStore;
  readonly endSession: EndSession;
  readonly secrets: Secrets;
  /** The authorization server's users, clients, grants and token service. */
  readonly oauth: AdminOAuth;
  readonly store: Store;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  /** Counts admin writes as the audit log records them. */
  readonly metrics: Metrics;
  readonly accounts?: AdminAccounts;
  /** `openapi` providers' documents (providers/factory.ts). */
  readonly openapi: OpenApiDocuments;
  /** Where the traffic overview comes from (metrics/traffic.ts). */
  readonly traffic: TrafficSource;
  /** Try it: the app's inject and the passes the MCP endpoint honours (docs/admin-api.md "Try it"). */
  readonly tryIt?: { readonly inject: Inject; readonly callers: InternalCallers };
  /** Platform users and tenant admins, shared with the console's sign-in (built by app.ts). */
  readonly platformUsers: PlatformUsers;
  readonly tenantAdmins: TenantAdmins;
  /** The console's sessions: the admin API's second scheme (src/console/sessions.ts). */
  readonly console?: ConsoleSessionSource;
}

/**
 * The platform key: PORTICO_ADMIN_TOKEN, or a random one for this process that is never shown —
 * logs hold no secrets (docs/security.md) — so platform routes stay shut until it is set.
 */
function platformToken(config: Config, log: FastifyBaseLogger): string {
  if (config.adminToken !== undefined) return config.adminToken;
  log.warn(
    "PORTICO_ADMIN_TOKEN is not set: the platform admin key is a random value of this process, never shown, so /admin/v1 answers only tenant API keys; set PORTICO_ADMIN_TOKEN (e.g. `openssl rand -base64 32`) to use the platform routes",
  );
  return `${KEY_PREFIX}dev_${randomId(24)}`;
}

export interface AdminSurface {
  readonly plugin: AdminPluginOptions;
  /** Records a bootstrap seed that changed a tenant, as the "bootstrap" actor. */
  seeded(change: TenantChange): Promise<void>;
  /** Creates (or sets the password of) a platform user the bootstrap file names; audited when it wrote. */
  seedPlatformUser(user: PlatformUserSeed): Promise<void>;
}

export function adminSurface(deps: SurfaceDeps): AdminSurface {
  const document = openApiDocument();
  const validator = new AdminValidator(document);
  const apiKeys = new ApiKeyStore(deps.store, deps.keys);
  const { tryIt, ...rest } = deps;
  const adminDeps: AdminDeps = {
    ...rest,
    ...(tryIt && { tryIt: new TryIt(tryIt.inject, tryIt.callers) }),
    apiKeys,
    audit: new AuditLog(deps.store, deps.keys, deps.secrets, deps.metrics),
    cursors: new PageCursors(deps.secrets),
    validator,
  };
  const plugin: AdminPluginOptions = {
    auth: new AdminAuth(platformToken(deps.config, deps.log), apiKeys, deps.config.publicUrl, deps.console),
    validator,
    document,
    handlers: {
      ...tenantHandlers(adminDeps),
      ...providerHandlers(adminDeps),
      ...pinHandlers(adminDeps),
      ...serverHandlers(adminDeps),
      ...catalogHandlers(adminDeps),
      ...sessionHandlers(adminDeps),
      ...apiKeyHandlers(adminDeps),
      ...auditHandlers(adminDeps),
      ...userHandlers(adminDeps),
      ...clientHandlers(adminDeps),
      ...grantHandlers(adminDeps),
      ...accountHandlers(adminDeps),
      ...identityHandlers(adminDeps),
      ...policyHandlers(adminDeps),
      ...secretHandlers(adminDeps),
      ...consoleHandlers(adminDeps),
    },
  };
  const seeded = async ({ before, after }: TenantChange) => {
    if (before === after || !after) return;
    const id = after.config.id;
    await adminDeps.audit.record(
      {
        actor: "bootstrap",
        action: before ? "tenant.update" : "tenant.create",
        tenant: id,
        target: id,
        ...(before ? { before: auditForm(before.config) } : {}),
        after: auditForm(after.config),
      },
      true,
    );
    await adoptPins(adminDeps, id, "bootstrap");
  };
  const seedPlatformUser = async ({ username, ...secret }: PlatformUserSeed) => {
    const before = await deps.platformUsers.get(username);
    if (!(await deps.platformUsers.seed(username, secret))) return;
    await adminDeps.audit.record({
      actor: "bootstrap",
      action: before ? "platform-user.update" : "platform-user.create",
      tenant: null,
      target: username,
      ...(before ? { after: { passwordChanged: true } } : { after: await deps.platformUsers.get(username) }),
    });
  };
  return { plugin, seeded, seedPlatformUser };
}
