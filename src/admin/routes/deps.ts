// What the admin route handlers work with.
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config/env.js";
import type { SessionLane } from "../../mcp/session-lane.js";
import type { SessionStore } from "../../mcp/sessions.js";
import type { Secrets } from "../../secrets.js";
import type { TenantRegistry } from "../../tenants/registry.js";
import type { TenantStore } from "../../tenants/tenant-store.js";
import type { ApiKeyStore } from "../api-keys.js";
import type { AuditLog } from "../audit.js";
import type { AdminValidator } from "../openapi/validator.js";
import type { PageCursors } from "../pagination.js";

export interface AdminDeps {
  readonly config: Config;
  readonly records: TenantStore;
  readonly registry: TenantRegistry;
  readonly sessions: SessionStore;
  readonly lane: SessionLane;
  readonly apiKeys: ApiKeyStore;
  readonly audit: AuditLog;
  readonly cursors: PageCursors;
  readonly validator: AdminValidator;
  readonly secrets: Secrets;
  readonly log: FastifyBaseLogger;
}
