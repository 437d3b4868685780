// Dedicated upstream sessions (docs/upstream-mcp.md "Shared and dedicated upstream sessions"): the
// upstream session of a client session that needs its own (a log level, subscriptions, roots),
// opened on first use on a replica or resumed from the record another replica stored (one replica
// opens it while the others wait for its record), forgotten once when the upstream forgot it, and
// let go of when the client session ends or idles.
import type { CallContext, SessionOutlet } from "../../types.js";
import type { Keys } from "../../../store/keys.js";
import type { Store } from "../../../store/store.js";
import { mayAsk } from "../../../protocol/input-requests.js";
import { isRecord } from "../../../protocol/jsonrpc.js";
import { parseSessionRecord, sessionRecord } from "../upstream.js";
import { withinResource } from "../../catalog.js";
import { profileFor } from "../profiles.js";
import type { UpstreamHttp } from "../exchange.js";
import {
  NotRouted,
  SessionUpstream,
  type OpenSession,
  type SessionHandlers,
  type UpstreamSession,
} from "./client.js";
import { ClientTasks } from "./client-tasks.js";

export interface DedicatedSessionsDeps {
  readonly tenantId: string;
  readonly providerId: string;
  readonly store: Store;
  readonly keys: Keys;
  readonly outlet: SessionOutlet;
  readonly sessionTtlSeconds: number;
  readonly clientIdleMs: number;
  readonly timeoutMs: number;
  /** How sessions are opened when not over Streamable HTTP (a `stdio` upstream's child per client). */
  readonly open?: OpenSession;
  /** Polls of a client's own task (ClientTasks), which reach the client that runs it. */
  readonly clientTaskPolls?: SessionHandlers["request"];
}

interface Dedicated {
  readonly pending: Promise<UpstreamSession>;
  lastUsed: number;
  /** Its session was found gone and is being dropped (once, however many calls found it). */
  forgetting?: Promise<void>;
}

/** The longest a dedicated session's opening may take, waiting for another replica's included. */
const OPEN_MAX_MS = 10_000;
/** How often a replica waiting for another's opening looks for its record. */
const OPEN_POLL_MS = 50;
/** The opening's lock outlives a replica that died opening by this much at most. */
const OPENING = { onlyIfAbsent: true, ttlSeconds: OPEN_MAX_MS / 1000 + 5 } as const;

/** Resolves after `ms`, or rejects with the signal's reason once it aborted. */
async function waitOrThrow(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  await new Promise((resolve) => setTimeout(resolve, ms));
  signal.throwIfAborted();
}

export class DedicatedSessions {
  readonly #sessions = new Map<string, Dedicated>();

  constructor(
    private readonly http: UpstreamHttp,
    private readonly base: Record<string, string>,
    private readonly deps: DedicatedSessionsDeps,
  ) {}

  /** True when the client session has its own upstream session on this replica. */
  has(sid: string): boolean {
    return this.#sessions.has(sid);
  }

  /** True when `session` is the client session's own upstream session here. */
  async holds(sid: string, session: UpstreamSession): Promise<boolean> {
    const entry = this.#sessions.get(sid);
    return entry !== undefined && (await entry.pending.catch(() => undefined)) === session;
  }

