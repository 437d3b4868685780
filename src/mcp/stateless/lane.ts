// The stateless era (2026-07-28; basic/transports/streamable-http, basic/versioning): no
// handshake and no session. Each request carries what it needs in `_meta`; its answer is JSON, or
// an SSE stream when progress or log messages precede it; closing that stream cancels it. Every
// result says `resultType`, names the server in `_meta`, and lists, reads and discover carry
// cache hints. `subscriptions/listen` holds a stream open for the change notifications asked for.
import type { FastifyReply } from "fastify";
import type { Config } from "../../config/env.js";
import type { Authenticated } from "../../policy/caller.js";
import { excerpt } from "../../protocol/errors.js";
import type { Metrics } from "../../metrics/metrics.js";
import type { CatalogView } from "../../policy/view.js";
import type { TenantRuntime } from "../../tenants/runtime.js";
import { PORTICO_INFO } from "../../protocol/version.js";
import { keepRewritten, responseJson, textOf } from "../../protocol/verbatim.js";
import { answer, nextTurn } from "../answer.js";
import { Cancellation } from "../cancellation.js";
import type { Cursors } from "../cursor.js";
import type { Acceptable } from "../edge/http-edge.js";
import { RpcCode } from "../../protocol/codes.js";
import { ALL_VERSIONS, META } from "../../protocol/era.js";
import { errorResponse, type RpcRequest, type RpcResponse } from "../../protocol/jsonrpc.js";
import type { ListenHub } from "./listens.js";
import { handlers } from "../methods.js";
import type { Mrtr } from "./mrtr.js";
import type { RequestMeta } from "./request-meta.js";
import { backlogOf, MAX_BACKLOG_BYTES, writeEvent } from "../sse-events.js";
import { StatelessRequestContext } from "./context.js";
import { unwrapCall } from "../tool-search.js";
import { instructionsOf } from "../instructions.js";
import type { Tasks } from "../../tasks/tasks.js";
import {
  cancelStatelessTask,
  getStatelessTask,
  listenedTasks,
  tasksExtension,
  updateStatelessTask,
} from "../task-methods.js";
import type { Handler } from "../methods.js";

const withInstructions = (instructions: string | undefined) =>
  instructions === undefined ? {} : { instructions };

/** Methods the stateless lane serves; anything else is 404 + -32601 (transports §Protocol Version Header). */
const SERVED = new Set([
  "server/discover",
  "subscriptions/listen",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "completion/complete",
  // The tasks extension (docs/upstream-mcp.md#tasks); its tasks/result and tasks/list do not exist.
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
]);

/** The tasks extension's methods: its own forms, not the 2025-11-25 handlers. */
const TASK_HANDLERS: Readonly<Record<string, Handler>> = {
  "tasks/get": getStatelessTask,
  "tasks/update": updateStatelessTask,
  "tasks/cancel": cancelStatelessTask,
};

/** Results that carry ttlMs and cacheScope (server/utilities/caching). */
const CACHEABLE = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);

/**
 * How long a list, a discover result or a static read may be considered fresh. Lists change when
 * admins or upstreams change them, and listen streams announce that at once; a minute bounds how
 * stale a client that does not listen can be.
 */
const FRESH_MS = 60_000;

/** Methods that may answer input_required (basic/patterns/mrtr §Supported Requests). */
const ROUNDS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** HTTP statuses of JSON-RPC errors answered as JSON (transports §Server Validation, §Protocol Version Header). */
const STATUS_OF: Readonly<Record<number, number>> = {
  [RpcCode.MethodNotFound]: 404,
  [RpcCode.HeaderMismatch]: 400,
  [RpcCode.MissingRequiredClientCapability]: 400,
  [RpcCode.UnsupportedProtocolVersion]: 400,
};

export interface StatelessLaneDeps {
  readonly config: Config;
  readonly cursors: Cursors;
  readonly listens: ListenHub;
  readonly mrtr: Mrtr;
  readonly metrics: Metrics;
  /** Portico's tasks; without it, the tasks extension is not offered. */
  readonly tasks?: Tasks;
}

const SERVER_META = Object.freeze({ [META.serverInfo]: PORTICO_INFO });

