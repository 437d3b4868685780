// Session-era sessions (basic/transports "Session Management"): records in the store under a
// sliding idle TTL, bound to their tenant (the key) and principal. A session id is never a credential.
import { encodeCapabilities, profileOfBits } from "./capability-bits.js";
import { deserialize, serialize, type Session } from "./session-record.js";
import type { Keys } from "../store/keys.js";
import type { Store, Unsubscribe } from "../store/store.js";
import { SessionCache } from "./session-cache.js";
import { randomId } from "../crypto/secrets.js";
import { fail } from "../protocol/errors.js";

/** What initialize tells of the client. */
export type ClientFields = Pick<Session, "protocolVersion" | "clientCapabilities" | "clientName">;

/** Who opens a session, and how many live sessions they may hold in the tenant (0: no cap). */
export interface SessionOwner {
  readonly subject: string;
  readonly max: number;
}

/** What the admin API shows of a live session. */
export interface SessionInfo {
  readonly session: Session;
  /** Seconds before it expires unless used again. */
  readonly ttlSeconds: number;
}

/** A GET stream's place among its session's streams, held while it is open. */
export interface StreamLease {
  /** Pushes the lease's end one idle TTL further (the stream is still open). */
  renew(): void;
  /** Gives the place back (the stream closed). */
  release(): void;
}

/** Every this many sessions a replica creates for a tenant, it prunes the tenant's index. */
const PRUNE_EVERY = 100;
/** Index entries checked per prune: more than PRUNE_EVERY, so pruning outpaces creation. */
const PRUNE_BATCH = 200;

const SESSION_ID = /^[A-Za-z0-9_-]{16,64}$/;

