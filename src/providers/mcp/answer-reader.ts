// Reads one upstream answer straight from undici's dispatch handler (docs/upstream-mcp.md
// "Connections"). A JSON answer — every answer but an event stream — is collected whole and handed
// over as text when it ends: no Node stream, no events, no ticks between the socket and the caller.
// An event stream is handed over as soon as its headers arrive, as a Readable fed from the socket
// with backpressure (pausing the socket while the reader is behind).
import type { IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { UpstreamProtocolError } from "./upstream-errors.js";

/** The largest JSON-RPC message read from an upstream: bytes of a JSON body, characters of an SSE event. */
export const MAX_UPSTREAM_MESSAGE_SIZE = 16 * 1024 * 1024;

/** What aborts an exchange: `aborted`, `reason` and an "abort" event (AbortSignal or Deadline). */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The whole body of any answer but an event stream (UTF-8). */
  readonly text: string | undefined;
  /** An event stream's body, still arriving: read it (readEvents) or discard it. */
  readonly body: Readable | undefined;
}

const ABORTED = "the upstream exchange was aborted";

/** An event stream's body: the socket pauses while nobody reads, and closing it aborts the exchange. */
class EventBody extends Readable {
  constructor(private readonly controller: Dispatcher.DispatchController) {
    super();
  }

  override _read(): void {
    if (this.controller.paused) this.controller.resume();
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    if (!this.readableEnded && !this.controller.aborted)
      this.controller.abort(err ?? new Error("the reader closed the upstream's event stream"));
    callback(err);
  }
}

/** The dispatch handler of one exchange; `answer` settles once the answer can be handed over. */
export class AnswerReader implements Dispatcher.DispatchHandler {
  readonly answer: Promise<Answer>;
  #resolve!: (answer: Answer) => void;
  #reject!: (err: unknown) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] | undefined;
  #size = 0;
  #stream: EventBody | undefined;
  #settled = false;

  constructor(private readonly signal: AbortSource | undefined) {
    this.answer = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    if (signal === undefined) return;
    if (isEmitter(signal)) signal.once("abort", this.#onAbort);
    else (signal as AbortSignal).addEventListener("abort", this.#onAbort, { once: true });
  }

  readonly #onAbort = (): void => {
    const reason = this.signal?.reason;
    const err = reason instanceof Error ? reason : new Error(ABORTED);
    if (this.#controller !== undefined && !this.#controller.aborted) this.#controller.abort(err);
    else this.#fail(err);
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.signal?.aborted) this.#onAbort();
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (statusCode < 200) return; // 1xx: the answer is still to come
    this.#status = statusCode;
    this.#headers = headers;
    if (isEventStream(headers)) {
      this.#stream = new EventBody(controller);
      this.#settle({ status: statusCode, headers, text: undefined, body: this.#stream });
    } else this.#chunks = [];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#stream !== undefined) {
      if (!this.#stream.push(chunk)) controller.pause();
      return;
    }
    this.#size += chunk.length;
    if (this.#size > MAX_UPSTREAM_MESSAGE_SIZE)
      return controller.abort(
        new UpstreamProtocolError(-1, `an upstream JSON body exceeded ${MAX_UPSTREAM_MESSAGE_SIZE} bytes`),
      );
    this.#chunks?.push(chunk);
  }

  onResponseEnd(): void {
    this.#unlisten();
    if (this.#stream !== undefined) {
      this.#stream.push(null);
      return;
    }
    const chunks = this.#chunks ?? [];
    const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
    this.#chunks = undefined;
    this.#settle({ status: this.#status, headers: this.#headers, text, body: undefined });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#unlisten();
    this.#chunks = undefined;
    if (this.#stream !== undefined && !this.#stream.destroyed) this.#stream.destroy(err);
    this.#fail(err);
  }

  #settle(answer: Answer): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve(answer);
  }

  #fail(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#unlisten();
    this.#reject(err);
  }

  #unlisten(): void {
    const signal = this.signal;
    if (signal === undefined) return;
    if (isEmitter(signal)) signal.removeListener("abort", this.#onAbort);
    else (signal as AbortSignal).removeEventListener("abort", this.#onAbort);
  }
}

/** A Deadline (an EventEmitter face), as opposed to an AbortSignal (an EventTarget). */
interface Emitter {
  once(event: "abort", listener: () => void): unknown;
  removeListener(event: "abort", listener: () => void): unknown;
}

function isEmitter(signal: AbortSource): signal is AbortSource & Emitter {
  return typeof (signal as Partial<Emitter>).once === "function";
}

function isEventStream(headers: IncomingHttpHeaders): boolean {
  const type = headers["content-type"];
  return typeof type === "string" && /^\s*text\/event-stream\s*(;|$)/i.test(type);
}
