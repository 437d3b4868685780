// The bridge's HTTP side (MCP basic/transports §Streamable HTTP): requests to the server URL with
// the user's bearer token, a sign-in or refresh on 401 and one retry, and the messages of an
// answer read from JSON or from an SSE stream (protocol/sse.ts).
import { SseParser } from "../protocol/sse.js";
import { ConnectError, describe } from "./connect-error.js";
import type { BridgeOAuth } from "./oauth-client.js";

/** Largest SSE event accepted from the server (a tool result can be large). */
const MAX_EVENT_CHARACTERS = 64 * 1024 * 1024;

export const ACCEPT_BOTH = "application/json, text/event-stream";

export class HttpPeer {
  constructor(
    readonly url: URL,
    private readonly auth: BridgeOAuth,
  ) {}

  /** One request; a 401 signs in (or refreshes) and the request is sent once more. */
  async send(
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body?: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    const token = await this.auth.accessToken();
    const first = await this.#fetch(method, headers, token, body, signal);
    if (first.status !== 401) return first;
    await first.body?.cancel().catch(() => undefined);
    const renewed = await this.auth.unauthorized(first.headers.get("www-authenticate"), token);
    const second = await this.#fetch(method, headers, renewed, body, signal);
    if (second.status === 401) {
      await second.body?.cancel().catch(() => undefined);
      throw new ConnectError(`${this.url.href} refused the new access token (HTTP 401)`);
    }
    return second;
  }

  async #fetch(
    method: string,
    headers: Record<string, string>,
    token: string | undefined,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    const all = token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` };
    try {
      return await fetch(this.url, { method, headers: all, body, signal, redirect: "error" });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new ConnectError(`cannot reach ${this.url.href}: ${describe(err)}`);
    }
  }
}

/**
 * Hands each JSON-RPC message of an answer to `onMessage`: a JSON body (one message or a batch) or
 * an SSE stream, read to its end. Resolves to the stream's last event id, for a resumption.
 */
export async function readMessages(
  response: Response,
  onMessage: (message: unknown) => void,
): Promise<string | undefined> {
  const type = (response.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type === "application/json") {
    const text = await response.text();
    if (text.trim() === "") return undefined;
    const value = JSON.parse(text) as unknown;
    for (const message of Array.isArray(value) ? value : [value]) onMessage(message);
    return undefined;
  }
  if (type !== "text/event-stream" || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const parser = new SseParser(MAX_EVENT_CHARACTERS);
  const decoder = new TextDecoder();
  const onData = (data: string) => {
    if (data.trim() === "") return "more" as const; // priming events carry no message
    try {
      onMessage(JSON.parse(data));
    } catch {
      // not JSON: no message to relay
    }
    return "more" as const;
  };
  for await (const chunk of response.body)
    parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }), onData);
  return parser.lastEventId;
}
