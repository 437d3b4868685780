// SSE streams of session-era sessions, shared by every replica (basic/transports "Resumability
// and Redelivery"): each event is appended to its stream's bounded log in the store, then written
// to the connection that carries the stream, on this replica or, through the session channel, on
// another. Event ids are `<streamId>.<entryId>`: unique per session and naming their stream, so
// Last-Event-ID replays that stream only.
import type { RequestId } from "../../protocol/jsonrpc.js";
import type { Keys } from "../../store/keys.js";
import type { Store, Unsubscribe } from "../../store/store.js";
import { randomId } from "../../crypto/secrets.js";
import { compareEntryIds } from "./event-ids.js";
import { MAX_BACKLOG_BYTES } from "../sse-events.js";

/** The id of a session's standalone (GET) stream; request streams get random ids. */
export const STANDALONE = "g";

/** A live SSE connection. */
export interface SseSink {
  write(eventId: string, data: string): void;
  /** Bytes written but not yet taken by the client. */
  readonly backlog: number;
  /** Drops the connection at once, unsent bytes included (a client too far behind). */
  destroy(): void;
  /**
   * Ends the connection; with retryMs, first tells the client when to reconnect (SSE `retry:`),
   * and with `eventId` where from (`id:`).
   */
  close(retryMs?: number, eventId?: string): void;
}

/** The entry id of a message delivered without an event log. */
const UNLOGGED = "0-0";

/** Messages on a session's channel. */
export type BusMessage =
  | { k: "ev"; s: string; e: string; d: string }
  | { k: "res"; d: string }
  | { k: "cancel"; id: string | number }
  | { k: "own"; s: string; by: string }
  | { k: "end" };

export interface StreamHubOptions {
  readonly store: Store;
  readonly keys: Keys;
  readonly ttlSeconds: number;
  readonly maxEvents: number;
  /** Bus messages other than stream events (responses, cancellations, roots changes). */
  readonly onBusMessage: (tenant: string, sid: string, message: BusMessage) => void;
  /** The subscription to a session's channel was lost and taken again: bus messages may be gone. */
  readonly onChannelLost?: (tenant: string, sid: string) => void;
}

interface Attached {
  readonly sink: SseSink;
  /** Events that arrived while the log was replayed, written once it is done. */
  buffer: Array<[entryId: string, data: string]> | undefined;
  readonly token: string;
  /** When the client was first seen more than MAX_BACKLOG_BYTES behind, while it still is. */
  behindSince?: number;
  /** The last logged entry this connection was given (or starts after); unset without a log. */
  last: string | undefined;
  /** Resumed (Last-Event-ID) and not given an event since: the client's position is `last`. */
  unnamed: boolean;
  readonly server?: string | undefined; // the session's virtual server (§8)
}

interface ChannelHold {
  refs: number;
  ready: Promise<Unsubscribe>;
}

export class StreamHub {
  readonly #live = new Map<string, Map<string, Attached>>();
  readonly #holds = new Map<string, ChannelHold>();
  /** Who hears that a session's channel subscription was lost and taken again (onLost). */
  readonly #lost = new Map<string, Set<() => void>>();
  /** Set once the replica shuts down: the retry hint every stream ends with from then on. */
  #draining: { retryMs: number | undefined } | undefined;

  constructor(private readonly opts: StreamHubOptions) {}

  /** Appends a message to a stream and delivers it; resolves to its event id. */
  async emit(tenant: string, sid: string, streamId: string, data: string): Promise<string> {
    const entryId = await this.opts.store.streamAppend(this.opts.keys.eventLog(tenant, sid, streamId), data, {
      maxLen: this.opts.maxEvents,
      ttlSeconds: this.opts.ttlSeconds,
    });
    const eventId = `${streamId}.${entryId}`;
    if (!this.#deliverLocal(tenant, sid, streamId, entryId, data)) {
      const msg: BusMessage = { k: "ev", s: streamId, e: entryId, d: data };
      await this.publish(tenant, sid, msg);
    }
    return eventId;
  }

