// The deprecated HTTP+SSE transport of 2024-11-05 (docs/protocol-eras.md "The legacy HTTP+SSE
// transport"): GET /mcp/{tenant}/sse opens a session and its one stream, which first names the
// endpoint to POST to; POST /mcp/{tenant}/messages?sessionId=… takes the client's messages (202)
// and everything the server says goes out on the stream, from whichever replica says it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Authenticated } from "../../policy/caller.js";
import type { Config } from "../../config/env.js";
import { excerpt, fail, isPorticoError } from "../../protocol/errors.js";
import { RpcCode } from "../../protocol/codes.js";
import { classify, errorResponse, type RpcRequest } from "../../protocol/jsonrpc.js";
import type { TenantRuntime } from "../../tenants/runtime.js";
import { acceptable, corsPreflightHeaders, guardOrigin } from "../edge/http-edge.js";
import type { McpLimits } from "../limits.js";
import type { OriginPolicy } from "../edge/origin.js";
import type { SessionLane } from "./lane.js";
import type { SessionStore } from "../sessions.js";
import type { Session } from "../session-record.js";
import { STANDALONE, type SseSink, type StreamHub } from "./streams.js";
import { backlogOf } from "../sse-events.js";

type Req = FastifyRequest<{ Params: { tenant: string; server?: string } }>;
type PostReq = FastifyRequest<{
  Params: { tenant: string; server?: string };
  Querystring: { sessionId?: unknown };
}>;

/** The runtime's path below /mcp/: `{tenant}`, or `{tenant}/{server}` for a virtual server. */
function pathOf(tenant: TenantRuntime): string {
  return tenant.server ? `${tenant.config.id}/${tenant.server.id}` : tenant.config.id;
}

/** The checks mcp/plugin.ts makes for every /mcp request, shared with this transport. */
export interface McpEdge {
  tenantOf(req: Req): TenantRuntime;
  callerOf(req: Req, tenant: TenantRuntime): Promise<Authenticated | undefined>;
  requireScope(tenant: TenantRuntime, caller: Authenticated | undefined, method: string): void;
  admit(req: Req, tenant: TenantRuntime, caller: Authenticated | undefined): void;
  principalOf(caller: Authenticated | undefined): string;
}

export interface LegacySseDeps {
  readonly config: Config;
  readonly sessions: SessionStore;
  readonly lane: SessionLane;
  readonly hub: StreamHub;
  readonly origin: OriginPolicy;
  readonly limits?: McpLimits;
  readonly edge: McpEdge;
  /** The route options of an SSE reply (mcp/plugin.ts). */
  readonly sseRoute: object;
}

/**
 * How long a session outlives its stream's last sign of life. The replica carrying the stream
 * renews it every third of that; a replica that dies leaves its sessions to expire, so POSTs for
 * them answer 404 instead of 202 with nobody to deliver the answer.
 */
export const LEASE_SECONDS = 15;

