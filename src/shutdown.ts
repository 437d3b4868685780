// Graceful shutdown of a replica (main.ts calls it on SIGTERM; tests call it directly, since
// importing main.ts starts a process): new connections are refused, SSE streams end with a retry
// hint so clients resume them on another replica, in-flight requests finish up to a deadline.
import type { FastifyInstance } from "fastify";

/** After the deadline, how long the store and providers get to close before we give up on them. */
const AFTER_DEADLINE_MS = 2000;
/** How often kept-alive connections that went idle are closed while requests finish. */
const IDLE_SWEEP_MS = 100;

export interface ClosedReport {
  /** True when the deadline passed and the connections still open were cut. */
  readonly forced: boolean;
}

/**
 * Closes a Portico: Fastify stops routing (new requests on open connections get 503), the
 * preClose hook ends every SSE stream with a `retry:` hint, the listener closes, and in-flight
 * requests run to completion; at `deadlineMs` the remaining connections are cut. The store and
 * providers close last (onClose), so requests finishing meanwhile still reach Redis.
 */
export async function gracefulClose(
  portico: { readonly app: FastifyInstance },
  deadlineMs: number,
): Promise<ClosedReport> {
  const { app } = portico;
  const closed = app.close();
  const first = await Promise.race([closed.then(() => "closed" as const), delay(deadlineMs, "deadline")]);
  if (first === "closed") return { forced: false };
  app.server.closeAllConnections();
  await Promise.race([closed, delay(AFTER_DEADLINE_MS, undefined)]);
  return { forced: true };
}

/**
 * While the app closes, closes each kept-alive connection as soon as it goes idle. The server
 * closes those idle when it stops, not those whose response (an SSE stream ended by preClose, an
 * in-flight call) ends later: kept alive, they would hold every close, graceful or not, until
 * the keep-alive timeout (72 s by Fastify's default).
 */
export function closeIdleWhileClosing(app: FastifyInstance): void {
  let sweep: NodeJS.Timeout | undefined;
  app.addHook("preClose", async () => {
    sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  });
  app.addHook("onClose", async () => clearInterval(sweep));
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(resolve, ms, value).unref());
}
