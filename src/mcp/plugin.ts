// The MCP endpoint /mcp/{tenant}, and /mcp/{tenant}/{server} for each virtual server (docs/architecture.md
// §1–2, §8): parses and classifies each request once at the edge, then hands it to the lane of its era
// (session or stateless). Errors leave as JSON-RPC errors with the right status (edge/error-reply.ts).
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from "fastify";
import fastifySseModule, { type SSEPluginOptions } from "@fastify/sse";
import {
  pathEndsWithSlash,
  protectedResource,
  scopeFor,
  SCOPES,
  type ResourceServer,
} from "../auth/resource-server.js";
import type { Authenticated } from "../policy/caller.js";
import type { Config } from "../config/env.js";
import { excerpt, fail, isPorticoError, PorticoError } from "../protocol/errors.js";
import { RpcCode } from "../protocol/codes.js";
import { bindLog } from "../logs/logger.js";
import type { TenantRegistry } from "../tenants/registry.js";
import type { TenantRuntime } from "../tenants/runtime.js";
import {
  acceptable,
  type Acceptable,
  checkVersionHeader,
  corsPreflightHeaders,
  guardOrigin,
  sessionIdOf,
} from "./edge/http-edge.js";
import { classify, errorResponse, type RpcResponse } from "../protocol/jsonrpc.js";
import type { McpLimits } from "./limits.js";
import type { OriginPolicy } from "./edge/origin.js";
import { eraOf, isStatelessVersion, SESSION_VERSIONS } from "../protocol/era.js";
import { checkRequestHeaders } from "../protocol/request-headers.js";
import { sendError } from "./edge/error-reply.js";
import { noTenantRoutes, unknownServer, unknownTenant } from "./edge/no-tenant.js";
import { requestMetaOf } from "./stateless/request-meta.js";
import type { SessionLane } from "./session/lane.js";
import type { StatelessLane } from "./stateless/lane.js";
import type { SessionStore } from "./sessions.js";
import type { Session } from "./session-record.js";
import type { StreamHub } from "./session/streams.js";
import { legacySseRoutes } from "./session/legacy-sse.js";
import { INTERNAL_CALLER_HEADER, type InternalCallers } from "./internal-callers.js";

export interface McpPluginOptions {
  readonly config: Config;
  readonly registry: TenantRegistry;
  readonly sessions: SessionStore;
  readonly lane: SessionLane;
  readonly hub: StreamHub;
  readonly stateless: StatelessLane;
  readonly origin: OriginPolicy;
  /** Guards "oauth" tenants; without it they are not served (404). */
  readonly resourceServer?: ResourceServer;
  /** Per-tenant and per-client rate limits; without it nothing is limited. */
  readonly limits?: McpLimits;
  /** Callers the process vouches for (the admin API's try it, docs/admin-api.md "Try it"). */
  readonly internalCallers?: InternalCallers;
}

interface TenantParams {
  tenant: string;
  /** A virtual server's id (docs/architecture.md §8); absent at the tenant's own URL. */
  server?: string;
}

type Req = FastifyRequest<{ Params: TenantParams }>;

// The package is CommonJS: its default import is the fastify-plugin-wrapped module itself.
const fastifySse = fastifySseModule as unknown as FastifyPluginAsync<SSEPluginOptions>;

// SSE data is already-serialized JSON (or "" for priming events): write it as is.
const sseRoute = {
  kind: "manual" as const,
  serializer: (d: unknown) => (typeof d === "string" ? d : JSON.stringify(d)),
};

