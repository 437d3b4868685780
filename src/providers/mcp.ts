// `mcp` providers (docs/architecture.md §3, docs/upstream-mcp.md): an upstream MCP server over
// Streamable HTTP, spoken to in the client's era when the upstream speaks both, bridged when it
// speaks one. A thin front over the session-era part (mcp/session-era.ts) and the 2026-07-28 part
// (mcp-stateless-catalog.ts); bridging helpers live in mcp/bridge.ts.
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
import type { FastifyBaseLogger } from "fastify";
import type { Dispatcher } from "undici";
import type { Fetch } from "../egress/fetch.js";
import { fail, isPorticoError } from "../errors.js";
import { isStatelessVersion } from "../protocol/era.js";
import { NO_PROFILE, type CapabilityProfile } from "../protocol/profile.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { McpProviderConfig } from "./config.js";
import {
  askClient,
  declinedUrl,
  definedOf,
  MAX_INPUT_ROUNDS,
  NO_COMPLETIONS,
  parsed,
  PROGRESS_TOKEN,
  relayable,
  relayNotification,
  sessionShaped,
  UNSUPPORTED_VERSION,
  urlElicitationRound,
} from "./mcp/bridge.js";
import { SessionUpstream, baseHeaders } from "./mcp/session-client.js";
import { SessionEra } from "./mcp/session-era.js";
import type { StatelessRequestOptions } from "./mcp-stateless.js";
import { StatelessCatalog } from "./mcp-stateless-catalog.js";
import {
  describeFailure,
  httpOf,
  relayedError,
  upstreamRpcError,
  type UpstreamTarget,
} from "./mcp-upstream.js";
import type { UpstreamHttp } from "./mcp/exchange.js";
import { redact, UpstreamCredentials } from "./upstream-auth.js";
import {
  EMPTY_ENTRIES,
  type CallContext,
  type CompletionRef,
  type Provider,
  type ProviderEntries,
  type ProviderEvents,
  type SessionOutlet,
  type UpstreamObserver,
  type UpstreamOutcome,
} from "./types.js";

export interface McpProviderDeps {
  readonly tenantId: string;
  readonly store: Store;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  readonly outlet: SessionOutlet;
  readonly timeoutMs: number;
  /** The token endpoint of `auth` is reached through this fetch (the egress policy). */
  readonly fetch: Fetch;
  /** Upstream MCP traffic goes through this Agent (the egress policy; one pool per origin). */
  readonly dispatcher: Dispatcher;
  readonly sessionTtlSeconds: number;
  /** Catalog health probe interval. */
  readonly healthIntervalMs?: number;
  /** How long an unused dedicated upstream session stays open here (default 5 min). */
  readonly clientIdleMs?: number;
  /** How often idle and ended sessions' upstream sessions are looked at (default 60 s). */
  readonly sweepIntervalMs?: number;
  /** Sees each call made for a client request end (not the catalog's lists and pings). */
  readonly onUpstreamCall?: UpstreamObserver;
}

