// The session-era HTTP side of the bridge (MCP 2025-03-26 … 2025-11-25 basic/transports §Streamable
// HTTP): every local message is POSTed as is; the session id from the initialize answer and the
// negotiated version go on every later request; after `notifications/initialized` a GET stream
// carries the server's own notifications and requests; closing DELETEs the session. The local
// client's own initialize goes up, so the server negotiates that client's revision and fits what it
// sends to it (docs/protocol-eras.md "Older revisions"): nothing is fitted here (docs/connect.md).
import { RpcCode } from "../protocol/codes.js";
import { classify, errorResponse, isRecord, type RequestId } from "../protocol/jsonrpc.js";
import { describe } from "./connect-error.js";
import { ACCEPT_BOTH, readMessages, type HttpPeer } from "./http-peer.js";

/** Where messages for the local client go (stdout). */
export interface LocalSink {
  send(message: unknown): void;
}

/** How long to wait before opening the GET stream again after it ended. */
const RECONNECT_MS = 1000;

export class SessionRelay {
  #sessionId: string | undefined;
  #version: string | undefined;
  #initializing: Promise<void> | undefined;
  /** The local client's initialize, sent again when the server has forgotten the session. */
  #initialize: unknown;
  #renewing: Promise<void> | undefined;
  #stream: AbortController | undefined;
  #closing = false;
  /** Local requests in flight, so a cancellation can end the stream that carries the answer. */
  readonly #inFlight = new Map<RequestId, AbortController>();

  constructor(
    private readonly peer: HttpPeer,
    private readonly local: LocalSink,
    private readonly log: (line: string) => void,
  ) {}

  /** Relays one message from the local client. */
  async handle(message: unknown): Promise<void> {
    const c = classify(message);
    if (c.kind === "request" && c.message.method === "initialize") {
      this.#initialize = message;
      const done = this.#post(message, c.message.id);
      this.#initializing = done.catch(() => undefined);
      return done;
    }
    await this.#initializing;
    if (c.kind === "notification" && c.message.method === "notifications/cancelled") {
      const id = c.message.params?.requestId;
      if (typeof id === "string" || typeof id === "number") this.#inFlight.get(id)?.abort();
    }
    await this.#post(message, c.kind === "request" ? c.message.id : undefined);
    if (c.kind === "notification" && c.message.method === "notifications/initialized") this.#openStream();
  }

  #headers(): Record<string, string> {
    return {
      "content-type": "application/json",
      accept: ACCEPT_BOTH,
      ...(this.#sessionId !== undefined && { "mcp-session-id": this.#sessionId }),
      ...(this.#version !== undefined && { "mcp-protocol-version": this.#version }),
    };
  }

  async #post(message: unknown, id: RequestId | undefined): Promise<void> {
    const abort = new AbortController();
    if (id !== undefined) this.#inFlight.set(id, abort);
    try {
      const body = JSON.stringify(message);
      let response = await this.peer.send("POST", this.#headers(), body, abort.signal);
      // basic/transports §Session Management: a 404 on a session means it is gone; the client
      // starts a new one. The bridge does so with the local client's own initialize and retries.
      const sent = this.#sessionId;
      if (response.status === 404 && sent !== undefined && this.#initialize !== message) {
        await response.body?.cancel().catch(() => undefined);
        await this.#renew(sent);
        response = await this.peer.send("POST", this.#headers(), body, abort.signal);
      }
      const session = response.headers.get("mcp-session-id");
      if (session !== null && this.#sessionId === undefined) this.#sessionId = session;
      let answered = false;
      await readMessages(response, (m) => {
        if (isRecord(m) && m.id === id && id !== undefined && ("result" in m || "error" in m)) {
          answered = true;
          this.#noteVersion(m);
        }
        this.local.send(m);
      });
      if (id !== undefined && !answered) this.#fail(id, `the server answered HTTP ${response.status}`);
    } catch (err) {
      if (id === undefined) this.log(`a message could not be delivered: ${describe(err)}`);
      else if (!abort.signal.aborted) this.#fail(id, describe(err));
    } finally {
      if (id !== undefined) this.#inFlight.delete(id);
    }
  }

  /** A new session for the one the server answered 404 to (once, however many requests saw it). */
  #renew(gone: string): Promise<void> {
    if (this.#sessionId !== gone) return this.#renewing ?? Promise.resolve();
    this.#renewing ??= (async () => {
      this.log("the server ended the session; starting a new one");
      this.#sessionId = undefined;
      this.#version = undefined;
      this.#stream?.abort();
      this.#stream = undefined;
      const response = await this.peer.send("POST", this.#headers(), JSON.stringify(this.#initialize));
      this.#sessionId = response.headers.get("mcp-session-id") ?? undefined;
      await readMessages(response, (m) => {
        if (isRecord(m) && ("result" in m || "error" in m)) this.#noteVersion(m);
      });
      const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
      const done = await this.peer.send("POST", this.#headers(), JSON.stringify(initialized));
      await done.body?.cancel().catch(() => undefined);
      this.#openStream();
    })().finally(() => (this.#renewing = undefined));
    return this.#renewing;
  }

  #noteVersion(response: Record<string, unknown>): void {
    const result = response.result;
    if (this.#version === undefined && isRecord(result) && typeof result.protocolVersion === "string")
      this.#version = result.protocolVersion;
  }

  #fail(id: RequestId, reason: string): void {
    this.local.send(errorResponse(id, RpcCode.InternalError, `portico connect: ${reason}`));
  }

  /** The standalone GET stream, opened again when it ends (with Last-Event-ID), until closing. */
  #openStream(): void {
    if (this.#stream || this.#sessionId === undefined) return;
    const abort = new AbortController();
    this.#stream = abort;
    void (async () => {
      let lastEventId: string | undefined;
      const session = this.#sessionId!;
      while (!this.#closing && !abort.signal.aborted) {
        try {
          const headers: Record<string, string> = { ...this.#headers(), accept: "text/event-stream" };
          delete headers["content-type"];
          if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
          const response = await this.peer.send("GET", headers, undefined, abort.signal);
          if (response.status === 405) return; // the server offers no such stream
          if (response.status === 404) {
            await response.body?.cancel().catch(() => undefined);
            await this.#renew(session);
            return; // renewing opened the new session's stream
          }
          if (!response.ok) {
            await response.body?.cancel().catch(() => undefined);
            this.log(`the server's event stream answered HTTP ${response.status}`);
            return;
          }
          lastEventId = (await readMessages(response, (m) => this.local.send(m))) ?? lastEventId;
        } catch (err) {
          if (this.#closing || abort.signal.aborted) return;
          this.log(`the server's event stream broke: ${describe(err)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS).unref());
      }
    })();
  }

  /** Stops the stream and ends the session on the server (DELETE; 405 means it keeps none). */
  async close(): Promise<void> {
    this.#closing = true;
    this.#stream?.abort();
    for (const abort of this.#inFlight.values()) abort.abort();
    if (this.#sessionId === undefined) return;
    try {
      const headers = this.#headers();
      delete headers["content-type"];
      const response = await this.peer.send("DELETE", headers, undefined, AbortSignal.timeout(5000));
      await response.body?.cancel().catch(() => undefined);
    } catch (err) {
      this.log(`the session could not be ended: ${describe(err)}`);
    }
  }
}
