// One HTTP exchange with an upstream MCP server (docs/upstream-mcp.md "Connections"), on undici's
// dispatcher API: the egress Agent keeps one keep-alive pool per origin, a request is a method,
// headers and a string body, and the answer's body is a Node stream read with StringDecoder (no
// fetch, no WHATWG streams). Adds the provider's Authorization, retries once with a new token
// after a 401, and follows redirects only within the provider's origin (docs/security.md).
import type { IncomingHttpHeaders } from "node:http";
import { StringDecoder } from "node:string_decoder";
import type { Dispatcher } from "undici";
import type { Abortable } from "../deadline.js";
import { REDIRECTS, sameOriginHop } from "../../egress/fetch.js";
import { SseEventTooLarge, SseParser, type Next } from "../../protocol/sse.js";
import type { UpstreamCredentials } from "../upstream-auth.js";

/** The largest JSON-RPC message read from an upstream: bytes of a JSON body, characters of an SSE event. */
export const MAX_UPSTREAM_MESSAGE_SIZE = 16 * 1024 * 1024;

/** A non-2xx answer (after the 401 retry) or a transport-level refusal; `status` is the HTTP status. */
export class UpstreamHttpError extends Error {
  override readonly name = "UpstreamHttpError";

  /** `body`: the start of the answer's text, to tell why (never shown: it may echo the request). */
  constructor(
    readonly status: number,
    readonly body = "",
  ) {
    super(`HTTP ${status}`);
  }

  /** HTTP status, under the name callers of the SDK's transport error used. */
  get code(): number {
    return this.status;
  }
}

/**
 * An upstream answer that breaks the transport's rules (not JSON-RPC, a stream without the
 * response, an oversized message). Its message is Portico's own words, safe for the wire.
 */
export class UpstreamProtocolError extends Error {
  override readonly name = "UpstreamProtocolError";
  /** The words alone. */
  readonly why: string;

  constructor(
    readonly code: number,
    why: string,
  ) {
    super(why);
    this.why = why;
  }
}

export type Body = Dispatcher.ResponseData["body"];

/** What aborts an exchange: an AbortSignal, or a Deadline (no AbortController needed). */
export type CallSignal = AbortSignal | Abortable;

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Body;
}

export interface UpstreamEndpoint {
  readonly url: string;
  readonly dispatcher: Dispatcher;
  readonly credentials: UpstreamCredentials;
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
  readonly #credentials: UpstreamCredentials;
  readonly #origin: string;
  readonly #path: string;

  constructor(endpoint: UpstreamEndpoint) {
    const url = new URL(endpoint.url);
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
  async send(
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body: string | undefined,
    signal?: CallSignal,
  ): Promise<Answer> {
    if (!this.#credentials.configured) return this.#follow(method, headers, body, signal);
    const waiting = signal instanceof AbortSignal ? signal : signal?.signal;
    const authorization = (await this.#credentials.authorization(waiting)) ?? "";
    const first = await this.#follow(method, { ...headers, authorization }, body, signal);
    if (first.status !== 401 || !this.#credentials.refreshable) return first;
    dump(first.body);
    this.#credentials.invalidate(authorization);
    const fresh = (await this.#credentials.authorization(waiting)) ?? "";
    return this.#follow(method, { ...headers, authorization: fresh }, body, signal);
  }

  async #follow(
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body: string | undefined,
    signal: CallSignal | undefined,
  ): Promise<Answer> {
    let path = this.#path;
    let verb: Dispatcher.HttpMethod = method;
    let payload = body;
    for (let hop = 0; ; hop++) {
      const answer = await this.#dispatcher.request({
        origin: this.#origin,
        path,
        method: verb,
        headers,
        body: payload,
        // undici takes an EventEmitter's "abort" as well as an AbortSignal (a Deadline is the former).
        signal,
      });
      const status = answer.statusCode;
      if (!REDIRECTS.has(status)) return { status, headers: answer.headers, body: answer.body };
      const location = answer.headers.location;
      dump(answer.body);
      if (typeof location !== "string") return { status, headers: answer.headers, body: answer.body };
      const next = sameOriginHop(new URL(path, this.#origin), status, location, verb, hop);
      if (next.method !== verb) {
        verb = next.method;
        payload = undefined;
      }
      path = `${next.url.pathname}${next.url.search}`;
    }
  }
}

/** Lets go of a body nobody reads (the connection goes back to the pool once it is drained). */
export function dump(body: Body): void {
  body.dump({ limit: 64 * 1024 }).catch(() => undefined);
}

/** Closes a body mid-way (the connection is dropped: for a request still running, cancellation). */
export function discard(body: Body): void {
  if (body.destroyed) return;
  // undici destroys an unfinished body with a RequestAbortedError: expected here, not uncaught.
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

/**
 * A whole body as text, at most `limit` bytes (throws past it). Read with listeners, not `for
 * await`: a stream's async iterator costs several promises, ticks and end-of-stream watchers per
 * body, measurable on every forwarded call.
 */
export function readText(body: Body, limit = MAX_UPSTREAM_MESSAGE_SIZE): Promise<string> {
  return new Promise((resolve, reject) => {
    if (body.destroyed) return reject(body.errored ?? new Error("the upstream's answer was already closed"));
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: Error | undefined) => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", done);
      body.off("close", onClose);
      if (err === undefined)
        resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"));
      else {
        discard(body);
        reject(err);
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) done(new UpstreamProtocolError(-1, `an upstream JSON body exceeded ${limit} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = () => done(undefined);
    // A body that closes without its end (its connection dropped) has no error of its own to say so.
    const onClose = () => done(new Error("the upstream's answer ended before its body did"));
    body.on("data", onData);
    body.on("end", onEnd);
    body.on("error", done);
    body.on("close", onClose);
  });
}

/** A whole JSON body; undefined when it is not JSON. */
export async function readJson(body: Body): Promise<unknown> {
  const text = await readText(body);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The start of a refused answer's body (to tell why), at most 4 KiB, never throws. */
export async function readReason(body: Body): Promise<string> {
  try {
    return await readText(body, 4096);
  } catch {
    return "";
  }
}

/**
 * Reads an SSE body (protocol/sse.ts on StringDecoder output), handing each JSON object to
 * `onMessage`; resolves true when the consumer asked to stop, false when the stream ended. The
 * body is closed either way.
 */
export async function readEvents(
  body: Body,
  onMessage: (message: Record<string, unknown>) => Next,
  onEventId?: (id: string) => void,
): Promise<boolean> {
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
      ? onMessage(message as Record<string, unknown>)
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