/** Registers the two paths (they are reserved under every tenant, docs/architecture.md §1). */
export function legacySseRoutes(app: FastifyInstance, deps: LegacySseDeps): void {
  const { config, sessions, lane, hub, origin, edge } = deps;
  const leaseSeconds = Math.min(LEASE_SECONDS, config.sessionIdleTtlSeconds);
  const basePath = new URL(config.publicUrl).pathname.replace(/\/+$/, "");
  const ending = new Set<Promise<unknown>>();

  const enabled = () => {
    if (!config.legacySse)
      throw fail(
        "PORTICO_ERR_MCP_LEGACY_SSE_DISABLED",
        "Not Found: the deprecated HTTP+SSE transport is disabled on this server (PORTICO_LEGACY_SSE=false); use Streamable HTTP at /mcp/{tenant}",
      );
  };

  const openStream = async (req: Req, reply: FastifyReply) => {
    enabled();
    guardOrigin(origin, req, reply);
    const tenant = edge.tenantOf(req);
    const caller = await edge.callerOf(req, tenant);
    if (!acceptable(req.headers.accept).sse)
      throw fail(
        "PORTICO_ERR_MCP_NOT_ACCEPTABLE",
        "Not Acceptable: the SSE stream needs Accept: text/event-stream",
      );
    edge.admit(req, tenant, caller);
    const t = tenant.config.id;
    // The session exists before initialize: its id is in the endpoint the stream names.
    const session = await sessions.create(
      {
        tenantId: t,
        protocolVersion: "",
        clientCapabilities: {},
        clientName: "",
        principal: edge.principalOf(caller),
        transport: "sse",
        ...(tenant.server && { server: tenant.server.id }),
      },
      deps.limits?.sessionOwner(tenant, caller, req.ip),
      leaseSeconds,
    );
    let detach: (() => boolean) | undefined;
    try {
      reply.sse.keepAlive();
      detach = await hub.attach(t, session.id, STANDALONE, legacySink(reply), {
        fresh: true,
        server: tenant.server?.id,
      });
      // Subscribed before the client learns where to POST: an answer from any replica arrives.
      await hub.held(t, session.id);
      const endpoint = `${basePath}/mcp/${pathOf(tenant)}/messages?sessionId=${session.id}`;
      await reply.sse.send({ event: "endpoint", data: endpoint });
    } catch (err) {
      detach?.();
      await lane.end(t, session.id, tenant);
      throw err;
    }
    let profiled = false;
    const lease = setInterval(
      () => {
        void sessions.renew(session, leaseSeconds).catch(() => undefined);
        // This replica announces list changes on the stream: once initialize (on any replica)
        // told the client's capabilities, it follows that profile (docs/architecture.md §3).
        if (!profiled)
          void sessions
            .peek(t, session.id)
            .then((s) => s?.protocolVersion && ((profiled = true), follow(tenant, s)))
            .catch(() => undefined);
      },
      (leaseSeconds * 1000) / 3,
    );
    lease.unref();
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearInterval(lease);
      detach?.();
      // The stream was the session: without it no answer can reach the client.
      const end = lane.end(t, session.id, tenant).catch((err: unknown) => {
        req.log.warn({ err }, "an HTTP+SSE session was not cleaned up; it expires on its own");
      });
      ending.add(end);
      void end.finally(() => ending.delete(end));
    };
    reply.sse.onClose(close);
    if (!reply.sse.isConnected) close();
    return reply;
  };

  const postMessage = async (req: PostReq, reply: FastifyReply) => {
    enabled();
    guardOrigin(origin, req, reply);
    const tenant = edge.tenantOf(req);
    const caller = await edge.callerOf(req, tenant);
    const body: unknown = req.body;
    if (body === undefined) throw fail("PORTICO_ERR_MCP_PARSE", "Parse error: the request has no JSON body");
    if (Array.isArray(body)) throw invalid("this transport takes one JSON-RPC message per POST");
    const message = classify(body);
    if (message.kind === "invalid") throw invalid(message.reason);
    edge.requireScope(tenant, caller, message.kind === "request" ? message.message.method : "");
    edge.admit(req, tenant, caller);
    const session = await sessionOf(req, tenant, caller);
    const initializing = message.kind === "request" && message.message.method === "initialize";
    if (initializing === (session.protocolVersion !== ""))
      throw invalid(initializing ? "this session is already initialized" : "send initialize first");
    if (message.kind === "notification") await lane.notification(tenant, session, message.message);
    else if (message.kind === "response") await lane.response(tenant, session, message.message);
    // Accepted now, answered on the stream (2024-11-05 basic/transports "HTTP with SSE").
    else void answerOnStream(tenant, session, message.message, req, caller);
    return reply.code(202).header("content-type", "text/plain").send("Accepted");
  };

  // The tenant's own transport and each virtual server's (docs/architecture.md §8).
  for (const base of ["/mcp/:tenant", "/mcp/:tenant/:server"]) {
    app.get(`${base}/sse`, { sse: deps.sseRoute, exposeHeadRoute: false }, openStream);
    app.post(`${base}/messages`, postMessage);
  }

  /** The session a POST names: of this tenant, of this caller, of this transport; else 404. */
  async function sessionOf(
    req: PostReq,
    tenant: TenantRuntime,
    caller: Authenticated | undefined,
  ): Promise<Session> {
    const sid = req.query.sessionId;
    if (typeof sid !== "string" || sid === "")
      throw fail(
        "PORTICO_ERR_MCP_SESSION_REQUIRED",
        `Bad Request: the sessionId query parameter is required; open the stream with GET /mcp/${pathOf(tenant)}/sse and POST to the endpoint it names`,
      );
    const session = await sessions.peek(tenant.config.id, sid);
    // A session id is never a credential: anyone but its principal finds nothing, nor does
    // another URL of the tenant (§8).
    if (
      !session ||
      session.transport !== "sse" ||
      session.principal !== edge.principalOf(caller) ||
      session.server !== tenant.server?.id
    )
      throw fail(
        "PORTICO_ERR_MCP_SESSION_NOT_FOUND",
        `Session not found: its stream closed or it expired; open a new one with GET /mcp/${pathOf(tenant)}/sse`,
      );
    const header = req.headers["mcp-protocol-version"];
    const version = (Array.isArray(header) ? header[0] : header)?.trim();
    if (version !== undefined && session.protocolVersion !== "" && version !== session.protocolVersion)
      throw fail(
        "PORTICO_ERR_MCP_PROTOCOL_VERSION",
        `Unsupported MCP-Protocol-Version '${excerpt(version)}'; this session speaks ${session.protocolVersion}`,
        { supported: [session.protocolVersion], requested: excerpt(version) },
      );
    return session;
  }

  /** Runs a request and sends what it says, its answer last, on the session's stream. */
  async function answerOnStream(
    tenant: TenantRuntime,
    session: Session,
    request: RpcRequest,
    req: Req,
    caller: Authenticated | undefined,
  ) {
    const t = tenant.config.id;
    // In the order sent: one replica's publishes on one connection arrive in order.
    const send = (json: string) => hub.deliver(t, session.id, STANDALONE, json);
    try {
      if (request.method === "initialize") {
        const { response } = await lane.initialize(tenant, request, session.principal, undefined, session);
        return await send(JSON.stringify(response));
      }
      // The client's notifications/cancelled may reach another replica: it comes on the channel.
      const release = hub.hold(t, session.id);
      try {
        const response = await lane.run(tenant, session, request, caller, send, req.log);
        // A cancelled request gets no response (basic/utilities/cancellation).
        if (response !== undefined) await send(JSON.stringify(response));
      } finally {
        release();
      }
    } catch (err) {
      if (!isPorticoError(err)) req.log.error({ err }, "unexpected error on an HTTP+SSE session");
      const e = isPorticoError(err)
        ? err
        : { rpc: RpcCode.InternalError, message: "Internal error", data: undefined };
      await send(JSON.stringify(errorResponse(request.id, e.rpc, e.message, e.data))).catch(() => undefined);
    }
  }

  for (const [url, allow] of [
    ["/mcp/:tenant/sse", "GET"],
    ["/mcp/:tenant/messages", "POST"],
    ["/mcp/:tenant/:server/sse", "GET"],
    ["/mcp/:tenant/:server/messages", "POST"],
  ] as const) {
    app.options<{ Params: { tenant: string } }>(url, async (req, reply) => {
      enabled();
      guardOrigin(origin, req, reply);
      return reply.headers(corsPreflightHeaders(req)).code(204).send();
    });
    // A Streamable HTTP client POSTing to the stream's URL learns to fall back to GET (405), as
    // the SDK clients do; refused on arrival, before any body is read.
    const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) => {
      enabled();
      void reply.header("allow", `${allow}, OPTIONS`);
      throw fail(
        "PORTICO_ERR_MCP_METHOD_NOT_ALLOWED",
        allow === "GET"
          ? "Method Not Allowed: this is the stream of the deprecated HTTP+SSE transport (GET it, then POST to the endpoint it names); Streamable HTTP clients use /mcp/{tenant}"
          : "Method Not Allowed: POST each JSON-RPC message here; the stream is GET /mcp/{tenant}/sse",
      );
    };
    const others = (["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const).filter((m) => m !== allow);
    for (const method of others)
      app.route({ method, url, exposeHeadRoute: false, onRequest: notAllowed, handler: notAllowed });
  }

  // Sessions whose stream closed as the app closes are ended before the store goes.
  app.addHook("onClose", async () => {
    await Promise.allSettled([...ending]);
  });
}

/** Has the session's capability profile listed here (as lane.ts's warm does). */
function follow(tenant: TenantRuntime, session: Session): void {
  const catalog = tenant.catalogFor(session.profile);
  if (catalog instanceof Promise) catalog.catch(() => undefined);
}

/** The stream's events, as 2024-11-05 spells them: `event: message`, no ids (nothing resumes). */
function legacySink(reply: FastifyReply): SseSink {
  return {
    write(_eventId: string, data: string) {
      if (!reply.sse.isConnected) return;
      if (!reply.raw.headersSent) reply.sse.send({ event: "message", data }).catch(() => undefined);
      else reply.raw.write(`event: message\ndata: ${data}\n\n`);
    },
    get backlog() {
      return backlogOf(reply);
    },
    destroy() {
      reply.raw.destroy();
    },
    close() {
      reply.sse.close();
    },
  };
}

function invalid(reason: string) {
  return fail("PORTICO_ERR_MCP_INVALID_REQUEST", `Invalid Request: ${reason}`);
}
