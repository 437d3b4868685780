// Graceful shutdown of a replica (main.ts calls it on SIGTERM; tests call it directly, since
// importing main.ts starts a process): first a drain delay (readiness 503, everything else served,
// connections closed after each answer), then new connections are refused, SSE streams end with a
// retry hint so clients resume them on another replica, in-flight requests finish up to a deadline.
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
 * Closes a Portico: the preClose hook ends every SSE stream with a `retry:` hint, the listener
 * closes, and requests in flight run to completion, as do new ones on connections still open
 * (served, each connection closed after its answer; streams opened now end at once with the hint);
 * at `deadlineMs` the remaining connections are cut. The store and
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

/** Whether this replica is draining (shutting down, still serving): /readyz reads it. */
export interface Drain {
  readonly active: boolean;
  /** From now on /readyz answers 503 and every answer closes its connection. */
  start(): void;
}

/**
 * The drain state of `app`. While it is active every answer is sent with `Connection: close`, so
 * a load balancer's kept-alive connections to this replica end one by one and its new requests go
 * where readiness says; nothing is refused.
 */
export function drainState(app: FastifyInstance): Drain {
  let active = false;
  // A callback hook, not an async one: it runs on every request, and costs nothing while serving.
  app.addHook("onRequest", (_req, reply, done) => {
    // Set on the raw response, so answers written by hand (SSE streams) close their connection too.
    if (active) reply.raw.shouldKeepAlive = false;
    done();
  });
  return {
    get active() {
      return active;
    },
    start: () => (active = true),
  };
}

export interface ShutdownTimes {
  /** How long to keep serving, not ready, before closing (PORTICO_SHUTDOWN_DELAY_SECONDS). */
  readonly delayMs: number;
  /** How long in-flight requests get once closing (PORTICO_SHUTDOWN_TIMEOUT_MS). */
  readonly deadlineMs: number;
}

/**
 * What main.ts runs on SIGTERM: the drain starts, the replica serves on for `delayMs` (or until
 * `skip` aborts: a second signal), then gracefulClose. `onClosing` is called when the delay ends.
 */
export async function drainThenClose(
  portico: { readonly app: FastifyInstance; readonly drain: Drain },
  times: ShutdownTimes,
  skip: AbortSignal,
  onClosing: () => void = () => undefined,
): Promise<ClosedReport> {
  portico.drain.start();
  if (times.delayMs > 0 && !skip.aborted)
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, times.delayMs);
      skip.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  onClosing();
  return gracefulClose(portico, times.deadlineMs);
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(resolve, ms, value).unref());
}