export class StatelessLane {
  constructor(private readonly deps: StatelessLaneDeps) {}

  /** Answers one request on `reply`, in what the client accepts (JSON, SSE or both). */
  async request(
    tenant: TenantRuntime,
    request: RpcRequest,
    meta: RequestMeta,
    reply: FastifyReply,
    accepts: Acceptable,
    /** Who asks (undefined without auth); its user is whose listen streams a listen counts against. */
    caller: Authenticated | undefined,
  ): Promise<void> {
    const canStream = accepts.sse;
    const stream = new ResponseStream(reply, canStream, accepts.json);
    if (!SERVED.has(request.method))
      return stream.finish(
        errorResponse(
          request.id,
          RpcCode.MethodNotFound,
          `Method not found: ${excerpt(request.method)} is not part of protocol version ${meta.protocolVersion}`,
        ),
      );
    if (request.method === "subscriptions/listen") {
      // Some replica must follow the listener's profile for its changes to be announced.
      const catalog = tenant.catalogFor(meta.profile, caller?.user);
      if (catalog instanceof Promise) catalog.catch(() => undefined);
      const policy = tenant.policy;
      const server = tenant.server?.id;
      const viewed = policy ? withinView(request, policy.view(await catalog, caller, server)) : request;
      // A stream follows only the caller's own tasks (the tasks extension, docs/upstream-mcp.md#tasks).
      const notifications = await listenedTasks(
        viewed.params?.notifications,
        this.deps.tasks,
        tenant,
        meta.clientCapabilities,
        caller?.user,
      );
      const listen = { ...viewed, params: { ...viewed.params, notifications } };
      return this.deps.listens.serve(tenant.config.id, listen, reply, canStream, caller?.user, server);
    }
    const cancellation = new Cancellation();
    // Closing the response stream cancels the request (basic/patterns/cancellation).
    stream.onClose(() => cancellation.abort(new Error("the client closed the response stream")));
    const response = await this.#run(tenant, request, meta, caller, cancellation, stream, reply);
    if (response === undefined) return; // cancelled: nobody is listening
    await nextTurn();
    if ("result" in response && textOf(response.result) !== undefined)
      this.deps.metrics.passedThrough(request.method, "stateless");
    stream.finish(response);
  }

