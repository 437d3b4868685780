// The upstream side of MCP 2026-07-28 over Streamable HTTP, on the exchange layer (../exchange.ts): every request carries
// its `_meta` envelope (basic/index §_meta) and the request metadata headers (basic/transports/
// streamable-http §Request Metadata); answers are one JSON object or an SSE stream; closing the
// stream cancels (§Cancellation); server/discover tells the eras apart (§Backward Compatibility).
import {
  McpError,
  type ClientCapabilities,
  type Implementation,
  type LoggingLevel,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { fail } from "../../../protocol/errors.js";
import { RpcCode } from "../../../protocol/codes.js";
import { META } from "../../../protocol/era.js";
import { encodeHeaderValue, NAMED, paramHeadersOf } from "../../../protocol/request-headers.js";
import { PORTICO_INFO } from "../../../protocol/version.js";
import { Deadline } from "../../deadline.js";
import type { CallSignal } from "../exchange.js";
import type { CancelSource } from "../../types.js";
import { httpOf, type UpstreamTarget } from "../upstream.js";
import { upstream, type Rounds } from "../../../tracing/spans.js";
import { UpstreamProtocolError } from "../upstream-errors.js";
import { dump, mediaType, readEvents, readJson, type UpstreamHttp } from "../exchange.js";
import type { Answer } from "../answer-reader.js";
import { rpcError } from "../upstream-errors.js";
import { keepText, PASSED_ON } from "../../../protocol/verbatim.js";

export const UPSTREAM_STATELESS_VERSION = "2026-07-28";

/** What server/discover answered. */
export interface DiscoverResult {
  supportedVersions: string[];
  capabilities: ServerCapabilities;
  serverInfo?: Implementation;
  instructions?: string;
}

export type EraOutcome = { era: "stateless"; discover: DiscoverResult } | { era: "session" };

export interface StatelessRequestOptions {
  /** Goes in _meta io.modelcontextprotocol/clientCapabilities. */
  readonly clientCapabilities: ClientCapabilities;
  /** _meta io.modelcontextprotocol/logLevel when set. */
  readonly logLevel?: LoggingLevel;
  /** _meta progressToken when set. */
  readonly progressToken?: string | number;
  /** Aborting closes the response stream, which cancels the request upstream. */
  readonly signal?: CancelSource;
  /** The upstream's tool definition, for the Mcp-Param-* headers of tools/call. */
  readonly tool?: Tool;
  /** Default target.timeoutMs; each notifications/progress starts it again. */
  readonly timeoutMs?: number;
  /** Notifications the upstream sends on this request's response stream (progress, message). */
  readonly onNotification?: (method: string, params: Record<string, unknown>) => void;
  /** The call's rounds so far (the era bridge): each round's span links to the one before. */
  readonly rounds?: Rounds;
}

/** The notification types a subscriptions/listen stream asks for (basic/patterns/subscriptions). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** notifications/tasks for these task ids (the tasks extension). */
  taskIds?: string[];
}

interface Message {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
}

const NO_CAPABILITIES: ClientCapabilities = Object.freeze({});
const NO_PARAMS: Record<string, unknown> = Object.freeze({});

/** The upstream's fixed headers: cfg.headers minus anything the protocol sets itself, then ours. */
function baseHeaders(configured: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(configured ?? {})) {
    const lower = name.toLowerCase();
    if (lower.startsWith("mcp-") || lower === "content-type" || lower === "accept") continue;
    out[lower] = value;
  }
  out["content-type"] = "application/json";
  out.accept = "application/json, text/event-stream";
  out["mcp-protocol-version"] = UPSTREAM_STATELESS_VERSION;
  return out;
}

/** Adds one Mcp-Param-{Name} per `x-mcp-header` argument that has a value (absent or null: omitted). */
function addParamHeaders(headers: Record<string, string>, tool: Tool, args: unknown): void {
  for (const { header, path } of paramHeadersOf(tool)) {
    let value = args;
    for (const key of path) value = isObject(value) ? value[key] : undefined;
    if (typeof value === "string") headers[`mcp-param-${header.toLowerCase()}`] = encodeHeaderValue(value);
    else if (typeof value === "number" || typeof value === "boolean")
      headers[`mcp-param-${header.toLowerCase()}`] = String(value);
  }
}

