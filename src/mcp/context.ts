// The plain request context every method handler receives (docs/architecture.md §2): the lanes build it at
// the edge, handlers never read HTTP headers or session records.
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Authenticated } from "../policy/caller.js";
import type { CallContext } from "../providers/types.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import type { Tasks } from "../tasks/tasks.js";
import type { TenantRuntime } from "../tenants/runtime.js";
import type { Cursors } from "./cursor.js";
import type { Session } from "./session-record.js";

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
  /**
   * The virtual server the request came to (`/mcp/{tenant}/{server}`, docs/architecture.md §8);
   * undefined at the tenant's own URL. Its lists are `tenant`'s catalogs.
   */
  readonly server: string | undefined;
  /** The profile of the client's capabilities: which lists it sees, where its calls go (§3). */
  readonly profile: CapabilityProfile;
  /** Portico's tasks (docs/upstream-mcp.md#tasks); absent on a replica that runs none. */
  readonly tasks?: Tasks;
  /**
   * The client's IP address (as trusted proxies name it), where a request has no user and no
   * session to count its tasks against (a 2026-07-28 request on a tenant without authentication).
   */
  readonly clientIp?: string;
  /** Applies logging/setLevel to the session (session era only). */
  setLogLevel(level: LoggingLevel): Promise<void>;
}