  async #run(
    tenant: TenantRuntime,
    request: RpcRequest,
    meta: RequestMeta,
    caller: Authenticated | undefined,
    cancellation: Cancellation,
    stream: ResponseStream,
    reply: FastifyReply,
  ): Promise<RpcResponse | undefined> {
    const { log } = reply;
    const scope = {
      era: "stateless",
      tenant: tenant.config.id,
      metrics: this.deps.metrics,
      log,
      protocolVersion: meta.protocolVersion,
    } as const;
    const response = await answer(
      request,
      cancellation,
      () => this.#dispatch(tenant, request, meta, caller, cancellation, stream, reply.request),
      scope,
    );
    return response && stateless(response);
  }

  async #dispatch(
    tenant: TenantRuntime,
    request: RpcRequest,
    meta: RequestMeta,
    caller: Authenticated | undefined,
    cancellation: Cancellation,
    stream: ResponseStream,
    peer: { readonly ip: string },
  ): Promise<Record<string, unknown>> {
    // A call through call_tool is the call of the tool it names, for everything from here on.
    request = unwrapCall(tenant, request);
    const { method } = request;
    const open = tenant.config.auth === "none";
    if (method === "server/discover") {
      const capabilities = tenant.catalog.capabilities();
      return this.#complete(method, open ? "public" : "private", {
        supportedVersions: ALL_VERSIONS,
        capabilities: this.deps.tasks
          ? { ...capabilities, extensions: { ...capabilities.extensions, ...tasksExtension() } }
          : capabilities,
        ...withInstructions(instructionsOf(tenant)),
      });
    }
    const catalog = await tenant.catalogFor(meta.profile, caller?.user);
    // What varies with the client's capabilities is never for a shared cache (docs/protocol-eras.md).
    const scope = open && !catalog.varies ? "public" : "private";
    const { cursors, config } = this.deps;
    const send = (json: string) => stream.send(json);
    const params = request.params ?? {};
    // Under a policy, an entry the caller's view lacks (hidden, or unknown) has no rounds, retries
    // included: the handler answers it as unknown, however the retry's state reads (docs/policy.md).
    const view = tenant.policy?.view(catalog, caller, tenant.server?.id);
    const rounds =
      ROUNDS.has(method) && (view === undefined || serves(view, method, params))
        ? roundsOf(view ?? catalog, method, params, meta.protocolVersion)
        : "none";
    if (rounds !== "none") {
      const call = {
        tenant: tenant.config.id,
        server: tenant.server?.id,
        principal: caller?.principal ?? "",
        user: caller?.user,
        peer,
        request,
        meta,
        send,
        onClose: stream.onClose,
      };
      if (rounds === "relayed") {
        const ctx = this.#withTasks(
          peer,
          new StatelessRequestContext(tenant, meta, cursors, config.pageSize, cancellation, send, caller, {}),
        );
        return this.#complete(
          method,
          scope,
          await this.deps.mrtr.relay(call, handlers[method]!(params, ctx)),
        );
      }
      const result = await this.deps.mrtr.serve(call, (run, retry) =>
        handlers[method]!(
          params,
          this.#withTasks(
            peer,
            new StatelessRequestContext(
              tenant,
              meta,
              cursors,
              config.pageSize,
              run.cancellation,
              send,
              caller,
              retry,
              run,
            ),
          ),
        ),
      );
      // What a round's answers shaped is nobody else's, and not worth keeping.
      return this.#complete(method, scope, result, params.requestState !== undefined);
    }
    const ctx = this.#withTasks(
      peer,
      new StatelessRequestContext(tenant, meta, cursors, config.pageSize, cancellation, send, caller),
    );
    // A list with a per-user provider's entries changes when the user connects or loses the
    // account: stale at once, so a client that does not listen sees the change (docs/upstream-auth.md).
    const stale = CACHEABLE.has(method) && catalog.perUser;
    const handler = TASK_HANDLERS[method] ?? handlers[method]!;
    return this.#complete(method, scope, await handler(params, ctx), stale);
  }

  #withTasks(peer: { readonly ip: string }, ctx: StatelessRequestContext): StatelessRequestContext {
    if (this.deps.tasks) {
      ctx.tasks = this.deps.tasks;
      ctx.clientIp = peer.ip;
    }
    return ctx;
  }

  /**
   * Stamps resultType, serverInfo and the cache hints on a result. Only complete lists, reads and
   * discover results carry hints (an input_required result MUST NOT); an upstream's own are kept
   * when valid, except that a tenant behind auth is never "public" (a shared cache must not hand
   * its answers to someone without a token), and a result after rounds (or one that changes with the
   * user's accounts) is private and stale at once.
   */
  #complete(method: string, scope: "public" | "private", result: Record<string, unknown>, stale = false) {
    const out: Record<string, unknown> = { ...result };
    out.resultType ??= "complete";
    const meta = result._meta;
    out._meta = typeof meta === "object" && meta !== null ? { ...meta, ...SERVER_META } : SERVER_META;
    if (out.resultType === "task" || TASK_HANDLERS[method] !== undefined) {
      // A task's ttlMs is its lifetime, no cache hint (the tasks extension's Task).
      if ("cacheScope" in out) delete out.cacheScope;
    } else if (out.resultType !== "complete" || !CACHEABLE.has(method)) {
      if ("ttlMs" in out) delete out.ttlMs;
      if ("cacheScope" in out) delete out.cacheScope;
    } else if (stale) {
      out.ttlMs = 0;
      out.cacheScope = "private";
    } else {
      const ttl = out.ttlMs;
      out.ttlMs = Number.isSafeInteger(ttl) && (ttl as number) >= 0 ? ttl : FRESH_MS;
      out.cacheScope = scope === "private" || out.cacheScope === "private" ? "private" : "public";
    }
    // A result passed on keeps the upstream's bytes, with these members written in (protocol/verbatim.ts).
    keepRewritten(result, out);
    return out;
  }
}

