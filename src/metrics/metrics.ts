// Portico's Prometheus metrics (docs/metrics.md): one prom-client registry per app, never the global
// default, with the catalog's metrics and small typed methods the features call. Label values are
// bounded here: anything outside a known set is folded into "other".
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { FastCounter, FastHistogram } from "./series.js";

export type McpEra = "session" | "stateless";
export type McpOutcome = "ok" | "error" | "cancelled";
export type UpstreamOutcome = "ok" | "error" | "timeout";
export type OAuthEvent =
  "registration" | "authorization" | "token_issued" | "token_refreshed" | "revocation" | "failure";
export type RateLimitSurface = "mcp" | "oauth" | "admin";
export type RateLimitScope = "tenant" | "client" | "sessions" | "streams" | "tasks";
/** Who runs a task: Portico (a gateway-made task) or the upstream (its own, passed through). */
export type TaskOrigin = "gateway" | "upstream";
export type TaskEnd = "completed" | "failed" | "cancelled";
export type LoginThrottleScope = "address" | "account";

/** What the gauges read at scrape time, bound once the app's parts exist (watch()). */
export interface MetricsSources {
  /** Sessions in the store's session indexes, summed over tenants. */
  readonly sessionsOpen: () => Promise<number>;
  /** SSE streams this replica holds open. */
  readonly sseStreamsOpen: () => number;
  /** Every configured provider and whether this replica sees it healthy. */
  readonly providers: () => Iterable<{
    tenant: string;
    provider: string;
    up: boolean;
    /** Its circuit breaker: 0 closed, 1 half-open, 2 open; undefined without one. */
    breaker?: number | undefined;
  }>;
  /** A store round trip, when no command ran lately. */
  readonly storePing: () => Promise<void>;
}

export interface MetricsOptions {
  /** How long a computed session count is reused; scrapes stay cheap. Default 5 s. */
  readonly sessionsCacheMs?: number;
  /** A scrape pings the store when no command ran for this long. Default 5 s. */
  readonly storeIdleMs?: number;
}

/** MCP methods of the spec; any other method is counted as "other". */
const MCP_METHODS = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "logging/setLevel",
  "completion/complete",
  "tasks/get",
  "tasks/list",
  "tasks/result",
  "tasks/cancel",
]);

/** RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8707 §2 and RFC 6750 §3.1 error codes. */
const OAUTH_REASONS = new Set([
  "none",
  "invalid_request",
  "unauthorized_client",
  "access_denied",
  "unsupported_response_type",
  "invalid_scope",
  "server_error",
  "temporarily_unavailable",
  "invalid_client",
  "invalid_grant",
  "unsupported_grant_type",
  "invalid_target",
  "invalid_redirect_uri",
  "invalid_client_metadata",
  "invalid_token",
  "insufficient_scope",
]);

const SESSIONS_HELP =
  "Live sessions in the store (every replica reports the same number: aggregate with max).";
const ADMIN_ACTION = /^[a-z][a-z-]{0,31}\.[a-z][a-z-]{0,31}$/;
const PING_TIMEOUT_MS = 1000;

// Requests take milliseconds; upstream calls may run to PORTICO_UPSTREAM_TIMEOUT_MS (default 60 s).
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Tasks run for seconds to a day (PORTICO_TASK_TTL_MAX_MS). */
const TASK_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 14_400, 86_400];
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** What happened to a connected account (portico_connected_account_events_total). */
export type AccountEvent =
  "connected" | "connect_failed" | "refreshed" | "refresh_failed" | "dropped" | "disconnected";

export class Metrics {
  readonly registry = new Registry();
  readonly #sessionsCacheMs: number;
  readonly #storeIdleMs: number;
  #sources: MetricsSources | undefined;
  #sessions = { value: 0, at: -Infinity, pending: undefined as Promise<void> | undefined };
  #lastStoreCommandAt = -Infinity;

