// The context of one session-era request (docs/architecture.md §2): who asks and what they can do, and the
// way back to the client for progress, log messages and server-to-client requests. One object
// per request with its methods on the prototype: this is on every request's path.
import type { ClientCapabilities, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Authenticated } from "../../policy/caller.js";
import { excerpt, fail } from "../../protocol/errors.js";
import type { Tasks } from "../../tasks/tasks.js";
import type { TenantRuntime } from "../../tenants/runtime.js";
import type { Cancellation } from "../cancellation.js";
import { logPasses } from "../../protocol/log-levels.js";
import type { RequestContext } from "../context.js";
import type { Cursors } from "../cursor.js";
import {
  CLIENT_TASK_METHODS,
  INPUT_METHODS,
  missingCapability,
  missingTaskCapability,
} from "../../protocol/input-requests.js";
import type { RpcRequest } from "../../protocol/jsonrpc.js";
import { contentGapsOf, fitClientRequest } from "../../protocol/older-revisions.js";
import type { CapabilityProfile } from "../../protocol/profile.js";
import type { Session } from "../session-record.js";

/** What the session lane lends every request context (made once per lane). */
export interface ContextHost {
  readonly cursors: Cursors;
  readonly pageSize: number;
  readonly tasks?: Tasks;
  clientRequest(
    tenant: string,
    sid: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
    send: (json: string) => Promise<void>,
  ): Promise<Record<string, unknown>>;
  setLogLevel(tenant: TenantRuntime, session: Session, level: LoggingLevel): Promise<void>;
}

export class SessionRequestContext implements RequestContext {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  readonly profile: CapabilityProfile;
  readonly server: string | undefined;
  readonly logLevel: LoggingLevel | undefined;
  readonly cursors: Cursors;
  readonly pageSize: number;
  readonly #progressToken: string | number | undefined;

  constructor(
    readonly tenant: TenantRuntime,
    readonly session: Session,
    request: RpcRequest,
    readonly cancellation: Cancellation,
    private readonly send: (json: string) => Promise<void>,
    private readonly host: ContextHost,
    readonly caller: Authenticated | undefined,
  ) {
    this.tenantId = tenant.config.id;
    this.server = tenant.server?.id;
    this.sessionId = session.id;
    this.protocolVersion = session.protocolVersion;
    this.clientCapabilities = session.clientCapabilities;
    this.profile = session.profile;
    this.logLevel = session.logLevel;
    this.cursors = host.cursors;
    this.pageSize = host.pageSize;
    const token = (request.params?._meta as Record<string, unknown> | undefined)?.progressToken;
    this.#progressToken = typeof token === "string" || typeof token === "number" ? token : undefined;
  }

  get user(): string | undefined {
    return this.caller?.user;
  }

  get tasks(): Tasks | undefined {
    return this.host.tasks;
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  progress(progress: number, total?: number, message?: string): void {
    if (this.#progressToken === undefined || this.cancellation.aborted) return;
    const params: Record<string, unknown> = { progressToken: this.#progressToken, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    this.#notify("notifications/progress", params);
  }

  log(level: LoggingLevel, data: unknown, logger?: string): void {
    if (this.cancellation.aborted || !logPasses(level, this.logLevel)) return;
    this.#notify("notifications/message", logger === undefined ? { level, data } : { level, logger, data });
  }

  async request(
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>> {
    // A poll of one of the client's own tasks (a task-augmented sampling or elicitation it ran).
    const poll = CLIENT_TASK_METHODS.has(method);
    if (!INPUT_METHODS.has(method) && !poll)
      throw fail("PORTICO_ERR_MCP_CLIENT_CAPABILITY", `A client cannot be asked ${excerpt(method)}`);
    const missing = poll
      ? missingTaskCapability(method, this.clientCapabilities)
      : missingCapability(method, params, this.clientCapabilities);
    if (missing)
      throw fail(
        "PORTICO_ERR_MCP_CLIENT_CAPABILITY",
        `The client did not declare the capability ${JSON.stringify(missing)} needed for ${excerpt(method)}`,
      );
    // Sampling messages with content an older revision lacks are asked as text.
    const gaps = contentGapsOf(this.protocolVersion);
    const sent = gaps ? fitClientRequest(method, params, gaps) : params;
    return this.host.clientRequest(this.tenantId, this.sessionId, method, sent, this.signal, this.send);
  }

  setLogLevel(level: LoggingLevel): Promise<void> {
    return this.host.setLogLevel(this.tenant, this.session, level);
  }

  #notify(method: string, params: Record<string, unknown>): void {
    this.send(JSON.stringify({ jsonrpc: "2.0", method, params })).catch(() => undefined);
  }
}
