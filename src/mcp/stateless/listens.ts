// subscriptions/listen streams (basic/patterns/subscriptions, 2026-07-28): each asked for some change
// notifications and gets only those, tagged with its subscription id (the id of its listen request).
// A change observed on any replica is published on the tenant's listen channel; every replica that
// holds listen streams of the tenant delivers it to them, with copies of one change merged.
import type { FastifyBaseLogger, FastifyReply } from "fastify";
import { fail } from "../../protocol/errors.js";
import { withinResource } from "../../providers/catalog.js";
import { ipSubject, principalSubject } from "../../limits/subjects.js";
import type { ListChangeKind } from "../../providers/types.js";
import type { Keys } from "../../store/keys.js";
import type { Store, Unsubscribe } from "../../store/store.js";
import type { RequestId, RpcRequest } from "../../protocol/jsonrpc.js";
import { FLAG, honoured, listenResult, notification, type SubscriptionFilter } from "./listen-wire.js";
import { backlogOf, MAX_BACKLOG_BYTES, writeEvent } from "../sse-events.js";

export interface Listener {
  readonly id: RequestId;
  /** Whose stream it is (undefined without authentication): a user's own list changes reach only theirs. */
  readonly user?: string;
  readonly filter: SubscriptionFilter;
  /** Writes one message on the stream. */
  write(json: string): void;
  /** Ends the stream: with a final response when the server ends it (shutdown). */
  end(finalJson?: string): void;
  /** The virtual server it listens on (docs/architecture.md §8): only its list changes reach it. */
  readonly server?: string | undefined;
}

export interface ListenHubOptions {
  readonly store: Store;
  readonly keys: Keys;
  readonly log: FastifyBaseLogger;
  /** Asks for updates of a tenant's URI until the returned function is called (TenantRegistry.watch). */
  readonly watch: (tenant: string, uri: string) => () => void;
  /** How long copies of a change are gathered into one notification (PORTICO_LISTEN_COALESCE_MS); default 250 ms. */
  readonly coalesceMs?: number;
  /** Listen streams this replica holds per tenant; 0 or absent: no cap. */
  readonly maxStreams?: number;
  /** Listen streams this replica holds per tenant for one user; 0 or absent: no cap. */
  readonly maxStreamsPerPrincipal?: number;
  /** Listen streams this replica holds per tenant for one client address (no auth); 0 or absent: no cap. */
  readonly maxStreamsPerAddress?: number;
  /** Distinct URIs this replica's listen streams of a tenant watch; 0 or absent: no cap. */
  readonly maxWatchedUris?: number;
  /** A task's notifications/tasks params as tasks/get would give them (the tasks extension); absent: none sent. */
  readonly taskDetail?: (tenant: string, taskId: string) => Promise<Record<string, unknown> | undefined>;
}

/** What one client holds of a tenant's listens on this replica. */
interface ClientShare {
  streams: number;
  uris: number;
}

/** The client a listen stream counts against, and how many streams (and subscribed URIs) it may hold on this replica. */
interface ClientCap {
  readonly subject: string;
  readonly max: number;
}

/**
 * A message on a tenant's listen channel: `s`, a change of one virtual server's lists; `u`, of one
 * user's only (a per-user provider), on every URL of the tenant.
 */
type Change =
  | { k: "list"; kind: ListChangeKind; s?: string; u?: string }
  | { k: "res"; uri: string }
  | { k: "task"; id: string };

/** The listen streams of one tenant on this replica, and the channel subscription they keep. */
interface Room {
  readonly tenant: string;
  /** Each stream, with the function that removes it. */
  readonly listeners: Map<Listener, () => void>;
  readonly subscribed: Promise<Unsubscribe>;
  /** Changes waiting for the end of their window, by kind or URI. */
  readonly due: Map<string, NodeJS.Timeout>;
  /** Each watched URI, with how many of the streams ask for it. */
  readonly watched: Map<string, number>;
  /** Each client (a user's or an address's subject), with the streams it holds and the URIs they subscribe to. */
  readonly clients: Map<string, ClientShare>;
}

const KINDS = Object.keys(FLAG) as ListChangeKind[];
/** Distinct updates one tenant may have waiting; past it, sub-resource updates fold into their subscription. */
const MAX_DUE = 1000;

export class ListenHub {
  readonly #rooms = new Map<string, Room>();
  /** Set at shutdown: a stream opened from then on ends at once, as closeAll ended the others. */
  #closing = false;
  readonly #coalesceMs: number;

