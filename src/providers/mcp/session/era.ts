// The session-era part of an `mcp` provider (docs/upstream-mcp.md "Shared and dedicated upstream
// sessions"): one catalog and shared upstream session per capability profile, an upstream session
// of its own only for a client session that needs one (a log level, subscriptions, roots), calls
// routed to the session of the client's profile, and one transparent retry when the upstream
// forgot or refused Portico's session before processing the request.
import type { FastifyBaseLogger } from "fastify";
import { fail } from "../../../protocol/errors.js";
import { mayAsk } from "../../../protocol/input-requests.js";
import { isLogLevel } from "../../../protocol/log-levels.js";
import { NO_PROFILE, type CapabilityProfile } from "../../../protocol/profile.js";
import type { Keys } from "../../../store/keys.js";
import type { ReplicaLiveness } from "../../../store/replicas.js";
import type { Store } from "../../../store/store.js";
import { Deadline } from "../../deadline.js";
import { UpstreamCatalog, type UpstreamCatalogOptions } from "./catalog.js";
import type { UpstreamTarget } from "../upstream.js";
import type { CallContext, ProviderEntries, ProviderEvents, SessionOutlet } from "../../types.js";
import type { UpstreamHttp } from "../exchange.js";
import { evictable, MAX_PROFILES, PROFILE_EVICT_IDLE_MS, profileFor } from "../profiles.js";
import { InFlight, type CancelOrphan } from "./in-flight.js";
import { SharedLeases } from "./shared-leases.js";
import { isSessionGone } from "./session-ids.js";
import { DedicatedSessions } from "./dedicated-sessions.js";
import {
  NotRouted,
  SessionUpstream,
  type CallHooks,
  type OpenSession,
  type UpstreamSession,
} from "./client.js";
import { ClientTasks } from "./client-tasks.js";
import { SessionTasks } from "./tasks.js";

export interface SessionEraDeps {
  readonly tenantId: string;
  readonly providerId: string;
  readonly store: Store;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  readonly outlet: SessionOutlet;
  readonly sessionTtlSeconds: number;
  readonly healthIntervalMs: number;
  readonly clientIdleMs: number;
  readonly sweepIntervalMs: number;
  /** Replica heartbeats: whose leases and calls a dead replica left (absent: leases only). */
  readonly liveness?: ReplicaLiveness;
  /** Catalogs of profiles unused this long are dropped (default 10 min). */
  readonly profileIdleMs?: number;
}

/** How the part reaches its upstream when that is not Streamable HTTP (a `stdio` upstream). */
export interface SessionEraOptions extends Pick<
  UpstreamCatalogOptions,
  "followEra" | "onResourceUpdated" | "declares"
> {
  /** Opens sessions (a child's stdio); absent: Streamable HTTP. */
  readonly open?: OpenSession;
  /** Opens a client session's own session, when not as `open` does (a child of its own). */
  readonly openOwn?: OpenSession;
  /** One session serves every profile (a child speaks one session): no catalog per profile. */
  readonly single?: boolean;
  /** Which client sessions get a session of their own; absent: those with a log level or roots. */
  readonly dedicatedFor?: (ctx: CallContext, profile: CapabilityProfile) => boolean;
}

