// The context of one 2026-07-28 request (docs/architecture.md §2): what the request's own `_meta` says, and
// its response stream for progress and log messages. Nothing is read from earlier requests: the
// client's capabilities, progress token and log level are the ones this request declares; for a
// call held across retries (CallRun), the ones of the retry now waiting on it.
import type { ClientCapabilities, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Authenticated } from "../../policy/caller.js";
import { excerpt, fail } from "../../protocol/errors.js";
import type { TenantRuntime } from "../../tenants/runtime.js";
import type { CallRun, RoundMeta } from "./call-run.js";
import { INPUT_METHODS, missingCapability } from "../../protocol/input-requests.js";
import type { Cancellation } from "../cancellation.js";
import { logPasses } from "../../protocol/log-levels.js";
import type { RequestContext } from "../context.js";
import type { Cursors } from "../cursor.js";
import type { RetryInput } from "./mrtr-types.js";
import type { RequestMeta } from "./request-meta.js";
import type { CapabilityProfile } from "../../protocol/profile.js";
import type { Tasks } from "../../tasks/tasks.js";

export class StatelessRequestContext implements RequestContext {
  readonly tenantId: string;
  readonly sessionId = undefined;
  readonly session = undefined;
  readonly protocolVersion: string;
  /** The profile this request declared; a held call keeps its first request's (its routes). */
  readonly profile: CapabilityProfile;
  readonly server: string | undefined;
  /** Portico's tasks (the tasks extension, docs/upstream-mcp.md#tasks); set by the lane where they run. */
  tasks?: Tasks;
  /** The client's IP address (RequestContext.clientIp); set by the lane with `tasks`. */
  clientIp?: string;

  /**
   * `mrtr` is given for the methods that may answer input_required: the provider relays its
   * upstream's rounds (and on a retry, the client's answers). `run` is given when the provider may
   * also ask the client mid-call: questions stop the run there (CallRun). Without it, messages go
   * straight to `send`.
   */
  constructor(
    readonly tenant: TenantRuntime,
    readonly meta: RequestMeta,
    readonly cursors: Cursors,
    readonly pageSize: number,
    readonly cancellation: Cancellation,
    private readonly send: (json: string) => void,
    readonly caller: Authenticated | undefined,
    readonly mrtr?: RetryInput,
    private readonly run?: CallRun,
  ) {
    this.tenantId = tenant.config.id;
    this.server = tenant.server?.id;
    this.protocolVersion = meta.protocolVersion;
    this.profile = meta.profile;
  }

  get user(): string | undefined {
    return this.caller?.user;
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  /** The _meta that counts now: this request's, or the retry's now waiting on the run. */
  get #now(): RoundMeta {
    return this.run?.meta ?? this.meta;
  }

  get clientCapabilities(): ClientCapabilities {
    return this.#now.clientCapabilities;
  }

  get logLevel(): LoggingLevel | undefined {
    return this.#now.logLevel;
  }

  progress(progress: number, total?: number, message?: string): void {
    const token = this.#now.progressToken;
    if (token === undefined || this.cancellation.aborted) return;
    const params: Record<string, unknown> = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    this.#notify("notifications/progress", params);
  }

  /** Only a request that named a log level gets log messages (server/utilities/logging, 2026-07-28). */
  log(level: LoggingLevel, data: unknown, logger?: string): void {
    const threshold = this.logLevel;
    if (threshold === undefined || this.cancellation.aborted || !logPasses(level, threshold)) return;
    this.#notify("notifications/message", logger === undefined ? { level, data } : { level, logger, data });
  }

  /**
   * A question for the client during this request. 2026-07-28 has no server-to-client requests on
   * the wire: it becomes an input request of an InputRequiredResult, which needs the capability
   * this request declares; a request that lacks it is answered -32021 and its call cancelled.
   */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>> {
    if (!INPUT_METHODS.has(method) || !this.run)
      throw fail(
        "PORTICO_ERR_MCP_CLIENT_CAPABILITY",
        `The upstream asked the client for ${excerpt(method)}, which a 2026-07-28 ${this.run ? "client" : "request of this method"} cannot answer`,
      );
    const missing = missingCapability(method, params, this.clientCapabilities);
    if (missing) {
      const err = fail(
        "PORTICO_ERR_MCP_MISSING_CAPABILITY",
        `This request needs the client capability ${JSON.stringify(missing)} (for ${excerpt(method)}); declare it in _meta`,
        { requiredCapabilities: missing },
      );
      this.run.fail(err);
      throw err;
    }
    return this.run.ask(method, params ?? {});
  }

  setLogLevel(): Promise<void> {
    // logging/setLevel does not exist in 2026-07-28; the lane answers it with -32601 first.
    return Promise.reject(fail("PORTICO_ERR_MCP_METHOD_NOT_FOUND", "Method not found: logging/setLevel"));
  }

  #notify(method: string, params: Record<string, unknown>): void {
    const json = JSON.stringify({ jsonrpc: "2.0", method, params });
    if (this.run) this.run.send(json);
    else this.send(json);
  }
}
