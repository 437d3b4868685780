// buildApp: wires configuration, store, tenants and the feature plugins into a Fastify instance.
// It never listens (main.ts does); tests drive it with inject() or listen on port 0.
import type { ServerResponse } from "node:http";
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type RouteOptions } from "fastify";
import type { Config } from "./config/env.js";
import { egressDispatcher, egressFetch, sameOriginRedirects } from "./egress/fetch.js";
import { userTokenSources } from "./accounts/sources.js";
import type { UserTokenSource } from "./providers/user-tokens.js";
import { userListChanged } from "./mcp/user-notices.js";
import { EgressPolicy } from "./egress/policy.js";
import { Cursors } from "./mcp/cursor.js";
import { OriginPolicy } from "./mcp/edge/origin.js";
import { AuditLog } from "./audit/audit.js";
import { adminSurface } from "./admin/surface.js";
import { adminPlugin } from "./admin/plugin.js";
import { authPlugin } from "./auth/plugin.js";
import { oauthPlugin } from "./oauth/plugin.js";
import { oauthSurface } from "./oauth/surface.js";
import { sendProblem } from "./admin/problem.js";
import { excerpt, fail } from "./protocol/errors.js";
import { healthRoutes } from "./health.js";
import { homeRoute } from "./home-page.js";
import { consoleRoutes } from "./console/assets.js";
import { RateLimiter } from "./limits/rate-limiter.js";
import { loggingOptions, logCompletedRequests } from "./logs/logger.js";
import { pageHeaders } from "./html/page-headers.js";
import { bodylessRequests } from "./body-less.js";
import { McpLimits } from "./mcp/limits.js";
import { oauthRateLimit } from "./oauth/rate-limit.js";
import { mcpPlugin } from "./mcp/plugin.js";
import { metricsEndpoint, ObservedResponse } from "./metrics/http.js";
import { Metrics } from "./metrics/metrics.js";
import { SessionLane } from "./mcp/session/lane.js";
import { SessionStore } from "./mcp/sessions.js";
import { STANDALONE, StreamHub } from "./mcp/session/streams.js";
import { StreamOwners } from "./mcp/session/stream-owners.js";
import type { TenantConfig } from "./records/tenant.js";
import { OpenApiDocuments, providerFactory } from "./providers/factory.js";
import { INSTRUCTIONS } from "./providers/pin-book.js";
import { Secrets } from "./crypto/secrets.js";
import { StoreAvailabilityLog } from "./store/availability-log.js";
import { createStore } from "./store/create-store.js";
import { createKeys, type Keys } from "./store/keys.js";
import { Replicas } from "./store/replicas.js";
import type { Store } from "./store/store.js";
import { TenantRegistry } from "./tenants/registry.js";
import { reportingPolicies } from "./policy/enforcer.js";
import { TenantStore } from "./tenants/tenant-store.js";
import { ListenHub } from "./mcp/stateless/listens.js";
import { StatelessLane } from "./mcp/stateless/lane.js";
import { Mrtr } from "./mcp/stateless/mrtr.js";
import { RequestStates } from "./mcp/stateless/request-state.js";
import { Drain } from "./shutdown.js";
import { answerClientError, badUrlAnswer } from "./client-errors.js";
import { breakerValue } from "./providers/circuit-breaker.js";
import { accountsSurface } from "./accounts/surface.js";
import { traceFields } from "./tracing/spans.js";
import { tracedStore } from "./store/traced-store.js";
import type { ConnectedAccounts } from "./accounts/connected-accounts.js";
import { FlowRecords } from "./accounts/connect-flow.js";
import type { PlatformUserSeed } from "./config/bootstrap.js";
import type { StdioLaunches } from "./config/stdio-launch.js";
import { PlatformUsers } from "./admin/platform-users.js";
import { TenantAdmins } from "./admin/tenant-admins.js";
import { ConsoleSessions } from "./console/sessions.js";
import { consoleSignInPlugin } from "./console/sign-in.js";
import { InternalCallers } from "./mcp/internal-callers.js";
import { detailedTask, taskResolver } from "./mcp/task-methods.js";
import { Tasks } from "./tasks/tasks.js";
import { PrometheusTraffic, ReplicaTraffic, type TrafficSource } from "./metrics/traffic.js";