  readonly #httpRequests = this.#counter("portico_http_requests_total", "HTTP requests answered.", [
    "route",
    "method",
    "status",
  ]);
  readonly #httpDuration = this.#histogram(
    "portico_http_request_duration_seconds",
    "Time to the response head (SSE streams: to the first byte).",
    ["route", "method"],
    REQUEST_BUCKETS,
  );
  readonly #mcpRequests = this.#counter("portico_mcp_requests_total", "JSON-RPC requests on /mcp.", [
    "method",
    "era",
    "outcome",
  ]);
  readonly #mcpDuration = this.#histogram(
    "portico_mcp_request_duration_seconds",
    "Time to the JSON-RPC response.",
    ["method", "era"],
    REQUEST_BUCKETS,
  );
  readonly #passedThrough = this.#counter(
    "portico_mcp_results_passed_through_total",
    "Results written to the client as the upstream's own JSON text, not serialized again.",
    ["method", "era"],
  );
  readonly #upstreamRequests = this.#counter(
    "portico_upstream_requests_total",
    "Calls to providers' upstreams (http tools, MCP servers) made for client requests.",
    ["tenant", "provider", "outcome"],
  );
  readonly #upstreamDuration = this.#histogram(
    "portico_upstream_request_duration_seconds",
    "Duration of calls to providers' upstreams.",
    ["tenant", "provider"],
    UPSTREAM_BUCKETS,
  );
  readonly #upstreamFastFailed = this.#counter(
    "portico_upstream_fast_failed_total",
    "Calls refused without reaching the upstream because the provider's circuit breaker is open.",
    ["tenant", "provider"],
  );
  readonly #stdioStarted = this.#counter(
    "portico_stdio_children_started_total",
    "Child processes started for stdio providers on this replica (restarts included).",
    ["tenant", "provider"],
  );
  readonly #stdioExited = this.#counter(
    "portico_stdio_child_exits_total",
    "Child processes of stdio providers that ended without Portico stopping them (crashes, exits) or failed initialize.",
    ["tenant", "provider"],
  );
  readonly #tasksStarted = this.#counter(
    "portico_tasks_started_total",
    "Tasks started (docs/upstream-mcp.md#tasks): run by Portico (gateway) or by the upstream (passed through).",
    ["tenant", "origin"],
  );
  readonly #tasksEnded = this.#counter(
    "portico_tasks_ended_total",
    "Tasks that reached a terminal status, counted once across replicas.",
    ["tenant", "status"],
  );
  readonly #taskDuration = this.#histogram(
    "portico_task_duration_seconds",
    "From a task's creation to its terminal status.",
    ["tenant"],
    TASK_BUCKETS,
  );
  readonly #oauthEvents = this.#counter(
    "portico_oauth_events_total",
    "Authorization and resource server events.",
    ["event", "reason"],
  );
  readonly #accountEvents = this.#counter(
    "portico_connected_account_events_total",
    "Connected accounts (per-user upstream authorization) connected, refreshed, dropped, disconnected, or failing.",
    ["event"],
  );
  readonly #adminWrites = this.#counter("portico_admin_writes_total", "Admin API writes (audit entries).", [
    "action",
  ]);
  readonly #definitionChanges = this.#counter(
    "portico_tool_definition_changes_total",
    "Tool definitions (and instructions) of pinned providers that no approval covers, first seen on this replica: changed (the name has an approved definition) or new; pinning warn served them, block held them back.",
    ["tenant", "provider", "change", "pinning"],
  );
  readonly #storeUp = new Gauge({
    name: "portico_store_up",
    help: "1 when the last store round trip succeeded.",
    registers: [this.registry],
    collect: () => this.#probeStore(),
  });
  readonly #storeErrors = this.#counter("portico_store_errors_total", "Store commands that failed.", []);
  readonly #storeDuration = this.#histogram(
    "portico_store_command_duration_seconds",
    "Store command latency.",
    [],
    STORE_BUCKETS,
  );
  readonly #loginThrottled = this.#counter(
    "portico_oauth_login_throttled_total",
    "Login attempts refused by the back-off before their password was checked.",
    ["scope"],
  );
  readonly #policyDecisions = this.#counter(
    "portico_policy_decisions_total",
    "Policy decisions on tenants with a policy: entries shown or left out of lists, uses allowed or refused.",
    ["tenant", "effect", "kind", "operation"],
  );
  readonly #rateLimited = this.#counter("portico_rate_limited_total", "Requests refused with 429.", [
    "surface",
    "scope",
  ]);

  constructor(options: MetricsOptions = {}) {
    this.#sessionsCacheMs = options.sessionsCacheMs ?? 5000;
    this.#storeIdleMs = options.storeIdleMs ?? 5000;
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which Prometheus linters refuse; `nodejs_active_*` by type stay.
    for (const name of ["handles", "requests", "resources"])
      this.registry.removeSingleMetric(`nodejs_active_${name}_total`);
    this.#gauge("portico_sessions_open", SESSIONS_HELP, async (g) => g.set(await this.#sessionsOpen()));
    this.#gauge("portico_sse_streams_open", "SSE streams this replica holds open.", (g) =>
      g.set(this.#sources?.sseStreamsOpen() ?? 0),
    );
    this.#gauge(
      "portico_provider_up",
      "1 when this replica sees the provider healthy.",
      (g) => {
        // Rebuilt on every scrape: a removed provider leaves no stale series behind.
        g.reset();
        for (const p of this.#sources?.providers() ?? [])
          g.set({ tenant: p.tenant, provider: p.provider }, p.up ? 1 : 0);
      },
      ["tenant", "provider"],
    );
    this.#gauge(
      "portico_provider_breaker_state",
      "The provider's circuit breaker on this replica: 0 closed, 1 half-open (probing), 2 open (calls fail fast).",
      (g) => {
        g.reset();
        for (const p of this.#sources?.providers() ?? [])
          if (p.breaker !== undefined) g.set({ tenant: p.tenant, provider: p.provider }, p.breaker);
      },
      ["tenant", "provider"],
    );
    this.#storeUp.set(1);
    // Known from the start, so rate() works before the first refusal.
    for (const surface of ["mcp", "oauth", "admin"])
      for (const scope of ["tenant", "client"]) this.#rateLimited.inc({ surface, scope }, 0);
    for (const scope of ["address", "account"]) this.#loginThrottled.inc({ scope }, 0);
    for (const scope of ["sessions", "streams", "tasks"]) this.#rateLimited.inc({ surface: "mcp", scope }, 0);
  }

  /** Binds the gauges computed at scrape time to the app's parts. */
  watch(sources: MetricsSources): void {
    this.#sources = sources;
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** An HTTP response head was written; `route` is the route pattern or "unmatched". */
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.#httpRequests.inc({ route, method, status });
    this.#httpDuration.observe({ route, method }, seconds);
  }

  /** A JSON-RPC request on /mcp was answered (or cancelled). */
  mcpRequest(method: string, era: McpEra, outcome: McpOutcome, seconds: number): void {
    const m = MCP_METHODS.has(method) ? method : "other";
    this.#mcpRequests.inc({ method: m, era, outcome });
    this.#mcpDuration.observe({ method: m, era }, seconds);
  }

  /** A result went to the client as its upstream wrote it (protocol/verbatim.ts). */
  passedThrough(method: string, era: McpEra): void {
    this.#passedThrough.inc({ method: MCP_METHODS.has(method) ? method : "other", era });
  }

  /** A call to a provider's upstream ended. */
  upstreamCall(tenant: string, provider: string, outcome: UpstreamOutcome, seconds: number): void {
    this.#upstreamRequests.inc({ tenant, provider, outcome });
    this.#upstreamDuration.observe({ tenant, provider }, seconds);
  }

  /** A call was refused by the provider's open circuit breaker. */
  upstreamFastFailed(tenant: string, provider: string): void {
    this.#upstreamFastFailed.inc({ tenant, provider });
  }

  /** A stdio provider's child started on this replica (docs/upstream-mcp.md "stdio upstreams"). */
  stdioChildStarted(tenant: string, provider: string): void {
    this.#stdioStarted.inc({ tenant, provider });
  }

  /** A stdio provider's child ended on its own (it is restarted after a back-off). */
  stdioChildExited(tenant: string, provider: string): void {
    this.#stdioExited.inc({ tenant, provider });
  }

  /** A task was created on this replica. */
  taskStarted(tenant: string, origin: TaskOrigin): void {
    this.#tasksStarted.inc({ tenant, origin });
  }

  /** A task reached `status` after `seconds` (the replica whose write ended it counts it). */
  taskEnded(tenant: string, status: TaskEnd, seconds: number): void {
    this.#tasksEnded.inc({ tenant, status });
    this.#taskDuration.observe({ tenant }, seconds);
  }

  /** An authorization or resource server event; `reason` is an OAuth error code for failures. */
  oauthEvent(event: OAuthEvent, reason = "none"): void {
    this.#oauthEvents.inc({ event, reason: OAUTH_REASONS.has(reason) ? reason : "other" });
  }

  /** A connected-account event (docs/upstream-auth.md). */
  accountEvent(event: AccountEvent): void {
    this.#accountEvents.inc({ event });
  }

  /** A pinned provider's tool definition that no approval covers (providers/pin-book.ts). */
  toolDefinitionChange(tenant: string, provider: string, change: string, pinning: string): void {
    this.#definitionChanges.inc({ tenant, provider, change, pinning });
  }

  /** An admin write was recorded in the audit log. */
  adminWrite(action: string): void {
    this.#adminWrites.inc({ action: ADMIN_ACTION.test(action) ? action : "other" });
  }

  /** A store command completed (ok) or failed. */
  readonly storeCommand = (seconds: number, ok: boolean): void => {
    this.#lastStoreCommandAt = performance.now();
    this.#storeDuration.observe({}, seconds);
    this.#storeUp.set(ok ? 1 : 0);
    if (!ok) this.#storeErrors.inc({});
  };

  /** A request was refused with 429. */
  /** A login attempt was refused by the per-address or the account-wide back-off. */
  loginThrottled(scope: LoginThrottleScope): void {
    this.#loginThrottled.inc({ scope });
  }

  /** `count` policy decisions of one effect on entries of `kind`, for a list or a use (docs/policy.md). */
  readonly policyDecisions = (
    tenant: string,
    effect: "allow" | "deny",
    kind: "tool" | "prompt" | "resource",
    operation: "list" | "use",
    count: number,
  ): void => {
    this.#policyDecisions.inc({ tenant, effect, kind, operation }, count);
  };

  rateLimited(surface: RateLimitSurface, scope: RateLimitScope): void {
    this.#rateLimited.inc({ surface, scope });
  }

  async #sessionsOpen(): Promise<number> {
    const cache = this.#sessions;
    if (performance.now() - cache.at >= this.#sessionsCacheMs && this.#sources) {
      const sources = this.#sources;
      cache.pending ??= sources
        .sessionsOpen()
        .then((n) => {
          cache.value = n;
          cache.at = performance.now();
        })
        // The store is away: keep the last count (portico_store_up says why it is stale).
        .catch(() => undefined)
        .finally(() => (cache.pending = undefined));
      await cache.pending;
    }
    return cache.value;
  }

  /** Nothing ran against the store lately: ping it, so portico_store_up is current. */
  async #probeStore(): Promise<void> {
    if (!this.#sources || performance.now() - this.#lastStoreCommandAt < this.#storeIdleMs) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("store ping timed out")), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.#sources.storePing(), timeout]);
      this.#storeUp.set(1);
    } catch {
      this.#storeUp.set(0);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A gauge whose value is computed at scrape time. */
  #gauge<L extends string>(
    name: string,
    help: string,
    collect: (gauge: Gauge<L>) => void | Promise<void>,
    labelNames: L[] = [],
  ): void {
    const gauge: Gauge<L> = new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect: () => collect(gauge),
    });
  }

  #counter<L extends string>(name: string, help: string, labelNames: L[]) {
    return new FastCounter<L>(this.registry, name, help, labelNames);
  }

  #histogram<L extends string>(name: string, help: string, labelNames: L[], buckets: number[]) {
    return new FastHistogram<L>(this.registry, name, help, labelNames, buckets);
  }
}
