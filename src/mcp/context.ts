// The plain request context every method handler receives (docs/architecture.md §2): the lanes build it at
// the edge, handlers never read HTTP headers or session records.
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Authenticated } from "../auth/resource-server.js";
import type { CallContext } from "../providers/types.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import type { TenantRuntime } from "../tenants/registry.js";
import type { Cursors } from "./cursor.js";
import type { Session } from "./sessions.js";

export interface RequestContext extends CallContext {
  readonly tenant: TenantRuntime;
  readonly session: Session | undefined;
  readonly cursors: Cursors;
  readonly pageSize: number;
  /**
   * Who asks, from this request's own token (its scopes may differ from the session's first):
   * undefined on a tenant without authentication.
   */
  readonly caller: Authenticated | undefined;
  /** The virtual server of the URL (`/mcp/{tenant}/{server}`); undefined: the tenant's own URL. */
  readonly server: string | undefined;
  /** The profile of the client's capabilities: which lists it sees, where its calls go (§3). */
  readonly profile: CapabilityProfile;
  /** Applies logging/setLevel to the session (session era only). */
  setLogLevel(level: LoggingLevel): Promise<void>;
}
