// The reply to one POSTed request (basic/transports "Sending Messages to the Server"): plain JSON
// when nothing precedes the result, upgraded to an SSE stream at the first related message. Every
// message of an SSE stream goes through the stream hub, so it can be replayed with Last-Event-ID.
import type { FastifyReply } from "fastify";
import { RpcCode } from "../../protocol/codes.js";
import { randomId } from "../../crypto/secrets.js";
import { STANDALONE, type StreamHub } from "./streams.js";
import { backlogOf, writeEvent } from "../sse-events.js";

export interface ChannelOptions {
  readonly hub: StreamHub;
  readonly tenant: string;
  readonly sid: string;
  /** False when the client does not accept text/event-stream: related messages use the GET stream. */
  readonly canStream: boolean;
  readonly retryMs: number;
  /** Whether the stream starts with a priming event (not for clients before 2025-11-25). */
  readonly priming: boolean;
  /** The owner marker the stream's event log starts with (stream-owners.ts), made on upgrade only. */
  readonly marker?: () => string;
}

export class ResponseChannel {
  #streamId: string | undefined;
  #detach: (() => void) | undefined;
  /** The related messages being sent, in order; none for a plain call (no promise made for it). */
  #queue: Promise<unknown> | undefined;

  constructor(
    private readonly reply: FastifyReply,
    private readonly opts: ChannelOptions,
  ) {}

  /** True once the reply became an SSE stream. */
  get streaming(): boolean {
    return this.#streamId !== undefined;
  }

  /** Sends a notification or request related to this request, in order. */
  send(json: string): Promise<void> {
    const next = this.#queue ? this.#queue.then(() => this.#send(json)) : this.#send(json);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Ends the exchange with the response: on the stream if there is one, else as JSON. */
  async finish(json: string): Promise<void> {
    if (this.#queue) await this.#queue;
    if (this.#streamId === undefined) {
      await this.reply.code(200).header("content-type", "application/json").send(json);
      return;
    }
    try {
      await this.opts.hub.emit(this.opts.tenant, this.opts.sid, this.#streamId, json);
    } finally {
      this.#detach?.();
    }
  }

  /** Ends a cancelled request: its stream closes without a response; a JSON reply says so. */
  async cancel(id: string | number): Promise<void> {
    if (this.#queue) await this.#queue;
    if (this.#streamId === undefined) {
      const body = {
        jsonrpc: "2.0",
        id,
        error: { code: RpcCode.RequestCancelled, message: "Request cancelled by the client" },
      };
      await this.reply.code(200).header("content-type", "application/json").send(JSON.stringify(body));
      return;
    }
    this.#detach?.();
    this.reply.sse.close();
  }

  /** Releases the stream without a response (the request failed before answering). */
  abandon(): void {
    this.#detach?.();
  }

  async #send(json: string): Promise<void> {
    const { hub, tenant, sid } = this.opts;
    if (!this.opts.canStream) {
      await hub.emit(tenant, sid, STANDALONE, json);
      return;
    }
    if (this.#streamId === undefined) await this.#upgrade();
    await hub.emit(tenant, sid, this.#streamId!, json);
  }

  async #upgrade(): Promise<void> {
    const sse = this.reply.sse;
    const streamId = randomId(6);
    this.#streamId = streamId;
    // Priming event (2025-11-25): an id to resume from, no data, and how long to wait to retry.
    if (this.opts.priming)
      await sse.send({ id: `${streamId}.0-0`, data: "", retry: this.opts.retryMs }).catch(() => undefined);
    const { hub, tenant, sid, marker } = this.opts;
    // Who runs the request is logged first, so a replica the client resumes on can tell when it
    // died (the plain-JSON path never gets here: no store write for it).
    const [, detach] = await Promise.all([
      marker === undefined ? undefined : hub.mark(tenant, sid, streamId, marker()),
      hub.attach(tenant, sid, streamId, sseSink(this.reply), { fresh: true }),
    ]);
    this.#detach = detach;
  }
}

/**
 * Adapts an @fastify/sse reply to the hub's sink; writes to a closed connection are dropped, and
 * the hub drops a stream whose client falls too far behind (backlog).
 */
export function sseSink(reply: FastifyReply) {
  return {
    write(eventId: string, data: string) {
      writeEvent(reply, data, eventId);
    },
    get backlog() {
      return backlogOf(reply);
    },
    destroy() {
      reply.raw.destroy();
    },
    close(retryMs?: number, eventId?: string) {
      // With an id, shaped as the priming event: a client's parser drops an event without data.
      const hint = eventId === undefined ? { data: undefined } : { id: eventId, data: "" };
      if (retryMs !== undefined && reply.sse.isConnected)
        reply.sse.send({ ...hint, retry: retryMs }).catch(() => undefined);
      reply.sse.close();
    },
  };
}