export interface BuildOptions {
  /** Tenants to upsert at boot (bootstrap file or the demo tenant). */
  readonly tenants?: readonly TenantConfig[];
  /** Use this store instead of creating one from the configuration (it is not closed with the app). */
  readonly store?: Store;
  /** Sees every route as it is registered (tests compare the admin routes with the OpenAPI document). */
  readonly onRoute?: (route: RouteOptions) => void;
  /** Pino logger options; default logs at PORTICO_LOG_LEVEL in PORTICO_LOG_FORMAT. */
  readonly logger?: boolean | Record<string, unknown>;
  /** Where the log lines go instead of stdout (tests read them): JSON unless PORTICO_LOG_FORMAT=pretty. */
  readonly logStream?: { write(line: string): void };
  /** Use these metrics (tests shorten their caches); default a fresh registry. */
  readonly metrics?: Metrics;
  /** Per-user credential sources by `auth.type`, before Portico's own (token exchange). */
  readonly userTokenSources?: Readonly<Record<string, UserTokenSource>>;
  /** Platform users to create or whose password to set at boot (the bootstrap file's). */
  readonly platformUsers?: readonly PlatformUserSeed[];
  /** Sample this replica's traffic this often (tests); default 10 s. */
  readonly trafficSampleMs?: number;
  /** How this replica starts `stdio` providers' children: the bootstrap file's launches (never stored). */
  readonly stdioLaunches?: StdioLaunches;
}

export interface Portico {
  readonly app: FastifyInstance;
  readonly registry: TenantRegistry;
  readonly store: Store;
  readonly keys: Keys;
  readonly metrics: Metrics;
  /** Listen streams (2026-07-28); its listChanged/resourceUpdated publish a change to every replica. */
  readonly listens: ListenHub;
  /** Shutting down but still serving: /readyz answers 503 (shutdown.ts). */
  readonly drain: Drain;
  /** Users' connected accounts at per-user providers (docs/upstream-auth.md). */
  readonly accounts: ConnectedAccounts;
  /** Try it's single-use passes to the MCP endpoint (docs/admin-api.md "Try it"). */
  readonly internalCallers: InternalCallers;
}

