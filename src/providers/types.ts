// What a provider is to the rest of Portico (docs/architecture.md §3): a source of tools, prompts, resources
// and templates, plus the operations on them. The MCP lanes call providers only through this file.
import type {
  CallToolResult,
  ClientCapabilities,
  CompleteResult,
  GetPromptResult,
  LoggingLevel,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamOutcome } from "../metrics/metrics.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import type { TaskSupportMark } from "../records/task-marks.js";
import type { BreakerStatus, CircuitBreaker } from "./circuit-breaker.js";

/**
 * What a cancellation offers besides an AbortSignal (which has this shape too): its state and an
 * "abort" listener object, as Deadline follows it.
 */
export interface AbortListener {
  handleEvent(): void;
}

export interface CancelSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: AbortListener): void;
}

export type ProviderKind = "static" | "http" | "mcp" | "openapi";

/** The era a client speaks: "session" (2024-11-05 … 2025-11-25) or "stateless" (2026-07-28). */
export type ClientEra = "session" | "stateless";

/**
 * Sees each upstream call made for a client request end (metrics); calls the client cancelled
 * are not reported.
 */
export type UpstreamObserver = (outcome: UpstreamOutcome, seconds: number) => void;

/** Builds a provider's circuit breaker (providers/factory.ts); `probe` checks the upstream in the background. */
export type BreakerFactory = (probe?: () => Promise<unknown>) => CircuitBreaker;

/** A provider's own entries, under the names it knows them by (no prefix applied). */
export interface ProviderEntries {
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
  /**
   * Optional: tools callable by name but not listed (a connected user's connect tool, so a retry
   * or a stale list still reaches it). An exposed name already taken is left to its holder.
   */
  readonly hiddenTools?: readonly Tool[];
}

export const EMPTY_ENTRIES: ProviderEntries = Object.freeze({
  tools: [],
  prompts: [],
  resources: [],
  resourceTemplates: [],
});

