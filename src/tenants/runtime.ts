// What serves one MCP URL of a tenant (docs/architecture.md §3): the tenant's own (live-tenant.ts)
// or one of its virtual servers' (virtual-server.ts). The resource server and the MCP endpoint see
// only this.
import type { PolicyRuntime } from "../policy/enforcer.js";
import type { Catalog } from "../providers/catalog.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import type { VirtualServerConfig } from "../records/server.js";
import type { TenantConfig } from "../records/tenant.js";

export interface TenantRuntime {
  readonly config: TenantConfig;
  /** The lists as a client that declared no capabilities sees them. */
  readonly catalog: Catalog;
  /**
   * The lists as clients of `profile` see them, and the routes of their calls: the catalog at
   * once when it is current, else once the providers listed under the profile (single flight).
   * With `user`, on a tenant with per-user providers, that user's own (user-views.ts).
   */
  catalogFor(profile: CapabilityProfile, user?: string): Catalog | Promise<Catalog>;
  /** How many profiles' catalogs this replica keeps for the tenant (bounded: profile-views.ts). */
  readonly profileCount: number;
  /** The virtual server this runtime serves (/mcp/{tenant}/{server}); undefined for /mcp/{tenant}. */
  readonly server: VirtualServerConfig | undefined;
  /** The tenant's policy, compiled once per record; undefined when it has none (docs/policy.md). */
  readonly policy?: PolicyRuntime | undefined;
}