/**
 * What a request needs of the rounds' bookkeeping (basic/patterns/mrtr). Only an `mcp` provider can
 * answer input_required. A retry brings a requestState to open, and a provider that may ask the
 * client mid-call (a session-era upstream) has its call held across retries: both are "held". A
 * first request to an upstream that cannot ask mid-call only relays that upstream's own rounds
 * ("relayed"); anything else is served without the bookkeeping ("none").
 */
function roundsOf(
  catalog: CatalogView,
  method: string,
  params: Record<string, unknown>,
  protocolVersion: string,
): "held" | "relayed" | "none" {
  if (params.requestState !== undefined || params.inputResponses !== undefined) return "held";
  const provider =
    method === "resources/read"
      ? catalog.resourceOwner(String(params.uri))
      : (method === "tools/call" ? catalog.tool(String(params.name)) : catalog.prompt(String(params.name)))
          ?.provider;
  if (provider?.kind !== "mcp") return "none";
  return provider.asksMidCall?.(protocolVersion) === false ? "relayed" : "held";
}

/** Whether a view serves the entry a tools/call, prompts/get or resources/read names. */
function serves(view: CatalogView, method: string, params: Record<string, unknown>): boolean {
  if (method === "resources/read") return view.resource(String(params.uri)) !== undefined;
  return (
    (method === "tools/call" ? view.tool(String(params.name)) : view.prompt(String(params.name))) !==
    undefined
  );
}

/**
 * A listen request whose resource subscriptions keep only the URIs the caller's policy view
 * serves: a hidden resource is watched for nobody, and is dropped just as an unknown one is.
 */
function withinView(request: RpcRequest, view: CatalogView): RpcRequest {
  const notifications = request.params?.notifications;
  if (typeof notifications !== "object" || notifications === null) return request;
  const uris = (notifications as Record<string, unknown>).resourceSubscriptions;
  if (!Array.isArray(uris)) return request;
  const kept = uris.filter((uri) => typeof uri === "string" && view.resource(uri) !== undefined);
  const params = { ...request.params, notifications: { ...notifications, resourceSubscriptions: kept } };
  return { ...request, params };
}

/** 2026-07-28 names an unknown resource with -32602 and data.uri (server/resources). */
function stateless(response: RpcResponse): RpcResponse {
  if ("error" in response && response.error.code === RpcCode.ResourceNotFound)
    return errorResponse(response.id, RpcCode.InvalidParams, response.error.message, response.error.data);
  return response;
}

/**
 * One request's answer: plain JSON, upgraded to an SSE stream at the first message that precedes
 * the result. Streams are not resumable in 2026-07-28: events carry no ids.
 */
class ResponseStream {
  #streaming = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly canStream: boolean,
    private readonly jsonOk: boolean,
  ) {}

  /** Runs `listener` if the client closes the stream before the answer was written: now, if it has. */
  readonly onClose = (listener: () => void): void => {
    const raw = this.reply.raw;
    if (raw.closed) {
      if (!raw.writableFinished) listener();
      return;
    }
    raw.once("close", () => {
      if (!raw.writableFinished) listener();
    });
  };

  /**
   * A progress or log message. Dropped while more than MAX_BACKLOG_BYTES wait for the client: one
   * that does not read must not grow the server's memory (2026-07-28 streams cannot be resumed,
   * so such messages are lost to it; its result is always written).
   */
  send(json: string): void {
    // A client that takes only JSON gets the result alone.
    if (!this.canStream) return;
    if (backlogOf(this.reply) > MAX_BACKLOG_BYTES) return;
    this.#write(json);
  }

  #write(json: string): void {
    if (!this.#streaming) {
      this.#streaming = true;
      this.reply.header("x-accel-buffering", "no");
    }
    writeEvent(this.reply, json);
  }

  finish(response: RpcResponse): void {
    const json = responseJson(response);
    // A client that takes only SSE gets its result as a one-event stream; errors keep their status.
    if (this.#streaming || (!this.jsonOk && !("error" in response))) {
      this.#write(json);
      this.reply.sse.close();
      return;
    }
    const status = "error" in response ? (STATUS_OF[response.error.code] ?? 200) : 200;
    void this.reply.code(status).header("content-type", "application/json").send(json);
  }
}