/** Node's headers timeout (at most the request timeout) and how often both are checked. */
function serverTimeouts(requestTimeoutMs: number): {
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  const headersTimeout = requestTimeoutMs > 0 ? Math.min(requestTimeoutMs, 60_000) : 60_000;
  return { headersTimeout, connectionsCheckingInterval: Math.min(Math.max(headersTimeout / 4, 250), 15_000) };
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<Portico> {
  const logging = loggingOptions(
    config.logLevel,
    options.logStream,
    config.logFormat,
    config.tracing ? traceFields : undefined,
  );
  const app = Fastify({
    ...logging,
    logger: options.logger ?? logging.logger,
    // Behind trusted proxies, request.ip is the client named by X-Forwarded-For (per-IP limits).
    trustProxy: config.trustedProxyCidrs.length > 0 ? [...config.trustedProxyCidrs] : false,
    bodyLimit: config.bodyLimitBytes,
    // Fastify's default (0) lifts Node's request timeout: a client trickling its body would hold a
    // socket for ever (slowloris). Only receiving the request is bounded, never a streamed response.
    requestTimeout: config.requestTimeoutMs,
    // Responses count their own head (metrics/http.ts).
    http: {
      ...serverTimeouts(config.requestTimeoutMs),
      ServerResponse: ObservedResponse as unknown as typeof ServerResponse,
    },
    // Two log lines per request would cost more than serving it; errors are logged where they happen.
    logController: new LogController({ disableRequestLogging: true }),
    // A request that reaches a closing replica (a balancer without health checks sends it one until
    // its connection is refused) is served, its connection closed after the answer: never a 503.
    return503OnClosing: false,
    // Headers past Node's parser limit, or no HTTP at all: answered in each surface's format.
    clientErrorHandler: answerClientError,
    // Ids are short; longer path segments are refused by frameworkErrors below, on each surface's terms.
    // `/mcp/acme/` is `/mcp/acme`: clients keep the slash a user typed (docs/oauth.md#client-quirks).
    routerOptions: { maxParamLength: 256, ignoreTrailingSlash: true },
    frameworkErrors: (err, req, reply) => {
      const tooLong = err.code === "FST_ERR_MAX_PARAM_LENGTH";
      const detail = tooLong
        ? "A path segment is too long"
        : "The URL is not valid: check its percent-encoding";
      if (req.url.startsWith("/admin")) sendProblem(fail("PORTICO_ERR_ADMIN_MALFORMED", detail), req, reply);
      else {
        // JSON-RPC on /mcp, RFC 6749 on /oauth and /.well-known, plain JSON elsewhere.
        const { type, body } = badUrlAnswer(req.url, detail);
        void (reply as unknown as FastifyReply).code(400).type(type).send(body);
      }
    },
  });
  // Tracing's HTTP spans wrap every route, so before any: loaded only when tracing is on.
  if (config.tracing) await (await import("./tracing/http-spans.js")).httpSpans(app);
  if (options.onRoute) app.addHook("onRoute", options.onRoute);
  // Before any route: every HTML page gets its security headers (nosniff, no framing, no-store).
  pageHeaders(app);
  // Before any body parser: a body-less request's Content-Type is ignored (the Python SDK's DELETE).
  bodylessRequests(app);
  // Fastify's own 404 quotes the whole URL (up to the 16 KiB header limit): quote an excerpt, in
  // the surface's format (/admin has its own handler).
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?", 1)[0]!;
    // A path below a tenant's endpoint is usually a client given the wrong URL: say which is right.
    const hint = path.startsWith("/mcp/") ? `; MCP endpoints are ${config.publicUrl}/mcp/{tenant}` : "";
    const { type, body } = badUrlAnswer(
      req.url,
      `Not Found: no route ${excerpt(req.method, 16)} ${excerpt(path)}${hint}`,
      404,
    );
    void reply.code(404).type(type).send(body);
  });
  homeRoute(app, config.publicUrl);
  // The admin console's page and assets (docs/console.md), read from dist/console/app/ once, here.
  consoleRoutes(app);
  const metrics = options.metrics ?? new Metrics();
  metricsEndpoint(app, { metrics, token: config.metricsToken });
  // Outages and recoveries are logged once each, not once per failed command.
  const availability = new StoreAvailabilityLog(app.log, config.redisUrl ? "redis" : "memory");
  const created =
    options.store ??
    (await createStore({
      redisUrl: config.redisUrl,
      redisCluster: config.redisCluster,
      redisSentinels: config.redisSentinels,
      redisSentinelMaster: config.redisSentinelMaster,
      redisSentinelPassword: config.redisSentinelPassword,
      onError: availability.error,
      onMaster: availability.master,
      onCommand: (seconds, ok) => {
        metrics.storeCommand(seconds, ok);
        availability.command(ok);
      },
    }));
  // With tracing on, each command of a request is a span of it (its operation only: no keys, no values).
  const store = config.tracing ? tracedStore(created) : created;
  const keys = createKeys(config.redisKeyPrefix);
  const secrets = new Secrets(config.secretKey, config.previousSecretKeys);
  if (secrets.ephemeral)
    app.log.warn(
      "PORTICO_SECRET_KEY is not set: cursors and MRTR requestState are protected with a per-process key; set it when running several replicas",
    );

  // This replica's heartbeat: others tell from it when it dies (docs/architecture.md §4).
  const replicas = new Replicas(store, keys);
  await replicas.start();
  const limiter = new RateLimiter({
    store,
    onRefused: (surface, scope) => metrics.rateLimited(surface, scope),
    onFlushError: (err) => app.log.warn({ err }, "rate-limit counters not shared: the store failed"),
  });
  // Tasks (docs/upstream-mcp.md#tasks): records in the store, any replica answers for any task.
  const tasks = new Tasks({
    store,
    keys,
    liveness: replicas,
    limiter,
    log: app.log,
    ttlDefaultMs: config.taskTtlDefaultMs,
    ttlMaxMs: config.taskTtlMaxMs,
    pollIntervalMs: config.taskPollIntervalMs,
    maxResultBytes: config.taskMaxResultBytes,
    maxPerCaller: config.maxTasksPerCaller,
    maxPerTenant: config.maxTasksPerTenant,
    pollsPerMinute: config.taskPollsPerMinute,
    rerunIdempotent: config.rerunInterruptedIdempotentCalls,
    notify: (tenant, sid, method, params) => lane.outlet.notify(tenant, sid, method, params),
    resolve: (record) => resolveTask(record),
    changed: (record) => listens.taskChanged(record.tenant, record.id),
    metrics,
  });
  await tasks.listen();
  const sessions = new SessionStore(store, keys, config.sessionIdleTtlSeconds);
  const cursors = new Cursors(secrets);
  const hub: StreamHub = new StreamHub({
    store,
    keys,
    ttlSeconds: config.sessionIdleTtlSeconds,
    maxEvents: config.eventLogMaxEvents,
    onBusMessage: (tenant, sid, msg) => lane.onBus(tenant, sid, msg),
    onChannelLost: (tenant, sid) => lane.recover(tenant, sid),
  });
  const lane: SessionLane = new SessionLane({
    config,
    sessions,
    hub,
    cursors,
    log: app.log,
    metrics,
    owners: new StreamOwners(hub, replicas, app.log, config.rerunInterruptedIdempotentCalls),
    tasks,
  });
  const listens: ListenHub = new ListenHub({
    store,
    keys,
    log: app.log,
    watch: (tenant, uri) => registry.watch(tenant, uri),
    maxStreams: config.maxListenStreamsPerTenant,
    maxStreamsPerPrincipal: config.maxListenStreamsPerPrincipal,
    maxStreamsPerAddress: config.maxListenStreamsPerAddress,
    maxWatchedUris: config.maxWatchedUrisPerTenant,
    coalesceMs: config.listenCoalesceMs,
    taskDetail: async (tenant, id) => {
      const detail = await tasks.peek(tenant, id);
      return detail && detailedTask(detail);
    },
  });
  const mrtr = new Mrtr({
    states: new RequestStates(secrets, config.inputTimeoutSeconds * 1000),
    store,
    keys,
    timeoutSeconds: config.inputTimeoutSeconds,
    maxHeldPerTenant: config.maxHeldCalls,
    maxHeldPerPrincipal: config.maxHeldCallsPerPrincipal,
    maxHeldPerAddress: config.maxHeldCallsPerAddress,
    liveness: replicas,
  });
  const stateless = new StatelessLane({ config, cursors, listens, mrtr, metrics, tasks });
  const records = new TenantStore(store, keys, secrets);
  // Login back-offs and run-time catalog conflicts are recorded in the tenant's audit log; not
  // counted as admin writes.
  const audit = new AuditLog(store, keys, secrets);
  // One Agent for provider traffic: a keep-alive pool per upstream origin, every connection judged by the policy.
  const providerDispatcher = egressDispatcher(
    new EgressPolicy({ allowCidrs: config.providerAllowCidrs, denyCidrs: config.providerDenyCidrs }),
    { connectTimeoutMs: config.upstreamConnectTimeoutMs, headersTimeoutMs: config.upstreamHeadersTimeoutMs },
  );
  const policies = reportingPolicies(metrics.policyDecisions, audit, app.log);
  const providerFetch = egressFetch(providerDispatcher);
  // Users' own tokens at per-user providers' upstreams (docs/upstream-auth.md): connected accounts.
  const accounts = accountsSurface({
    publicUrl: config.publicUrl,
    store,
    keys,
    secrets,
    tenant: (id): TenantConfig | undefined => registry.get(id)?.config,
    audit,
    metrics,
    fetch: providerFetch,
    log: app.log,
  });
  // Per-user upstream credentials by auth type; `oauth` (its signing keys, for token exchange) is
  // built below, and used only once providers serve requests.
  const userTokens = userTokenSources({
    signer: { issuer: config.publicUrl, key: () => oauth.signingKeys.current() },
    fetch: sameOriginRedirects(providerFetch),
    tenant: (id): TenantConfig | undefined => registry.get(id)?.config,
    given: { user_oauth: accounts.accounts, ...options.userTokenSources },
  });
  const openapiLimits = {
    maxBytes: config.openapiMaxDocumentBytes,
    maxOperations: config.openapiMaxOperations,
  };
  const openapiDocuments = new OpenApiDocuments({ store, keys, fetch: providerFetch }, openapiLimits);
  const registry: TenantRegistry = new TenantRegistry({
    records,
    log: app.log,
    policies,
    createProvider: providerFactory({
      store,
      keys,
      log: app.log,
      outlet: lane.outlet,
      upstreamTimeoutMs: config.upstreamTimeoutMs,
      upstreamHealthIntervalMs: config.upstreamHealthIntervalMs,
      breaker: {
        failures: config.upstreamBreakerFailures,
        openMs: config.upstreamBreakerOpenMs,
        maxOpenMs: config.upstreamBreakerMaxOpenMs,
      },
      sessionTtlSeconds: config.sessionIdleTtlSeconds,
      metrics,
      dispatcher: providerDispatcher,
      fetch: providerFetch,
      liveness: replicas,
      userTokens,
      openapiLimits,
      openapiDocuments,
      stdioLaunches: options.stdioLaunches,
      // A tool definition (or instructions) no approval covers: logged and counted here, recorded
      // once for all replicas.
      onPinNotice: (tenant, notice) => {
        metrics.toolDefinitionChange(tenant, notice.provider, notice.change, notice.mode);
        if (notice.quiet) return;
        const what = notice.name === INSTRUCTIONS ? "upstream instructions" : "tool definition";
        app.log.warn(
          {
            tenant,
            provider: notice.provider,
            tool: notice.name,
            change: notice.change,
            pinning: notice.mode,
          },
          notice.mode === "block"
            ? `${what} not approved: held back until an admin approves it`
            : `${what} not approved: served (pinning warn)`,
        );
        void audit
          .definitionChanged(tenant, notice)
          .catch((err: unknown) => app.log.warn({ err, tenant }, "tool definition change not audited"));
      },
    }),
    // A catalog change reaches the sessions whose standalone stream this replica carries, and
    // (published to every replica) the listen streams of 2026-07-28 clients.
    onListChanged: (tenant, kind, server) => {
      const json = JSON.stringify({ jsonrpc: "2.0", method: `notifications/${kind}/list_changed` });
      for (const sid of hub.standaloneSessions(tenant, server))
        void hub.emit(tenant, sid, STANDALONE, json).catch(() => undefined);
      listens.listChanged(tenant, kind, server);
    },
    onUserListChanged: userListChanged({ hub, sessions, listens }),
    onResourceUpdated: (tenant, uri) => listens.resourceUpdated(tenant, uri),
    onConflict: (tenant, provider, conflict) =>
      void audit
        .conflict(tenant, provider, conflict)
        .catch((err: unknown) => app.log.warn({ err, tenant, provider }, "conflict not audited")),
  });
  // A task's provider, found again on any replica (a poll elsewhere, a re-run after a death).
  const resolveTask = taskResolver(registry);
  metrics.watch({
    sessionsOpen: async () =>
      (await Promise.all(registry.ids().map((t) => sessions.count(t)))).reduce(sum, 0),
    sseStreamsOpen: () => hub.openStreams + listens.open,
    providers: () =>
      registry.ids().flatMap((tenant) =>
        (registry.get(tenant)?.catalog.providers ?? []).map((p) => ({
          tenant,
          provider: p.id,
          up: p.healthy,
          breaker: breakerValue(p.breakerStatus?.()),
        })),
      ),
    storePing: () => store.ping(),
  });
  const oauth = await oauthSurface({ config, store, keys, secrets, registry, metrics, audit });
  // The console (docs/admin-api.md "Console sessions"): its people, its sessions, try it and traffic.
  const platformUsers = new PlatformUsers(store, keys);
  const tenantAdmins = new TenantAdmins(store, keys, oauth.users);
  const consoleSessions = new ConsoleSessions({
    store,
    keys,
    publicUrl: config.publicUrl,
    platformUsers,
    tenantAdmins,
    tenantExists: (id) => registry.get(id) !== undefined,
  });
  const internalCallers = new InternalCallers();
  const traffic: TrafficSource = config.prometheusUrl
    ? new PrometheusTraffic(config.prometheusUrl)
    : new ReplicaTraffic(metrics.registry, replicas.id, options.trafficSampleMs);
  if (traffic instanceof ReplicaTraffic) {
    traffic.start();
    app.addHook("onClose", async () => traffic.stop());
  }
  const admin = adminSurface({
    config,
    records,
    registry,
    sessions,
    endSession: (tenant, session, runtime) => lane.end(tenant, session, runtime),
    secrets,
    oauth,
    store,
    keys,
    log: app.log,
    metrics,
    accounts: accounts.accounts,
    openapi: openapiDocuments,
    traffic,
    platformUsers,
    tenantAdmins,
    console: consoleSessions,
    tryIt: {
      inject: async (request) => {
        const res = await app.inject(request);
        return { statusCode: res.statusCode, headers: res.headers, body: res.body };
      },
      callers: internalCallers,
    },
  });
  let bootstrapped = false;
  const drain = new Drain(app);
  healthRoutes(app, {
    store,
    tenants: () => registry.ids().length,
    bootstrapped: () => bootstrapped,
    draining: () => drain.active,
  });
  logCompletedRequests(app);
  await registry.start();
  for (const tenant of options.tenants ?? []) await admin.seeded(await registry.seed(tenant));
  for (const user of options.platformUsers ?? []) await admin.seedPlatformUser(user);
  bootstrapped = true;

  await app.register(mcpPlugin, {
    config,
    registry,
    sessions,
    lane,
    hub,
    stateless,
    origin: new OriginPolicy(config),
    resourceServer: oauth.resourceServer,
    limits: new McpLimits(limiter, keys, config, (scope) => metrics.rateLimited("mcp", scope)),
    internalCallers,
  });
  await app.register(authPlugin, {
    registry,
    resourceServer: oauth.resourceServer,
    issuer: config.publicUrl,
  });
  const oauthLimits = oauthRateLimit({
    limiter,
    keys,
    perMinute: {
      token: config.oauthRequestsPerMinute,
      register: config.oauthRequestsPerMinute,
      revoke: config.oauthRequestsPerMinute,
      authorize: config.oauthAuthorizeRequestsPerMinute,
      login: config.oauthLoginRequestsPerMinute,
      consent: config.oauthConsentRequestsPerMinute,
    },
  });
  await app.register(oauthPlugin, { ...oauth.plugin, rateLimit: oauthLimits });
  // The accounts pages start sign-ins (a pending flow each), like /oauth/authorize: one budget.
  await accounts.register(app, oauthLimits("authorize"));
  await app.register(consoleSignInPlugin, {
    publicUrl: config.publicUrl,
    sessions: consoleSessions,
    platformUsers,
    tenantAdmins,
    tenant: (id): TenantConfig | undefined => registry.get(id)?.config,
    grants: oauth.grants,
    flows: new FlowRecords(store, keys),
    loginThrottle: oauth.loginThrottle,
    fetch: providerFetch,
    log: app.log,
    loginLimit: oauthLimits("login"),
    startLimit: oauthLimits("authorize"),
  });
  await app.register(adminPlugin, {
    prefix: "/admin",
    ...admin.plugin,
    afterWrite: async () => {
      if (await store.waitForReplica(keys.replicationProbe())) return;
      throw fail(
        "PORTICO_ERR_STORE_UNAVAILABLE",
        "Service Unavailable: the change was written, but no Redis replica confirmed it in time, so a failover could lose it. Read it back before retrying",
      );
    },
  });

  // Streams end with a retry hint, so clients resume them (Last-Event-ID) on another replica.
  app.addHook("preClose", async () => {
    hub.closeAll(config.sseRetryMs);
    listens.closeAll();
    tasks.release();
  });
  app.addHook("onClose", async () => {
    // Requests whose streams clients resume on other replicas, and held calls, finish before the
    // store closes: their answers reach those replicas through it (until the shutdown deadline).
    await drain.settled(() => lane.busy > 0 || mrtr.holding > 0);
    mrtr.closeAll();
    await tasks.close();
    await oauth.plugin.accessTokens.close();
    await limiter.close();
    await sessions.close();
    await registry.close();
    await replicas.stop();
    if (!options.store) await store.close();
  });
  return {
    app,
    registry,
    store,
    keys,
    metrics,
    listens,
    drain,
    accounts: accounts.accounts,
    internalCallers,
  };
}

const sum = (a: number, b: number) => a + b;
