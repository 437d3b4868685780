// One upstream session of the session era (MCP 2025-03-26 … 2025-11-25, basic/transports
// §Streamable HTTP) on the exchange layer: initialize and notifications/initialized, the
// Mcp-Session-Id and MCP-Protocol-Version headers, a POST per request answered by JSON or an SSE
// stream whose messages belong to that call, notifications POSTed, the standalone GET stream
// (resumed with Last-Event-ID) only when asked for, DELETE at the end (docs/upstream-mcp.md).
import { SUPPORTED_PROTOCOL_VERSIONS, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../../../protocol/codes.js";
import { isRecord } from "../../../protocol/jsonrpc.js";
import { keepText, PASSED_ON } from "../../../protocol/verbatim.js";
import { PORTICO_INFO } from "../../../protocol/version.js";
import { sessionIdOf } from "./session-ids.js";
import {
  dump,
  mediaType,
  readEvents,
  readJson,
  readReason,
  type CallSignal,
  type UpstreamHttp,
} from "../exchange.js";
import type { Answer } from "../answer-reader.js";
import { rpcError, UpstreamHttpError, UpstreamProtocolError } from "../upstream-errors.js";
import { upstream } from "../../../tracing/spans.js";

/** The revision Portico asks for at initialize (the newest of the session era). */
export const SESSION_ERA_VERSION = "2025-11-25";

/** What one call does with the messages the upstream sends on its stream. */
export interface CallHooks {
  /** notifications/progress for this call (its progress token). */
  readonly progress?: (params: Record<string, unknown>) => void;
  /** Other notifications on the call's stream that belong to the call (logging). */
  readonly log?: (params: Record<string, unknown>) => void;
  /** A server-to-client request on the call's stream; its answer goes back upstream. */
  readonly request?: (
    method: string,
    params: Record<string, unknown> | undefined,
  ) => Promise<Record<string, unknown>>;
  /** Told the JSON-RPC id the call goes upstream with, before it is sent. */
  readonly sent?: (id: number) => void;
}

/** Where messages that belong to no call go (the GET stream, and list changes on any stream). */
export interface SessionHandlers {
  notification(method: string, params: Record<string, unknown>): void;
  request(method: string, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>>;
  /**
   * The GET stream found `session` gone (404): the owner re-initializes, unless it has replaced
   * that session already.
   */
  gone?(session: UpstreamSession): void;
}

/** An upstream session as stored for other replicas. */
export interface SessionRecord {
  readonly sessionId: string;
  readonly protocolVersion: string;
}

const NO_PARAMS: Record<string, unknown> = Object.freeze({});
const STREAM_INITIAL_DELAY_MS = 1000;
const STREAM_MAX_DELAY_MS = 30_000;
/** Questions of the upstream waiting on the client at once, per call (or GET stream); more are refused. */
export const MAX_OUTSTANDING_QUESTIONS = 32;
/** A server-to-client request Portico cannot route (no call, no session to ask): answered Method not found. */
export class NotRouted extends Error {
  override readonly name = "NotRouted";
  readonly code = RpcCode.MethodNotFound;

  constructor() {
    super("Method not found");
  }
}

/** The result of `message` when it answers request `id`; throws its error; undefined otherwise. */
export function answerOf(message: Record<string, unknown>, id: number): Record<string, unknown> | undefined {
  if (message.method !== undefined) return undefined;
  if (message.error !== undefined && (message.id === id || message.id === null || message.id === undefined))
    throw rpcError(message.error);
  if (message.id !== id) return undefined;
  if (!isRecord(message.result))
    throw new UpstreamProtocolError(-1, "the upstream answered with a malformed result");
  return message.result;
}

/**
 * One upstream session as the session-era part uses it, whatever carries its messages: Streamable
 * HTTP (SessionUpstream, below) or a child process's stdio (../stdio/session.ts).
 */
export interface UpstreamSession {
  /** The session as stored for other replicas; undefined when it cannot be resumed elsewhere. */
  readonly record: SessionRecord | undefined;
  readonly instructions: string | undefined;
  readonly capabilities: ServerCapabilities | undefined;
  request(
    method: string,
    params: Record<string, unknown> | undefined,
    signal: CallSignal | undefined,
    hooks?: CallHooks,
  ): Promise<Record<string, unknown>>;
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  terminate(): Promise<void>;
  close(): void;
  openStream(): void;
}

/** Opens a new upstream session declaring `capabilities` (initialize and notifications/initialized). */
export type OpenSession = (
  capabilities: object,
  handlers: SessionHandlers,
  signal: AbortSignal,
) => Promise<UpstreamSession>;

export class SessionUpstream implements UpstreamSession {
  readonly #http: UpstreamHttp;
  readonly #handlers: SessionHandlers;
  /** Headers of every request after initialize (shared, never mutated). */
  #headers: Record<string, string>;
  #record: SessionRecord | undefined;
  #capabilities: ServerCapabilities | undefined;
  #instructions: string | undefined;
  #nextId = 1;
  #stream: AbortController | undefined;
  #lastEventId: string | undefined;
  #closed = false;
  /** notifications/cancelled being sent, by request id (answers to its questions wait for it). */
  readonly #cancelling = new Map<number, Promise<void>>();
  /** Questions waiting on the client, by call id (-1: the GET stream); absent when none. */
  readonly #asking = new Map<number, number>();

  private constructor(http: UpstreamHttp, base: Record<string, string>, handlers: SessionHandlers) {
    this.#http = http;
    this.#headers = base;
    this.#handlers = handlers;
  }

  /** Opens a new upstream session declaring `capabilities`. Throws when the upstream refuses. */
  static async initialize(
    http: UpstreamHttp,
    base: Record<string, string>,
    capabilities: object,
    handlers: SessionHandlers,
    signal: AbortSignal,
  ): Promise<SessionUpstream> {
    const session = new SessionUpstream(http, base, handlers);
    const params = { protocolVersion: SESSION_ERA_VERSION, capabilities, clientInfo: PORTICO_INFO };
    const [result, answer] = await session.#call(0, "initialize", params, signal, undefined);
    const version = result.protocolVersion;
    if (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      throw new Error(`Server's protocol version is not supported: ${String(version).slice(0, 40)}`);
    session.#adopt({ sessionId: sessionIdOf(answer), protocolVersion: version });
    session.#capabilities = isRecord(result.capabilities) ? result.capabilities : {};
    if (typeof result.instructions === "string") session.#instructions = result.instructions;
    await session.notify("notifications/initialized");
    return session;
  }

  /**
   * Uses an upstream session another replica (or an earlier client) opened. `firstId`: the first
   * JSON-RPC id its requests take, for a session other objects (on other replicas) send requests
   * on at the same time: ids in flight on one session must differ.
   */
  static resume(
    http: UpstreamHttp,
    base: Record<string, string>,
    record: SessionRecord,
    handlers: SessionHandlers,
    firstId = 1,
  ): SessionUpstream {
    const session = new SessionUpstream(http, base, handlers);
    session.#adopt(record);
    session.#nextId = firstId;
    return session;
  }

  #adopt(record: SessionRecord): void {
    this.#record = record;
    const headers: Record<string, string> = {
      ...this.#headers,
      "mcp-protocol-version": record.protocolVersion,
    };
    if (record.sessionId !== "") headers["mcp-session-id"] = record.sessionId;
    this.#headers = headers;
  }

  /** The session as stored for other replicas; undefined for an upstream without session ids. */
  get record(): SessionRecord | undefined {
    return this.#record?.sessionId ? this.#record : undefined;
  }

  /** The guidance for models the upstream gave at initialize (undefined for a resumed session). */
  get instructions(): string | undefined {
    return this.#instructions;
  }

  /** What the upstream declared at initialize (undefined for a resumed session). */
  get capabilities(): ServerCapabilities | undefined {
    return this.#capabilities;
  }

  /**
   * One request. Resolves with its result; rejects with an McpError for a JSON-RPC error, an
   * UpstreamHttpError for a refused exchange, or the signal's reason once it aborted (the upstream
   * is then sent notifications/cancelled).
   */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    signal: CallSignal | undefined,
    hooks?: CallHooks,
  ): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    hooks?.sent?.(id);
    // Progress is asked for whenever the call relays it (the request's own id as the token, as the SDKs do).
    const sent = hooks?.progress
      ? { ...params, _meta: { ...(params?._meta as object), progressToken: id } }
      : params;
    try {
      return (await this.#call(id, method, sent, signal, hooks))[0];
    } catch (err) {
      if (!signal?.aborted) throw err;
      const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
      const sent = this.notify("notifications/cancelled", { requestId: id, reason }).catch(() => undefined);
      this.#cancelling.set(id, sent);
      void sent.then(() => setTimeout(() => this.#cancelling.delete(id), 1000).unref());
      throw signal.reason;
    }
  }

  /** POSTs a notification (202 expected). */
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    const body = JSON.stringify(params ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", method });
    const answer = await this.#http.send("POST", this.#headers, body);
    await this.#accepted(answer);
  }

  /** Ends the upstream session (DELETE); a 405 (the upstream does not allow it) is fine. */
  async terminate(): Promise<void> {
    this.close();
    if (!this.record) return;
    const answer = await this.#http.send("DELETE", this.#headers, undefined, AbortSignal.timeout(5000));
    dump(answer);
  }

  /** Stops the GET stream; the upstream session stays (another replica may resume it). */
  close(): void {
    this.#closed = true;
    this.#stream?.abort();
    this.#stream = undefined;
  }

  /** Opens the standalone GET stream (once), reconnecting with Last-Event-ID while the session is used. */
  openStream(): void {
    if (this.#stream || this.#closed) return;
    const controller = new AbortController();
    this.#stream = controller;
    void this.#listen(controller.signal);
  }

  async #listen(signal: AbortSignal): Promise<void> {
    let delay = STREAM_INITIAL_DELAY_MS;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const headers: Record<string, string> = { ...this.#headers, accept: "text/event-stream" };
        if (this.#lastEventId !== undefined) headers["last-event-id"] = this.#lastEventId;
        const answer = await this.#http.send("GET", headers, undefined, signal);
        if (answer.status === 405) return dump(answer); // the upstream offers no GET stream
        if (answer.status === 404) {
          dump(answer);
          return this.#handlers.gone?.(this);
        }
        if (answer.status !== 200 || mediaType(answer.headers) !== "text/event-stream") {
          dump(answer);
          throw new UpstreamHttpError(answer.status);
        }
        failures = 0;
        delay = STREAM_INITIAL_DELAY_MS;
        await readEvents(
          answer,
          (message) => {
            this.#onMessage(message, undefined, -1);
            return "more";
          },
          (eventId) => (this.#lastEventId = eventId),
        );
      } catch {
        if (signal.aborted) return;
        if (++failures > 2) return; // given up, as the SDK client does; calls still work
      }
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
      delay = Math.min(delay * 1.5, STREAM_MAX_DELAY_MS);
    }
  }

  /**
   * POSTs one request and reads its answer (JSON or SSE); resolves with the result and the exchange.
   * With tracing on, in its CLIENT span, its _meta carrying the span's traceparent (SEP-414).
   */
  #call(
    id: number,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: CallSignal | undefined,
    hooks: CallHooks | undefined,
  ): Promise<[Record<string, unknown>, Answer]> {
    return upstream(
      { method, id, params },
      this.#http.traced,
      (sent) => this.#exchange(id, method, sent, signal, hooks),
      ([result]) => ({ result }),
    );
  }

  async #exchange(
    id: number,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: CallSignal | undefined,
    hooks: CallHooks | undefined,
  ): Promise<[Record<string, unknown>, Answer]> {
    const body = JSON.stringify(
      params ? { jsonrpc: "2.0", id, method, params } : { jsonrpc: "2.0", id, method },
    );
    const answer = await this.#http.send("POST", this.#headers, body, signal);
    if (answer.status < 200 || answer.status >= 300) {
      throw new UpstreamHttpError(
        answer.status,
        answer.status === 400 || answer.status === 404 ? readReason(answer) : (dump(answer), ""),
      );
    }
    const type = mediaType(answer.headers);
    if (type === "application/json") {
      const message = readJson(answer);
      const result = isRecord(message) ? answerOf(message, id) : undefined;
      if (result === undefined)
        throw new UpstreamProtocolError(-1, "the upstream's answer is not a JSON-RPC response");
      if (PASSED_ON.has(method)) keepText(answer.text!, id, message as object, result);
      return [result, answer];
    }
    if (type !== "text/event-stream") {
      dump(answer);
      throw new UpstreamProtocolError(-1, "the upstream's answer is not a JSON-RPC response");
    }
    let result: Record<string, unknown> | undefined;
    await readEvents(answer, (message, data) => {
      if (message.method !== undefined) {
        this.#onMessage(message, hooks, id, signal);
        return "more";
      }
      result = answerOf(message, id);
      if (result === undefined) return "more";
      if (PASSED_ON.has(method)) keepText(data, id, message, result);
      return "stop";
    });
    if (result === undefined) {
      if (signal?.aborted) throw signal.reason;
      throw new UpstreamProtocolError(-1, "the upstream's stream ended without a response");
    }
    return [result, answer];
  }

  /** A request or notification from the upstream: to the call it arrived with, else the session. */
  #onMessage(
    message: Record<string, unknown>,
    hooks: CallHooks | undefined,
    callId: number,
    signal?: CallSignal,
  ): void {
    const method = message.method;
    if (typeof method !== "string") return;
    const params = isRecord(message.params) ? message.params : NO_PARAMS;
    if (message.id === undefined) {
      if (method === "notifications/progress") {
        if (params.progressToken === callId) hooks?.progress?.(params);
      } else if (method === "notifications/message" && hooks?.log) hooks.log(params);
      else this.#handlers.notification(method, params);
      return;
    }
    const id = message.id;
    // basic/utilities/ping: the receiver MUST respond promptly, with an empty result.
    if (method === "ping") return this.#respond({ jsonrpc: "2.0", id, result: {} });
    // An upstream asking faster than the client answers is refused past the bound (docs/security.md
    // "Hostile upstreams"), without reaching the client.
    const asking = this.#asking.get(callId) ?? 0;
    if (asking >= MAX_OUTSTANDING_QUESTIONS)
      return this.#respond({ jsonrpc: "2.0", id, error: TOO_MANY_QUESTIONS });
    this.#asking.set(callId, asking + 1);
    const ask =
      hooks?.request ?? ((m: string, p: Record<string, unknown> | undefined) => this.#handlers.request(m, p));
    // Relayed as sent: a request without params reaches the client without params.
    void ask(method, isRecord(message.params) ? message.params : undefined).then(
      (result) => {
        this.#answered(callId);
        this.#respond({ jsonrpc: "2.0", id, result });
      },
      // A question that failed because the call is being cancelled is answered after the
      // cancellation reached the upstream, so the upstream sees its call cancelled, not failed.
      (err: unknown) =>
        setImmediate(() => {
          this.#answered(callId);
          const answer = () => this.#respond({ jsonrpc: "2.0", id, error: errorObject(err) });
          const cancelling = signal?.aborted ? this.#cancelling.get(callId) : undefined;
          if (cancelling) void cancelling.finally(answer);
          else answer();
        }),
    );
  }

  #answered(callId: number): void {
    const left = (this.#asking.get(callId) ?? 1) - 1;
    if (left > 0) this.#asking.set(callId, left);
    else this.#asking.delete(callId);
  }

  #respond(message: object): void {
    void this.#http
      .send("POST", this.#headers, JSON.stringify(message))
      .then((answer) => dump(answer))
      .catch(() => undefined);
  }

  async #accepted(answer: Answer): Promise<void> {
    if (answer.status >= 200 && answer.status < 300) return dump(answer);
    throw new UpstreamHttpError(answer.status, readReason(answer));
  }
}

const TOO_MANY_QUESTIONS = Object.freeze({
  code: RpcCode.InternalError,
  message: `More than ${MAX_OUTSTANDING_QUESTIONS} requests are waiting on the client`,
});

/** A failed server-to-client request as the JSON-RPC error Portico answers the upstream with. */
export function errorObject(err: unknown): { code: number; message: string; data?: unknown } {
  const e = err as { rpc?: unknown; code?: unknown; message?: unknown; data?: unknown };
  const code =
    typeof e.code === "number" ? e.code : typeof e.rpc === "number" ? e.rpc : RpcCode.InternalError;
  const message = typeof e.message === "string" ? e.message : "Internal error";
  return e.data === undefined ? { code, message } : { code, message, data: e.data };
}
