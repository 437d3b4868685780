// Builds a live provider from its record, by kind.
import type { FastifyBaseLogger } from "fastify";
import type { Dispatcher } from "undici";
import { sameOriginRedirects, type Fetch } from "../egress/fetch.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Keys } from "../store/keys.js";
import type { ReplicaLiveness } from "../store/replicas.js";
import type { Store } from "../store/store.js";
import { HttpProvider } from "./http.js";
import { compileDocument, OpenApiProvider, unbound } from "./openapi/provider.js";
import { DocumentError, type DocumentLimits } from "./openapi/document.js";
import { DocumentCopies, type Binding, type Copy } from "./openapi/document-copies.js";
import { credentialProblems } from "./openapi/security.js";
import type { UserTokenSource } from "./user-tokens.js";
import { launchKey, type StdioLaunches } from "../config/stdio-launch.js";
import { perUserAuth, pinningOf, type OpenApiProviderConfig, type TenantConfig } from "../records/tenant.js";
import { McpProvider } from "./mcp/provider.js";
import type { McpProviderDeps } from "./mcp/provider-deps.js";
import { PerUserProvider } from "./per-user.js";
import { PinBook, type Notice } from "./pin-book.js";
import { PinnedProvider } from "./pinned.js";
import { TaskMarkedProvider } from "./task-marked.js";
import { taskMarksOf } from "../records/task-marks.js";
import { StaticProvider } from "./static.js";
import type { BreakerFactory, Provider, SessionOutlet, UpstreamObserver } from "./types.js";
import {
  CircuitBreaker,
  type BreakerOptions,
  type BreakerState,
  type BreakerStatus,
} from "./circuit-breaker.js";

export interface FactoryDeps {
  readonly store: Store;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  readonly outlet: SessionOutlet;
  readonly upstreamTimeoutMs: number;
  /** How often an `mcp` provider checks its upstream. */
  readonly upstreamHealthIntervalMs?: number;
  /** The circuit breaker of `mcp` and `http` providers (none: no breaker). */
  readonly breaker?: BreakerOptions;
  /** Every provider request goes through this fetch (the egress policy). */
  readonly fetch: Fetch;
  /** The egress Agent behind `fetch`: upstream MCP clients use its pools directly. */
  readonly dispatcher: Dispatcher;
  readonly sessionTtlSeconds: number;
  readonly metrics: Metrics;
  /** Replica heartbeats: a survivor ends what a dead replica left upstream. */
  readonly liveness?: ReplicaLiveness;
  /** Where per-user credentials of an `auth.type` come from (app.ts); none: such providers cannot serve. */
  readonly userTokens?: (authType: string) => UserTokenSource | undefined;
  /** Bounds on `openapi` providers' documents (PORTICO_OPENAPI_MAX_*). */
  readonly openapiLimits?: DocumentLimits;
  /** Where `openapi` providers' fetched documents are kept. */
  readonly openapiDocuments?: OpenApiDocuments;
  /** Sees a pinned provider's tool definition that no approval covers, once per replica (audit, metrics). */
  readonly onPinNotice?: (tenant: string, notice: Notice) => void;
  /** How this replica starts `stdio` providers' children: its own bootstrap file's launches only. */
  readonly stdioLaunches?: StdioLaunches;
}

/** How often a user's own upstream of a per-user `mcp` provider is checked. */
const USER_HEALTH_INTERVAL_MS = 60_000;