  constructor(private readonly opts: ListenHubOptions) {
    this.#coalesceMs = opts.coalesceMs ?? 250;
  }

  get open(): number {
    let n = 0;
    for (const room of this.#rooms.values()) n += room.listeners.size;
    return n;
  }

  /** subscriptions/listen: the acknowledgement first, then the asked-for notifications until closed. */
  async serve(
    tenant: string,
    request: RpcRequest,
    reply: FastifyReply,
    canStream: boolean,
    user?: string,
    server?: string,
  ): Promise<void> {
    if (!canStream)
      throw fail(
        "PORTICO_ERR_MCP_NOT_ACCEPTABLE",
        "Not Acceptable: subscriptions/listen answers with a stream; accept text/event-stream",
      );
    const filter = honoured(request.params?.notifications);
    const id = request.id;
    const sse = reply.sse;
    // The server MUST NOT send a notification on the subscription before acknowledging it.
    let acknowledged = false;
    let ending: string | undefined;
    const write = (json: string) => {
      if (!acknowledged || !sse.isConnected) return;
      // A client far behind on its listen stream is dropped (it listens again), not buffered for.
      if (backlogOf(reply) > MAX_BACKLOG_BYTES) return void reply.raw.destroy();
      writeEvent(reply, json);
    };
    // Resolves once the channel is subscribed: a change made after the acknowledgement is not missed.
    const client = this.#clientOf(user, reply);
    const remove = await this.add(
      tenant,
      {
        id,
        user,
        filter,
        server,
        write,
        end: (finalJson) => {
          if (acknowledged) {
            if (finalJson !== undefined) write(finalJson);
            sse.close();
          } else ending = finalJson ?? ""; // ended while subscribing: once acknowledged
        },
      },
      client,
    );
    // A replica shutting down still serves a listen that reaches it (a balancer without health
    // checks sends it), but ends it at once with its result, so the client listens elsewhere.
    if (this.#closing) ending = JSON.stringify(listenResult(id));
    reply.header("x-accel-buffering", "no");
    sse.keepAlive();
    sse.onClose(remove);
    // The SSE context runs close callbacks once, at the close: a client gone while this stream was
    // being set up would leave it registered, with its upstream watches, for good.
    if (!sse.isConnected) return remove();
    try {
      await sse.send({
        data: notification("notifications/subscriptions/acknowledged", id, { notifications: filter }),
      });
    } catch {
      return remove();
    }
    acknowledged = true;
    if (ending !== undefined) {
      if (ending !== "") write(ending);
      sse.close();
    }
    if (!sse.isConnected) remove();
  }

  /**
   * Registers a stream, subscribing this replica to the tenant's channel if it is the first, and
   * watching the URIs it subscribed to; resolves with the function that removes it once the
   * channel is subscribed.
   */
  async add(tenant: string, listener: Listener, client?: ClientCap): Promise<() => void> {
    const uris = [...new Set(listener.filter.resourceSubscriptions ?? [])];
    this.#checkRoom(this.#rooms.get(tenant), uris, client);
    const room = this.#rooms.get(tenant) ?? this.#open(tenant);
    const share = client && (room.clients.get(client.subject) ?? { streams: 0, uris: 0 });
    if (client && share) {
      share.streams++;
      share.uris += uris.length;
      room.clients.set(client.subject, share);
    }
    const releases = uris.map((uri) => this.opts.watch(tenant, uri));
    for (const uri of uris) room.watched.set(uri, (room.watched.get(uri) ?? 0) + 1);
    let removed = false;
    const remove = () => {
      if (removed) return;
      removed = true;
      for (const release of releases) release();
      for (const uri of uris) {
        const n = (room.watched.get(uri) ?? 1) - 1;
        if (n > 0) room.watched.set(uri, n);
        else room.watched.delete(uri);
      }
      if (client && share) {
        share.streams--;
        share.uris -= uris.length;
        if (share.streams <= 0) room.clients.delete(client.subject);
      }
      room.listeners.delete(listener);
      if (room.listeners.size === 0 && this.#rooms.get(tenant) === room) this.#close(tenant, room);
    };
    room.listeners.set(listener, remove);
    try {
      await room.subscribed;
    } catch (err) {
      remove();
      throw err;
    }
    return remove;
  }

  /** The tenant's caps on this replica (docs/security.md "Bounded by default"): 429 past them. */
  #checkRoom(room: Room | undefined, uris: readonly string[], client: ClientCap | undefined): void {
    const { maxStreams = 0, maxWatchedUris = 0 } = this.opts;
    // One client cannot take the tenant's streams, or its watched URIs, from everyone else.
    const share = client && room?.clients.get(client.subject);
    const who = client?.subject.startsWith("ip:") ? "this address" : "this user";
    if (client && (share?.streams ?? 0) >= client.max)
      throw fail(
        "PORTICO_ERR_MCP_TOO_MANY_STREAMS",
        `Too Many Requests: ${who} already has ${client.max} listen streams open on this tenant; close one first`,
        { retryAfterSeconds: 5 },
      );
    if (client && (share?.uris ?? 0) + uris.length > client.max)
      throw fail(
        "PORTICO_ERR_MCP_TOO_MANY_STREAMS",
        `Too Many Requests: ${who}'s listen streams already subscribe to ${share?.uris ?? 0} resource URIs on this tenant, at most ${client.max}; close one first`,
        { retryAfterSeconds: 5 },
      );
    if (maxStreams > 0 && (room?.listeners.size ?? 0) >= maxStreams)
      throw fail(
        "PORTICO_ERR_MCP_TOO_MANY_STREAMS",
        `Too Many Requests: this tenant already has ${maxStreams} listen streams open on this server; retry later`,
        { retryAfterSeconds: 5 },
      );
    if (maxWatchedUris <= 0) return;
    const added = uris.filter((uri) => !room?.watched.has(uri)).length;
    if ((room?.watched.size ?? 0) + added > maxWatchedUris)
      throw fail(
        "PORTICO_ERR_MCP_TOO_MANY_STREAMS",
        `Too Many Requests: this tenant's listen streams already watch ${room?.watched.size ?? 0} resource URIs on this server, at most ${maxWatchedUris}; retry later`,
        { retryAfterSeconds: 5 },
      );
  }

  /** Whose listen streams a listen counts against: the user, whatever the client, else the address. */
  #clientOf(user: string | undefined, reply: FastifyReply): ClientCap | undefined {
    const { maxStreamsPerAddress = 0, maxStreamsPerPrincipal = 0 } = this.opts;
    if (user !== undefined)
      return maxStreamsPerPrincipal > 0
        ? { subject: principalSubject(user), max: maxStreamsPerPrincipal }
        : undefined;
    return maxStreamsPerAddress > 0
      ? { subject: ipSubject(reply.request.ip), max: maxStreamsPerAddress }
      : undefined;
  }

  /**
   * A list of the tenant (or of its virtual server) changed here: tell the listen streams on every
   * replica; with `user`, a list of that user's only (a per-user provider), told to their streams
   * alone, on every URL of the tenant.
   */
  listChanged(tenant: string, kind: ListChangeKind, server?: string, user?: string): void {
    this.#publish(tenant, {
      k: "list",
      kind,
      ...(server !== undefined && { s: server }),
      ...(user !== undefined && { u: user }),
    });
  }

  /** A watched resource of the tenant changed here: tell the listen streams on every replica. */
  resourceUpdated(tenant: string, uri: string): void {
    this.#publish(tenant, { k: "res", uri });
  }

  /** A task of the tenant changed here: its notifications/tasks to the streams naming it, on every replica. */
  taskChanged(tenant: string, taskId: string): void {
    this.#publish(tenant, { k: "task", id: taskId });
  }

  /** Ends every stream with its final response (shutdown), so clients know to listen elsewhere. */
  closeAll(): void {
    this.#closing = true;
    for (const room of [...this.#rooms.values()])
      for (const [listener, remove] of [...room.listeners]) {
        listener.end(JSON.stringify(listenResult(listener.id)));
        remove();
      }
  }

  /**
   * One channel per tenant, subscribed only while this replica holds a listen stream of it: a
   * replica hears only the tenants its clients listen to, and Redis Cluster routes each channel
   * by the tenant's slot like the tenant's keys.
   */
  #open(tenant: string): Room {
    const due = new Map<string, NodeJS.Timeout>();
    const listeners = new Map<Listener, () => void>();
    const subscribed = this.opts.store.subscribe(
      this.opts.keys.listenChannel(tenant),
      (raw) => this.#onMessage(room, raw),
      () => this.#resync(room),
    );
    const room: Room = { tenant, listeners, subscribed, due, watched: new Map(), clients: new Map() };
    this.#rooms.set(tenant, room);
    return room;
  }

  #close(tenant: string, room: Room): void {
    this.#rooms.delete(tenant);
    for (const timer of room.due.values()) clearTimeout(timer);
    room.due.clear();
    void room.subscribed.then((unsubscribe) => unsubscribe()).catch(() => undefined);
  }

  #publish(tenant: string, change: Change): void {
    this.opts.store
      .publish(this.opts.keys.listenChannel(tenant), JSON.stringify(change))
      .catch((err: unknown) => this.opts.log.warn({ err, tenant }, "listen change not published"));
  }

  #onMessage(room: Room, raw: string): void {
    const change = parseChange(raw);
    if (change) this.#schedule(room, change);
  }

  /** Missed messages while the connection was down: every asked-for list and URI may have changed. */
  #resync(room: Room): void {
    const servers = new Set([...room.listeners.keys()].map((l) => l.server));
    for (const s of servers)
      for (const kind of KINDS) this.#schedule(room, { k: "list", kind, ...(s !== undefined && { s }) });
    for (const uri of subscribedUris(room)) this.#schedule(room, { k: "res", uri });
  }

  /**
   * Every replica's registry usually sees the same change and publishes it, so copies arrive
   * close together. The first starts a window; the change is delivered once when it ends, covering
   * whatever arrived meanwhile. Delivery always follows the last change it covers.
   */
  #schedule(room: Room, change: Change): void {
    if (change.k === "res") {
      const covering = [...subscribedUris(room)].filter((s) => withinResource(s, change.uri));
      if (covering.length === 0) return; // nobody here asked
      // A flood of distinct sub-resources must not grow the timers without bound.
      if (room.due.size >= MAX_DUE && !covering.includes(change.uri)) {
        for (const uri of covering) this.#schedule(room, { k: "res", uri });
        return;
      }
    }
    if (change.k === "task" && ![...room.listeners.keys()].some((l) => l.filter.taskIds?.includes(change.id)))
      return; // nobody here asked
    const key =
      change.k === "res"
        ? `uri:${change.uri}`
        : change.k === "task"
          ? `task:${change.id}`
          : `${change.kind}|${change.s ?? ""}\u0000${change.u ?? ""}`;
    if (room.due.has(key)) return;
    const timer = setTimeout(() => {
      room.due.delete(key);
      this.#deliver(room, change);
    }, this.#coalesceMs);
    room.due.set(key, timer);
  }

  #deliver(room: Room, change: Change): void {
    if (change.k === "task") return void this.#deliverTask(room, change.id);
    for (const l of room.listeners.keys()) {
      if (change.k === "list") {
        if (change.u !== undefined ? l.user !== change.u : l.server !== change.s) continue;
        if (l.filter[FLAG[change.kind]] === true)
          l.write(notification(`notifications/${change.kind}/list_changed`, l.id, {}));
      } else if (
        change.k === "res" &&
        l.filter.resourceSubscriptions?.some((s) => withinResource(s, change.uri))
      )
        l.write(notification("notifications/resources/updated", l.id, { uri: change.uri }));
    }
  }

  /** The task as it now stands (read after the window, so the latest change), to the streams naming it. */
  #deliverTask(room: Room, taskId: string): void {
    const detail = this.opts.taskDetail;
    if (!detail) return;
    detail(room.tenant, taskId)
      .then((task) => {
        if (!task) return;
        for (const l of room.listeners.keys())
          if (l.filter.taskIds?.includes(taskId)) l.write(notification("notifications/tasks", l.id, task));
      })
      .catch((err: unknown) =>
        this.opts.log.warn({ err, tenant: room.tenant }, "task notification not sent"),
      );
  }
}

/** A channel message, or undefined when it is not one (published by something else). */
function parseChange(raw: string): Change | undefined {
  try {
    const m = JSON.parse(raw) as Partial<Record<string, unknown>>;
    if (m.k === "list" && typeof m.kind === "string" && Object.hasOwn(FLAG, m.kind))
      return {
        k: "list",
        kind: m.kind as ListChangeKind,
        ...(typeof m.s === "string" && { s: m.s }),
        ...(typeof m.u === "string" && { u: m.u }),
      };
    if (m.k === "res" && typeof m.uri === "string") return { k: "res", uri: m.uri };
    if (m.k === "task" && typeof m.id === "string") return { k: "task", id: m.id };
  } catch {
    // not JSON: ignored
  }
  return undefined;
}

function subscribedUris(room: Room): Iterable<string> {
  return room.watched.keys();
}