function unexpected(why: string, status = -1): UpstreamProtocolError {
  return new UpstreamProtocolError(status, why);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The result of `message` when it answers request `id`; throws its error; undefined otherwise. */
function answer(message: Message, id: number): Record<string, unknown> | undefined {
  if (message.method !== undefined) return undefined;
  if (message.error !== undefined && (message.id === id || message.id === null || message.id === undefined))
    throw rpcError(message.error);
  if (message.id !== id) return undefined;
  if (!isObject(message.result)) throw unexpected("the upstream answered with a malformed result");
  return message.result;
}

/** A client of one 2026-07-28 upstream: no handshake, no session, one HTTP exchange per request. */
export class StatelessUpstreamClient {
  readonly #target: UpstreamTarget;
  readonly #http: UpstreamHttp;
  readonly #headers: Readonly<Record<string, string>>;
  #nextId = 1;

  constructor(target: UpstreamTarget) {
    this.#target = target;
    // Adds the Authorization header of cfg.auth (never a client's) and retries once after a 401.
    this.#http = httpOf(target);
    this.#headers = Object.freeze(baseHeaders(target.cfg.headers));
  }

  /**
   * One request. Resolves with the result exactly as sent (resultType kept, input_required
   * included). Rejects with an McpError for a JSON-RPC error whatever the HTTP status,
   * PORTICO_ERR_PROVIDER_TIMEOUT on timeout, the caller's abort reason, or the transport error.
   * `params` come without _meta: the envelope is added here.
   */
  request(
    method: string,
    params: Record<string, unknown>,
    opts: StatelessRequestOptions,
  ): Promise<Record<string, unknown>> {
    // With tracing on, in its CLIENT span, its _meta carrying the span's traceparent (SEP-414).
    return upstream(
      { method, params },
      this.#http.traced,
      (sent) => this.#request(method, sent ?? params, opts),
      (result) => ({ result }),
      opts.rounds,
    );
  }

  async #request(
    method: string,
    params: Record<string, unknown>,
    opts: StatelessRequestOptions,
  ): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const deadline = new Deadline(opts.timeoutMs ?? this.#target.timeoutMs, opts.signal);
    try {
      const response = await this.#post(id, method, params, opts, deadline);
      // A result passed on as it came is kept with its text (protocol/verbatim.ts).
      const passOn = PASSED_ON.has(method);
      if (!isEventStream(response)) return await this.#jsonAnswer(response, id, passOn);
      let result: Record<string, unknown> | undefined;
      await readEvents(response, (message, data) => {
        if (typeof message.method === "string") {
          // A request on a response stream is forbidden in 2026-07-28 (§Receiving Messages): not answered.
          if (message.id !== undefined) return "more";
          if (message.method === "notifications/progress") deadline.restart();
          opts.onNotification?.(message.method, isObject(message.params) ? message.params : NO_PARAMS);
          return "more";
        }
        result = answer(message, id);
        if (result === undefined) return "more";
        if (passOn) keepText(data, id, message, result);
        return "stop";
      });
      if (result === undefined) throw unexpected("the upstream's stream ended without a response");
      return result;
    } catch (err) {
      throw this.#failure(err, deadline, opts.signal);
    } finally {
      deadline.dispose();
    }
  }

  /**
   * subscriptions/listen. Resolves once the upstream acknowledged, with the acknowledged filter;
   * `onNotification` sees every later notification; `closed` resolves when the stream ends for any
   * reason (the upstream's final response, a drop, or `signal`).
   */
  async listen(
    filter: ListenFilter,
    onNotification: (method: string, params: Record<string, unknown>) => void,
    signal: AbortSignal,
    clientCapabilities: ClientCapabilities = NO_CAPABILITIES,
  ): Promise<{ acknowledged: Record<string, unknown>; closed: Promise<void> }> {
    const id = this.#nextId++;
    const deadline = new Deadline(this.#target.timeoutMs, signal);
    const opts = { clientCapabilities };
    let acknowledged: Record<string, unknown> | undefined;
    try {
      const response = await this.#post(
        id,
        "subscriptions/listen",
        { notifications: filter },
        opts,
        deadline,
      );
      if (!isEventStream(response)) {
        await this.#jsonAnswer(response, id);
        throw unexpected("the upstream answered subscriptions/listen without a stream");
      }
      let reading!: Promise<unknown>;
      await new Promise<void>((resolve, reject) => {
        reading = readEvents(response, (message) => {
          if (acknowledged !== undefined) {
            if (typeof message.method === "string" && message.id === undefined)
              onNotification(message.method, isObject(message.params) ? message.params : NO_PARAMS);
            return message.id === id && message.method === undefined ? "stop" : "more";
          }
          if (message.method === "notifications/subscriptions/acknowledged") {
            const params = isObject(message.params) ? message.params : NO_PARAMS;
            acknowledged = isObject(params.notifications) ? params.notifications : {};
            deadline.stopTimer();
            resolve();
            return "more";
          }
          // Nothing may come before the acknowledgement but the listen's own (error) response.
          if (answer(message, id) !== undefined)
            throw unexpected("the upstream ended the subscription at once");
          return "more";
        }).then(() => {
          if (acknowledged === undefined)
            reject(unexpected("the upstream's stream ended before it acknowledged"));
        }, reject);
      });
      const closed = reading.then(
        () => undefined,
        () => undefined,
      );
      void closed.finally(() => deadline.dispose());
      return { acknowledged: acknowledged!, closed };
    } catch (err) {
      deadline.dispose();
      throw this.#failure(err, deadline, signal);
    }
  }

  /**
   * server/discover, and what it says about the upstream's era: "session" when the answer shows it
   * does not speak 2026-07-28; throws when the upstream cannot be reached or refuses our request.
   */
  async discover(timeoutMs: number): Promise<EraOutcome> {
    let result: Record<string, unknown>;
    try {
      result = await this.request("server/discover", NO_PARAMS, {
        clientCapabilities: NO_CAPABILITIES,
        timeoutMs,
      });
    } catch (err) {
      if (speaksSessionEra(err)) return { era: "session" };
      throw err;
    }
    const discover = discoverResult(result);
    return discover ? { era: "stateless", discover } : { era: "session" };
  }

  /** POSTs one JSON-RPC request with its _meta envelope and request metadata headers. */
  async #post(
    id: number,
    method: string,
    params: Record<string, unknown>,
    opts: StatelessRequestOptions,
    signal: CallSignal,
  ): Promise<Answer> {
    const meta: Record<string, unknown> = {
      ...(isObject(params._meta) ? params._meta : undefined),
      [META.protocolVersion]: UPSTREAM_STATELESS_VERSION,
      [META.clientInfo]: PORTICO_INFO,
      [META.clientCapabilities]: opts.clientCapabilities,
    };
    if (opts.logLevel !== undefined) meta[META.logLevel] = opts.logLevel;
    if (opts.progressToken !== undefined) meta.progressToken = opts.progressToken;
    const headers: Record<string, string> = { ...this.#headers, "mcp-method": method };
    const named = NAMED.get(method);
    if (named !== undefined && typeof params[named] === "string")
      headers["mcp-name"] = encodeHeaderValue(params[named]);
    if (opts.tool !== undefined && method === "tools/call")
      addParamHeaders(headers, opts.tool, params.arguments);
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
    const response = await this.#http.send("POST", headers, body, signal);
    const status = response.status;
    // Auth refusals (after the exchange's 401 retry) and server failures are transport failures.
    if (status === 401 || status === 403 || status >= 500) {
      dump(response);
      throw unexpected(`HTTP ${status}`, status);
    }
    return response;
  }

  /** The answer in a JSON body (any status: 400 and 404 carry JSON-RPC errors in 2026-07-28). */
  async #jsonAnswer(response: Answer, id: number, passOn = false): Promise<Record<string, unknown>> {
    const ok = response.status >= 200 && response.status < 300;
    const type = mediaType(response.headers);
    const message = type.includes("json") ? readJson(response) : undefined;
    if (message === undefined) dump(response);
    const result = isObject(message) ? answer(message, id) : undefined;
    if (result !== undefined && ok) {
      if (passOn) keepText(response.text!, id, message as object, result);
      return result;
    }
    throw ok
      ? unexpected("the upstream's answer is not a JSON-RPC response")
      : unexpected(`HTTP ${response.status}`, response.status);
  }

  #failure(err: unknown, deadline: Deadline, signal: CancelSource | undefined): unknown {
    if (deadline.timedOut) return fail("PORTICO_ERR_PROVIDER_TIMEOUT", deadline.message(this.#target.cfg.id));
    if (signal?.aborted) return signal.reason;
    return err;
  }
}

