// One HTTP exchange with an upstream MCP server (docs/upstream-mcp.md "Connections"), on undici's
// dispatcher API: the egress Agent keeps one keep-alive pool per origin, a request is a method,
// headers and a string body, and the answer is read by a dispatch handler (answer-reader.ts: JSON
// whole, an event stream as a Node stream read with StringDecoder; no fetch, no WHATWG streams).
// Adds the provider's Authorization, retries once with a new token after a 401, and follows
// redirects only within the provider's origin (docs/security.md).
import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { Dispatcher } from "undici";
import type { Abortable } from "../deadline.js";
import { REDIRECTS, sameOriginHop } from "../../egress/fetch.js";
import { SseEventTooLarge, SseParser, type Next } from "../../protocol/sse.js";
import type { Authorizer } from "../upstream-auth.js";
import { AnswerReader, MAX_UPSTREAM_MESSAGE_SIZE, type Answer } from "./answer-reader.js";
import { UpstreamProtocolError } from "./upstream-errors.js";
import type { UpstreamDetails } from "../../tracing/spans.js";

/** An event stream's body. */
export type Body = Readable;

/** What aborts an exchange: an AbortSignal, or a Deadline (no AbortController needed). */
export type CallSignal = AbortSignal | Abortable;

export interface UpstreamEndpoint {
  readonly url: string;
  readonly dispatcher: Dispatcher;
  readonly credentials: Authorizer;
  /** The provider's id, for the exchange's spans (docs/operations.md "Tracing"). */
  readonly provider: string;
}

/** The fixed headers of an upstream: configured ones (minus what the protocol sets itself), then ours. */
export function baseHeaders(
  configured: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(configured ?? {})) {
    const lower = name.toLowerCase();
    if (
      lower.startsWith("mcp-") ||
      lower === "content-type" ||
      lower === "accept" ||
      lower === "last-event-id"
    )
      continue;
    out[lower] = value;
  }
  out["content-type"] = "application/json";
  out.accept = "application/json, text/event-stream";
  return out;
}

/** The HTTP side of one upstream: its origin, path and the credentials its requests carry. */
export class UpstreamHttp {
  readonly #dispatcher: Dispatcher;
  readonly #credentials: Authorizer;
  readonly #origin: string;
  readonly #path: string;
  /** What this upstream's MCP client spans say of it. */
  readonly traced: UpstreamDetails;

  constructor(endpoint: UpstreamEndpoint) {
    const url = new URL(endpoint.url);
    this.traced = Object.freeze({ provider: endpoint.provider, url: endpoint.url });
    this.#dispatcher = endpoint.dispatcher;
    this.#credentials = endpoint.credentials;
    this.#origin = url.origin;
    this.#path = `${url.pathname}${url.search}`;
  }