export class SessionStore {
  readonly #created = new Map<string, number>();
  /** Owners (session caps) whose sessions were used since the last renewal, by tenant. */
  readonly #seenOwners = new Map<string, Set<string>>();
  #renewTimer: NodeJS.Timeout | undefined;
  readonly #cache: SessionCache;
  /** Set once this replica hears of sessions updated or deleted elsewhere; the cache waits for it. */
  #listening: Promise<Unsubscribe | undefined> | undefined;
  #live = false;
  /** Bumped by every update or deletion heard of: a read that began before one is not cached. */
  #generation = 0;

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    readonly ttlSeconds: number,
  ) {
    this.#cache = new SessionCache(ttlSeconds);
  }

  /**
   * Creates a session with a fresh 128-bit id; past the owner's cap, throws
   * PORTICO_ERR_MCP_TOO_MANY_SESSIONS and creates nothing. `ttlSeconds` replaces the idle TTL
   * for a session whose stream keeps it alive (session/legacy-sse.ts).
   */
  async create(
    init: Omit<Session, "id" | "logLevel" | "createdAt" | "owner" | "profile">,
    owner?: SessionOwner,
    ttlSeconds = this.ttlSeconds,
  ): Promise<Session> {
    const session: Session = {
      ...init,
      profile: profileOfBits(encodeCapabilities(init.clientCapabilities)),
      id: randomId(16),
      logLevel: undefined,
      createdAt: Math.floor(Date.now() / 1000),
      owner: owner && owner.max > 0 ? owner.subject : "",
    };
    if (owner && owner.max > 0) await this.#claim(init.tenantId, session.id, owner);
    const [created] = await Promise.all([
      this.store.set(this.keys.session(init.tenantId, session.id), serialize(session), {
        ttlSeconds,
        onlyIfAbsent: true,
      }),
      this.store.sortedAdd(this.keys.sessionIndex(init.tenantId), session.id, this.#expiry(this.ttlSeconds)),
    ]);
    if (!created) throw new Error("session id collision"); // 2^-128: a broken RNG, not bad luck
    this.#countCreated(init.tenantId);
    return session;
  }

  /**
   * Takes a place among the owner's sessions, agreed by every replica: add, then count; over the
   * cap, the place is given back. Two replicas racing for the last place may both give it back
   * (never both keep it). Entries whose idle expiry passed are checked against the session first.
   */
  async #claim(tenantId: string, id: string, owner: SessionOwner): Promise<void> {
    const key = this.keys.sessionOwner(tenantId, owner.subject);
    await this.#pruneDue(tenantId, key, owner.max + 1);
    const [, , count] = await Promise.all([
      this.store.sortedAdd(key, id, this.#expiry(this.ttlSeconds)),
      this.store.expire(key, this.ttlSeconds),
      this.store.sortedCount(key),
    ]);
    if (count <= owner.max) return;
    await this.store.sortedRemove(key, id);
    throw fail(
      "PORTICO_ERR_MCP_TOO_MANY_SESSIONS",
      `Too Many Requests: ${owner.subject.startsWith("ip:") ? "this address" : "this user"} already holds ${owner.max} sessions on this tenant; end one (DELETE) or wait for one to expire`,
      { retryAfterSeconds: 60 },
    );
  }

  /**
   * Takes a place for a GET stream among the session's open streams, on every replica; past
   * `max`, throws PORTICO_ERR_MCP_TOO_MANY_STREAMS. A place is a stream id: a connection taking
   * over a stream another carried (a reconnect) keeps that stream's place. A place left by a
   * replica that died ends with its lease (one idle TTL, renewed while the stream is open).
   */
  async claimStream(tenantId: string, sid: string, streamId: string, max: number): Promise<StreamLease> {
    const key = this.keys.sessionStreams(tenantId, sid);
    const [lapsed, all] = await Promise.all([
      this.store.sortedUpTo(key, Date.now(), max + 16),
      this.store.sortedUpTo(key, Infinity, max + 16),
    ]);
    await Promise.all(lapsed.map((m) => this.store.sortedRemove(key, m)));
    const carried = all.includes(streamId) && !lapsed.includes(streamId);
    const renew = () =>
      Promise.all([
        this.store.sortedAdd(key, streamId, this.#expiry(this.ttlSeconds)),
        this.store.expire(key, this.ttlSeconds),
      ]);
    const release = () => void this.store.sortedRemove(key, streamId).catch(() => undefined);
    const lease = { renew: () => void renew().catch(() => undefined), release };
    if (carried) return (await renew(), lease);
    // Added, then counted: two replicas racing for the last place may both give it back.
    const [, count] = await Promise.all([renew(), this.store.sortedCount(key)]);
    if (count <= max) return lease;
    release();
    throw fail(
      "PORTICO_ERR_MCP_TOO_MANY_STREAMS",
      `Too Many Requests: this session already has ${max} GET streams open; close one first`,
      { retryAfterSeconds: 1 },
    );
  }

  /** Reads a live session without sliding its TTL (admin API). */
  async read(tenantId: string, id: string): Promise<SessionInfo | undefined> {
    if (!SESSION_ID.test(id)) return undefined;
    const key = this.keys.session(tenantId, id);
    const [raw, ttlSeconds] = await Promise.all([this.store.get(key), this.store.ttl(key)]);
    const session = raw === null ? undefined : deserialize(tenantId, id, raw);
    // TTL rounds to whole seconds: 0 is a session in its last half second, -2 one that is gone.
    return session && ttlSeconds >= 0 ? { session, ttlSeconds } : undefined;
  }

  /** Every live session of a tenant; ids of expired ones are dropped from the index on the way. */
  async list(tenantId: string): Promise<SessionInfo[]> {
    const index = this.keys.sessionIndex(tenantId);
    const ids = await this.store.sortedUpTo(index, Infinity, Infinity);
    const found = await Promise.all(ids.map((id) => this.read(tenantId, id)));
    const gone = ids.filter((_, i) => found[i] === undefined);
    await Promise.all(gone.map((id) => this.store.sortedRemove(index, id)));
    return found.filter((s): s is SessionInfo => s !== undefined);
  }

  /** Every session id a tenant may still have (the index, unpruned). */
  async ids(tenantId: string): Promise<string[]> {
    return this.store.sortedUpTo(this.keys.sessionIndex(tenantId), Infinity, Infinity);
  }

  /** How many sessions a tenant's index holds (expired ones count until the next prune). */
  async count(tenantId: string): Promise<number> {
    return this.store.sortedCount(this.keys.sessionIndex(tenantId));
  }

  /** Drops a tenant's session index (the tenant is deleted and its sessions ended). */
  async forget(tenantId: string): Promise<void> {
    await this.store.del(this.keys.sessionIndex(tenantId));
  }

  /**
   * The index scores each session by when it would expire if left idle. Requests slide the real
   * TTL without touching the index (no write on the hot path), so a prune looks only at entries
   * whose score has passed: it drops the ones that did expire and rescores the ones still alive.
   */
  async prune(tenantId: string): Promise<void> {
    await this.#pruneDue(tenantId, this.keys.sessionIndex(tenantId), PRUNE_BATCH);
  }

  /** Drops the entries of an index whose sessions expired, and rescores the ones still alive. */
  async #pruneDue(tenantId: string, index: string, batch: number): Promise<void> {
    const due = await this.store.sortedUpTo(index, Date.now(), batch);
    await Promise.all(
      due.map(async (id) => {
        const ttl = await this.store.ttl(this.keys.session(tenantId, id));
        if (ttl >= 0) await this.store.sortedAdd(index, id, this.#expiry(Math.max(ttl, 1)));
        else await this.store.sortedRemove(index, id);
      }),
    );
  }

  #expiry(ttlSeconds: number): number {
    return Date.now() + ttlSeconds * 1000;
  }

  #countCreated(tenantId: string): void {
    const n = (this.#created.get(tenantId) ?? 0) + 1;
    this.#created.set(tenantId, n % PRUNE_EVERY);
    if (n % PRUNE_EVERY === 0) void this.prune(tenantId).catch(() => undefined);
  }

  /**
   * Reads a live session of this tenant and slides its TTL, in one round trip, or none when this
   * replica read it less than a second ago (src/mcp/session-cache.ts).
   */
  async touch(tenantId: string, id: string): Promise<Session | undefined> {
    if (!SESSION_ID.test(id)) return undefined;
    const key = this.keys.session(tenantId, id);
    const now = Date.now();
    let session = this.#live ? this.#cache.get(key, now) : undefined;
    if (session === undefined) {
      this.#listening ??= this.#listen();
      const generation = this.#generation;
      const raw = await this.store.getAndTouch(key, this.ttlSeconds);
      session = raw === null ? undefined : deserialize(tenantId, id, raw);
      if (session !== undefined && this.#live && generation === this.#generation)
        this.#cache.set(key, session, now);
    }
    if (session?.owner) this.#sawOwner(tenantId, session.owner);
    return session;
  }

  /** Subscribes to the sessions changed on any replica; the cache is used only while subscribed. */
  async #listen(): Promise<Unsubscribe | undefined> {
    try {
      const unsubscribe = await this.store.subscribe(
        this.keys.sessionsChannel(),
        (key) => this.#forget(key),
        () => this.#forget(undefined), // what was published while away is unknown: forget all
      );
      this.#live = true;
      return unsubscribe;
    } catch {
      this.#listening = undefined; // the store was away: the next read tries again
      return undefined;
    }
  }

  /** Drops one session (or all) from this replica's memory. */
  #forget(key: string | undefined): void {
    this.#generation++;
    if (key === undefined) this.#cache.clear();
    else this.#cache.drop(key);
  }

  /** Tells every replica (this one at once) that a session changed or ended. */
  async #announce(key: string): Promise<void> {
    this.#forget(key);
    await this.store.publish(this.keys.sessionsChannel(), key).catch(() => undefined);
  }

  /**
   * An owner's set of sessions must outlive its sessions, whose TTL requests slide: the owners
   * seen in use are remembered here, and their sets' TTLs renewed in one batch every third of
   * the idle TTL, never on the request itself. Otherwise a set would expire under live sessions
   * and its owner could open as many again.
   */
  #sawOwner(tenantId: string, owner: string): void {
    let owners = this.#seenOwners.get(tenantId);
    if (owners === undefined) this.#seenOwners.set(tenantId, (owners = new Set()));
    owners.add(owner);
    this.#renewTimer ??= setTimeout(() => this.#renewOwners(), (this.ttlSeconds * 1000) / 3).unref();
  }

  #renewOwners(): void {
    this.#renewTimer = undefined;
    const seen = [...this.#seenOwners];
    this.#seenOwners.clear();
    for (const [tenantId, owners] of seen)
      for (const owner of owners)
        void this.store
          .expire(this.keys.sessionOwner(tenantId, owner), this.ttlSeconds)
          .catch(() => undefined);
  }

  /** Stops the renewal timer and the subscription (the app closes). */
  async close(): Promise<void> {
    clearTimeout(this.#renewTimer);
    this.#renewTimer = undefined;
    this.#live = false;
    this.#cache.clear();
    const unsubscribe = await this.#listening;
    this.#listening = undefined;
    await unsubscribe?.().catch(() => undefined);
  }

  /** Reads a live session of this tenant without sliding its TTL (its stream keeps it alive). */
  async peek(tenantId: string, id: string): Promise<Session | undefined> {
    if (!SESSION_ID.test(id)) return undefined;
    const raw = await this.store.get(this.keys.session(tenantId, id));
    return raw === null ? undefined : deserialize(tenantId, id, raw);
  }

  /**
   * Sets a live session's TTL (the replica carrying its stream renews its lease), and keeps its
   * owner's set alive as touch() does; false once the session is gone.
   */
  async renew(session: Session, ttlSeconds: number): Promise<boolean> {
    if (session.owner) this.#sawOwner(session.tenantId, session.owner);
    return this.store.expire(this.keys.session(session.tenantId, session.id), ttlSeconds);
  }

  /**
   * Records what initialize said of the client on a session opened before it (an HTTP+SSE
   * stream); throws PORTICO_ERR_MCP_SESSION_NOT_FOUND once the session is gone.
   */
  async initialize(session: Session, client: ClientFields): Promise<Session> {
    const profile = profileOfBits(encodeCapabilities(client.clientCapabilities));
    const initialized: Session = { ...session, ...client, profile };
    if (!(await this.update(initialized)))
      throw fail("PORTICO_ERR_MCP_SESSION_NOT_FOUND", "Session not found: its stream closed");
    return initialized;
  }

  /** Rewrites a live session (never resurrects a deleted one). */
  async update(session: Session): Promise<boolean> {
    const key = this.keys.session(session.tenantId, session.id);
    const live = await this.store.set(key, serialize(session), { onlyIfPresent: true, keepTtl: true });
    await this.#announce(key);
    return live;
  }

  /** Ends a session: from now on its id is unknown (404), and its owner has a place again. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const key = this.keys.session(tenantId, id);
    const raw = SESSION_ID.test(id) ? await this.store.get(key) : null;
    const owner = raw === null ? "" : (deserialize(tenantId, id, raw)?.owner ?? "");
    const [deleted] = await Promise.all([
      this.store.del(key),
      this.store.sortedRemove(this.keys.sessionIndex(tenantId), id),
      owner && this.store.sortedRemove(this.keys.sessionOwner(tenantId, owner), id),
    ]);
    await this.#announce(key);
    return deleted > 0;
  }

  /** Removes what an ended session leaves behind; its event logs expire on their own. */
  async purge(tenantId: string, id: string): Promise<void> {
    await this.store.del(
      this.keys.upstreamSessions(tenantId, id),
      this.keys.subscriptions(tenantId, id),
      this.keys.sessionStreams(tenantId, id),
    );
  }
}
