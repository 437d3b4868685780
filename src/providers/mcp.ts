// `mcp` providers (docs/architecture.md §3): an upstream MCP server over Streamable HTTP, through the official
// SDK client. One shared client per replica keeps the catalog (refreshed on list_changed); each
// client session gets its own upstream session, stored so any replica can use it, re-established
// once when the upstream forgets it. Messages the upstream sends on a call's stream are relayed to
// that call's client request; the rest go to the session's standalone stream.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type CompleteResult,
  type GetPromptResult,
  type LoggingLevel,
  type ReadResourceResult,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { Fetch } from "../egress/fetch.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import { fail, isPorticoError } from "../errors.js";
import type { McpProviderConfig } from "./config.js";
import { isLogLevel } from "../protocol/log-levels.js";
import { INPUT_METHODS, missingCapability } from "../protocol/input-requests.js";
import { UpstreamCatalog } from "./mcp-catalog.js";
import type { StatelessRequestOptions } from "./mcp-stateless.js";
import { StatelessCatalog } from "./mcp-stateless-catalog.js";
import { Deadline } from "./deadline.js";
import {
  callScope,
  describeFailure,
  isSessionExpired,
  openClient,
  parseSessionRecord,
  relayedError,
  sessionRecord,
  upstreamRpcError,
  URL_ELICITATION_REQUIRED,
  type UpstreamTarget,
} from "./mcp-upstream.js";
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
  /** Provider traffic goes through the egress policy. */
  readonly fetch: Fetch;
  readonly sessionTtlSeconds: number;
  /** Catalog health probe interval. */
  readonly healthIntervalMs?: number;
  /** How long an unused per-session upstream client stays open here (default 5 min). */
  readonly clientIdleMs?: number;
  /** How often idle and ended sessions' clients are looked at (default 60 s). */
  readonly sweepIntervalMs?: number;
  /** Sees each call made for a client request end (not the catalog's lists and pings). */
  readonly onUpstreamCall?: UpstreamObserver;
}

const SWEEP_INTERVAL_MS = 60_000;
/** How long an unused upstream client stays open on a replica. */
const CLIENT_IDLE_MS = 5 * 60_000;

interface UpstreamSession {
  client: Client;
  lastUsed: number;
}