/**
 * JSON-RPC errors that say nothing of a session era: a 2026-07-28 server saying our request was
 * wrong (-32020, -32021), or failing for now (-32603: asked again later, not taken for a verdict).
 */
const NOT_SESSION_ERA: ReadonlySet<number> = new Set([
  RpcCode.HeaderMismatch,
  RpcCode.MissingRequiredClientCapability,
  RpcCode.InternalError,
]);

/** True when a failed server/discover shows a session-era upstream (§Backward Compatibility). */
function speaksSessionEra(err: unknown): boolean {
  if (err instanceof McpError) return !NOT_SESSION_ERA.has(err.code);
  return err instanceof UpstreamProtocolError && (err.code === 400 || err.code === 404 || err.code === 405);
}

function discoverResult(result: Record<string, unknown>): DiscoverResult | undefined {
  const versions = result.supportedVersions;
  if (!Array.isArray(versions) || !versions.includes(UPSTREAM_STATELESS_VERSION)) return undefined;
  const meta = isObject(result._meta) ? result._meta : NO_PARAMS;
  const serverInfo = meta[META.serverInfo];
  return {
    supportedVersions: versions.filter((v): v is string => typeof v === "string"),
    capabilities: isObject(result.capabilities) ? result.capabilities : {},
    ...(isObject(serverInfo) && { serverInfo: serverInfo as Implementation }),
    ...(typeof result.instructions === "string" && { instructions: result.instructions }),
  };
}

/**
 * Which era an upstream speaks: "stateless" when server/discover lists 2026-07-28; "session" when
 * the upstream answers in a way that shows it does not (HTTP 400/404/405, a JSON-RPC error other
 * than -32020/-32021/-32603, or a result without 2026-07-28); throws when it is unreachable or
 * answers one of those three.
 */
export async function discoverEra(target: UpstreamTarget, timeoutMs: number): Promise<EraOutcome> {
  return new StatelessUpstreamClient(target).discover(timeoutMs);
}

const isEventStream = (response: Answer) => mediaType(response.headers) === "text/event-stream";