  /** The client session's own upstream session, opened (or resumed from the store) on first use here. */
  own(sid: string, ctx: CallContext | undefined): Promise<UpstreamSession> {
    let entry = this.#sessions.get(sid);
    if (!entry) {
      const pending = this.#open(sid, ctx);
      entry = { pending, lastUsed: Date.now() };
      this.#sessions.set(sid, entry);
      pending.catch(() => this.#sessions.get(sid)?.pending === pending && this.#sessions.delete(sid));
    }
    entry.lastUsed = Date.now();
    return entry.pending;
  }

  /** The session's own upstream session if it has one, here or stored by another replica (not opened). */
  async existing(sid: string): Promise<UpstreamSession | undefined> {
    const local = await this.#sessions.get(sid)?.pending.catch(() => undefined);
    if (local) return local;
    const record = parseSessionRecord(await this.deps.store.hashGet(this.#key(sid), this.deps.providerId));
    return record ? SessionUpstream.resume(this.http, this.base, record, this.handlers(sid)) : undefined;
  }

  /** The client session ended: its upstream session ends too, wherever it was opened. */
  async end(sid: string): Promise<void> {
    const session = await this.existing(sid);
    this.#sessions.delete(sid);
    await session?.terminate().catch(() => undefined);
    await this.deps.store.hashDel(this.#key(sid), this.deps.providerId).catch(() => undefined);
  }

  /** Drops a dedicated session the upstream forgot (once: calls that found it gone together share it). */
  async forget(sid: string, session: UpstreamSession): Promise<void> {
    const entry = this.#sessions.get(sid);
    if (!entry || (await entry.pending.catch(() => undefined)) !== session) return;
    // The stored record goes first: until then, calls here keep finding this entry (and wait for
    // this), rather than resuming the gone session from the store.
    entry.forgetting ??= this.#dropStored(sid, session).finally(() => {
      if (this.#sessions.get(sid) === entry) this.#sessions.delete(sid);
      session.close();
    });
    await entry.forgetting;
  }

  /** What a dedicated session gets outside a call goes to the client, asked only what `caps` declared. */
  handlers(sid: string, caps?: CallContext["clientCapabilities"]): SessionHandlers {
    const { outlet, tenantId } = this.deps;
    return {
      notification: (method, params) => {
        if (method === "notifications/message")
          void outlet.notify(tenantId, sid, method, params).catch(() => undefined);
        // Only for a URI the session subscribed to here (or one under it), as the shared path does.
        else if (method === "notifications/resources/updated" && typeof params.uri === "string") {
          const { uri, _meta } = params;
          const update = { uri, ...(isRecord(_meta) && { _meta }) }; // what the schema has, no more
          void this.#subscribed(sid, uri)
            .then((yes) => (yes ? outlet.notify(tenantId, sid, method, update) : undefined))
            .catch(() => undefined);
        }
      },
      request: (method, params) =>
        mayAsk(method, params, caps)
          ? outlet.request(tenantId, sid, method, params)
          : ClientTasks.polls(method) && this.deps.clientTaskPolls
            ? this.deps.clientTaskPolls(method, params)
            : Promise.reject(new NotRouted()),
      gone: (session) => void this.forget(sid, session).catch(() => undefined),
    };
  }

  /**
   * Keeps the stored records of dedicated sessions alive while their client session lives, and
   * lets go of those of ended sessions and of idle ones without subscriptions (the upstream
   * session stays, resumed on the next call).
   */
  async sweep(): Promise<void> {
    const entries = [...this.#sessions];
    for (let i = 0; i < entries.length; i += 200)
      await Promise.all(entries.slice(i, i + 200).map(([sid, entry]) => this.#sweepOne(sid, entry)));
  }

  /** Lets go of every session here (the upstream sessions stay). */
  async close(): Promise<void> {
    const entries = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(entries.map(async (d) => (await d.pending).close()));
  }

  async #open(sid: string, ctx: CallContext | undefined): Promise<UpstreamSession> {
    const { store, keys, tenantId, providerId, timeoutMs } = this.deps;
    const handlers = this.handlers(sid, ctx?.clientCapabilities);
    const signal = AbortSignal.timeout(Math.min(timeoutMs, OPEN_MAX_MS));
    // One replica opens it, the others resume what it stores: replicas whose calls found the
    // upstream session gone together would each open one else, and the client session would have
    // two upstream sessions (two subscriptions, each update twice). A session that is no record
    // (a stdio child's) is each replica's own.
    const lock = keys.upstreamSessionOpening(tenantId, sid, providerId);
    for (let locked = false; !locked;) {
      const stored = parseSessionRecord(await store.hashGet(this.#key(sid), providerId));
      // A resumed session's GET stream stays with the replica that opened it (an upstream allows one).
      if (stored) return SessionUpstream.resume(this.http, this.base, stored, handlers);
      locked = this.deps.open !== undefined || (await store.set(lock, "1", OPENING));
      if (!locked) await waitOrThrow(OPEN_POLL_MS, signal);
    }
    try {
      return await this.#initialize(sid, ctx, handlers, signal);
    } finally {
      if (!this.deps.open) await store.del(lock).catch(() => undefined);
    }
  }

  async #initialize(
    sid: string,
    ctx: CallContext | undefined,
    handlers: SessionHandlers,
    signal: AbortSignal,
  ): Promise<UpstreamSession> {
    const { store, providerId, sessionTtlSeconds } = this.deps;
    const capabilities = ctx ? profileFor(ctx).capabilities : {};
    const session = this.deps.open
      ? await this.deps.open(capabilities, handlers, signal)
      : await SessionUpstream.initialize(this.http, this.base, capabilities, handlers, signal);
    // At once, as a direct client does: an upstream may ask the client something (roots, most
    // often) as soon as it is initialized, and one without an event log loses a request sent
    // before its GET stream is open.
    session.openStream();
    try {
      const record = sessionRecord(session.record);
      if (record) await store.hashSet(this.#key(sid), providerId, record, sessionTtlSeconds);
      if (ctx?.logLevel && session.capabilities?.logging)
        await session.request("logging/setLevel", { level: ctx.logLevel }, undefined).catch(() => undefined);
      await this.#restoreSubscriptions(session, sid);
    } catch (err) {
      // Nobody will use this session (the next call opens another): its stream must not live on.
      session.close();
      throw err;
    }
    return session;
  }

  /** Whether session `sid` subscribed to `uri` (or a resource it is under) on this provider. */
  async #subscribed(sid: string, uri: string): Promise<boolean> {
    const { store, keys, tenantId, providerId } = this.deps;
    const prefix = `${providerId} `;
    const members = await store.setMembers(keys.subscriptions(tenantId, sid));
    return members.some((m) => m.startsWith(prefix) && withinResource(m.slice(prefix.length), uri));
  }

  /** After a re-established upstream session: subscribe again to what the session had. */
  async #restoreSubscriptions(session: UpstreamSession, sid: string) {
    const members = await this.deps.store.setMembers(this.deps.keys.subscriptions(this.deps.tenantId, sid));
    const prefix = `${this.deps.providerId} `;
    const mine = members.filter((m) => m.startsWith(prefix)).map((m) => m.slice(prefix.length));
    await Promise.allSettled(mine.map((uri) => session.request("resources/subscribe", { uri }, undefined)));
  }

  /**
   * Deletes the stored record of a gone session, unless another replica has stored the session
   * that replaced it already: that one stays, and the next call here resumes it.
   */
  async #dropStored(sid: string, session: UpstreamSession): Promise<void> {
    const { store, providerId } = this.deps;
    const key = this.#key(sid);
    if ((await store.hashGet(key, providerId)) === sessionRecord(session.record))
      await store.hashDel(key, providerId);
  }

  async #sweepOne(sid: string, entry: Dedicated): Promise<void> {
    const { store, keys, tenantId, sessionTtlSeconds, providerId } = this.deps;
    const session = await entry.pending.catch(() => undefined);
    if ((await store.ttl(keys.session(tenantId, sid))) > 0) {
      await store.expire(this.#key(sid), sessionTtlSeconds);
      await store.expire(keys.subscriptions(tenantId, sid), sessionTtlSeconds);
      if (!session || entry.lastUsed > Date.now() - this.deps.clientIdleMs) return;
      const members = await store.setMembers(keys.subscriptions(tenantId, sid));
      if (members.some((m) => m.startsWith(`${providerId} `))) return;
    }
    if (this.#sessions.get(sid) === entry) this.#sessions.delete(sid);
    session?.close();
  }

  #key(sid: string): string {
    return this.deps.keys.upstreamSessions(this.deps.tenantId, sid);
  }
}