const PROFILE_IDLE_MS = 10 * 60_000;
export class SessionEra {
  readonly primary: UpstreamCatalog;
  readonly #catalogs = new Map<string, UpstreamCatalog>();
  readonly #preparing = new Map<string, Promise<void>>();
  readonly #dedicated: DedicatedSessions;
  readonly #inFlight: InFlight;
  readonly #leases: SharedLeases;
  /** The client's own tasks (task-augmented sampling and elicitation) as upstreams know them. */
  readonly #clientTasks: ClientTasks;
  /** The upstream's own tasks, passed through. */
  readonly tasks: SessionTasks;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: UpstreamTarget,
    private readonly http: UpstreamHttp,
    private readonly base: Record<string, string>,
    private readonly events: ProviderEvents,
    private readonly deps: SessionEraDeps,
    private readonly options: SessionEraOptions,
  ) {
    const { store, keys, tenantId, providerId, liveness } = deps;
    const { open, followEra, onResourceUpdated, declares } = options;
    const openOwn = options.openOwn ?? open;
    this.#clientTasks = new ClientTasks({ store, keys, tenantId, providerId });
    this.#dedicated = new DedicatedSessions(http, base, {
      ...deps,
      timeoutMs: target.timeoutMs,
      open: openOwn,
      clientTaskPolls: (method, params) => this.#outsideCalls(method, params),
    });
    const cancel: CancelOrphan = (record, requestId) =>
      SessionUpstream.resume(http, base, record, this.#dedicated.handlers("")).notify(
        "notifications/cancelled",
        {
          requestId,
          reason: "the gateway replica serving the call went away",
        },
      );
    this.#inFlight = new InFlight(store, keys, tenantId, providerId, cancel, liveness);
    this.#leases = new SharedLeases(store, keys, tenantId, providerId, liveness);
    this.primary = new UpstreamCatalog(target, http, base, NO_PROFILE, events, {
      followEra,
      onResourceUpdated,
      open,
      declares,
      reportsHealth: true,
      request: this.#outsideCalls,
    });
    this.tasks = new SessionTasks(http, base, {
      providerId,
      timeoutMs: target.timeoutMs,
      relay: (ctx, method, params) =>
        ctx ? this.#relay(ctx, method, params) : this.#outsideCalls(method, params),
    });
  }

  /**
   * A request of the upstream during a call for `ctx`, to the call's client (only what it declared
   * it can be asked); polls of a client's own task reach the client that runs it (ClientTasks).
   */
  #relay(
    ctx: CallContext,
    method: string,
    params: Record<string, unknown> | undefined,
    deadline?: Deadline,
  ): Promise<Record<string, unknown>> {
    return this.#clientTasks.relay(method, params, {
      sessionId: ctx.sessionId,
      ask: (m, p) => {
        if (!ClientTasks.polls(m) && !mayAsk(m, p, ctx.clientCapabilities))
          return Promise.reject(new NotRouted());
        return deadline ? deadline.pausedDuring(ctx.request(m, p)) : ctx.request(m, p);
      },
      askSession: this.#askSession,
    });
  }

  /**
   * A request of the upstream outside any call, on a session that belongs to no client (shared
   * catalogs, task sessions): only a poll of a client's own task has a client to go to.
   */
  readonly #outsideCalls = (
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>> =>
    ClientTasks.polls(method)
      ? this.#clientTasks.relay(method, params, { sessionId: undefined, askSession: this.#askSession })
      : Promise.reject(new NotRouted());

  readonly #askSession = (sid: string, method: string, params: Record<string, unknown> | undefined) =>
    this.deps.outlet.request(this.deps.tenantId, sid, method, params);

  async start(): Promise<void> {
    await this.primary.start(this.deps.healthIntervalMs);
    void this.#leases.renew([this.primary.session?.record]).catch(() => undefined);
    this.#sweeper = setInterval(() => void this.#sweep().catch(() => undefined), this.deps.sweepIntervalMs);
    this.#sweeper.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#inFlight.close();
    await this.tasks.close();
    const shared = [this.primary, ...this.#catalogs.values()].map((c) => c.session?.record);
    await Promise.allSettled(shared.map((record) => this.#leases.release(record)));
    await Promise.allSettled([
      this.primary.close(),
      ...[...this.#catalogs.values()].map((c) => c.close()),
      this.#dedicated.close(),
    ]);
    this.#catalogs.clear();
  }

  entries(profile: CapabilityProfile | undefined): ProviderEntries {
    if (!profile || profile.key === NO_PROFILE.key) return this.primary.entries;
    const catalog = this.#catalogs.get(profile.key);
    if (!catalog) return this.primary.entries;
    catalog.lastUsed = Date.now();
    return catalog.entries;
  }

  /** True once `profile` was listed (its entries are its own, not the primary's). */
  has(profile: CapabilityProfile): boolean {
    return profile.key === NO_PROFILE.key || this.#catalogs.has(profile.key);
  }

  /** Lists the upstream under `profile` the first time it is asked for (single flight); never throws. */
  prepare(profile: CapabilityProfile): Promise<void> {
    if (profile.key === NO_PROFILE.key || this.#catalogs.has(profile.key) || this.options.single)
      return Promise.resolve();
    let pending = this.#preparing.get(profile.key);
    if (!pending) {
      if (!this.#roomForProfile()) return Promise.resolve();
      const { open } = this.options;
      const catalog = new UpstreamCatalog(this.target, this.http, this.base, profile, this.events, {
        open,
        request: this.#outsideCalls,
      });
      pending = catalog.connect().then(() => {
        this.#catalogs.set(profile.key, catalog);
        this.#preparing.delete(profile.key);
      });
      this.#preparing.set(profile.key, pending);
    }
    return pending;
  }

  /** One request for a client on the upstream session it needs, retried once on a new one (healing). */
  async call(
    ctx: CallContext,
    method: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    for (let attempt = 0; ; attempt++) {
      const session = await this.#sessionFor(ctx);
      const deadline = new Deadline(this.target.timeoutMs, ctx.cancellation ?? ctx.signal);
      const inFlight = this.#inFlight.begin(session.record);
      // Once the upstream sent anything for the call, it was processing it: never retried.
      let started = false;
      const hooks: CallHooks = {
        sent: (id) => (inFlight.id = id),
        progress: (p) => {
          started = true;
          deadline.restart();
          if (typeof p.progress === "number")
            ctx.progress(
              p.progress,
              typeof p.total === "number" ? p.total : undefined,
              typeof p.message === "string" ? p.message : undefined,
            );
        },
        log: (p) => {
          started = true;
          if (isLogLevel(p.level))
            ctx.log(p.level, p.data, typeof p.logger === "string" ? p.logger : undefined);
        },
        // The upstream waits on the client meanwhile: its call's deadline does not run.
        request: (m, p) => {
          started = true;
          return this.#relay(ctx, m, p, deadline);
        },
      };
      try {
        return await session.request(method, params, deadline, hooks);
      } catch (err) {
        if (deadline.timedOut)
          throw fail("PORTICO_ERR_PROVIDER_TIMEOUT", deadline.message(this.deps.providerId));
        if (attempt === 0 && !started && isSessionGone(err)) {
          await this.#healed(ctx, session);
          continue;
        }
        throw err;
      } finally {
        deadline.dispose();
        this.#inFlight.end(inFlight);
      }
    }
  }

  /** A transport failure of a call on a shared session: the provider's health says so. */
  failed(reason: string): void {
    this.primary.failed(reason);
  }

  async subscribe(uri: string, ctx: CallContext, on: boolean): Promise<void> {
    const sid = ctx.sessionId;
    if (sid === undefined) return;
    const session = await this.#dedicated.own(sid, ctx);
    await this.#requestOnce(sid, ctx, session, on ? "resources/subscribe" : "resources/unsubscribe", { uri });
  }

  /** To the session's own upstream session, else opened by its next call (which carries the level). */
  async setLogLevel(sid: string, level: string): Promise<void> {
    const session = await this.#dedicated.existing(sid);
    await session
      ?.request("logging/setLevel", { level }, AbortSignal.timeout(this.target.timeoutMs))
      .catch(() => undefined);
  }

  async rootsChanged(sid: string): Promise<void> {
    const session = await this.#dedicated.existing(sid);
    await session?.notify("notifications/roots/list_changed").catch(() => undefined);
  }

  async endSession(sid: string): Promise<void> {
    await this.#dedicated.end(sid);
  }

  async #requestOnce(
    sid: string,
    ctx: CallContext,
    session: UpstreamSession,
    method: string,
    params: Record<string, unknown>,
  ): Promise<void> {
    try {
      await session.request(method, params, AbortSignal.timeout(this.target.timeoutMs));
    } catch (err) {
      if (!isSessionGone(err)) throw err;
      await this.#dedicated.forget(sid, session);
      await (
        await this.#dedicated.own(sid, ctx)
      ).request(method, params, AbortSignal.timeout(this.target.timeoutMs));
    }
  }

  /** Client sessions with a log level, or roots the upstream may ask for any time, get their own. */
  async #sessionFor(ctx: CallContext): Promise<UpstreamSession> {
    const sid = ctx.sessionId;
    const profile = profileFor(ctx);
    const dedicated = this.options.dedicatedFor
      ? this.options.dedicatedFor(ctx, profile)
      : ctx.logLevel !== undefined || profile.capabilities.roots;
    if (sid !== undefined && (this.#dedicated.has(sid) || dedicated)) return this.#dedicated.own(sid, ctx);
    const catalog = profile.key === NO_PROFILE.key ? this.primary : await this.#catalog(profile);
    const session = catalog.session;
    if (session) return session;
    await catalog.connect();
    if (!catalog.session) throw new Error(catalog.reason ?? "not connected");
    return catalog.session;
  }

  /** The profile's catalog; the provider's own when no slot was free for it (MAX_PROFILES). */
  async #catalog(profile: CapabilityProfile): Promise<UpstreamCatalog> {
    if (!this.#catalogs.has(profile.key)) await this.prepare(profile);
    const catalog = this.#catalogs.get(profile.key) ?? this.primary;
    catalog.lastUsed = Date.now();
    return catalog;
  }

  /** True when a new profile may be listed: under MAX_PROFILES, or after dropping an idle one. */
  #roomForProfile(): boolean {
    if (this.#catalogs.size + this.#preparing.size < MAX_PROFILES) return true;
    const key = evictable(this.#catalogs, Date.now() - PROFILE_EVICT_IDLE_MS);
    const catalog = key === undefined ? undefined : this.#catalogs.get(key);
    if (!catalog) return false;
    this.#catalogs.delete(key!);
    void this.#leases.release(catalog.session?.record).catch(() => undefined);
    void catalog.close();
    return true;
  }

  async #healed(ctx: CallContext, failed: UpstreamSession): Promise<void> {
    const sid = ctx.sessionId;
    if (sid !== undefined && (await this.#dedicated.holds(sid, failed)))
      return this.#dedicated.forget(sid, failed);
    const profile = profileFor(ctx);
    const catalog = profile.key === NO_PROFILE.key ? this.primary : await this.#catalog(profile);
    await catalog.heal(failed);
  }

  /**
   * Cancels upstream the calls a dead replica left running, keeps the stored records of dedicated
   * sessions alive while their client session lives, lets go of those of ended sessions and of idle
   * ones without subscriptions (the upstream session stays, resumed on the next call), and drops
   * catalogs of profiles nobody asked for in a while.
   */
  async #sweep(): Promise<void> {
    await this.#leases.renew([this.primary, ...this.#catalogs.values()].map((c) => c.session?.record));
    await this.#leases.orphans((record) =>
      SessionUpstream.resume(this.http, this.base, record, this.#dedicated.handlers("")).terminate(),
    );
    await this.#inFlight.orphans();
    const idleProfile = Date.now() - (this.deps.profileIdleMs ?? PROFILE_IDLE_MS);
    for (const [key, catalog] of this.#catalogs)
      if (catalog.lastUsed < idleProfile) {
        this.#catalogs.delete(key);
        void catalog.close();
      }
    await this.#dedicated.sweep();
  }
}