export class McpProvider implements Provider {
  readonly kind = "mcp" as const;
  readonly id: string;
  readonly prefix: string;
  readonly separator: string | undefined;
  /** The session-era catalog, or undefined while the upstream speaks 2026-07-28. */
  #catalog: UpstreamCatalog | undefined;
  /** The 2026-07-28 catalog, or undefined while the upstream speaks the session era. */
  #stateless: StatelessCatalog | undefined;
  #events: ProviderEvents | undefined;
  /** URIs watched for listen streams, and how to stop watching each on the current catalog. */
  readonly #watches = new Map<string, () => void>();
  /** Sessions subscribed to a 2026-07-28 upstream's resources (resources/subscribe), by URI. */
  readonly #sessionWatches = new Map<string, { release: () => void; sessions: Set<string> }>();
  #sweeper: NodeJS.Timeout | undefined;
  readonly #sessions = new Map<string, Promise<UpstreamSession>>();
  /** Upstream clients of 2026-07-28 requests, by the client capabilities they declare (askable()). */
  readonly #askers = new Map<string, Promise<Client>>();
  readonly #target: UpstreamTarget;

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
      credentials: new UpstreamCredentials(cfg.auth, { fetch: deps.fetch }),
      timeoutMs: cfg.timeoutMs ?? deps.timeoutMs,
    };
  }

  get healthy(): boolean {
    return (this.#stateless ?? this.#catalog)?.healthy ?? false;
  }

  get healthReason(): string | undefined {
    return (this.#stateless ?? this.#catalog)?.reason;
  }

  async refresh(): Promise<void> {
    try {
      await (this.#stateless ?? this.#catalog)?.refresh();
    } catch (err) {
      throw this.#shown(err);
    }
  }

  async probe(timeoutMs: number): Promise<number> {
    const catalog = this.#stateless ?? this.#catalog;
    if (!catalog) throw new Error("not started");
    try {
      return await catalog.ping(timeoutMs);
    } catch (err) {
      throw this.#shown(err);
    }
  }

  /**
   * A failure of refresh or probe as the admin API may show it (health, refresh, dry runs): an
   * upstream's error page (the SDK puts it in the message) may echo the request, so an HTTP
   * failure is told by its status only, and anything else loses the provider's secrets.
   */
  #shown(err: unknown): unknown {
    if (err instanceof StreamableHTTPError) return new Error(describeFailure(err));
    return this.#withoutSecrets(err);
  }

  get subscribable(): boolean {
    return this.#serverCapabilities?.resources?.subscribe === true;
  }

  /** What the upstream said it serves, once connected. */
  get #serverCapabilities(): ServerCapabilities | undefined {
    return this.#stateless ? this.#stateless.capabilities : this.#catalog?.client?.getServerCapabilities();
  }

  entries(): ProviderEntries {
    return (this.#stateless ?? this.#catalog)?.entries ?? EMPTY_ENTRIES;
  }

  async start(events: ProviderEvents): Promise<void> {
    this.#events = events;
    await this.#useEra(this.cfg.era === "stateless" ? "stateless" : "session");
    this.#sweeper = setInterval(
      () => void this.#sweep().catch(() => undefined),
      this.deps.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
    );
    this.#sweeper.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const sessions = [...this.#sessions.values()];
    const askers = [...this.#askers.values()];
    this.#sessions.clear();
    this.#askers.clear();
    await Promise.allSettled([
      this.#catalog?.close(),
      this.#stateless?.close(),
      ...sessions.map(async (s) => (await s).client.close()),
      ...askers.map(async (c) => (await c).close()),
    ]);
  }

  /**
   * Serves the upstream with the catalog of an era. With `era: "auto"`, each catalog asks the
   * upstream which era it speaks whenever it connects (server/discover, else initialize) and hands
   * over when that changed; a pinned era keeps its catalog, unhealthy if the upstream does not speak it.
   */
  async #useEra(era: "session" | "stateless"): Promise<void> {
    const events = this.#events!;
    const interval = this.deps.healthIntervalMs ?? 10_000;
    const old = this.#stateless ?? this.#catalog;
    const onResourceUpdated = (uri: string) => this.#resourceUpdated(uri);
    const follow = (this.cfg.era ?? "auto") === "auto";
    if (era === "stateless") {
      this.#catalog = undefined;
      this.#stateless = new StatelessCatalog(this.#target, events, {
        onEraChanged: follow ? () => void this.#useEra("session") : undefined,
        onResourceUpdated,
      });
      this.#endSessionEra();
    } else {
      this.#stateless = undefined;
      this.#catalog = new UpstreamCatalog(this.#target, events, {
        onEraChanged: follow ? () => this.#useEra("stateless") : undefined,
        onResourceUpdated,
      });
    }
    if (old)
      this.deps.log.info({ tenant: this.deps.tenantId, provider: this.id, era }, "upstream era changed");
    void old?.close().catch(() => undefined);
    const catalog = this.#stateless ?? this.#catalog!;
    for (const [uri, release] of this.#watches) {
      release();
      this.#watches.set(uri, catalog.watch(uri));
    }
    await catalog.start(interval);
  }

  /** Per-session and per-capability upstream clients belong to the session era. */
  #endSessionEra(): void {
    const clients = [...this.#sessions.values(), ...this.#askers.values()];
    this.#sessions.clear();
    this.#askers.clear();
    for (const pending of clients)
      void pending.then((c) => ("client" in c ? c.client : c).close()).catch(() => undefined);
  }

  /** Keeps resources/updated for `uri` coming (events.resourceUpdated) until the returned function runs. */
  watch(uri: string): () => void {
    const catalog = this.#stateless ?? this.#catalog;
    this.#watches.set(uri, catalog ? catalog.watch(uri) : () => undefined);
    return () => {
      this.#watches.get(uri)?.();
      this.#watches.delete(uri);
    };
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    try {
      if (this.#stateless)
        return (await this.#callStateless(
          "tools/call",
          { name, arguments: args },
          ctx,
          this.#stateless.tool(name),
        )) as CallToolResult;
      return (await this.#call(ctx, (client, options) =>
        client.callTool({ name, arguments: args }, undefined, options),
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
    if (this.#stateless)
      return this.#callStateless("prompts/get", { name, arguments: args }, ctx) as Promise<GetPromptResult>;
    return this.#call(ctx, (client, options) => client.getPrompt({ name, arguments: args }, options));
  }

  readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    if (this.#stateless)
      return this.#callStateless("resources/read", { uri }, ctx) as Promise<ReadResourceResult>;
    return this.#call(ctx, (client, options) => client.readResource({ uri }, options));
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
    if (this.#stateless)
      return this.#callStateless("completion/complete", params, ctx) as Promise<CompleteResult>;
    return this.#call(ctx, (client, options) => client.complete(params, options));
  }

  async subscribe(uri: string, ctx: CallContext): Promise<void> {
    if (this.#stateless) {
      if (ctx.sessionId) this.#watchForSession(uri, ctx.sessionId);
    } else await this.#call(ctx, (client, options) => client.subscribeResource({ uri }, options));
    if (ctx.sessionId)
      await this.deps.store.setAdd(
        this.#subsKey(ctx.sessionId),
        `${this.id} ${uri}`,
        this.deps.sessionTtlSeconds,
      );
  }

  async unsubscribe(uri: string, ctx: CallContext): Promise<void> {
    if (this.#stateless) {
      if (ctx.sessionId) this.#unwatchForSession(uri, ctx.sessionId);
    } else await this.#call(ctx, (client, options) => client.unsubscribeResource({ uri }, options));
    if (ctx.sessionId) await this.deps.store.setRemove(this.#subsKey(ctx.sessionId), `${this.id} ${uri}`);
  }

  async setLogLevel(sessionId: string, level: LoggingLevel): Promise<void> {
    await this.#withSessionClient(sessionId, (client) => client.setLoggingLevel(level));
  }

  async rootsChanged(sessionId: string): Promise<void> {
    await this.#withSessionClient(sessionId, (client) => client.sendRootsListChanged());
  }

  async endSession(sessionId: string): Promise<void> {
    for (const uri of [...this.#sessionWatches.keys()]) this.#unwatchForSession(uri, sessionId);
    await this.#withSessionClient(sessionId, async (client) => {
      await (
        client.transport as { terminateSession?: () => Promise<void> } | undefined
      )?.terminateSession?.();
    });
    const local = this.#sessions.get(sessionId);
    this.#sessions.delete(sessionId);
    void local?.then((s) => s.client.close()).catch(() => undefined);
  }

  /**
   * Runs `op` on the session's upstream session if it has one: through this replica's client, or
   * through a short-lived client resuming the session another replica opened. Failures are dropped:
   * these are courtesies to the upstream, not answers the client waits for.
   */
  async #withSessionClient(sid: string, op: (client: Client) => Promise<unknown>): Promise<void> {
    const local = await this.#sessions.get(sid)?.catch(() => undefined);
    if (local) {
      await op(local.client).catch(() => undefined);
      return;
    }
    const resume = parseSessionRecord(
      await this.deps.store.hashGet(this.deps.keys.upstreamSessions(this.deps.tenantId, sid), this.id),
    );
    if (!resume) return;
    const client = await openClient(this.#target, { capabilities: {}, resume }).catch(() => undefined);
    if (!client) return;
    await op(client).catch(() => undefined);
    await client.close().catch(() => undefined);
  }

  /** Runs an upstream call for a client request, observing how it ended. */
  #call<T>(ctx: CallContext, op: (client: Client, options: RequestOptions) => Promise<T>): Promise<T> {
    const declined = declinedUrl(ctx);
    if (declined)
      return Promise.reject(
        fail(
          "PORTICO_ERR_PROVIDER_UNAVAILABLE",
          `Provider '${this.id}' needs the user to open a URL first, and the answer was "${declined}"`,
        ),
      );
    return this.#observed(ctx, () => this.#attempt(ctx, op));
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
    const catalog = this.#stateless!;
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
        if (ctx.mrtr) return this.#relayable(result, ctx);
        if (rounds >= MAX_INPUT_ROUNDS)
          throw fail(
            "PORTICO_ERR_PROVIDER_UNAVAILABLE",
            `Provider '${this.id}' still asked for input after ${MAX_INPUT_ROUNDS} rounds`,
          );
        round = {
          inputResponses: await this.#ask(result.inputRequests, ctx),
          ...(typeof result.requestState === "string" && { requestState: result.requestState }),
        };
      }
    });
  }

  /**
   * An upstream's InputRequiredResult as a 2026-07-28 client may get it: only sampling, elicitation
   * and roots requests, each of a capability the request declared (basic/patterns/mrtr); the
   * upstream saw those capabilities, so asking beyond them is its failure, answered -32021.
   */
  #relayable(result: Record<string, unknown>, ctx: CallContext): Record<string, unknown> {
    const requests = objectOf(result.inputRequests) ?? {};
    let missing: ClientCapabilities | undefined;
    for (const request of Object.values(requests)) {
      const { method, params } = objectOf(request) ?? {};
      if (typeof method !== "string" || !INPUT_METHODS.has(method))
        throw fail(
          "PORTICO_ERR_PROVIDER_UNAVAILABLE",
          `Provider '${this.id}' asked the client for ${typeof method === "string" ? method : "something without a method"}, which is not an input request`,
        );
      const lacking = missingCapability(method, objectOf(params), ctx.clientCapabilities);
      if (lacking) missing = mergeCapabilities(missing, lacking);
    }
    if (Object.keys(requests).length === 0)
      throw fail(
        "PORTICO_ERR_PROVIDER_UNAVAILABLE",
        `Provider '${this.id}' asked for input without input requests`,
      );
    if (missing)
      throw fail(
        "PORTICO_ERR_MCP_MISSING_CAPABILITY",
        `This request needs the client capabilities ${JSON.stringify(missing)}; declare them in _meta`,
        { requiredCapabilities: missing },
      );
    return result;
  }

  /** Asks a session-era client the questions of an InputRequiredResult, all at once. */
  async #ask(requests: unknown, ctx: CallContext): Promise<Record<string, unknown>> {
    const entries = Object.entries(typeof requests === "object" && requests !== null ? requests : {});
    const answers = await Promise.all(
      entries.map(([, r]) => {
        const { method, params } = (r ?? {}) as { method?: unknown; params?: unknown };
        if (typeof method !== "string")
          throw fail(
            "PORTICO_ERR_PROVIDER_UNAVAILABLE",
            `Provider '${this.id}' asked for input without a method`,
          );
        return ctx.request(method, (params ?? {}) as Record<string, unknown>);
      }),
    );
    return Object.fromEntries(entries.map(([key], i) => [key, answers[i]]));
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

  /**
   * Runs `op` on the request's upstream client, with one transparent retry on an expired upstream
   * session, under Portico's own deadline (the SDK's timeout cannot pause while the upstream waits
   * on the client).
   */
  async #attempt<T>(
    ctx: CallContext,
    op: (client: Client, options: RequestOptions) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let client: Client;
      try {
        client = await this.#clientFor(ctx);
      } catch (err) {
        throw this.#unavailable(err);
      }
      const deadline = new Deadline(this.#target.timeoutMs, ctx.signal);
      try {
        return await callScope.run({ ctx, deadline }, () => op(client, this.#options(ctx, deadline)));
      } catch (err) {
        if (deadline.timedOut) throw fail("PORTICO_ERR_PROVIDER_TIMEOUT", deadline.message(this.id));
        if (attempt === 0 && isSessionExpired(err)) {
          if (ctx.sessionId) await this.#forget(ctx.sessionId);
          else this.#forgetAsker(client);
          continue;
        }
        const round = ctx.mrtr && urlElicitationRound(err, ctx);
        if (round) return round as T;
        throw upstreamRpcError(this.#scrubbed(err), this.id, ctx.protocolVersion) ?? this.#unavailable(err);
      } finally {
        deadline.dispose();
      }
    }
  }

  #options(ctx: CallContext, deadline: Deadline): RequestOptions {
    return {
      signal: deadline.signal,
      timeout: NO_SDK_TIMEOUT,
      onprogress: (p: { progress: number; total?: number; message?: string }) => {
        deadline.restart();
        ctx.progress(p.progress, p.total, p.message);
      },
    };
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
    const secrets = [...Object.values(this.cfg.headers ?? {}), ...this.#target.credentials.secrets()];
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
    const secrets = [...Object.values(this.cfg.headers ?? {}), ...this.#target.credentials.secrets()];
    const message = redact(err.message, secrets);
    if (message === err.message) return err;
    const code = (err as Error & { code?: unknown }).code;
    return Object.assign(new Error(message), {
      name: err.name,
      code,
      stack: redact(err.stack ?? "", secrets),
    });
  }

  /** The upstream client of the request's session, opened on first use on this replica. */
  async #clientFor(ctx: CallContext): Promise<Client> {
    const sid = ctx.sessionId;
    if (sid === undefined) return this.#askerFor(ctx.clientCapabilities);
    let pending = this.#sessions.get(sid);
    if (!pending) {
      pending = this.#openSession(sid, ctx);
      this.#sessions.set(sid, pending);
      pending.catch(() => this.#sessions.get(sid) === pending && this.#sessions.delete(sid));
    }
    const session = await pending;
    session.lastUsed = Date.now();
    return session.client;
  }

  async #openSession(sid: string, ctx: CallContext): Promise<UpstreamSession> {
    const { store, keys, tenantId } = this.deps;
    const upKey = keys.upstreamSessions(tenantId, sid);
    const resume = parseSessionRecord(await store.hashGet(upKey, this.id));
    const client = await openClient(this.#target, {
      capabilities: ctx.clientCapabilities,
      resume,
      setup: (c) => this.#relay(c, sid, ctx.clientCapabilities),
    });
    if (!resume) {
      const record = sessionRecord(client);
      if (record) await store.hashSet(upKey, this.id, record, this.deps.sessionTtlSeconds);
      if (ctx.logLevel && client.getServerCapabilities()?.logging)
        await client.setLoggingLevel(ctx.logLevel).catch(() => undefined);
      await this.#restoreSubscriptions(client, sid);
    }
    return { client, lastUsed: Date.now() };
  }

  /** After a re-established upstream session: subscribe again to what the session had. */
  async #restoreSubscriptions(client: Client, sid: string) {
    const members = await this.deps.store.setMembers(this.#subsKey(sid));
    const mine = members.filter((m) => m.startsWith(`${this.id} `)).map((m) => m.slice(this.id.length + 1));
    await Promise.allSettled(mine.map((uri) => client.subscribeResource({ uri })));
  }

  /**
   * The upstream client for a 2026-07-28 request. The upstream asks only what the capabilities it
   * saw at initialize allow, so a request that declares sampling, elicitation or roots gets a
   * client initialized with those (one per combination, shared); others use the catalog's.
   */
  #askerFor(capabilities: ClientCapabilities): Promise<Client> {
    const caps = askable(capabilities);
    const key = JSON.stringify(caps);
    if (key === "{}") {
      const shared = this.#catalog?.client;
      return shared ? Promise.resolve(shared) : Promise.reject(new Error("not connected"));
    }
    let pending = this.#askers.get(key);
    if (!pending) {
      pending = openClient(this.#target, {
        capabilities: caps,
        setup: (c) => this.#relay(c, undefined, caps),
      });
      this.#askers.set(key, pending);
      pending.catch(() => this.#askers.get(key) === pending && this.#askers.delete(key));
    }
    return pending;
  }

  #forgetAsker(client: Client) {
    for (const [key, pending] of this.#askers)
      void pending.then((c) => {
        if (c !== client || this.#askers.get(key) !== pending) return;
        this.#askers.delete(key);
        void c.close().catch(() => undefined);
      });
  }

  async #forget(sid: string) {
    const local = this.#sessions.get(sid);
    this.#sessions.delete(sid);
    void local?.then((s) => s.client.close()).catch(() => undefined);
    await this.deps.store.hashDel(this.deps.keys.upstreamSessions(this.deps.tenantId, sid), this.id);
  }

  #subsKey(sid: string) {
    return this.deps.keys.subscriptions(this.deps.tenantId, sid);
  }

  /**
   * Relays what the upstream sends on a session: to the client request it belongs to, else the
   * client session (none for 2026-07-28 requests' clients: what belongs to no request is dropped).
   */
  #relay(client: Client, sid: string | undefined, caps: ClientCapabilities) {
    const { outlet, tenantId } = this.deps;
    const ask = (method: string) => (req: { params?: Record<string, unknown> }) => {
      const call = callScope.getStore();
      const params = req.params ?? {};
      // The upstream waits on the client meanwhile: its call's deadline does not run.
      if (call) return call.deadline.pausedDuring(call.ctx.request(method, params)) as Promise<never>;
      if (sid === undefined)
        return Promise.reject(new McpError(ErrorCode.InvalidRequest, `${method} outside a request`));
      return outlet.request(tenantId, sid, method, params) as Promise<never>;
    };
    // The upstream saw the client's own capabilities at initialize, so it asks only for these.
    if (caps.sampling) client.setRequestHandler(CreateMessageRequestSchema, ask("sampling/createMessage"));
    if (caps.elicitation) client.setRequestHandler(ElicitRequestSchema, ask("elicitation/create"));
    if (caps.roots) client.setRequestHandler(ListRootsRequestSchema, ask("roots/list"));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const call = callScope.getStore();
      if (call) call.ctx.log(n.params.level, n.params.data, n.params.logger);
      else if (sid !== undefined)
        void outlet.notify(tenantId, sid, n.method, n.params).catch(() => undefined);
    });
    if (sid === undefined) return;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      void outlet.notify(tenantId, sid, n.method, n.params).catch(() => undefined);
    });
  }

  /**
   * Keeps the stored records of sessions this replica serves from expiring while the client
   * session lives, closes the upstream clients of sessions that ended, and lets go of clients idle
   * here for a while (their upstream session stays, resumed on the next call) unless they carry
   * subscriptions, whose updates arrive on the client's upstream GET stream.
   */
  async #sweep(): Promise<void> {
    const entries = [...this.#sessions];
    // Concurrently in slices: each check is a few Redis commands, auto-pipelined together.
    for (let i = 0; i < entries.length; i += 200)
      await Promise.all(entries.slice(i, i + 200).map(([sid, pending]) => this.#sweepOne(sid, pending)));
  }

  async #sweepOne(sid: string, pending: Promise<UpstreamSession>): Promise<void> {
    const { store, keys, tenantId, sessionTtlSeconds } = this.deps;
    const idleSince = Date.now() - (this.deps.clientIdleMs ?? CLIENT_IDLE_MS);
    const session = await pending.catch(() => undefined);
    if ((await store.ttl(keys.session(tenantId, sid))) > 0) {
      await store.expire(keys.upstreamSessions(tenantId, sid), sessionTtlSeconds);
      await store.expire(keys.subscriptions(tenantId, sid), sessionTtlSeconds);
      if (!session || session.lastUsed > idleSince) return;
      const members = await store.setMembers(this.#subsKey(sid));
      if (members.some((m) => m.startsWith(`${this.id} `))) return;
    }
    if (this.#sessions.get(sid) === pending) this.#sessions.delete(sid);
    await session?.client.close().catch(() => undefined);
  }
}

/**
 * The capabilities an upstream may ask under, in a bounded set of shapes (a client's _meta must not
 * make Portico open one upstream session per spelling): sampling, elicitation (form, url), roots.
 */
function askable(caps: ClientCapabilities): ClientCapabilities {
  const out: Record<string, Record<string, object>> = {};
  const sampling = objectOf(caps.sampling);
  if (sampling) out.sampling = pick(sampling, ["context", "tools"]);
  const elicitation = objectOf(caps.elicitation);
  if (elicitation) out.elicitation = pick(elicitation, ["form", "url"]);
  if (objectOf(caps.roots)) out.roots = {};
  return out;
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function pick(from: Record<string, unknown>, names: readonly string[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const name of names) if (objectOf(from[name])) out[name] = {};
  return out;
}

/** The SDK's own request timeout, out of the way of the call's Deadline (setTimeout's maximum). */
const NO_SDK_TIMEOUT = 2_147_483_647;

const NO_COMPLETIONS: CompleteResult = Object.freeze({ completion: Object.freeze({ values: [] }) });

/** Portico asks every 2026-07-28 upstream for progress; the client's request decides whether it is relayed. */
const PROGRESS_TOKEN = "portico";
const MAX_INPUT_ROUNDS = 10;
const UNSUPPORTED_VERSION = -32022;

/** Progress and log messages of an upstream request, to the client request it serves. */
function relayNotification(ctx: CallContext, method: string, p: Record<string, unknown>): void {
  if (method === "notifications/progress" && typeof p.progress === "number")
    ctx.progress(
      p.progress,
      typeof p.total === "number" ? p.total : undefined,
      typeof p.message === "string" ? p.message : undefined,
    );
  else if (method === "notifications/message" && isLogLevel(p.level))
    ctx.log(p.level, p.data, typeof p.logger === "string" ? p.logger : undefined);
}

/** requiredCapabilities of several input requests in one object. */
function mergeCapabilities(a: ClientCapabilities | undefined, b: ClientCapabilities): ClientCapabilities {
  const out: Record<string, Record<string, unknown>> = { ...(a as Record<string, Record<string, unknown>>) };
  for (const [name, value] of Object.entries(b)) out[name] = { ...out[name], ...(value as object) };
  return out;
}

/**
 * A session-era upstream's -32042 (URL elicitation required, 2025-11-25) for a 2026-07-28 client:
 * the URLs to visit become URL-mode input requests, and the client's retry calls the upstream
 * again, as -32042 asks. Nothing is held: the upstream call is over.
 */
function urlElicitationRound(err: unknown, ctx: CallContext): Record<string, unknown> | undefined {
  if (!(err instanceof McpError) || err.code !== URL_ELICITATION_REQUIRED) return undefined;
  const data = objectOf(err.data);
  const elicitations = Array.isArray(data?.elicitations) ? data.elicitations : [];
  const inputRequests: Record<string, unknown> = {};
  for (const [i, e] of elicitations.entries()) {
    const { url, message } = objectOf(e) ?? {};
    if (typeof url !== "string") continue;
    const params = { mode: "url", url, message: typeof message === "string" ? message : "" };
    inputRequests[`${URL_ROUND_KEY}${i + 1}`] = { method: "elicitation/create", params };
  }
  if (Object.keys(inputRequests).length === 0) return undefined;
  if (missingCapability("elicitation/create", { mode: "url" }, ctx.clientCapabilities))
    throw fail(
      "PORTICO_ERR_MCP_MISSING_CAPABILITY",
      "The upstream needs the user to open a URL first (URL-mode elicitation); declare elicitation.url in _meta",
      { requiredCapabilities: { elicitation: { url: {} } } },
    );
  return { resultType: "input_required", inputRequests };
}

const URL_ROUND_KEY = "elicitation-url-";

/** The action of a retry's answer to a URL round that is not "accept": the user did not go there. */
function declinedUrl(ctx: CallContext): string | undefined {
  const responses = ctx.mrtr?.inputResponses;
  if (!responses) return undefined;
  for (const [key, answer] of Object.entries(responses)) {
    if (!key.startsWith(URL_ROUND_KEY)) continue;
    const action = objectOf(answer)?.action;
    if (action !== "accept") return typeof action === "string" ? action : "no answer";
  }
  return undefined;
}

function definedOf(mrtr: NonNullable<CallContext["mrtr"]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (mrtr.inputResponses !== undefined) out.inputResponses = mrtr.inputResponses;
  if (mrtr.requestState !== undefined) out.requestState = mrtr.requestState;
  return out;
}

/** A 2026-07-28 result for a session-era client: without the fields that revision added. */
function sessionShaped(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _r, ttlMs: _t, cacheScope: _c, ...rest } = result;
  const meta = rest._meta;
  if (typeof meta === "object" && meta !== null && SERVER_INFO in meta) {
    const { [SERVER_INFO]: _s, ...others } = meta as Record<string, unknown>;
    if (Object.keys(others).length > 0) rest._meta = others;
    else delete rest._meta;
  }
  return rest;
}

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/** JSON text back to a value; undefined when a redaction left it unreadable. */
function parsed(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