  /**
   * One exchange. `headers` must be lower-case and are not copied when no credentials are
   * configured (callers pass a fresh object). Resolves with any status; the caller reads or dumps
   * the body.
   */
  send(
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body: string | undefined,
    signal?: CallSignal,
  ): Promise<Answer> {
    // No async frame of its own on the plain path: a forwarded call is one promise deeper otherwise.
    if (!this.#credentials.configured) return this.#follow(method, headers, body, signal);
    return this.#authorized(method, headers, body, signal);
  }

  async #authorized(
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body: string | undefined,
    signal: CallSignal | undefined,
  ): Promise<Answer> {
    const waiting = signal instanceof AbortSignal ? signal : signal?.signal;
    const authorization = (await this.#credentials.authorization(waiting)) ?? "";
    const first = await this.#follow(method, { ...headers, authorization }, body, signal);
    if (first.status !== 401 || !this.#credentials.refreshable) return first;
    dump(first);
    this.#credentials.invalidate(authorization);
    const fresh = (await this.#credentials.authorization(waiting)) ?? "";
    const second = await this.#follow(method, { ...headers, authorization: fresh }, body, signal);
    if (second.status === 401) this.#credentials.refusedAgain?.(fresh);
    return second;
  }

  /** The exchange, and the redirects within the origin after it (a plain answer adds no async frame). */
  #follow(
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body: string | undefined,
    signal: CallSignal | undefined,
  ): Promise<Answer> {
    const reader = new AnswerReader(signal);
    this.#dispatcher.dispatch({ origin: this.#origin, path: this.#path, method, headers, body }, reader);
    return reader.answer.then((answer) =>
      REDIRECTS.has(answer.status) ? this.#redirected(answer, method, headers, body, signal) : answer,
    );
  }

  /** Follows `answer`, a redirect, within the provider's origin (docs/security.md). */
  async #redirected(
    answer: Answer,
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body: string | undefined,
    signal: CallSignal | undefined,
  ): Promise<Answer> {
    let path = this.#path;
    let verb: Dispatcher.HttpMethod = method;
    let payload = body;
    for (let hop = 0; REDIRECTS.has(answer.status); hop++) {
      const location = answer.headers.location;
      dump(answer);
      if (typeof location !== "string") return answer;
      const next = sameOriginHop(new URL(path, this.#origin), answer.status, location, verb, hop);
      if (next.method !== verb) {
        verb = next.method;
        payload = undefined;
      }
      path = `${next.url.pathname}${next.url.search}`;
      const reader = new AnswerReader(signal);
      this.#dispatcher.dispatch({ origin: this.#origin, path, method: verb, headers, body: payload }, reader);
      answer = await reader.answer;
    }
    return answer;
  }
}

/** Lets go of an answer nobody reads: an event stream is closed (its connection dropped). */
export function dump(answer: Answer): void {
  if (answer.body !== undefined) discard(answer.body);
}

/** Closes a body mid-way (the connection is dropped: for a request still running, cancellation). */
export function discard(body: Body): void {
  if (body.destroyed) return;
  // A body destroyed before its end aborts the exchange: expected here, not uncaught.
  body.on("error", ignore);
  body.destroy();
}

function ignore(): void {}

/** The media type of an answer, lower-case, without parameters. */
export function mediaType(headers: IncomingHttpHeaders): string {
  const type = headers["content-type"];
  if (typeof type !== "string") return "";
  const semi = type.indexOf(";");
  return (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase();
}

/** A JSON answer's message; undefined when it is not JSON (an event stream is closed). */
export function readJson(answer: Answer): unknown {
  if (answer.text === undefined) return dump(answer);
  try {
    return JSON.parse(answer.text) as unknown;
  } catch {
    return undefined;
  }
}

/** The start of a refused answer's body (to tell why), at most 4 KiB. */
export function readReason(answer: Answer): string {
  dump(answer);
  return answer.text?.slice(0, 4096) ?? "";
}

/**
 * Reads an SSE body (protocol/sse.ts on StringDecoder output), handing each JSON object to
 * `onMessage` with its text; resolves true when the consumer asked to stop, false when the stream ended. The
 * body is closed either way.
 */
export async function readEvents(
  answer: Answer,
  onMessage: (message: Record<string, unknown>, data: string) => Next,
  onEventId?: (id: string) => void,
): Promise<boolean> {
  const body = answer.body;
  if (body === undefined) throw new UpstreamProtocolError(-1, "the upstream's answer is not an event stream");
  const decoder = new StringDecoder("utf8");
  const parser = new SseParser(MAX_UPSTREAM_MESSAGE_SIZE);
  const onData = (data: string): Next => {
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return "more"; // not JSON: not a message of ours
    }
    return typeof message === "object" && message !== null && !Array.isArray(message)
      ? onMessage(message as Record<string, unknown>, data)
      : "more";
  };
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const before = parser.lastEventId;
      if (parser.feed(decoder.write(chunk), onData) === "stop") return true;
      if (onEventId && parser.lastEventId !== before) onEventId(parser.lastEventId!);
    }
    return false;
  } catch (err) {
    throw err instanceof SseEventTooLarge ? new UpstreamProtocolError(-1, err.message) : err;
  } finally {
    discard(body);
  }
}
