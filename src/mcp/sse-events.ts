// Writing SSE events once a stream has begun, and how far behind its client may fall. @fastify/sse's
// send() costs a promise and, while the socket is full, a drain listener per event; once the
// headers are out, an event goes straight to the socket instead, and the callers bound what waits
// there (MAX_BACKLOG_BYTES): a client that does not read must not grow the server's memory.
import type { FastifyReply } from "fastify";

/** What may wait in a stream's socket buffer for a slow client. */
export const MAX_BACKLOG_BYTES = 1024 * 1024;

/** Writes one event (`data` is one JSON text; `id` for resumable streams); nothing once closed. */
export function writeEvent(reply: FastifyReply, data: string, id?: string): void {
  if (!reply.sse.isConnected) return;
  if (!reply.raw.headersSent) {
    reply.sse.send(id === undefined ? { data } : { id, data }).catch(() => undefined);
    return;
  }
  const lines = data.includes("\n") ? data.split("\n").join("\ndata: ") : data;
  reply.raw.write(id === undefined ? `data: ${lines}\n\n` : `id: ${id}\ndata: ${lines}\n\n`);
}

/** Bytes written to a reply and not yet taken by its client. */
export function backlogOf(reply: FastifyReply): number {
  return reply.raw.writableLength;
}
