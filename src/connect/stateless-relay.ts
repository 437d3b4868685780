// The 2026-07-28 HTTP side of the bridge (docs/connect.md, docs/protocol-eras.md "Bridging the
// eras"): a 2026-07-28 local client's requests go through as they are; for a session-era local
// client the bridge answers initialize from server/discover, adds the per-request `_meta`, turns
// an InputRequiredResult (basic/patterns/mrtr) into requests to the local client and retries with
// the answers, removes the fields its revision lacks, fits capabilities and content to an older
// revision as Portico's session lane does (docs/protocol-eras.md "Older revisions"), and feeds list
// and resource notifications from a subscriptions/listen stream.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../protocol/codes.js";
import { META, negotiateSessionVersion } from "../protocol/era.js";
import {
  classify,
  errorResponse,
  isRecord,
  type RequestId,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.js";
import {
  contentGapsOf,
  fitClientRequest,
  fitResult,
  gapsOf,
  offeredCapabilities,
  takenClientCapabilities,
} from "../protocol/older-revisions.js";
import { PORTICO_VERSION } from "../protocol/version.js";
import { describe } from "./connect-error.js";
import { readMessages, type HttpPeer } from "./http-peer.js";
import type { LocalSink } from "./session-relay.js";
import { STATELESS_VERSION, statelessHeaders } from "./stateless-headers.js";
import { ListenStream } from "./listen-stream.js";

/** Input rounds one call may take before the bridge gives up (a server asking forever). */
const MAX_ROUNDS = 10;
/** Ids of the bridge's own requests to the local client. */
const ASK_PREFIX = "portico-connect-";

type Json = Record<string, unknown>;
type RpcErrorObject = { code: number; message: string; data?: unknown };

/** A request the local client cancelled: it gets no answer (basic/patterns/cancellation). */
class Cancelled extends Error {}

/** A JSON-RPC error the local client gets as the answer to its request. */
class RpcFailure extends Error {
  constructor(readonly rpc: RpcErrorObject) {
    super(rpc.message);
  }
}

export class StatelessRelay {
  #meta: Json = {};
  #logLevel: string | undefined;
  #capabilities: Json = {};
  /** The revision the local client was answered in; undefined before its initialize. */
  #version: string | undefined;
  readonly #tools = new Map<string, Tool>();
  readonly #inFlight = new Map<RequestId, AbortController>();
  readonly #asks = new Map<string, (answer: RpcResponse) => void>();
  #nextAsk = 0;
  readonly #listen: ListenStream;

  constructor(
    private readonly peer: HttpPeer,
    private readonly local: LocalSink,
    private readonly log: (line: string) => void,
  ) {
    this.#listen = new ListenStream(peer, local, log, () => this.#requestMeta());
  }

  async handle(message: unknown): Promise<void> {
    const c = classify(message);
    if (c.kind === "response") {
      const id = c.message.id;
      if (typeof id === "string") this.#asks.get(id)?.(c.message);
      return;
    }
    if (c.kind === "notification") {
      if (c.message.method === "notifications/cancelled") {
        const id = c.message.params?.requestId;
        if (typeof id === "string" || typeof id === "number") this.#inFlight.get(id)?.abort();
      } else if (c.message.method === "notifications/initialized") this.#listen.start(this.#capabilities);
      return; // 2026-07-28 has no other client notifications to carry
    }
    if (c.kind === "invalid") {
      this.local.send(errorResponse(c.id, RpcCode.InvalidRequest, `Invalid request: ${c.reason}`));
      return;
    }
    const request = c.message;
    const own = request.params?._meta;
    if (isRecord(own) && typeof own[META.protocolVersion] === "string") return this.#passThrough(request);
    try {
      const result = await this.#local(request);
      this.local.send({ jsonrpc: "2.0", id: request.id, result });
    } catch (err) {
      if (err instanceof Cancelled) return;
      this.local.send(
        err instanceof RpcFailure
          ? { jsonrpc: "2.0", id: request.id, error: err.rpc }
          : errorResponse(request.id, RpcCode.InternalError, `portico connect: ${describe(err)}`),
      );
    }
  }

  /** A session-era request, answered here or translated; a JSON-RPC error is thrown as RpcFailure. */
  async #local(request: RpcRequest): Promise<Json> {
    const params = request.params ?? {};
    switch (request.method) {
      case "initialize":
        return this.#initialize(params);
      case "ping":
        return {};
      case "logging/setLevel":
        this.#logLevel = typeof params.level === "string" ? params.level : undefined;
        return {};
      case "resources/subscribe":
      case "resources/unsubscribe":
        if (typeof params.uri === "string")
          this.#listen.watch(params.uri, request.method === "resources/subscribe");
        return {};
      default:
        return this.#call(request);
    }
  }

  /**
   * Answered in the client's revision when it is a session-era one, else the latest, as Portico's
   * session lane negotiates; what that revision lacks is neither offered nor taken.
   */
  async #initialize(params: Json): Promise<Json> {
    const requested = typeof params.protocolVersion === "string" ? params.protocolVersion : "";
    this.#version = negotiateSessionVersion(requested);
    const gaps = gapsOf(this.#version);
    const declared = isRecord(params.capabilities) ? params.capabilities : {};
    this.#meta = {
      [META.clientInfo]: isRecord(params.clientInfo) ? params.clientInfo : { name: "unknown", version: "0" },
      [META.clientCapabilities]: takenClientCapabilities(declared, gaps),
    };
    const discovered = await this.#call({ jsonrpc: "2.0", id: "discover", method: "server/discover" }, true);
    this.#capabilities = isRecord(discovered.capabilities) ? discovered.capabilities : {};
    const meta = isRecord(discovered._meta) ? discovered._meta : {};
    return {
      protocolVersion: this.#version,
      // The bridge answers logging/setLevel itself and sends the level with every request.
      capabilities: offeredCapabilities({ ...this.#capabilities, logging: {} }, gaps),
      serverInfo: isRecord(meta[META.serverInfo])
        ? meta[META.serverInfo]
        : { name: "portico", version: PORTICO_VERSION },
      ...(typeof discovered.instructions === "string" && { instructions: discovered.instructions }),
    };
  }

  /** A result in the local client's revision: without 2026-07-28's fields, its content fitted. */
  #sessionEraResult(method: string, result: Json): Json {
    const plain = sessionEraResult(result);
    const gaps = this.#version === undefined ? undefined : contentGapsOf(this.#version);
    return gaps ? fitResult(method, plain, gaps) : plain;
  }

  #requestMeta(): Json {
    return {
      ...this.#meta,
      [META.protocolVersion]: STATELESS_VERSION,
      ...(this.#logLevel !== undefined && { [META.logLevel]: this.#logLevel }),
    };
  }

  /**
   * One request to the server: POSTed with `_meta`, its notifications relayed, each
   * InputRequiredResult answered by asking the local client and retrying. `raw` keeps the
   * 2026-07-28 fields (for the bridge's own use).
   */
  async #call(request: RpcRequest, raw = false): Promise<Json> {
    const abort = new AbortController();
    this.#inFlight.set(request.id, abort);
    try {
      let params: Json = {
        ...request.params,
        _meta: { ...(request.params?._meta as Json), ...this.#requestMeta() },
      };
      let headerRetry = true;
      for (let round = 0; round <= MAX_ROUNDS; round++) {
        const tool = request.method === "tools/call" ? this.#tools.get(String(params.name)) : undefined;
        const answer = await this.#post(request.method, params, tool, abort.signal);
        if (answer.error) {
          // A tool with x-mcp-header arguments the bridge has not listed yet: list, then retry once.
          if (
            answer.error.code === RpcCode.HeaderMismatch &&
            headerRetry &&
            request.method === "tools/call"
          ) {
            headerRetry = false;
            await this.#call({ jsonrpc: "2.0", id: `${String(request.id)}-tools`, method: "tools/list" });
            round--;
            continue;
          }
          throw new RpcFailure(answer.error);
        }
        const result = answer.result;
        if (result.resultType !== "input_required") {
          if (request.method === "tools/list" && Array.isArray(result.tools))
            for (const t of result.tools as Tool[]) if (isRecord(t)) this.#tools.set(t.name, t);
          return raw ? result : this.#sessionEraResult(request.method, result);
        }
        params = {
          ...params,
          inputResponses: await this.#askAll(result.inputRequests),
          requestState: result.requestState,
        };
        if (result.requestState === undefined) delete params.requestState;
      }
      throw new RpcFailure({
        code: RpcCode.InternalError,
        message: `the server asked for input more than ${MAX_ROUNDS} times`,
      });
    } catch (err) {
      if (abort.signal.aborted) throw new Cancelled("cancelled", { cause: err });
      throw err;
    } finally {
      this.#inFlight.delete(request.id);
    }
  }

  async #post(
    method: string,
    params: Json,
    tool: Tool | undefined,
    signal: AbortSignal,
  ): Promise<
    { result: Json; error?: undefined } | { error: { code: number; message: string; data?: unknown } }
  > {
    const id = 1;
    const response = await this.peer.send(
      "POST",
      statelessHeaders(method, params, tool),
      JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      signal,
    );
    let final: Json | undefined;
    await readMessages(response, (m) => {
      if (!isRecord(m)) return;
      if (m.id === id && ("result" in m || "error" in m)) final = m;
      else if (typeof m.method === "string" && !("id" in m)) this.local.send(m); // progress, log messages
    });
    if (final && isRecord(final.error)) return { error: final.error as RpcErrorObject };
    if (final && isRecord(final.result)) return { result: final.result };
    throw new Error(`the server answered HTTP ${response.status} without a result`);
  }

  /** Asks the local client every question of one round at once; resolves to the answers by key. */
  async #askAll(inputRequests: unknown): Promise<Json> {
    const entries = Object.entries(isRecord(inputRequests) ? inputRequests : {});
    const answers = await Promise.all(
      entries.map(async ([key, ask]) => [key, await this.#ask(isRecord(ask) ? ask : {})] as const),
    );
    return Object.fromEntries(answers);
  }

  #ask(ask: Json): Promise<Json> {
    const id = `${ASK_PREFIX}${++this.#nextAsk}`;
    const gaps = this.#version === undefined ? undefined : contentGapsOf(this.#version);
    const asked = isRecord(ask.params) ? ask.params : undefined;
    const params = gaps && typeof ask.method === "string" ? fitClientRequest(ask.method, asked, gaps) : asked;
    return new Promise<Json>((resolve, reject) => {
      this.#asks.set(id, (answer) => {
        this.#asks.delete(id);
        if ("error" in answer) reject(new RpcFailure(answer.error));
        else resolve(answer.result);
      });
      this.local.send({ jsonrpc: "2.0", id, method: ask.method, ...(params && { params }) });
    });
  }

  /** A 2026-07-28 local client: its request goes as is, and everything the server sends comes back. */
  async #passThrough(request: RpcRequest): Promise<void> {
    const abort = new AbortController();
    this.#inFlight.set(request.id, abort);
    try {
      const params = request.params ?? {};
      const tool = request.method === "tools/call" ? this.#tools.get(String(params.name)) : undefined;
      const response = await this.peer.send(
        "POST",
        statelessHeaders(request.method, params, tool),
        JSON.stringify(request),
        abort.signal,
      );
      await readMessages(response, (m) => this.local.send(m));
    } catch (err) {
      if (!abort.signal.aborted)
        this.local.send(
          errorResponse(request.id, RpcCode.InternalError, `portico connect: ${describe(err)}`),
        );
    } finally {
      this.#inFlight.delete(request.id);
    }
  }

  async close(): Promise<void> {
    this.#listen.stop();
    for (const abort of this.#inFlight.values()) abort.abort();
  }
}

/** A result without what 2026-07-28 added: resultType, cache hints, the server's info in `_meta`. */
function sessionEraResult(result: Json): Json {
  const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, ...rest } = result;
  if (isRecord(rest._meta) && META.serverInfo in rest._meta) {
    const { [META.serverInfo]: _info, ...meta } = rest._meta;
    if (Object.keys(meta).length === 0) delete rest._meta;
    else rest._meta = meta;
  }
  return rest;
}