export async function mcpPlugin(app: FastifyInstance, opts: McpPluginOptions): Promise<void> {
  const { registry, sessions, lane, origin, config } = opts;
  await app.register(fastifySse, { heartbeatInterval: config.sseHeartbeatMs });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    // No body at all is the handler's to answer ("no JSON body"), not a parse error here.
    if (body === "") return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body as string);
    } catch {
      return done(fail("PORTICO_ERR_MCP_PARSE", "Parse error: the body is not valid JSON"), undefined);
    }
    // Each level takes two characters at least: a short body cannot be too deep.
    if ((body as string).length > 2 * MAX_JSON_DEPTH && nestedDeeperThan(parsed, MAX_JSON_DEPTH))
      return done(
        fail(
          "PORTICO_ERR_MCP_INVALID_REQUEST",
          `Invalid Request: the body nests deeper than ${MAX_JSON_DEPTH} levels`,
        ),
        undefined,
      );
    done(null, parsed);
  });
  app.setErrorHandler((err: FastifyError | PorticoError, req, reply) => {
    if (isPorticoError(err) && err.status === 429) opts.limits?.refused(err.code);
    return sendError(err, req, reply);
  });

  const { resourceServer } = opts;
  const tenantOf = (req: Req): TenantRuntime => {
    const tenant = registry.get(req.params.tenant);
    if (!tenant) throw unknownTenant(req.params.tenant, config.publicUrl);
    if (tenant.config.auth !== "none" && !resourceServer)
      throw fail(
        "PORTICO_ERR_MCP_TENANT_NOT_FOUND",
        `Tenant '${excerpt(req.params.tenant)}' requires OAuth, which is not enabled on this server`,
      );
    const { server } = req.params;
    if (server === undefined) return tenant;
    // Another tenant's server is not found here either: servers are looked up within the tenant.
    const runtime = registry.server(tenant.config.id, server);
    if (!runtime) throw unknownServer(tenant.config.id, server, config.publicUrl);
    return runtime;
  };

  /**
   * Who asks: undefined on tenants without authentication; a 401 for a missing or bad token (one
   * for another URL of the tenant too: each virtual server is its own audience), a 403 for a token
   * without a virtual server's own scopes.
   */
  const callerOf = async (req: Req, tenant: TenantRuntime): Promise<Authenticated | undefined> => {
    const vouched = opts.internalCallers?.take(req.headers[INTERNAL_CALLER_HEADER], {
      tenant: tenant.config.id,
      server: tenant.server?.id,
    });
    if (vouched) return vouched;
    if (tenant.config.auth === "none" || !resourceServer) return undefined;
    const resource = protectedResource(tenant);
    const caller = await resourceServer.authenticate(
      resource,
      req.headers.authorization,
      pathEndsWithSlash(req.url),
    );
    if (tenant.server?.scopes) resourceServer.requireScope(resource, caller, SCOPES.read);
    return caller;
  };

  /** 403 with a step-up challenge when the token's scopes do not cover the method. */
  const requireScope = (tenant: TenantRuntime, caller: Authenticated | undefined, method: string) => {
    if (caller && resourceServer)
      resourceServer.requireScope(protectedResource(tenant), caller, scopeFor(method));
  };

  /** Counts the request against its tenant's and client's limits, in memory; throws when over. */
  const admit = (req: Req, tenant: TenantRuntime, caller: Authenticated | undefined) =>
    opts.limits?.admit(tenant, caller, req.ip);

  /** Sessions of unauthenticated tenants belong to "". */
  const principalOf = (caller: Authenticated | undefined): string => caller?.principal ?? "";

  const sessionOf = async (
    req: Req,
    tenant: TenantRuntime,
    caller: Authenticated | undefined,
  ): Promise<Session> => {
    const sid = sessionIdOf(req);
    // 2026-07-28 has no GET stream and no DELETE (transports §Backward Compatibility: S 405).
    if (sid === undefined && req.method !== "POST" && isStatelessVersion(req.headers["mcp-protocol-version"]))
      throw fail(
        "PORTICO_ERR_MCP_METHOD_NOT_ALLOWED",
        `Method Not Allowed: without a session (protocol version ${excerpt(String(req.headers["mcp-protocol-version"]).trim())}) there is no ${req.method} on this endpoint; POST each request, and subscriptions/listen for notifications`,
      );
    if (sid === undefined)
      throw fail(
        "PORTICO_ERR_MCP_SESSION_REQUIRED",
        "Bad Request: the Mcp-Session-Id header is required; send initialize first",
      );
    const session = await sessions.touch(tenant.config.id, sid);
    // A session id is never a credential: used by anyone but its principal, or at another URL of
    // the tenant than the one that opened it (§8), it does not exist; nor does a session of the
    // HTTP+SSE transport here (session/legacy-sse.ts).
    if (
      !session ||
      session.principal !== principalOf(caller) ||
      session.transport === "sse" ||
      session.server !== tenant.server?.id
    )
      throw fail(
        "PORTICO_ERR_MCP_SESSION_NOT_FOUND",
        "Session not found: it expired or was terminated; initialize a new one",
      );
    checkVersionHeader(req, SESSION_VERSIONS);
    return session;
  };

  const post = async (req: Req, reply: FastifyReply) => {
    guardOrigin(origin, req, reply);
    const tenant = tenantOf(req);
    const caller = await callerOf(req, tenant);
    const accept = acceptable(req.headers.accept);
    if (!accept.json && !accept.sse)
      throw fail(
        "PORTICO_ERR_MCP_NOT_ACCEPTABLE",
        "Not Acceptable: the client must accept application/json or text/event-stream",
      );
    const body: unknown = req.body;
    if (body === undefined) throw fail("PORTICO_ERR_MCP_PARSE", "Parse error: the request has no JSON body");
    const version = req.headers["mcp-protocol-version"];
    if (eraOf(sessionIdOf(req), typeof version === "string" ? version : undefined, body) === "stateless")
      return statelessPost(req, reply, tenant, caller, body, accept);

    const message = Array.isArray(body) ? undefined : classify(body);
    if (message?.kind === "invalid") throw invalid(message.reason);
    if (message?.kind === "request" || message?.kind === "notification")
      bindLog(req.log, { method: message.message.method });
    requireScope(tenant, caller, message?.kind === "request" ? message.message.method : "");
    if (message?.kind === "request" && message.message.method === "initialize") {
      if (sessionIdOf(req) !== undefined)
        throw fail("PORTICO_ERR_MCP_INVALID_REQUEST", "Invalid Request: this session is already initialized");
      // Admitted before the session exists: a refused initialize leaves nothing behind.
      admit(req, tenant, caller);
      const owner = opts.limits?.sessionOwner(tenant, caller, req.ip);
      const { session, response } = await lane.initialize(
        tenant,
        message.message,
        principalOf(caller),
        owner,
      );
      return reply
        .header("mcp-session-id", session.id)
        .header("content-type", "application/json")
        .send(JSON.stringify(response));
    }
    admit(req, tenant, caller);
    const session = await sessionOf(req, tenant, caller);
    if (message === undefined) return handleBatch(tenant, session, caller, body as unknown[], reply);
    switch (message.kind) {
      case "notification":
        await lane.notification(tenant, session, message.message);
        return reply.code(202).send();
      case "response":
        await lane.response(tenant, session, message.message);
        return reply.code(202).send();
      case "request":
        await lane.request(tenant, session, message.message, reply, accept.sse, caller);
        return reply;
    }
  };

  /** A 2026-07-28 request: checked at the edge, then served by the stateless lane. */
  async function statelessPost(
    req: Req,
    reply: FastifyReply,
    tenant: TenantRuntime,
    caller: Authenticated | undefined,
    body: unknown,
    accepts: Acceptable,
  ) {
    if (Array.isArray(body)) throw invalid("2026-07-28 has no JSON-RPC batches; send one message per POST");
    const message = classify(body);
    if (message.kind === "invalid") throw invalid(message.reason);
    if (message.kind === "response")
      throw invalid("2026-07-28 clients send requests and notifications, never responses");
    const { method } = message.message;
    const params = message.message.params ?? {};
    bindLog(req.log, { method });
    const meta = requestMetaOf(params, req.headers);
    requireScope(tenant, caller, message.kind === "request" ? method : "");
    admit(req, tenant, caller);
    // No client notification means anything to a stateless server (cancellation is closing the stream).
    if (message.kind === "notification") return reply.code(202).send();
    const catalog = method === "tools/call" ? await tenant.catalogFor(meta.profile, caller?.user) : undefined;
    // A tool the policy hides has no headers to check: it is answered as unknown (docs/policy.md).
    const routes = catalog && (tenant.policy?.view(catalog, caller, tenant.server?.id) ?? catalog);
    checkRequestHeaders(req.headers, method, params, routes?.tool(String(params.name))?.tool);
    await opts.stateless.request(tenant, message.message, meta, reply, accepts, caller);
    return reply;
  }

  // JSON-RPC batches exist only in 2025-03-26 (basic/transports); they are answered as one JSON array.
  async function handleBatch(
    tenant: TenantRuntime,
    session: Session,
    caller: Authenticated | undefined,
    batch: unknown[],
    reply: FastifyReply,
  ) {
    if (session.protocolVersion !== "2025-03-26")
      throw fail(
        "PORTICO_ERR_MCP_BATCH_NOT_ALLOWED",
        `Invalid Request: JSON-RPC batches are not allowed in protocol version ${session.protocolVersion}`,
      );
    if (batch.length === 0 || batch.length > 100) throw invalid("a batch must hold 1 to 100 messages");
    for (const item of batch) {
      const c = classify(item);
      if (c.kind === "request") requireScope(tenant, caller, c.message.method);
    }
    const responses = await Promise.all(
      batch.map(async (item): Promise<RpcResponse | undefined> => {
        const c = classify(item);
        if (c.kind === "invalid")
          return errorResponse(c.id, RpcCode.InvalidRequest, `Invalid Request: ${c.reason}`);
        if (c.kind === "notification") await lane.notification(tenant, session, c.message);
        else if (c.kind === "response") await lane.response(tenant, session, c.message);
        else if (c.message.method === "initialize")
          return errorResponse(
            c.message.id,
            RpcCode.InvalidRequest,
            "Invalid Request: initialize must not be part of a batch",
          );
        else
          return lane.run(
            tenant,
            session,
            c.message,
            caller,
            (json) => lane.sendStandalone(tenant, session, json),
            reply.log,
          );
        return undefined;
      }),
    );
    const answers = responses.filter((r): r is RpcResponse => r !== undefined);
    if (answers.length === 0) return reply.code(202).send();
    return reply.header("content-type", "application/json").send(JSON.stringify(answers));
  }

  const get = async (req: Req, reply: FastifyReply) => {
    guardOrigin(origin, req, reply);
    const tenant = tenantOf(req);
    const caller = await callerOf(req, tenant);
    if (!acceptable(req.headers.accept).sse)
      throw fail(
        "PORTICO_ERR_MCP_NOT_ACCEPTABLE",
        "Not Acceptable: a GET stream needs Accept: text/event-stream",
      );
    admit(req, tenant, caller);
    const session = await sessionOf(req, tenant, caller);
    const last = req.headers["last-event-id"];
    await lane.openStream(tenant, session, reply, Array.isArray(last) ? last[0] : last, caller);
    return reply;
  };

  const remove = async (req: Req, reply: FastifyReply) => {
    guardOrigin(origin, req, reply);
    const tenant = tenantOf(req);
    const caller = await callerOf(req, tenant);
    admit(req, tenant, caller);
    await lane.terminate(tenant, await sessionOf(req, tenant, caller));
    return reply.code(204).send();
  };

  const options = async (req: Req, reply: FastifyReply) => {
    guardOrigin(origin, req, reply);
    return reply.headers(corsPreflightHeaders(req)).code(204).send();
  };

  // The tenant's own URL and each of its virtual servers' (`sse` and `messages` are the HTTP+SSE
  // transport's static routes, which the router prefers, and never server ids).
  for (const url of ["/mcp/:tenant", "/mcp/:tenant/:server"]) {
    app.post<{ Params: TenantParams }>(url, { sse: sseRoute }, post);
    app.get<{ Params: TenantParams }>(url, { sse: sseRoute, exposeHeadRoute: false }, get);
    app.delete<{ Params: TenantParams }>(url, remove);
    app.options<{ Params: TenantParams }>(url, options);
  }

  legacySseRoutes(app, {
    ...opts,
    sseRoute,
    edge: { tenantOf, callerOf, requireScope, admit, principalOf },
  });

  // Refused on arrival, before any body is read (an unreadable body would otherwise answer 415).
  const notAllowed = async () => {
    throw fail("PORTICO_ERR_MCP_METHOD_NOT_ALLOWED", `Method Not Allowed: use POST, GET or DELETE`);
  };
  for (const method of ["PUT", "PATCH", "HEAD", "TRACE"] as const)
    for (const url of ["/mcp/:tenant", "/mcp/:tenant/:server"])
      app.route({ method, url, onRequest: notAllowed, handler: notAllowed });
  noTenantRoutes(app, config.publicUrl);
}

function invalid(reason: string) {
  return fail("PORTICO_ERR_MCP_INVALID_REQUEST", `Invalid Request: ${reason}`);
}

/**
 * How deep a body may nest. Nothing MCP sends comes near it, and a body far deeper would overflow
 * the stack when it is serialized again (for an upstream, a log), failing far from its cause.
 */
const MAX_JSON_DEPTH = 512;

/** True when a parsed JSON value nests arrays and objects deeper than `max` (without recursing). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ v: object; depth: number }> = [];
  if (typeof value === "object" && value !== null) stack.push({ v: value, depth: 1 });
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.depth > max) return true;
    for (const child of Array.isArray(next.v) ? next.v : Object.values(next.v))
      if (typeof child === "object" && child !== null)
        stack.push({ v: child as object, depth: next.depth + 1 });
  }
  return false;
}