const SWEEP_INTERVAL_MS = 60_000;
const CLIENT_IDLE_MS = 5 * 60_000;
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
  #events: ProviderEvents | undefined;
  /** URIs watched for listen streams, and how to stop watching each on the current catalog. */
  readonly #watches = new Map<string, () => void>();
  /** Sessions subscribed to a 2026-07-28 upstream's resources (resources/subscribe), by URI. */
  readonly #sessionWatches = new Map<string, { release: () => void; sessions: Set<string> }>();
  readonly #target: UpstreamTarget;
  readonly #http: UpstreamHttp;
  readonly #base: Record<string, string>;
  readonly #secrets: () => string[];

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
      credentials: new UpstreamCredentials(cfg.auth, { fetch: deps.fetch }),
      timeoutMs: cfg.timeoutMs ?? deps.timeoutMs,
    };
    this.#http = httpOf(this.#target);
    this.#base = Object.freeze(baseHeaders(cfg.headers)) as Record<string, string>;
    const headerValues = Object.values(cfg.headers ?? {});
    this.#secrets = () => [...headerValues, ...this.#target.credentials.secrets()];
  }

  /** The part whose verdict and lists speak for the provider. */
  get #primary(): StatelessCatalog | SessionEra["primary"] | undefined {
    return this.#stateless ?? this.#session?.primary;
  }

  get healthy(): boolean {
    return this.#primary?.healthy ?? false;
  }

  get healthReason(): string | undefined {
    return this.#primary?.reason;
  }

  async refresh(): Promise<void> {
    try {
      await this.#primary?.refresh();
    } catch (err) {
      throw this.#shown(err);
    }
  }

  async probe(timeoutMs: number): Promise<number> {
    const catalog = this.#primary;
    if (!catalog) throw new Error("not started");
    try {
      return await catalog.ping(timeoutMs);
    } catch (err) {
      throw this.#shown(err);
    }
  }

  /**
   * A failure of refresh or probe as the admin API may show it (health, refresh, dry runs): an
   * upstream's error page may echo the request, so an HTTP failure is told by its status only,
   * and anything else loses the provider's secrets.
   */
  #shown(err: unknown): unknown {
    const described = describeFailure(err);
    if (described.startsWith("HTTP ") || described !== "unreachable") return new Error(described);
    return this.#withoutSecrets(err);
  }

  get subscribable(): boolean {
    return this.#serverCapabilities?.resources?.subscribe === true;
  }

  /** What the upstream said it serves, once connected. */
  get #serverCapabilities(): ServerCapabilities | undefined {
    return this.#stateless ? this.#stateless.capabilities : this.#session?.primary.capabilities;
  }

  entries(profile?: CapabilityProfile): ProviderEntries {
    if (this.#stateless) return this.#stateless.entries;
    return this.#session?.entries(profile) ?? EMPTY_ENTRIES;
  }

  async prepare(profile: CapabilityProfile): Promise<void> {
    if (!this.#stateless && profile.key !== NO_PROFILE.key) await this.#session?.prepare(profile);
  }

  async start(events: ProviderEvents): Promise<void> {
    this.#events = events;
    await this.#useEra(this.cfg.era === "stateless" ? "stateless" : "session");
  }

  async close(): Promise<void> {
    const session = this.#session;
    const stateless = this.#stateless;
    this.#session = undefined;
    this.#stateless = undefined;
    await Promise.allSettled([session?.close(), stateless?.close()]);
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
    const onResourceUpdated = (uri: string) => this.#resourceUpdated(uri);
    const follow = (this.cfg.era ?? "auto") === "auto";
    const oldSession = this.#session;
    this.#session = undefined;
    this.#stateless = undefined;
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
    return new SessionEra(
      this.#target,
      this.#http,
      this.#base,
      events,
      {
        tenantId: this.deps.tenantId,
        providerId: this.id,
        store: this.deps.store,
        keys: this.deps.keys,
        log: this.deps.log,
        outlet: this.deps.outlet,
        sessionTtlSeconds: this.deps.sessionTtlSeconds,
        healthIntervalMs: this.deps.healthIntervalMs ?? 10_000,
        clientIdleMs: this.deps.clientIdleMs ?? CLIENT_IDLE_MS,
        sweepIntervalMs: this.deps.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
      },
      { onEraChanged, onResourceUpdated: (uri) => this.#resourceUpdated(uri) },
    );
  }

  /**
   * A 2026-07-28 upstream that also accepts initialize speaks both eras: session-era clients are
   * then served over the session era (their sampling, elicitation and logging as they would get
   * them directly), not bridged.
   */
  async #matchEras(): Promise<void> {
    const stateless = this.#stateless;
    const signal = AbortSignal.timeout(Math.min(this.#target.timeoutMs, 10_000));
    const handlers = { notification: () => undefined, request: () => Promise.reject(undefined) };
    const probe = await SessionUpstream.initialize(this.#http, this.#base, {}, handlers, signal).catch(
      () => undefined,
    );
    if (!probe) return;
    void probe.terminate().catch(() => undefined);
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
  #sessionPart(ctx: CallContext): SessionEra | undefined {
    const session = this.#session;
    if (!session || (this.#stateless && isStatelessVersion(ctx.protocolVersion))) return undefined;
    return this.#stateless && !session.primary.healthy ? undefined : session;
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    try {
      const params = { name, arguments: args };
      const session = this.#sessionPart(ctx);
      if (session) return (await this.#callSession(session, "tools/call", params, ctx)) as CallToolResult;
      return (await this.#callStateless(
        "tools/call",
        params,
        ctx,
        this.#stateless?.tool(name),
      )) as CallToolResult;
    } catch (err) {
      // An unreachable or slow upstream is a failed tool execution the model can read (server/tools
      // "Error Handling"); JSON-RPC errors the upstream answered with stay protocol errors.
      if (
        isPorticoError(err) &&
        (err.code === "PORTICO_ERR_PROVIDER_UNAVAILABLE" || err.code === "PORTICO_ERR_PROVIDER_TIMEOUT")
      )
        return { isError: true, content: [{ type: "text", text: err.message }] };
      throw err;
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

  #request(
    method: string,
    params: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<Record<string, unknown>> {
    const session = this.#sessionPart(ctx);
    if (session) return this.#callSession(session, method, params, ctx);
    return this.#callStateless(method, params, ctx);
  }

  async subscribe(uri: string, ctx: CallContext): Promise<void> {
    const session = this.#sessionPart(ctx);
    if (!session) {
      if (ctx.sessionId) this.#watchForSession(uri, ctx.sessionId);
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
    if (!session) {
      if (ctx.sessionId) this.#unwatchForSession(uri, ctx.sessionId);
    } else await this.#courtesy(session.subscribe(uri, ctx, false), ctx);
    if (ctx.sessionId) await this.deps.store.setRemove(this.#subsKey(ctx.sessionId), `${this.id} ${uri}`);
  }

  /** A subscription change, its failure told as a call's would be. */
  async #courtesy(work: Promise<void>, ctx: CallContext): Promise<void> {
    try {
      await work;
    } catch (err) {
      throw this.#failure(err, ctx);
    }
  }

  async setLogLevel(sessionId: string, level: LoggingLevel): Promise<void> {
    await this.#session?.setLogLevel(sessionId, level);
  }

  async rootsChanged(sessionId: string): Promise<void> {
    await this.#session?.rootsChanged(sessionId);
  }

  async endSession(sessionId: string): Promise<void> {
    for (const uri of [...this.#sessionWatches.keys()]) this.#unwatchForSession(uri, sessionId);
    await this.#session?.endSession(sessionId);
  }

  /** A request to the session-era upstream for a client request, observed, its failures told. */
  #callSession(
    session: SessionEra,
    method: string,
    params: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<Record<string, unknown>> {
    const declined = declinedUrl(ctx);
    if (declined)
      return Promise.reject(
        fail(
          "PORTICO_ERR_PROVIDER_UNAVAILABLE",
          `Provider '${this.id}' needs the user to open a URL first, and the answer was "${declined}"`,
        ),
      );
    return this.#observed(ctx, async () => {
      try {
        return await session.call(ctx, method, params);
      } catch (err) {
        const round = ctx.mrtr && urlElicitationRound(err, ctx);
        if (round) return round;
        if (!isPorticoError(err) && !(err instanceof McpError) && !ctx.signal.aborted)
          session.failed(describeFailure(err));
        throw this.#failure(err, ctx);
      }
    });
  }

  /** A failed upstream request as the client gets it. */
  #failure(err: unknown, ctx: CallContext): unknown {
    if (isPorticoError(err)) return err;
    if (ctx.signal.aborted) return err;
    return upstreamRpcError(this.#scrubbed(err), this.id, ctx.protocolVersion) ?? this.#unavailable(err);
  }

  async #observed<T>(ctx: CallContext, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const observe = (outcome: UpstreamOutcome) =>
      this.deps.onUpstreamCall?.(outcome, (performance.now() - started) / 1000);
    try {
      const result = await work();
      observe("ok");
      return result;
    } catch (err) {
      const timedOut = isPorticoError(err) && err.code === "PORTICO_ERR_PROVIDER_TIMEOUT";
      if (!ctx.signal.aborted) observe(timedOut ? "timeout" : "error");
      throw err;
    }
  }

  /**
   * A request to a 2026-07-28 upstream. An input_required answer goes back as is to a client that
   * takes it (ctx.mrtr); any other client is asked each question with a server-to-client request
   * (session era), and the upstream is retried with the answers and its requestState.
   */
  #callStateless(
    method: string,
    params: Record<string, unknown>,
    ctx: CallContext,
    tool?: Tool,
  ): Promise<Record<string, unknown>> {
    const catalog = this.#stateless;
    if (!catalog)
      return Promise.reject(
        fail("PORTICO_ERR_PROVIDER_UNAVAILABLE", `Provider '${this.id}' is unavailable: not connected`),
      );
    const options: StatelessRequestOptions = {
      clientCapabilities: ctx.clientCapabilities,
      logLevel: ctx.logLevel,
      progressToken: PROGRESS_TOKEN,
      signal: ctx.signal,
      tool,
      timeoutMs: this.#target.timeoutMs,
      onNotification: (m, p) => relayNotification(ctx, m, p),
    };
    return this.#observed(ctx, async () => {
      let round = ctx.mrtr ? definedOf(ctx.mrtr) : {};
      for (let rounds = 1; ; rounds++) {
        let result: Record<string, unknown>;
        try {
          result = await catalog.client.request(method, { ...params, ...round }, options);
        } catch (err) {
          if (err instanceof McpError) {
            // An upstream that no longer speaks 2026-07-28 is discovered again.
            if (err.code === UNSUPPORTED_VERSION) void catalog.connect();
            throw relayedError(this.#scrubbed(err), this.id, ctx.protocolVersion);
          }
          throw this.#unavailable(err);
        }
        if (result.resultType !== "input_required") return ctx.sessionId ? sessionShaped(result) : result;
        if (ctx.mrtr) return relayable(result, ctx, this.id);
        if (rounds >= MAX_INPUT_ROUNDS)
          throw fail(
            "PORTICO_ERR_PROVIDER_UNAVAILABLE",
            `Provider '${this.id}' still asked for input after ${MAX_INPUT_ROUNDS} rounds`,
          );
        round = {
          inputResponses: await askClient(result.inputRequests, ctx, this.id),
          ...(typeof result.requestState === "string" && { requestState: result.requestState }),
        };
      }
    });
  }

  /** A session subscribed to a 2026-07-28 upstream's resource: a watch routes its updates to the session. */
  #watchForSession(uri: string, sid: string): void {
    let watch = this.#sessionWatches.get(uri);
    if (!watch) {
      watch = { release: this.#stateless!.watch(uri), sessions: new Set() };
      this.#sessionWatches.set(uri, watch);
    }
    watch.sessions.add(sid);
  }

  #unwatchForSession(uri: string, sid: string): void {
    const watch = this.#sessionWatches.get(uri);
    if (!watch?.sessions.delete(sid) || watch.sessions.size > 0) return;
    watch.release();
    this.#sessionWatches.delete(uri);
  }

  #resourceUpdated(uri: string): void {
    this.#events?.resourceUpdated?.(uri);
    const { outlet, tenantId } = this.deps;
    for (const sid of this.#sessionWatches.get(uri)?.sessions ?? [])
      void outlet.notify(tenantId, sid, "notifications/resources/updated", { uri }).catch(() => undefined);
  }

  #unavailable(err: unknown) {
    if (isPorticoError(err)) return err;
    this.deps.log.warn(
      { tenant: this.deps.tenantId, provider: this.id, err: this.#withoutSecrets(err) },
      "upstream call failed",
    );
    return fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${this.id}' is unavailable: ${describeFailure(err)}`,
    );
  }

  /**
   * A JSON-RPC error relayed to the client without the provider's secrets: an upstream may repeat
   * the request's API key or token in its error message or data, and the client must not learn it.
   */
  #scrubbed<E>(err: E): E {
    if (!(err instanceof McpError)) return err;
    const secrets = this.#secrets();
    if (secrets.length === 0) return err;
    const message = err.message.replace(/^MCP error -?\d+: /, "");
    const data = err.data === undefined ? undefined : JSON.stringify(err.data);
    const cleanMessage = redact(message, secrets);
    const cleanData = data === undefined ? undefined : redact(data, secrets);
    if (cleanMessage === message && cleanData === data) return err;
    return new McpError(err.code, cleanMessage, cleanData === data ? err.data : parsed(cleanData)) as E;
  }

  /** An upstream's error page may echo the request: its headers and credentials stay out of the log. */
  #withoutSecrets(err: unknown): unknown {
    if (!(err instanceof Error)) return err;
    const secrets = this.#secrets();
    const message = redact(err.message, secrets);
    if (message === err.message) return err;
    const code = (err as Error & { code?: unknown }).code;
    return Object.assign(new Error(message), {
      name: err.name,
      code,
      stack: redact(err.stack ?? "", secrets),
    });
  }

  #subsKey(sid: string) {
    return this.deps.keys.subscriptions(this.deps.tenantId, sid);
  }
}
