// What an `mcp` provider with `transport: "stdio"` adds to the session-era part (docs/upstream-mcp.md
// "stdio upstreams"): the children (supervisor.ts) its sessions are opened on, one session serving
// every profile, the capabilities the shared child is told (what Portico can relay), the client
// sessions' log levels kept by Portico, and a child's end reported as the provider's failure.
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { StdioLaunch } from "../../../config/stdio-launch.js";
import type { McpProviderConfig } from "../../../records/tenant.js";
import type { CallContext, SessionOutlet } from "../../types.js";
import type { SessionEraOptions } from "../session/era.js";
import { SharedLogLevels } from "./log-levels.js";
import { restarting, StdioSupervisor, type StdioEvents } from "./supervisor.js";

/** How a stdio provider is built (providers/factory.ts). */
export interface StdioDeps {
  /** This replica's bootstrap file's launch for the provider; undefined when it has none. */
  readonly launch: StdioLaunch | undefined;
  readonly events?: StdioEvents;
}

export class StdioPart {
  readonly supervisor: StdioSupervisor;
  readonly levels: SharedLogLevels;
  /** Told when the shared child ended: the provider is unhealthy until it is back. */
  onCrash: (reason: string) => void = () => undefined;

  constructor(
    private readonly cfg: McpProviderConfig,
    deps: StdioDeps,
    ctx: {
      readonly tenantId: string;
      readonly log: FastifyBaseLogger;
      readonly outlet: SessionOutlet;
      readonly timeoutMs: number;
    },
  ) {
    this.levels = new SharedLogLevels(ctx.outlet, ctx.tenantId, async (level) => {
      await this.#setLevel?.(level);
    });
    this.supervisor = new StdioSupervisor({
      launch: deps.launch,
      log: ctx.log,
      fields: { tenant: ctx.tenantId, provider: cfg.id },
      ...(cfg.roots && { roots: cfg.roots }),
      onLog: (params) => this.levels.fanOut(params),
      opened: async (session) => {
        this.#setLevel = async (level) => {
          if (session.alive && session.capabilities?.logging)
            await session.request("logging/setLevel", { level }, AbortSignal.timeout(ctx.timeoutMs));
        };
        await this.levels.restore().catch(() => undefined);
      },
      events: {
        started: (shared) => deps.events?.started?.(shared),
        exited: (exit, shared, restartMs) => {
          deps.events?.exited?.(exit, shared, restartMs);
          if (shared) this.onCrash(restarting(exit.reason, restartMs ?? 0));
        },
      },
      initTimeoutMs: Math.min(ctx.timeoutMs, 30_000),
    });
  }

  #setLevel: ((level: LoggingLevel) => Promise<void>) | undefined;

  /** The session-era part's options: children instead of HTTP, one session for every profile. */
  eraOptions(onResourceUpdated: (uri: string) => void): SessionEraOptions {
    const perClient = this.cfg.serverRequests === "child-per-client";
    return {
      open: this.supervisor.openShared,
      openOwn: this.supervisor.openOwn,
      single: true,
      // What Portico can relay for the clients that declared it (one call in flight at a time).
      declares: {
        sampling: {},
        elicitation: { form: {}, url: {} },
        ...(this.cfg.roots && { roots: {} }),
      },
      // A client past MAX_OWN_CHILDREN shares the provider's child (relayed while its call is alone).
      dedicatedFor: perClient
        ? (_ctx, profile) => {
            const c = profile.capabilities;
            const asks = c.sampling !== undefined || c.elicitation !== undefined || c.roots !== undefined;
            return asks && this.supervisor.roomForOwn;
          }
        : () => false,
      onResourceUpdated,
    };
  }

  /** A request of a session whose level is known (set here or on another replica). */
  seen(ctx: Pick<CallContext, "sessionId" | "logLevel">): void {
    if (ctx.sessionId !== undefined && ctx.logLevel !== undefined)
      this.levels.seen(ctx.sessionId, ctx.logLevel);
  }

  close(): Promise<void> {
    return this.supervisor.close();
  }
}