/** JSON-RPC message as it travels to the client (notification or request). */
export interface OutboundMessage {
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

/**
 * The request a provider serves: who asks, what the client can do, and the channel back to it.
 * The MCP lanes implement it; providers never see HTTP or session records.
 */
export interface CallContext {
  readonly tenantId: string;
  /** The user (`sub`) of the request's token; undefined without authentication. */
  readonly user?: string;
  /** Client session (session era); absent on the stateless lane. */
  readonly sessionId: string | undefined;
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  /**
   * The capability profile of clientCapabilities, read once per request (docs/architecture.md §3):
   * the profile whose lists routed this request. The MCP lanes always set it.
   */
  readonly profile?: CapabilityProfile;
  /** The session's logging/setLevel threshold, if any (providers pass it upstream). */
  readonly logLevel: LoggingLevel | undefined;
  /** Fires when the client cancels the request or goes away. */
  readonly signal: AbortSignal;
  /**
   * The same cancellation without an AbortSignal, when the caller has one (the MCP lanes do): an
   * AbortSignal is an EventTarget, measurable when made for every forwarded call, and a Deadline
   * or undici follows this as well. Read `cancellation ?? signal`.
   */
  readonly cancellation?: CancelSource;
  /** Reports progress to the client when it asked for it (no-op otherwise). */
  progress(progress: number, total?: number, message?: string): void;
  /** Sends a log message when the session's level lets it through (no-op otherwise). */
  log(level: LoggingLevel, data: unknown, logger?: string): void;
  /**
   * Present on 2026-07-28 requests of methods that may answer input_required (basic/patterns/mrtr):
   * the client takes an upstream's InputRequiredResult itself, so a provider returns it as is. On
   * the retry these are the client's answers and the upstream's own requestState.
   */
  readonly mrtr?: { readonly inputResponses?: Record<string, unknown>; readonly requestState?: string };
  /**
   * A gateway-made task's call (docs/upstream-mcp.md#tasks): an upstream's -32042 (URL elicitation
   * required) reaches the caller as it is, whatever the client's revision, since the task asks the
   * client itself and runs the call again.
   */
  readonly keepsUrlElicitation?: boolean;
  /** Sends a server-to-client request related to this request and waits for the client's answer. */
  request(method: string, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>>;
}

/** How an upstream reaches a client session outside any client request (the standalone stream). */
export interface SessionOutlet {
  notify(tenantId: string, sessionId: string, method: string, params: Record<string, unknown>): Promise<void>;
  request(
    tenantId: string,
    sessionId: string,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>>;
}

/** A task's status (2025-11-25 basic/utilities/tasks; the 2026-07-28 tasks extension). */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** A task as its receiver reports it, under the receiver's own id (docs/upstream-mcp.md#tasks). */
export interface TaskState {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** Milliseconds from creation the receiver keeps it; null for unlimited. */
  readonly ttl: number | null;
  readonly pollInterval?: number;
  /**
   * 2026-07-28 tasks extension, while `input_required`: the upstream's questions (the
   * InputRequests of its tasks/get), answered through UpstreamTasks.update.
   */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
}

/**
 * What starting a task gave: the upstream's task and the ref to reach it again, or, from an
 * upstream that alone decides whether a call becomes a task (the 2026-07-28 extension), the call's
 * result when it answered at once.
 */
export type StartedTask =
  | { readonly task: TaskState; readonly ref: UpstreamTaskRef; readonly result?: undefined }
  | { readonly result: Record<string, unknown>; readonly task?: undefined; readonly ref?: undefined };

/**
 * Where an upstream task lives, as JSON the task's record keeps (its upstream id, and what the
 * provider needs to reach it again: the upstream session it was made in, the era): any replica
 * passes it back to the provider of the same id to poll, fetch or cancel the task.
 */
export type UpstreamTaskRef = Readonly<Record<string, unknown>>;

/**
 * Optional on a provider whose upstream runs tools as tasks of its own (an `mcp` upstream that
 * declared tasks): Portico's task then passes through to the upstream's. Every method takes the
 * request's context: its profile, user and era pick the upstream session, and a server-to-client
 * request the upstream makes meanwhile (a task's input) is relayed through ctx.request.
 */
export interface UpstreamTasks {
  /**
   * The upstream's `execution.taskSupport` for its tool `name` (own name) as the client of ctx
   * sees it; undefined when the upstream cannot run it as a task (Portico then makes the task).
   */
  support(name: string, ctx: CallContext): "required" | "optional" | undefined;
  /**
   * Calls the tool as a task: the upstream's task, and the ref to reach it again; or the result,
   * from a 2026-07-28 upstream that chose to answer at once (it alone decides).
   */
  start(
    name: string,
    args: Record<string, unknown>,
    task: { readonly ttl?: number },
    ctx: CallContext,
  ): Promise<StartedTask>;
  get(ref: UpstreamTaskRef, ctx: CallContext): Promise<TaskState>;
  /** Waits for the task to end and gives its result (a CallToolResult); throws its JSON-RPC error. */
  result(ref: UpstreamTaskRef, ctx: CallContext): Promise<Record<string, unknown>>;
  cancel(ref: UpstreamTaskRef, ctx: CallContext): Promise<TaskState>;
  /**
   * Optional (2026-07-28 tasks extension: tasks/update): answers the task's `inputRequests`. A
   * session-era upstream asks its questions on the tasks/result stream instead, relayed through
   * ctx.request by result().
   */
  update?(ref: UpstreamTaskRef, inputResponses: Record<string, unknown>, ctx: CallContext): Promise<void>;
  /**
   * Tells `onStatus` each status the upstream announces for the task (its status notifications),
   * on this replica, until the returned function is called. Heard only where the upstream sends
   * them: for an `mcp` upstream, on the replica that opened the task's upstream session (its GET
   * stream); elsewhere nothing comes, and tasks are polled with get(). `ctx`: a request of the
   * task's caller, for a provider whose upstream is per user (without it, nothing comes).
   */
  watch(ref: UpstreamTaskRef, onStatus: (task: TaskState) => void, ctx?: CallContext): () => void;
}

export type CompletionRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };

/** The lists that announce their changes (notifications/{kind}/list_changed). */
export type ListChangeKind = "tools" | "prompts" | "resources";

/** Events a provider raises; the registry turns them into notifications. */
export interface ProviderEvents {
  /**
   * The provider's entries of a kind changed (after entries() already reflects it): under one
   * profile when `profile` is given, else under every profile.
   */
  listChanged(kind: ListChangeKind, profile?: CapabilityProfile): void;
  /** The provider became healthy or unhealthy. */
  healthChanged(healthy: boolean, reason?: string): void;
  /**
   * Optional, for providers whose credentials are per user (forUser): what one user sees of the
   * provider changed (they connected or disconnected, or their upstream's lists changed).
   */
  userChanged?(user: string): void;
  /**
   * Optional: a resource changed upstream (its URI as the provider knows it, which is also the
   * tenant's: URIs are not prefixed). Raised for a URI given to watch(), or a sub-resource of one.
   */
  resourceUpdated?(uri: string): void;
}

export interface Provider {
  readonly id: string;
  readonly kind: ProviderKind;
  /** Name prefix, "" for none. */
  readonly prefix: string;
  /** Between prefix and name; default "__". */
  readonly separator?: string;
  readonly healthy: boolean;
  /** Why the provider is unhealthy, when it is. */
  readonly healthReason?: string | undefined;
  /** Optional: the guidance for models its upstream gives (an MCP server's `instructions`). */
  readonly instructions?: string | undefined;
  /** Optional: what its configuration gets wrong that it lives with (an `openapi` document's flaws). */
  warnings?(): readonly string[];
  /** Optional: the provider's circuit breaker on this replica (`mcp` and `http` providers). */
  breakerStatus?(): BreakerStatus | undefined;
  /**
   * The current entries as a client of `profile` sees them (synchronous: providers cache what they
   * serve). Without a profile: as a client that declared no capabilities sees them. `era`: the
   * client's, for a provider whose lists differ by era (an upstream that speaks both eras, each
   * served in its own); without it, the provider's primary lists.
   */
  entries(profile?: CapabilityProfile, era?: ClientEra): ProviderEntries;
  /**
   * Optional, for providers whose lists depend on the client's capabilities: makes entries(profile)
   * current, listing the upstream under that profile the first time it is asked for (later changes
   * arrive through events.listChanged). Never throws: an unreachable upstream lists nothing.
   */
  prepare?(profile: CapabilityProfile): Promise<void>;
  /**
   * Optional, with prepare: false once the provider knows its lists are the same for every
   * profile (a client declaring every capability sees what one declaring none sees); true while
   * they differ or it does not know yet. Read on 2026-07-28 requests: cached by the provider.
   */
  readonly variesByProfile?: boolean;
  /**
   * Optional: true when a request of `protocolVersion` may ask the client something mid-call (its
   * upstream speaks the session era and sends sampling, elicitation or roots requests). The
   * 2026-07-28 lane then holds such a call across the client's retries; absent or false, it has
   * nothing to hold (docs/architecture.md §2).
   */
  asksMidCall?(protocolVersion: string): boolean;
  /**
   * Optional: the provider as `user` sees it, for a provider whose upstream credentials are per
   * user (docs/architecture.md §3): its entries and calls are that user's only. Catalogs of
   * authenticated requests use it in place of this provider; this one lists what a user who has
   * not connected sees.
   */
  forUser?(user: string): Promise<Provider>;
  /**
   * Optional, for per-user providers: the own name of the tool that connects a user's account,
   * shown wherever the provider is (a virtual server's selection of its tools included).
   */
  readonly connectTool?: string;
  /** Connects or warms up; never throws for an unreachable upstream (it marks itself unhealthy). */
  start(events: ProviderEvents): Promise<void>;
  close(): Promise<void>;

  callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult>;
  getPrompt(name: string, args: Record<string, string>, ctx: CallContext): Promise<GetPromptResult>;
  /** Reads a resource this provider owns (by list or by template). */
  readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult>;
  complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    contextArguments: Record<string, string> | undefined,
    ctx: CallContext,
  ): Promise<CompleteResult>;
  /** Optional: re-reads the upstream's entries now (admin "refresh"); throws when unreachable. */
  refresh?(): Promise<void>;
  /** Optional: checks the upstream now; resolves with the round trip in milliseconds. */
  probe?(timeoutMs: number): Promise<number>;
  /** True when resources/subscribe is served (an upstream that declared `resources.subscribe`). */
  readonly subscribable?: boolean;
  /** Optional: resource subscriptions (only mcp providers produce updates). */
  subscribe?(uri: string, ctx: CallContext): Promise<void>;
  unsubscribe?(uri: string, ctx: CallContext): Promise<void>;
  /**
   * Optional: keep me posted about updates to this URI (events.resourceUpdated) until the
   * returned function is called. The registry counts references: it calls watch at most once per
   * URI at a time on one provider and calls the returned function exactly once, possibly after
   * close(). Never throws: an unreachable upstream is watched again once it is back.
   */
  watch?(uri: string): () => void;
  /** Optional: the client's session ended (free per-session upstream state). */
  endSession?(sessionId: string): Promise<void>;
  /** Optional: the client's roots changed (pass upstream). */
  rootsChanged?(sessionId: string): Promise<void>;
  /** Optional: the upstream's own tasks (pass-through, docs/upstream-mcp.md#tasks). */
  readonly tasks?: UpstreamTasks;
  /**
   * Optional: the admin's task mark of the tool it lists as `name` (docs/upstream-mcp.md "Task
   * marks"), which catalogs list as the tool's `execution.taskSupport`; undefined: no mark, the
   * tool as its upstream lists it.
   */
  taskMark?(name: string): TaskSupportMark | undefined;
  /** Optional: after how many seconds a call of its tools still running becomes a task (2026-07-28). */
  readonly taskAfterSeconds?: number;
  /** Optional: the client's log level changed. */
  setLogLevel?(sessionId: string, level: LoggingLevel): Promise<void>;
}
