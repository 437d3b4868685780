// `mcp` providers (docs/architecture.md §3, docs/upstream-mcp.md): an upstream MCP server over
// Streamable HTTP, spoken to in the client's era when the upstream speaks both, bridged when it
// speaks one. A thin front over the session-era part (session/era.ts) and the 2026-07-28 part
// (stateless/catalog.ts); bridging helpers live in bridge.ts.
import {
  McpError,
  type CallToolResult,
  type CompleteResult,
  type GetPromptResult,
  type LoggingLevel,
  type ReadResourceResult,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { fail } from "../../protocol/errors.js";
import { RpcCode } from "../../protocol/codes.js";
import { isStatelessVersion } from "../../protocol/era.js";
import { FULL_PROFILE, NO_PROFILE, type CapabilityProfile } from "../../protocol/profile.js";
import type { McpProviderConfig } from "../../records/tenant.js";
import { NO_COMPLETIONS } from "./bridge.js";
import { baseHeaders, type UpstreamHttp } from "./exchange.js";
import { eraDeps, type McpProviderDeps } from "./provider-deps.js";
import { listsVary, profileFor } from "./profiles.js";
import { SessionEra } from "./session/era.js";

import { tellBreaker, toolErrorOf, UpstreamFailures } from "./failures.js";
import type { SessionTasks } from "./session/tasks.js";
import { callSession, refusedBy } from "./session/calls.js";
import type { BreakerStatus, CircuitBreaker } from "../circuit-breaker.js";
import { callStateless, SessionWatches, StatelessProfiles } from "./stateless/calls.js";
import { observed } from "./calls.js";
import type { CallHow } from "./calls.js";
import { StatelessCatalog } from "./stateless/catalog.js";
import { discoverEra } from "./stateless/client.js";
import { acceptsInitialize } from "./session/catalog.js";
import { StdioPart } from "./stdio/stdio-part.js";
import { httpOf, type UpstreamTarget } from "./upstream.js";
import { UpstreamCredentials } from "../upstream-auth.js";
import {
  EMPTY_ENTRIES,
  type CallContext,
  type ClientEra,
  type CompletionRef,
  type Provider,
  type ProviderEntries,
  type ProviderEvents,
  type UpstreamTaskRef,
  type UpstreamTasks,
} from "../types.js";
import { StatelessTasks } from "./stateless/tasks.js";

/** True when a server's capabilities say it runs tools/call as tasks (basic/utilities/tasks §Capabilities). */
function callsAsTasks(caps: ServerCapabilities | undefined): boolean {
  const call = (caps as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks
    ?.requests?.tools?.call;
  return typeof call === "object" && call !== null;
}

/** Events of the session-era part of a dual-era upstream: the 2026-07-28 part speaks for the provider. */
const MUTED: ProviderEvents = { listChanged: () => undefined, healthChanged: () => undefined };

export class McpProvider implements Provider {
  readonly kind = "mcp" as const;
  readonly id: string;
  readonly prefix: string;
  readonly separator: string | undefined;
  /** The session-era part: the upstream speaks the session era (or both). */
  #session: SessionEra | undefined;
  /** The 2026-07-28 part: the upstream speaks 2026-07-28 (or both). */
  #stateless: StatelessCatalog | undefined;
  /** The 2026-07-28 part's lists per capability profile. */
  #statelessProfiles: StatelessProfiles | undefined;
  #events: ProviderEvents | undefined;
  /** variesByProfile, forgotten when a list changes (it may start or stop varying) or a profile is listed. */
  #varies: boolean | undefined;
  /** URIs watched for listen streams, and how to stop watching each on the current catalog. */
  readonly #watches = new Map<string, () => void>();
  /** Sessions subscribed to a 2026-07-28 upstream's resources (resources/subscribe). */
  readonly #sessionWatches: SessionWatches;
  readonly #target: UpstreamTarget;
  readonly #http: UpstreamHttp;
  readonly #base: Record<string, string>;
  readonly #failures: UpstreamFailures;
  readonly #breaker: CircuitBreaker | undefined;
  readonly #how: CallHow;
  /** A `stdio` upstream's children and per-client state (docs/upstream-mcp.md "stdio upstreams"). */
  readonly #stdio: StdioPart | undefined;
  /** Starting a stdio provider of `start: "first-use"` (once). */
  #starting: Promise<void> | undefined;

  constructor(
    private readonly cfg: McpProviderConfig,
    private readonly deps: McpProviderDeps,
  ) {
    this.id = cfg.id;
    this.prefix = cfg.prefix ?? "";
    this.separator = cfg.separator;
    this.#target = {
      cfg,
      fetch: deps.fetch,
      dispatcher: deps.dispatcher,
      credentials: deps.credentials ?? new UpstreamCredentials(cfg.auth, { fetch: deps.fetch }),
      timeoutMs: cfg.timeoutMs ?? deps.timeoutMs,
    };
    this.#http = httpOf(this.#target);
    this.#base = Object.freeze(baseHeaders(cfg.headers));
    const headerValues = Object.values(cfg.headers ?? {});
    const secrets = () => [...headerValues, ...this.#target.credentials.secrets()];
    this.#sessionWatches = new SessionWatches(deps.outlet, deps.tenantId);
    this.#failures = new UpstreamFailures(this.id, deps.tenantId, deps.log, secrets);
    // Probed in the background with the health probe (ping, or server/discover for 2026-07-28).
    this.#breaker = deps.breaker?.(() => this.probe(this.#target.timeoutMs));
    const { timeoutMs } = this.#target;
    if (cfg.transport === "stdio") {
      const { tenantId, log, outlet } = deps;
      this.#stdio = new StdioPart(cfg, deps.stdio ?? { launch: undefined }, {
        tenantId,
        log,
        outlet,
        timeoutMs,
      });
      this.#stdio.onCrash = (reason) => this.#session?.failed(reason);
    }
    this.#statelessTasks = new StatelessTasks(
      this.id,
      timeoutMs,
      () => this.#stateless,
      (ctx) => this.#statelessProfiles?.get(profileFor(ctx)),
    );
    this.#how = {
      providerId: this.id,
      timeoutMs,
      failures: this.#failures,
      breaker: this.#breaker,
      onUpstreamCall: deps.onUpstreamCall,
    };
  }

  breakerStatus(): BreakerStatus | undefined {
    return this.#breaker?.status();
  }

  /** The part whose verdict and lists speak for the provider. */
  get #primary(): StatelessCatalog | SessionEra["primary"] | undefined {
    return this.#stateless ?? this.#session?.primary;
  }

  get healthy(): boolean {
    if (this.#waitsForFirstUse) return true;
    return this.#primary?.healthy ?? false;
  }

  /** A stdio provider of `start: "first-use"` no client request reached yet: its child is not started. */
  get #waitsForFirstUse(): boolean {
    return this.#stdio !== undefined && this.#session === undefined && this.#starting === undefined;
  }

  get healthReason(): string | undefined {
    return this.#primary?.reason;
  }

  async refresh(): Promise<void> {
    try {
      await this.#primary?.refresh();
    } catch (err) {
      throw this.#failures.shown(err);
    }
  }

  async probe(timeoutMs: number): Promise<number> {
    const catalog = this.#primary;
    if (!catalog) throw new Error("not started");
    try {
      return await catalog.ping(timeoutMs);
    } catch (err) {
      throw this.#failures.shown(err);
    }
  }

  get subscribable(): boolean {
    return this.#serverCapabilities?.resources?.subscribe === true;
  }

  /** The upstream's guidance for models (its initialize or server/discover `instructions`). */
  get instructions(): string | undefined {
    return this.#stateless ? this.#stateless.instructions : this.#session?.primary.instructions;
  }

  /** What the upstream said it serves, once connected. */
  get #serverCapabilities(): ServerCapabilities | undefined {
    return this.#stateless ? this.#stateless.capabilities : this.#session?.primary.capabilities;
  }

  entries(profile?: CapabilityProfile, era?: ClientEra): ProviderEntries {
    // An upstream that speaks both eras serves a session-era client its session-era lists.
    if (this.#stateless && !(era === "session" && this.#session?.primary.healthy))
      return (this.#statelessProfiles?.get(profile) ?? this.#stateless).entries;
    return this.#session?.entries(profile) ?? EMPTY_ENTRIES;
  }

  async prepare(profile: CapabilityProfile): Promise<void> {
    if (profile.key === NO_PROFILE.key) return;
    await this.#firstUse();
    await Promise.all([this.#statelessProfiles?.prepare(profile), this.#session?.prepare(profile)]);
    this.#varies = undefined;
  }

  /** Whether the lists depend on the client's capabilities (listsVary), until a list changes. */
  get variesByProfile(): boolean {
    return (this.#varies ??= listsVary(this, this.#session, this.#statelessProfiles));
  }

  async start(events: ProviderEvents): Promise<void> {
    this.#events = {
      ...events,
      listChanged: (kind, profile) => {
        this.#varies = undefined;
        events.listChanged(kind, profile);
      },
    };
    if (this.#stdio && this.cfg.start === "first-use") return;
    await this.#useEra(this.cfg.era === "stateless" ? "stateless" : "session");
    // Listed for every capability too, so whether the lists vary by profile is known at once.
    if (this.healthy) await this.prepare(FULL_PROFILE);
  }

  /** Starts a stdio provider of `start: "first-use"` at the first client request that reaches it. */
  async #firstUse(): Promise<void> {
    if (!this.#stdio || this.#session || !this.#events) return;
    const events = this.#events;
    // Its first lists come after the tenant's catalogs were built: announced as changes.
    await (this.#starting ??= this.#useEra("session").then(() => {
      for (const kind of ["tools", "prompts", "resources"] as const) events.listChanged(kind);
    }));
  }

  async close(): Promise<void> {
    this.#breaker?.close();
    const session = this.#session;
    const stateless = this.#stateless;
    this.#session = undefined;
    this.#stateless = undefined;
    const profiles = this.#statelessProfiles;
    this.#statelessProfiles = undefined;
    await Promise.allSettled([session?.close(), stateless?.close(), profiles?.close()]);
    await this.#stdio?.close(); // every child stopped in the spec's order
  }

  /**
   * Serves the upstream with the part of an era. With `era: "auto"`, each part asks the upstream
   * which era it speaks whenever it connects (server/discover, else initialize) and hands over when
   * that changed; an upstream that speaks both gets both parts, each serving the clients of its
   * era. A pinned era keeps its part, unhealthy if the upstream does not speak it.
   */
  async #useEra(era: "session" | "stateless"): Promise<void> {
    const events = this.#events!;
    const old = this.#stateless ?? this.#session;
    const onResourceUpdated = this.#resourceUpdated;
    if (this.#stdio) {
      this.#session = new SessionEra(
        this.#target,
        this.#http,
        this.#base,
        events,
        eraDeps(this.id, this.deps),
        this.#stdio.eraOptions(onResourceUpdated),
      );
      return this.#session.start();
    }
    const follow = (this.cfg.era ?? "auto") === "auto";
    const oldSession = this.#session;
    this.#session = undefined;
    this.#stateless = undefined;
    void this.#statelessProfiles?.close();
    this.#statelessProfiles = era === "stateless" ? new StatelessProfiles(this.#target, events) : undefined;
    if (era === "stateless")
      this.#stateless = new StatelessCatalog(this.#target, events, {
        onEraChanged: follow ? () => void this.#useEra("session") : undefined,
        onResourceUpdated,
      });
    else this.#session = this.#sessionEra(events, follow ? () => this.#useEra("stateless") : undefined);
    if (old)
      this.deps.log.info({ tenant: this.deps.tenantId, provider: this.id, era }, "upstream era changed");
    void old?.close().catch(() => undefined);
    if (oldSession !== old) void oldSession?.close().catch(() => undefined);
    const primary = this.#primary!;
    for (const [uri, release] of this.#watches) {
      release();
      this.#watches.set(uri, primary.watch(uri));
    }
    if (this.#session) return this.#session.start();
    await this.#stateless!.start(this.deps.healthIntervalMs ?? 10_000);
    if (follow && this.#stateless?.healthy) await this.#matchEras();
  }

  #sessionEra(events: ProviderEvents, onEraChanged: (() => Promise<void>) | undefined): SessionEra {
    const target = this.#target;
    const followEra = onEraChanged && {
      discover: async (timeoutMs: number) => (await discoverEra(target, timeoutMs)).era,
      changed: onEraChanged,
    };
    const options = { ...(followEra && { followEra }), onResourceUpdated: this.#resourceUpdated };
    return new SessionEra(target, this.#http, this.#base, events, eraDeps(this.id, this.deps), options);
  }

  /**
   * A 2026-07-28 upstream that also accepts initialize speaks both eras: session-era clients are
   * then served over the session era (their sampling, elicitation and logging as they would get
   * them directly), not bridged.
   */
  async #matchEras(): Promise<void> {
    const stateless = this.#stateless;
    if (!(await acceptsInitialize(this.#http, this.#base, this.#target.timeoutMs))) return;
    if (this.#stateless !== stateless || this.#session) return;
    this.#session = this.#sessionEra(MUTED, undefined);
    this.deps.log.info({ tenant: this.deps.tenantId, provider: this.id }, "upstream speaks both eras");
    await this.#session.start();
  }

  /** Keeps resources/updated for `uri` coming (events.resourceUpdated) until the returned function runs. */
  watch(uri: string): () => void {
    const catalog = this.#primary;
    this.#watches.set(uri, catalog ? catalog.watch(uri) : () => undefined);
    return () => {
      this.#watches.get(uri)?.();
      this.#watches.delete(uri);
    };
  }

  /** The session-era part, when the client's request goes there (not to the 2026-07-28 part). */
  #sessionPart(ctx: Pick<CallContext, "protocolVersion">): SessionEra | undefined {
    const session = this.#session;
    if (!session || (this.#stateless && isStatelessVersion(ctx.protocolVersion))) return undefined;
    return this.#stateless && !session.primary.healthy ? undefined : session;
  }

  readonly asksMidCall = (protocolVersion: string) => this.#sessionPart({ protocolVersion }) !== undefined;

  /**
   * The upstream's own tasks (docs/upstream-mcp.md "Tasks passed through"): a session-era upstream
   * that declared `tasks.requests.tools.call` runs the tools it marks with `execution.taskSupport`
   * as tasks, on its task session of the client's profile. A stdio child's tasks are not passed
   * through (its one session has no task session beside it): Portico makes those tasks itself.
   */
  readonly tasks: UpstreamTasks = {
    support: (name, ctx) => {
      if (this.#stdio) return undefined;
      const session = this.#sessionPart(ctx);
      if (!session) return this.#statelessTasks.support(name, ctx);
      if (!callsAsTasks(session.primary.capabilities)) return undefined;
      const tool = session.entries(profileFor(ctx)).tools.find((t) => t.name === name);
      const support = tool?.execution?.taskSupport;
      return support === "required" || support === "optional" ? support : undefined;
    },
    start: (name, args, task, ctx) => {
      const session = this.#sessionPart(ctx);
      return this.#taskRequest(
        ctx,
        () =>
          session ? session.tasks.start(name, args, task, ctx) : this.#statelessTasks.start(name, args, ctx),
        true,
      );
    },
    get: (ref, ctx) => this.#taskRequest(ctx, () => this.#tasksOf(ref).get(ref, ctx)),
    result: (ref, ctx) => this.#taskRequest(ctx, () => this.#tasksOf(ref).result(ref, ctx)),
    cancel: (ref, ctx) => this.#taskRequest(ctx, () => this.#tasksOf(ref).cancel(ref, ctx)),
    update: (ref, inputResponses, ctx) =>
      this.#taskRequest(ctx, () => this.#statelessTasks.update(ref, inputResponses, ctx)),
    watch: (ref, onStatus) =>
      ref.era === "session"
        ? (this.#session?.tasks.watch(ref, onStatus) ?? (() => undefined))
        : this.#statelessTasks.watch(ref, onStatus),
  };

  /** The 2026-07-28 part's tasks (an upstream declaring the tasks extension). */
  readonly #statelessTasks: StatelessTasks;

  /**
   * The part that serves a task, by its ref's era: a ref of no known era, or of an era the upstream
   * does not speak (now), names no task (-32602); a part not connected yet is unavailable.
   */
  #tasksOf(ref: UpstreamTaskRef): SessionTasks | StatelessTasks {
    const era = ref.era;
    if (era === "session" && this.#session) return this.#session.tasks;
    if (era === "stateless" && this.#stateless) return this.#statelessTasks;
    if ((era === "session" || era === "stateless") && !this.#session && !this.#stateless)
      throw fail("PORTICO_ERR_PROVIDER_UNAVAILABLE", `Provider '${this.id}' is unavailable: not connected`);
    throw new McpError(RpcCode.InvalidParams, "Failed to retrieve task: Task not found");
  }

  /**
   * A task request for a client, as its calls go: gated by the breaker (a new task only: a task
   * that exists is polled even while calls fail fast), observed, failures in Portico's words.
   */
  async #taskRequest<T>(ctx: CallContext, work: () => Promise<T>, gated = false): Promise<T> {
    const breaker = this.#breaker;
    if (gated && breaker && !breaker.admits()) throw breaker.refusal();
    return observed(ctx, this.deps.onUpstreamCall, async () => {
      try {
        const result = await work();
        if (gated) breaker?.succeeded();
        return result;
      } catch (err) {
        if (gated) tellBreaker(breaker, err, (ctx.cancellation ?? ctx.signal).aborted);
        throw this.#failures.of(err, ctx);
      }
    });
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    try {
      if (this.#stdio) await this.#stdioUse(ctx);
      const params = { name, arguments: args };
      const session = this.#sessionPart(ctx);
      if (session)
        return (await callSession(session, "tools/call", params, ctx, this.#how)) as CallToolResult;
      return (await this.#callStateless(
        "tools/call",
        params,
        ctx,
        (this.#statelessProfiles?.get(profileFor(ctx)) ?? this.#stateless)?.tool(name),
      )) as CallToolResult;
    } catch (err) {
      return toolErrorOf(err);
    }
  }

  getPrompt(name: string, args: Record<string, string>, ctx: CallContext): Promise<GetPromptResult> {
    return this.#request("prompts/get", { name, arguments: args }, ctx) as Promise<GetPromptResult>;
  }

  readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    return this.#request("resources/read", { uri }, ctx) as Promise<ReadResourceResult>;
  }

  complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    contextArguments: Record<string, string> | undefined,
    ctx: CallContext,
  ): Promise<CompleteResult> {
    // An upstream without completions has none to offer: an empty answer, not its "Method not found".
    if (this.#serverCapabilities && !this.#serverCapabilities.completions)
      return Promise.resolve(NO_COMPLETIONS);
    const params = contextArguments
      ? { ref, argument, context: { arguments: contextArguments } }
      : { ref, argument };
    return this.#request("completion/complete", params, ctx) as Promise<CompleteResult>;
  }

  async #request(
    method: string,
    params: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<Record<string, unknown>> {
    if (this.#stdio) await this.#stdioUse(ctx);
    const session = this.#sessionPart(ctx);
    if (session) return callSession(session, method, params, ctx, this.#how);
    return this.#callStateless(method, params, ctx);
  }

  /** A client request reaching a stdio provider: its child started, the session's log level known. */
  async #stdioUse(ctx: CallContext): Promise<void> {
    await this.#firstUse();
    this.#stdio!.seen(ctx);
  }

  async subscribe(uri: string, ctx: CallContext): Promise<void> {
    if (this.#stdio) await this.#stdioUse(ctx);
    const session = this.#sessionPart(ctx);
    // A stdio child speaks one session: Portico subscribes once per URI and fans updates out.
    if (this.#stdio && session) {
      if (ctx.sessionId) this.#sessionWatches.add(uri, ctx.sessionId, (u) => session.primary.watch(u));
    } else if (!session) {
      if (ctx.sessionId) this.#sessionWatches.add(uri, ctx.sessionId, (u) => this.#stateless!.watch(u));
    } else await this.#courtesy(session.subscribe(uri, ctx, true), ctx);
    if (ctx.sessionId)
      await this.deps.store.setAdd(
        this.#subsKey(ctx.sessionId),
        `${this.id} ${uri}`,
        this.deps.sessionTtlSeconds,
      );
  }

  async unsubscribe(uri: string, ctx: CallContext): Promise<void> {
    const session = this.#sessionPart(ctx);
    if (!session || this.#stdio) {
      if (ctx.sessionId) this.#sessionWatches.remove(uri, ctx.sessionId);
    } else await this.#courtesy(session.subscribe(uri, ctx, false), ctx);
    if (ctx.sessionId) await this.deps.store.setRemove(this.#subsKey(ctx.sessionId), `${this.id} ${uri}`);
  }

  /** A subscription change, its failure told as a call's would be. */
  async #courtesy(work: Promise<void>, ctx: CallContext): Promise<void> {
    try {
      await work;
    } catch (err) {
      throw this.#failures.of(err, ctx);
    }
  }

  async setLogLevel(sessionId: string, level: LoggingLevel): Promise<void> {
    await this.#stdio?.levels.set(sessionId, level).catch(() => undefined);
    await this.#session?.setLogLevel(sessionId, level);
  }

  async rootsChanged(sessionId: string): Promise<void> {
    await this.#session?.rootsChanged(sessionId);
  }

  async endSession(sessionId: string): Promise<void> {
    this.#sessionWatches.removeSession(sessionId);
    this.#stdio?.levels.remove(sessionId);
    await this.#session?.endSession(sessionId);
  }

  /** A request to the 2026-07-28 upstream for a client request, observed. */
  #callStateless(
    method: string,
    params: Record<string, unknown>,
    ctx: CallContext,
    tool?: Tool,
  ): Promise<Record<string, unknown>> {
    const catalog = this.#stateless;
    const refused = refusedBy(this.#breaker);
    if (refused) return refused;
    if (!catalog)
      return Promise.reject(
        fail("PORTICO_ERR_PROVIDER_UNAVAILABLE", `Provider '${this.id}' is unavailable: not connected`),
      );
    return observed(ctx, this.deps.onUpstreamCall, () =>
      callStateless(catalog, method, params, ctx, tool, this.#how),
    );
  }

  readonly #resourceUpdated = (uri: string): void => {
    this.#events?.resourceUpdated?.(uri);
    this.#sessionWatches.updated(uri);
  };

  #subsKey(sid: string) {
    return this.deps.keys.subscriptions(this.deps.tenantId, sid);
  }
}