  /**
   * Delivers a message to a stream that is never replayed (an HTTP+SSE stream, legacy-sse.ts):
   * no event log, only the connection here or, through the session channel, on another replica.
   */
  async deliver(tenant: string, sid: string, streamId: string, data: string): Promise<void> {
    if (!this.#deliverLocal(tenant, sid, streamId, UNLOGGED, data))
      await this.publish(tenant, sid, { k: "ev", s: streamId, e: UNLOGGED, d: data });
  }

  /**
   * The first entry of a stream's event log (a request stream's owner marker), undefined once the
   * log is gone (it expires with the session's idle TTL).
   */
  async firstEntry(tenant: string, sid: string, streamId: string): Promise<string | undefined> {
    const first = await this.opts.store.streamReadAfter(
      this.opts.keys.eventLog(tenant, sid, streamId),
      "0-0",
      1,
    );
    return first[0]?.data;
  }

  /**
   * The newest marker of a stream's event log (a request stream's owner: the replica that ran its
   * request first, or the one that ran it again since); undefined when it has none left.
   */
  async lastMarker(tenant: string, sid: string, streamId: string): Promise<string | undefined> {
    const key = this.opts.keys.eventLog(tenant, sid, streamId);
    let before: string | undefined;
    for (;;) {
      const rows = await this.opts.store.streamReadBefore(key, before, 100);
      const marker = rows.find((row) => row.data !== "" && !isEvent(row.data));
      if (marker) return marker.data;
      if (rows.length < 100) return undefined;
      before = rows.at(-1)!.id;
    }
  }

  /**
   * Makes this replica the new owner of a stream's request, to run it again: false when another
   * replica claimed it first (two resumptions of one stream at once); else its marker is appended
   * to the event log (not replayed).
   */
  async remark(tenant: string, sid: string, streamId: string, marker: string): Promise<boolean> {
    const { store, keys, maxEvents, ttlSeconds } = this.opts;
    const claim = keys.rerunClaim(tenant, sid, streamId);
    if (!(await store.set(claim, marker, { onlyIfAbsent: true, ttlSeconds }))) return false;
    await store.streamAppend(keys.eventLog(tenant, sid, streamId), marker, { maxLen: maxEvents, ttlSeconds });
    return true;
  }

  /**
   * Starts a request stream's event log with a marker (never replayed: not a JSON-RPC message),
   * and names the log among the session's, so ending the session deletes it (`dropLogs`).
   */
  async mark(tenant: string, sid: string, streamId: string, marker: string): Promise<void> {
    const { store, keys, maxEvents, ttlSeconds } = this.opts;
    await Promise.all([
      store.streamAppend(keys.eventLog(tenant, sid, streamId), marker, { maxLen: maxEvents, ttlSeconds }),
      store.setAdd(keys.eventLogIds(tenant, sid), streamId, ttlSeconds),
    ]);
  }

  /** Deletes a session's event logs: what its streams said leaves the store with the session. */
  async dropLogs(tenant: string, sid: string): Promise<void> {
    const { store, keys } = this.opts;
    const ids = await store.setMembers(keys.eventLogIds(tenant, sid));
    const logs = [STANDALONE, ...ids].map((id) => keys.eventLog(tenant, sid, id));
    await store.del(...logs, keys.eventLogIds(tenant, sid));
  }

  /**
   * Ends a request stream carried here, resumed after `afterEntryId`, whose request will never be
   * answered by the replica running it (it died): with what `answer` emits, unless the log already
   * ends with a response. That one is delivered if it comes after `afterEntryId`; one the client
   * resumed after is not sent again (a client that resumes after an error response, as SDK v1
   * does, would loop).
   */
  async answerOrphan(
    tenant: string,
    sid: string,
    streamId: string,
    afterEntryId: string,
    answer: () => Promise<void>,
  ): Promise<void> {
    if (!this.#live.get(sessionKey(tenant, sid))?.has(streamId)) return;
    const key = this.opts.keys.eventLog(tenant, sid, streamId);
    const [last] = await this.opts.store.streamReadBefore(key, undefined, 1);
    if (!last || !isEvent(last.data) || !isResponse(last.data)) await answer();
    else if (compareEntryIds(last.id, afterEntryId) > 0)
      this.#deliverLocal(tenant, sid, streamId, last.id, last.data);
  }

  /** Starts a new standalone stream position: the id to prime a fresh GET stream with. */
  async standalonePosition(tenant: string, sid: string): Promise<string> {
    const entryId = await this.opts.store.streamAppend(this.opts.keys.eventLog(tenant, sid, STANDALONE), "", {
      maxLen: this.opts.maxEvents,
      ttlSeconds: this.opts.ttlSeconds,
    });
    return `${STANDALONE}.${entryId}`;
  }

  /**
   * Attaches a connection to a stream, replaying the log after `afterEntryId` first. Another
   * connection carrying the same stream, here or elsewhere, is closed: one stream, one carrier.
   * The returned detach says whether the connection still carried the stream (false once
   * another connection took it over).
   */
  async attach(
    tenant: string,
    sid: string,
    streamId: string,
    sink: SseSink,
    from: { afterEntryId?: string; fresh?: boolean; resumed?: boolean; server?: string | undefined } = {},
  ): Promise<() => boolean> {
    const { afterEntryId, fresh = false, resumed = false, server } = from;
    const key = sessionKey(tenant, sid);
    const streams = this.#live.get(key) ?? new Map<string, Attached>();
    this.#live.set(key, streams);
    streams.get(streamId)?.sink.close();
    const attached: Attached = {
      sink,
      buffer: afterEntryId === undefined ? undefined : [],
      token: randomId(8),
      // A new request stream's log holds only its own events; a standalone one started without
      // a position has none (HTTP+SSE).
      last: afterEntryId ?? (fresh && streamId !== STANDALONE ? UNLOGGED : undefined),
      unnamed: resumed,
      server,
    };
    streams.set(streamId, attached);
    const release = this.hold(tenant, sid);
    const detach = () => {
      const carrier = streams.get(streamId) === attached;
      if (carrier) streams.delete(streamId);
      if (streams.size === 0 && this.#live.get(key) === streams) this.#live.delete(key);
      release();
      return carrier;
    };
    try {
      if (!fresh) {
        // A brand-new request stream has no other carrier; a resumed or standalone one may.
        await this.#holds.get(key)?.ready;
        await this.publish(tenant, sid, { k: "own", s: streamId, by: attached.token });
      }
      if (afterEntryId !== undefined) await this.#replay(tenant, sid, streamId, attached, afterEntryId);
    } catch (err) {
      detach();
      throw err;
    }
    // A stream that starts while the replica shuts down is handed at once to another replica.
    if (this.#draining) this.#evict(key, streamId, attached, this.#draining.retryMs);
    return detach;
  }

  /** Keeps this replica subscribed to a session's channel until the returned function is called. */
  hold(tenant: string, sid: string): () => void {
    const key = sessionKey(tenant, sid);
    let hold = this.#holds.get(key);
    if (!hold) {
      const ready = this.opts.store.subscribe(
        this.opts.keys.sessionChannel(tenant, sid),
        (raw) => this.#onChannel(tenant, sid, raw),
        () => {
          // Messages published while the subscription was down are gone: who waited on one hears it.
          for (const lost of [...(this.#lost.get(key) ?? [])]) lost();
          this.opts.onChannelLost?.(tenant, sid);
          void this.#catchUp(tenant, sid).catch(() => undefined);
        },
      );
      hold = { refs: 0, ready };
      this.#holds.set(key, hold);
    }
    hold.refs++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const h = this.#holds.get(key);
      if (h && --h.refs === 0) {
        this.#holds.delete(key);
        void h.ready.then((unsubscribe) => unsubscribe()).catch(() => undefined);
      }
    };
  }

  /**
   * Calls `listener` when this replica's subscription to the session's channel was lost and
   * taken again (a store reconnect): a message published meanwhile (a client's answer, a
   * cancellation) may be gone. Stop with the returned function.
   */
  onLost(tenant: string, sid: string, listener: () => void): () => void {
    const key = sessionKey(tenant, sid);
    const listeners = this.#lost.get(key) ?? new Set<() => void>();
    listeners.add(listener);
    this.#lost.set(key, listeners);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#lost.get(key) === listeners) this.#lost.delete(key);
    };
  }

  /**
   * Keeps a client's answer to a server-to-client request for a while before it is published: a
   * replica whose subscription was down when it went by reads it here (keptAnswer).
   */
  async keepAnswer(tenant: string, sid: string, id: string, json: string, ttlSeconds: number): Promise<void> {
    await this.opts.store.set(this.opts.keys.clientAnswer(tenant, sid, id), json, { ttlSeconds });
  }

  /**
   * Keeps a client's cancellation of a request for a while before it is published: the replica
   * running the request reads it (keptCancel) if its subscription was down when it went by.
   */
  async keepCancel(tenant: string, sid: string, id: RequestId, ttlSeconds: number): Promise<void> {
    await this.opts.store.set(this.opts.keys.clientCancel(tenant, sid, JSON.stringify(id)), "1", {
      ttlSeconds,
    });
  }

  /** Whether a cancellation of request `id` was kept by keepCancel. */
  async keptCancel(tenant: string, sid: string, id: RequestId): Promise<boolean> {
    return (await this.opts.store.get(this.opts.keys.clientCancel(tenant, sid, JSON.stringify(id)))) !== null;
  }

  /** A client's answer kept by keepAnswer, if any. */
  keptAnswer(tenant: string, sid: string, id: string): Promise<string | null> {
    return this.opts.store.get(this.opts.keys.clientAnswer(tenant, sid, id));
  }

  /** Waits until the channel subscription taken by hold() is active. */
  async held(tenant: string, sid: string): Promise<void> {
    await this.#holds.get(sessionKey(tenant, sid))?.ready;
  }

  publish(tenant: string, sid: string, message: BusMessage): Promise<void> {
    return this.opts.store.publish(this.opts.keys.sessionChannel(tenant, sid), JSON.stringify(message));
  }

  /** Session ids of a tenant's URL (or `server`'s, §8) with a standalone stream open here. */
  *standaloneSessions(tenant: string, server?: string): Iterable<string> {
    const prefix = `${tenant}\u0000`;
    for (const [key, streams] of this.#live) {
      if (key.startsWith(prefix) && streams.get(STANDALONE)?.server === server)
        yield key.slice(prefix.length);
    }
  }

  /** How many streams this replica carries (metrics). */
  get openStreams(): number {
    let n = 0;
    for (const streams of this.#live.values()) n += streams.size;
    return n;
  }

  /** Closes every stream of a session on this replica (the session ended). */
  closeSession(tenant: string, sid: string): void {
    const streams = this.#live.get(sessionKey(tenant, sid));
    for (const a of streams?.values() ?? []) a.sink.close();
  }

  /**
   * Ends every live stream (shutdown), each with a retry hint, and any stream attached from now
   * on. Clients resume them with Last-Event-ID elsewhere; what requests still running here emit
   * goes to the event log and the session channel, so the replica that carries a stream next
   * delivers it.
   */
  closeAll(retryMs?: number): void {
    this.#draining = { retryMs };
    for (const [key, streams] of [...this.#live])
      for (const [streamId, a] of [...streams]) this.#evict(key, streamId, a, retryMs);
  }

  /** Closes a stream's connection and forgets it here, so its next events go through the channel. */
  #evict(key: string, streamId: string, attached: Attached, retryMs?: number): void {
    const streams = this.#live.get(key);
    if (streams?.get(streamId) === attached) {
      streams.delete(streamId);
      if (streams.size === 0) this.#live.delete(key);
    }
    // A client resumed here and given nothing is told its position again with the hint: SDK v1
    // keeps the last event id of each connection, not of the stream, and would resume from nothing.
    const position = attached.unnamed && retryMs !== undefined ? `${streamId}.${attached.last}` : undefined;
    attached.sink.close(retryMs, position);
  }

  #deliverLocal(tenant: string, sid: string, streamId: string, entryId: string, data: string): boolean {
    const attached = this.#live.get(sessionKey(tenant, sid))?.get(streamId);
    if (!attached) return false;
    if (attached.buffer) attached.buffer.push([entryId, data]);
    else if (tooFarBehind(attached)) {
      // A client that does not keep up must not grow the server's memory: its connection is
      // dropped, and it resumes with Last-Event-ID from the event log, where this event already is.
      this.#evict(sessionKey(tenant, sid), streamId, attached);
      attached.sink.destroy();
    } else write(attached, streamId, entryId, data);
    return true;
  }

  /**
   * After the session's channel was lost and is back: events other replicas published meanwhile
   * never arrived, but they are in the streams' logs (and a session deleted meanwhile is gone).
   * Each stream carried here is given what its log holds past the last entry it got (live events
   * meanwhile wait in its buffer).
   */
  async #catchUp(tenant: string, sid: string): Promise<void> {
    // A deletion announced meanwhile ("end") was missed too: the record tells.
    if ((await this.opts.store.get(this.opts.keys.session(tenant, sid))) === null)
      return this.#onChannel(tenant, sid, JSON.stringify({ k: "end" } satisfies BusMessage));
    const streams = this.#live.get(sessionKey(tenant, sid));
    for (const [streamId, attached] of [...(streams ?? [])]) {
      // A replay in progress reads the log anyway; an unlogged stream has nothing to read.
      if (attached.last === undefined || attached.buffer !== undefined) continue;
      attached.buffer = [];
      await this.#replay(tenant, sid, streamId, attached, attached.last);
    }
  }

  async #replay(tenant: string, sid: string, streamId: string, attached: Attached, afterEntryId: string) {
    const key = this.opts.keys.eventLog(tenant, sid, streamId);
    let last = afterEntryId;
    for (;;) {
      const entries = await this.opts.store.streamReadAfter(key, last, 500);
      for (const e of entries) {
        write(attached, streamId, e.id, e.data);
        last = e.id;
      }
      if (entries.length < 500) break;
    }
    attached.last = last;
    const buffered = attached.buffer ?? [];
    attached.buffer = undefined;
    for (const [entryId, data] of buffered)
      if (compareEntryIds(entryId, last) > 0) write(attached, streamId, entryId, data);
  }

  #onChannel(tenant: string, sid: string, raw: string) {
    let msg: BusMessage;
    try {
      msg = JSON.parse(raw) as BusMessage;
    } catch {
      return;
    }
    const streams = this.#live.get(sessionKey(tenant, sid));
    if (msg.k === "ev") {
      this.#deliverLocal(tenant, sid, msg.s, msg.e, msg.d);
    } else if (msg.k === "own") {
      // Another connection, maybe on another replica, carries the stream now.
      const a = streams?.get(msg.s);
      if (a && a.token !== msg.by) this.#evict(sessionKey(tenant, sid), msg.s, a);
    } else if (msg.k === "end") {
      for (const a of streams?.values() ?? []) a.sink.close();
      this.opts.onBusMessage(tenant, sid, msg);
    } else {
      this.opts.onBusMessage(tenant, sid, msg);
    }
  }
}

/** How long a client may stay more than MAX_BACKLOG_BYTES behind before its stream is dropped for resumption. */
const BEHIND_MS = 2000;

/** More than MAX_BACKLOG_BYTES behind for BEHIND_MS: not one large event, a client not reading. */
function tooFarBehind(attached: Attached): boolean {
  if (attached.sink.backlog <= MAX_BACKLOG_BYTES) {
    attached.behindSince = undefined;
    return false;
  }
  attached.behindSince ??= Date.now();
  return Date.now() - attached.behindSince >= BEHIND_MS;
}

/** Log entries that are not JSON-RPC messages are markers (a position, a request stream's owner). */
function isEvent(data: string): boolean {
  return data.startsWith("{");
}

function write(attached: Attached, streamId: string, entryId: string, data: string) {
  if (entryId !== UNLOGGED) attached.last = entryId;
  if (!isEvent(data)) return; // a marker, not an event
  attached.unnamed = false;
  attached.sink.write(`${streamId}.${entryId}`, data);
  if (streamId !== STANDALONE && isResponse(data)) attached.sink.close();
}

/** A request stream ends with the response to its request. */
function isResponse(data: string): boolean {
  return !data.includes('"method"') || (JSON.parse(data) as { method?: unknown }).method === undefined;
}

function sessionKey(tenant: string, sid: string): string {
  return `${tenant}\u0000${sid}`;
}