export function providerFactory(deps: FactoryDeps) {
  // Provider requests carry secrets bound to their destination: no redirect takes them elsewhere.
  const fetch = sameOriginRedirects(deps.fetch);
  const build = (tenant: TenantConfig, index: number): Provider => {
    const cfg = tenant.providers[index]!;
    const onUpstreamCall: UpstreamObserver = (outcome, seconds) =>
      deps.metrics.upstreamCall(tenant.id, cfg.id, outcome, seconds);
    const breaker = breakerFactory(deps, tenant.id, cfg.id);
    switch (cfg.kind) {
      case "static":
        return new StaticProvider(cfg);
      case "http": {
        const source = perUserAuth(cfg) ? deps.userTokens?.(cfg.auth!.type) : undefined;
        if (!source) return new HttpProvider(cfg, { fetch, onUpstreamCall, breaker });
        return new PerUserProvider(cfg, {
          tenantId: tenant.id,
          source,
          build: (credentials) => new HttpProvider(cfg, { fetch, onUpstreamCall, breaker, credentials }),
          outlet: deps.outlet,
          log: deps.log,
          store: deps.store,
          keys: deps.keys,
        });
      }
      case "openapi": {
        const source = perUserAuth(cfg) ? deps.userTokens?.(cfg.auth!.type) : undefined;
        const copies = deps.openapiDocuments && { store: deps.openapiDocuments.copies, tenant: tenant.id };
        const options = {
          fetch,
          onUpstreamCall,
          breaker,
          limits: deps.openapiLimits,
          ...(copies && { copies }),
        };
        if (!source) return new OpenApiProvider(cfg, options);
        return new PerUserProvider(cfg, {
          tenantId: tenant.id,
          source,
          build: (credentials) => new OpenApiProvider(cfg, { ...options, credentials }),
          outlet: deps.outlet,
          log: deps.log,
          store: deps.store,
          keys: deps.keys,
        });
      }
      case "mcp": {
        const source = perUserAuth(cfg) ? deps.userTokens?.(cfg.auth!.type) : undefined;
        const mcpDeps: McpProviderDeps = {
          tenantId: tenant.id,
          store: deps.store,
          keys: deps.keys,
          log: deps.log,
          outlet: deps.outlet,
          timeoutMs: deps.upstreamTimeoutMs,
          healthIntervalMs: deps.upstreamHealthIntervalMs,
          fetch,
          dispatcher: deps.dispatcher,
          sessionTtlSeconds: deps.sessionTtlSeconds,
          onUpstreamCall,
          breaker,
          liveness: deps.liveness,
          ...(cfg.transport === "stdio" && { stdio: stdioDeps(deps, tenant.id, cfg.id) }),
        };
        if (!source) return new McpProvider(cfg, mcpDeps);
        return new PerUserProvider(cfg, {
          tenantId: tenant.id,
          source,
          // Each user's upstream is checked less often: there may be many of them.
          build: (credentials) =>
            new McpProvider(cfg, {
              ...mcpDeps,
              credentials,
              healthIntervalMs: Math.max(mcpDeps.healthIntervalMs ?? 0, USER_HEALTH_INTERVAL_MS),
            }),
          outlet: deps.outlet,
          log: deps.log,
          store: deps.store,
          keys: deps.keys,
        });
      }
    }
  };
  return (tenant: TenantConfig, index: number): Provider => {
    const cfg = tenant.providers[index]!;
    // Marks inside the pins: a pinned definition is the upstream's, whatever an admin marks.
    const marks = cfg.kind === "static" ? undefined : taskMarksOf(cfg);
    const built = build(tenant, index);
    const provider = marks ? new TaskMarkedProvider(built, marks) : built;
    const mode = pinningOf(tenant, cfg);
    if (mode === "off") return provider;
    const notice = (n: Notice) => deps.onPinNotice?.(tenant.id, n);
    return new PinnedProvider(provider, new PinBook(mode, tenant.id, cfg.id, deps.store, deps.keys, notice));
  };
}

/** A stdio provider's launch from this replica's bootstrap file, its children counted in the metrics. */
function stdioDeps(deps: FactoryDeps, tenant: string, provider: string) {
  return {
    launch: deps.stdioLaunches?.get(launchKey(tenant, provider)),
    events: {
      started: () => deps.metrics.stdioChildStarted(tenant, provider),
      exited: () => deps.metrics.stdioChildExited(tenant, provider),
    },
  };
}

