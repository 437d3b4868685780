// The session era (2024-11-05 … 2025-11-25; basic/lifecycle, basic/transports):
// initialize and sessions, requests answered as JSON or SSE, server-to-client requests whose
// answers may reach any replica, cancellation, the standalone GET stream, and DELETE.
import type { FastifyBaseLogger, FastifyReply } from "fastify";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Authenticated } from "../../policy/caller.js";
import type { Config } from "../../config/env.js";
import { fail } from "../../protocol/errors.js";
import type { Metrics, McpOutcome } from "../../metrics/metrics.js";
import type { SessionOutlet } from "../../providers/types.js";
import { isLogLevel, logPasses } from "../../protocol/log-levels.js";
import { responseJson, textOf } from "../../protocol/verbatim.js";
import { PORTICO_INFO } from "../../protocol/version.js";
import type { TenantRuntime } from "../../tenants/runtime.js";
import type { Cursors } from "../cursor.js";
import {
  resultResponse,
  type RequestId,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../../protocol/jsonrpc.js";
import { answer, nextTurn } from "../answer.js";
import { ClientAsks } from "./client-asks.js";
import { Cancellation } from "../cancellation.js";
import {
  contentGapsOf,
  fitResult,
  offeredCapabilities,
  primesStreams,
} from "../../protocol/older-revisions.js";
import { initializeParams } from "./initialize-params.js";
import { dispatch } from "../methods.js";
import { SessionRequestContext, type ContextHost } from "./context.js";
import { ResponseChannel, sseSink } from "./response-channel.js";
import type { SessionOwner, SessionStore } from "../sessions.js";
import type { Session } from "../session-record.js";
import { parseEventId } from "./event-ids.js";
import { STANDALONE, type BusMessage, type StreamHub } from "./streams.js";
import { parseOwner, type StreamOwners } from "./stream-owners.js";
import { unwrapCall } from "../tool-search.js";
import { instructionsOf } from "../instructions.js";
import { annotate, served } from "../../tracing/spans.js";
import type { Tasks } from "../../tasks/tasks.js";
import { tasksCapability } from "../task-methods.js";

export interface SessionLaneDeps {
  readonly config: Config;
  readonly sessions: SessionStore;
  readonly hub: StreamHub;
  readonly cursors: Cursors;
  readonly log: FastifyBaseLogger;
  readonly metrics: Metrics;
  readonly owners: StreamOwners;
  /** Portico's tasks (docs/upstream-mcp.md#tasks); without it, tasks are not offered. */
  readonly tasks?: Tasks;
}

export class SessionLane {
  /** Requests running on this replica, for notifications/cancelled. */
  readonly #inflight = new Map<string, Cancellation>();
  /** Requests running or answering here: a graceful close waits for them (shutdown.ts Drain). */
  #busy = 0;
  readonly #asks: ClientAsks;

  readonly #host: ContextHost;

  constructor(private readonly deps: SessionLaneDeps) {
    this.#asks = new ClientAsks(deps.hub, deps.config.inputTimeoutSeconds);
    this.#host = {
      cursors: deps.cursors,
      pageSize: deps.config.pageSize,
      ...(deps.tasks && { tasks: deps.tasks }),
      clientRequest: (...args) => this.#asks.request(...args),
      setLogLevel: (tenant, session, level) => this.#setLogLevel(tenant, session, level),
    };
  }

  /** Requests running or being answered on this replica, their streams resumed elsewhere or not. */
  get busy(): number {
    return this.#busy;
  }

  /**
   * lifecycle "Initialization": negotiates the version and opens a session, or initializes
   * `opened`, a session an HTTP+SSE stream opened before (legacy-sse.ts).
   */
  async initialize(
    tenant: TenantRuntime,
    request: RpcRequest,
    principal: string,
    owner?: SessionOwner,
    opened?: Session,
  ) {
    const started = performance.now();
    let outcome: McpOutcome = "error";
    try {
      const initialized = await served(request, { tenant: tenant.config.id, session: opened?.id }, () =>
        this.#initialize(tenant, request, principal, owner, opened),
      );
      outcome = "ok";
      return initialized;
    } finally {
      this.deps.metrics.mcpRequest("initialize", "session", outcome, (performance.now() - started) / 1000);
    }
  }

  async #initialize(
    tenant: TenantRuntime,
    request: RpcRequest,
    principal: string,
    owner: SessionOwner | undefined,
    opened: Session | undefined,
  ) {
    const { protocolVersion, gaps, client } = initializeParams(request);
    const session = opened
      ? await this.deps.sessions.initialize(opened, client)
      : await this.deps.sessions.create(
          {
            ...client,
            tenantId: tenant.config.id,
            principal,
            ...(tenant.server && { server: tenant.server.id }),
          },
          owner,
        );
    annotate({ "mcp.session.id": session.id, "mcp.protocol.version": protocolVersion });
    // The session's lists are asked for next: have its profile listed meanwhile.
    warm(tenant, session);
    const result: Record<string, unknown> = {
      protocolVersion,
      // Capabilities the revision does not define are not offered (docs/protocol-eras.md "Older revisions").
      capabilities: offeredCapabilities(
        this.deps.tasks
          ? { ...tenant.catalog.capabilities(), tasks: tasksCapability(tenant) }
          : tenant.catalog.capabilities(),
        gaps,
      ),
      serverInfo: { ...PORTICO_INFO, title: serverTitle(tenant) },
    };
    const instructions = instructionsOf(tenant);
    if (instructions !== undefined) result.instructions = instructions;
    return { session, response: resultResponse(request.id, result) };
  }

  /** Runs one request and answers it on `reply` (JSON, or SSE when messages precede the result). */
  async request(
    tenant: TenantRuntime,
    session: Session,
    request: RpcRequest,
    reply: FastifyReply,
    canStream: boolean,
    caller: Authenticated | undefined,
  ) {
    // Unwrapped here too: the stream's owner marker names the tool a survivor may run again.
    request = unwrapCall(tenant, request);
    this.#busy++;
    try {
      const channel = new ResponseChannel(reply, {
        hub: this.deps.hub,
        tenant: tenant.config.id,
        sid: session.id,
        canStream,
        retryMs: this.deps.config.sseRetryMs,
        priming: primesStreams(session.protocolVersion),
        marker: () => this.deps.owners.marker(request),
      });
      const response = await this.run(
        tenant,
        session,
        request,
        caller,
        (json) => channel.send(json),
        reply.log,
      );
      try {
        await nextTurn();
        // A cancelled request gets no response (basic/utilities/cancellation); its stream just ends.
        if (response === undefined) await channel.cancel(request.id);
        else {
          if ("result" in response && textOf(response.result) !== undefined)
            this.deps.metrics.passedThrough(request.method, "session");
          await channel.finish(responseJson(response));
        }
      } catch (err) {
        channel.abandon();
        throw err;
      }
    } finally {
      this.#busy--;
    }
  }

  /**
   * Runs one request to a response (undefined once cancelled); related messages go to `send`.
   * Failures are logged to `log`: the HTTP request's own logger, bound to its id.
   */
  async run(
    tenant: TenantRuntime,
    session: Session,
    request: RpcRequest,
    caller: Authenticated | undefined,
    send: (json: string) => Promise<void>,
    log: FastifyBaseLogger = this.deps.log,
  ): Promise<RpcResponse | undefined> {
    // A call through call_tool is the call of the tool it names, for everything from here on.
    request = unwrapCall(tenant, request);
    const key = inflightKey(tenant.config.id, session.id, request.id);
    const cancellation = new Cancellation();
    this.#inflight.set(key, cancellation);
    this.#busy++;
    const live = { open: true };
    // Late upstream messages for a finished request are dropped.
    const sendWhileOpen = (json: string) => (live.open ? send(json) : Promise.resolve());
    const ctx = new SessionRequestContext(
      tenant,
      session,
      request,
      cancellation,
      sendWhileOpen,
      this.#host,
      caller,
    );
    const scope = {
      era: "session",
      tenant: tenant.config.id,
      metrics: this.deps.metrics,
      log,
      session: session.id,
      protocolVersion: session.protocolVersion,
    } as const;
    // An older revision gets results it can read; current ones are not walked.
    const gaps = contentGapsOf(session.protocolVersion);
    const work = gaps
      ? async () => fitResult(request.method, await dispatch(request.method, request.params ?? {}, ctx), gaps)
      : () => dispatch(request.method, request.params ?? {}, ctx);
    try {
      return await answer(request, cancellation, work, scope);
    } finally {
      this.#inflight.delete(key);
      this.#busy--;
      live.open = false;
    }
  }

  /** Notifications from the client (lifecycle, cancellation, roots), each in its MCP span. */
  notification(tenant: TenantRuntime, session: Session, n: RpcNotification): Promise<void> {
    const details = {
      tenant: tenant.config.id,
      session: session.id,
      protocolVersion: session.protocolVersion,
    };
    return served(n, details, () => this.#notification(tenant, session, n));
  }

  async #notification(tenant: TenantRuntime, session: Session, n: RpcNotification): Promise<void> {
    if (n.method === "notifications/cancelled") {
      const id = n.params?.requestId;
      if (typeof id !== "string" && typeof id !== "number") return;
      const t = tenant.config.id;
      if (this.#cancelLocal(t, session.id, id)) return;
      // Kept first: a replica whose subscription is down as it goes by reads it there (recover).
      await this.deps.hub.keepCancel(t, session.id, id, this.deps.config.inputTimeoutSeconds);
      await this.deps.hub.publish(t, session.id, { k: "cancel", id });
    } else if (n.method === "notifications/roots/list_changed") {
      await Promise.allSettled(tenant.catalog.providers.map(async (p) => p.rootsChanged?.(session.id)));
    }
    // notifications/initialized and others need nothing from a gateway.
  }

  /** The client's answer to a server-to-client request, wherever that request waits. */
  async response(tenant: TenantRuntime, session: Session, r: RpcResponse): Promise<void> {
    if (!this.#asks.settle(tenant.config.id, session.id, r))
      await this.#asks.forward(tenant.config.id, session.id, r);
  }

  /** GET: the standalone stream, or the resumption of any stream of the session via Last-Event-ID. */
  async openStream(
    tenant: TenantRuntime,
    session: Session,
    reply: FastifyReply,
    lastEventId: string | undefined,
    caller: Authenticated | undefined,
  ) {
    const { hub } = this.deps;
    const t = tenant.config.id;
    const resume = lastEventId === undefined ? undefined : parseEventId(lastEventId);
    if (lastEventId !== undefined && !resume)
      throw fail(
        "PORTICO_ERR_MCP_INVALID_REQUEST",
        "Bad Request: Last-Event-ID is not an event id this server issued",
      );
    // A request stream whose log expired can never end: say so rather than hold the GET open.
    const request = resume?.streamId !== STANDALONE ? resume : undefined;
    const first = request && (await hub.firstEntry(t, session.id, request.streamId));
    if (request && first === undefined)
      throw fail(
        "PORTICO_ERR_MCP_INVALID_REQUEST",
        "Bad Request: the stream Last-Event-ID names is gone (its events expired); send the request again",
      );
    // Who runs the request now: the newest owner marker (a survivor that ran it again marks its own).
    const owner = request && parseOwner(await hub.lastMarker(t, session.id, request.streamId));
    const streamId = resume?.streamId ?? STANDALONE;
    // This replica announces list changes on the stream: it must follow the session's profile.
    warm(tenant, session);
    // Counted before the stream starts: a refusal is still a JSON-RPC error (docs/security.md).
    const max = this.deps.config.maxStreamsPerSession;
    const lease = max > 0 ? await this.deps.sessions.claimStream(t, session.id, streamId, max) : undefined;
    let detach: () => boolean;
    try {
      detach = await this.#startStream(t, session, reply, streamId, resume?.entryId);
    } catch (err) {
      lease?.release();
      throw err;
    }
    // Its request runs elsewhere: answered here if that replica dies first (stream-owners.ts).
    const unguard =
      request &&
      this.deps.owners.guard(tenant, session, request, owner, (call, send) =>
        this.run(tenant, session, call, caller, send),
      );
    // A client that only listens is not idle: its open stream keeps the session (and its place
    // among the session's streams) alive.
    const keepAlive = setInterval(
      () => {
        void this.deps.sessions.touch(t, session.id).catch(() => undefined);
        lease?.renew();
      },
      (this.deps.config.sessionIdleTtlSeconds * 1000) / 3,
    );
    keepAlive.unref();
    const close = () => {
      clearInterval(keepAlive);
      unguard?.();
      // A stream another connection took over keeps its place: the new carrier holds it.
      if (detach()) lease?.release();
    };
    reply.sse.onClose(close);
    if (!reply.sse.isConnected) close();
  }

  /** Primes (or, resumed, flushes) a GET stream and attaches it; resolves with its detach. */
  async #startStream(
    t: string,
    session: Session,
    reply: FastifyReply,
    streamId: string,
    resumeAfter: string | undefined,
  ): Promise<() => boolean> {
    const { hub } = this.deps;
    reply.sse.keepAlive();
    const primingId = resumeAfter === undefined ? await hub.standalonePosition(t, session.id) : undefined;
    const afterEntryId = primingId === undefined ? resumeAfter : parseEventId(primingId)!.entryId;
    if (primingId !== undefined && primesStreams(session.protocolVersion))
      await reply.sse.send({ id: primingId, data: "", retry: this.deps.config.sseRetryMs });
    else {
      // Headers at once: a resumed stream, or one without priming, may have nothing to send for a while.
      reply.sse.sendHeaders();
      reply.raw.flushHeaders();
    }
    return hub.attach(t, session.id, streamId, sseSink(reply), {
      afterEntryId,
      resumed: resumeAfter !== undefined,
      server: session.server,
    });
  }

  /** DELETE: ends the session everywhere and frees its upstream sessions. */
  async terminate(tenant: TenantRuntime, session: Session): Promise<void> {
    await this.end(tenant.config.id, session.id, tenant);
  }

  /**
   * Ends a session from anywhere (DELETE, the admin API): its id is unknown from now on, its
   * streams close on every replica, its upstream sessions end. False when it did not exist.
   */
  async end(tenantId: string, sessionId: string, tenant?: TenantRuntime): Promise<boolean> {
    const existed = await this.deps.sessions.delete(tenantId, sessionId);
    await this.deps.hub.publish(tenantId, sessionId, { k: "end" });
    this.#endLocal(tenantId, sessionId);
    const providers = tenant?.catalog.providers ?? [];
    await Promise.allSettled(providers.map(async (p) => p.endSession?.(sessionId)));
    await Promise.all([
      this.deps.sessions.purge(tenantId, sessionId),
      this.deps.hub.dropLogs(tenantId, sessionId),
    ]);
    return existed;
  }

  /** Sends a message on the session's standalone stream (unrelated to any request). */
  sendStandalone(tenant: TenantRuntime, session: Session, json: string): Promise<void> {
    return this.#standalone(tenant.config.id, session.id)(json);
  }

  /** How providers reach a session outside a request: its standalone stream. */
  readonly outlet: SessionOutlet = {
    notify: async (tenant, sid, method, params) => {
      // A log message below the session's level is dropped here too (an upstream may ignore it).
      if (method === "notifications/message" && !(await this.#logged(tenant, sid, params.level))) return;
      await this.#standalone(tenant, sid)(JSON.stringify({ jsonrpc: "2.0", method, params }));
    },
    request: (tenant, sid, method, params) =>
      this.#asks.request(tenant, sid, method, params, undefined, this.#standalone(tenant, sid)),
  };

  /** Whether a log message at `level` reaches the session: a known level at or above its own. */
  async #logged(tenant: string, sid: string, level: unknown): Promise<boolean> {
    if (!isLogLevel(level)) return false;
    const info = await this.deps.sessions.read(tenant, sid);
    return info !== undefined && logPasses(level, info.session.logLevel);
  }

  #standalone(tenant: string, sid: string): (json: string) => Promise<void> {
    return async (json) => {
      await this.deps.hub.emit(tenant, sid, STANDALONE, json);
    };
  }

  /** Messages from the session channel that are not stream events. */
  onBus(tenant: string, sid: string, msg: BusMessage): void {
    if (msg.k === "res") this.#asks.settle(tenant, sid, JSON.parse(msg.d) as RpcResponse);
    else if (msg.k === "cancel") this.#cancelLocal(tenant, sid, msg.id);
    else if (msg.k === "end") this.#endLocal(tenant, sid);
  }

  async #setLogLevel(tenant: TenantRuntime, session: Session, level: LoggingLevel): Promise<void> {
    const live = await this.deps.sessions.update({ ...session, logLevel: level });
    if (!live)
      throw fail("PORTICO_ERR_MCP_SESSION_NOT_FOUND", "Session not found: it expired or was terminated");
    await Promise.allSettled(tenant.catalog.providers.map(async (p) => p.setLogLevel?.(session.id, level)));
  }

  /**
   * After this replica's subscription to a session's channel was lost and taken again: its
   * requests of that session that a client cancelled meanwhile (on another replica) are cancelled.
   */
  recover(tenant: string, sid: string): void {
    const prefix = `${tenant}\u0000${sid}\u0000`;
    for (const key of this.#inflight.keys()) {
      if (!key.startsWith(prefix)) continue;
      const id = JSON.parse(key.slice(prefix.length)) as RequestId;
      void this.deps.hub.keptCancel(tenant, sid, id).then(
        (cancelled) => cancelled && this.#cancelLocal(tenant, sid, id),
        () => undefined,
      );
    }
  }

  #cancelLocal(tenant: string, sid: string, id: RequestId): boolean {
    const abort = this.#inflight.get(inflightKey(tenant, sid, id));
    abort?.abort(new Error("cancelled by the client"));
    return abort !== undefined;
  }

  #endLocal(tenant: string, sid: string): void {
    const prefix = `${tenant}\u0000${sid}\u0000`;
    for (const [key, abort] of this.#inflight)
      if (key.startsWith(prefix)) abort.abort(new Error("session ended"));
    this.deps.hub.closeSession(tenant, sid);
  }
}

/**
 * Has the session's capability profile listed on this replica (docs/architecture.md §3): the
 * providers then follow that profile's lists here, and its changes reach the streams here.
 */
function warm(tenant: TenantRuntime, session: Session): void {
  const catalog = tenant.catalogFor(session.profile);
  if (catalog instanceof Promise) catalog.catch(() => undefined);
}

function inflightKey(tenant: string, sid: string, id: RequestId): string {
  return `${tenant}\u0000${sid}\u0000${JSON.stringify(id)}`;
}

/** serverInfo.title: `Portico · {tenant}`, and ` · {server}` on a virtual server's URL (§8). */
export function serverTitle(tenant: TenantRuntime): string {
  const base = `Portico · ${tenant.config.name ?? tenant.config.id}`;
  return tenant.server ? `${base} · ${tenant.server.name ?? tenant.server.id}` : base;
}