/** One breaker per provider and replica: each state change logged once, each refused call counted. */
function breakerFactory(deps: FactoryDeps, tenant: string, provider: string): BreakerFactory | undefined {
  const options = deps.breaker;
  if (!options || options.failures === 0) return undefined;
  const changed = (state: BreakerState, status: BreakerStatus) => {
    const fields = { tenant, provider, breaker: status };
    if (state === "open") deps.log.warn(fields, "upstream circuit breaker opened: calls fail fast");
    else if (state === "half-open") deps.log.info(fields, "upstream circuit breaker half-open: probing");
    else deps.log.info(fields, "upstream circuit breaker closed");
  };
  const fastFailed = () => deps.metrics.upstreamFastFailed(tenant, provider);
  return (probe) => new CircuitBreaker(provider, options, { changed, fastFailed, probe });
}

export type { DocumentLimits };

/**
 * What the admin API does with `openapi` providers' documents (docs/openapi.md): checks one
 * before a save — fetching a `documentUrl`'s through the egress policy and keeping the copy every
 * replica will serve — fetches it again for a refresh, and forgets it with its provider.
 */
export class OpenApiDocuments {
  readonly copies: DocumentCopies;
  /** The egress-policy fetch, redirects kept within the origin. */
  readonly #fetch: Fetch;

  constructor(
    deps: Pick<FactoryDeps, "store" | "keys" | "fetch">,
    private readonly limits?: DocumentLimits,
  ) {
    this.#fetch = sameOriginRedirects(deps.fetch);
    this.copies = new DocumentCopies(deps.store, deps.keys, this.#fetch, limits?.maxBytes);
  }

  /**
   * What a save of `config` must fix, as field errors: a document that cannot be served (at
   * `/document` or `/documentUrl`), credentials that name no scheme of it or lack a member. A
   * fetched document's copy is kept, its credentials bound to the servers it names unless the
   * save kept a stored secret ("keep": they stay bound where they were).
   */
  async problems(
    tenant: string,
    config: OpenApiProviderConfig,
    binding: Binding = "bind",
  ): Promise<{ problems: Array<{ pointer: string; detail: string }>; undo: () => Promise<void> }> {
    let schemes: Awaited<ReturnType<typeof compileDocument>>["schemes"];
    const undo = await this.copies.undoer(tenant, config.id);
    try {
      if (config.documentUrl === undefined) ({ schemes } = await compileDocument(config, this.#sources()));
      else
        await this.copies.fetchAndKeep(
          tenant,
          config.id,
          config.documentUrl,
          async (text) => {
            const compiled = await compileDocument(config, this.#sources({ text }));
            schemes = compiled.schemes;
            return compiled.servers;
          },
          binding,
        );
    } catch (err) {
      if (!(err instanceof DocumentError)) throw err;
      const pointer = config.documentUrl === undefined ? "/document" : "/documentUrl";
      return { problems: [{ pointer, detail: `The document ${err.message}` }], undo };
    }
    return { problems: credentialProblems(schemes!, config.credentials), undo };
  }

  /**
   * Fetches a `documentUrl` again and keeps the copy (a refresh), its credentials bound where
   * they were: what went wrong, or the operations it disables.
   */
  async refetch(
    tenant: string,
    config: OpenApiProviderConfig,
  ): Promise<{ problem?: string; disabled: readonly string[] }> {
    if (config.documentUrl === undefined) return { disabled: [] };
    try {
      // Compiled once (its external $refs fetched once): the binding kept decides what is off.
      let compiled: Awaited<ReturnType<typeof compileDocument>> | undefined;
      const copy = await this.copies.fetchAndKeep(
        tenant,
        config.id,
        config.documentUrl,
        async (text) => (compiled = await compileDocument(config, this.#sources({ text }))).servers,
        "keep",
      );
      return { disabled: unbound(config, compiled!.tools, copy.bound) };
    } catch (err) {
      if (err instanceof DocumentError) return { problem: err.message, disabled: [] };
      throw err;
    }
  }

  /** What a document is compiled from: the caps, its copy, the fetch its external `$ref`s take. */
  #sources(copy?: Pick<Copy, "text" | "bound">) {
    return { limits: this.limits, ...(copy && { copy }), fetch: this.#fetch };
  }

  forget(tenant: string, provider: string): Promise<void> {
    return this.copies.forget(tenant, provider);
  }
}
