// Graceful shutdown of a replica (main.ts calls it on SIGTERM; tests call it directly, since
// importing main.ts starts a process): first a drain delay (readiness 503, everything else served,
// connections closed after each answer), then new connections are refused, SSE streams end with a
// retry hint so clients resume them on another replica, in-flight requests and the work that
// outlives its connection finish up to a deadline (docs/operations.md#graceful-shutdown-and-rolling-updates).
import type { FastifyInstance } from "fastify";

/** After the deadline, how long the store and providers get to close before we give up on them. */
const AFTER_DEADLINE_MS = 2000;
/** How often, in a plain close, kept-alive connections that went idle are closed while requests finish. */
const IDLE_SWEEP_MS = 100;
/**
 * How long a graceful close keeps a kept-alive connection that is idle. A balancer without health
 * checks goes on sending on the connections it holds (only a new connection is refused); each
 * such request is served and its connection closed after the answer. Closed the moment it went
 * idle instead, a request already on its way would be lost (a balancer never sends a POST twice),
 * and the connection a balancer reuses first is the one that went idle last. A busy balancer uses
 * what it holds well within this; an idle one sends nothing on it.
 */
const IDLE_GRACE_MS = 1000;
/**
 * For how long before the listener closes answers keep their connections again. Closing a
 * listener resets the connections the kernel accepted and the process has not taken yet: a
 * balancer without health checks, made to open a new connection for every request by the
 * drain, would have some there at that moment. With its connections kept, it opens new ones
 * only as its concurrency grows.
 */
const QUIET_BEFORE_CLOSE_MS = 500;
/** How often the close looks whether the work that outlives its connection is done. */
const SETTLE_POLL_MS = 50;

export interface ClosedReport {
  /** True when the deadline passed and the connections still open were cut. */
  readonly forced: boolean;
}

/**
 * Closes a Portico gracefully: the preClose hook ends every SSE stream with a `retry:` hint, the
 * listener closes (new connections are refused), requests in flight run to completion, as do new
 * ones on connections still open (served, each connection closed after its answer; streams opened
 * now end at once with the hint), and so does the work that outlives its connection (a request
 * whose stream a client resumes elsewhere, a held call: Drain.settled); at `deadlineMs` what is
 * left is cut. The store and providers close last (onClose), so the work finishing meanwhile
 * still reaches Redis, and through it the replicas its clients came back to.
 */
export async function gracefulClose(
  portico: { readonly app: FastifyInstance; readonly drain: Drain },
  deadlineMs: number,
): Promise<ClosedReport> {
  const { app, drain } = portico;
  drain.start();
  drain.closeBy(Date.now() + deadlineMs);
  const closed = app.close();
  const first = await Promise.race([closed.then(() => "closed" as const), delay(deadlineMs, "deadline")]);
  if (first === "closed") return { forced: false };
  app.server.closeAllConnections();
  await Promise.race([closed, delay(AFTER_DEADLINE_MS, undefined)]);
  return { forced: true };
}

/**
 * Whether this replica is draining (shutting down, still serving: /readyz reads it), and how its
 * close treats what is still open. Every answer sent while draining closes its connection, so a
 * load balancer's kept-alive connections to this replica end one by one and its new requests go
 * where readiness says; nothing is refused.
 */
export class Drain {
  #active = false;
  /** Answers keep their connections: the last moments before the listener closes. */
  #quiet = false;
  /** When a graceful close must be done (gracefulClose); undefined for a plain app.close(). */
  #deadline: number | undefined;

  constructor(app: FastifyInstance) {
    // A callback hook, not an async one: it runs on every request, and costs nothing while serving.
    app.addHook("onRequest", (_req, reply, done) => {
      // Set on the raw response, so answers written by hand (SSE streams) close their connection too.
      if (this.#active && !this.#quiet) reply.raw.shouldKeepAlive = false;
      done();
    });
    let sweep: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    app.addHook("preClose", async () => {
      const server = app.server;
      if (this.#deadline === undefined) {
        // A plain close: connections are closed as soon as they go idle. The server closes those
        // idle when it stops, not those whose response (an SSE stream ended by preClose, a call in
        // flight) ends later; kept alive, they would hold the close for the keep-alive timeout.
        sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        return;
      }
      // A graceful one: a connection that goes idle from now on is closed after IDLE_GRACE_MS
      // idle (its keep-alive timeout, set as its answer ends), and those idle now once that has
      // passed. Fastify and the server would close the idle ones right after this hook.
      server.keepAliveTimeout = IDLE_GRACE_MS;
      server.closeIdleConnections = () => undefined;
      grace = setTimeout(() => {
        delete (server as Partial<typeof server>).closeIdleConnections;
        server.closeIdleConnections();
      }, IDLE_GRACE_MS);
      // The listener closes right after this hook (the others are synchronous). Closing it resets
      // the connections the kernel accepted that the event loop has not taken yet: closed just
      // after the poll phase took them, the fewest are left there.
      await new Promise((resolve) => setImmediate(resolve));
    });
    app.addHook("onClose", async () => {
      clearTimeout(grace);
      clearInterval(sweep);
    });
  }

  get active(): boolean {
    return this.#active;
  }

  /** From now on /readyz answers 503 and every answer closes its connection. */
  start(): void {
    this.#active = true;
  }

  /** Until the close, answers keep their connections (QUIET_BEFORE_CLOSE_MS). */
  quiet(): void {
    this.#quiet = true;
  }

  /** The close that follows is graceful, done by `deadline` (epoch ms); each answer closes its connection. */
  closeBy(deadline: number): void {
    this.#deadline = deadline;
    this.#quiet = false;
  }

  /**
   * Resolves once `busy` says no work is left, or at the deadline; at once when the close is not
   * graceful. Called while closing, before the store closes.
   */
  async settled(busy: () => boolean): Promise<void> {
    const deadline = this.#deadline ?? 0;
    while (busy() && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
  }
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
  const { drain } = portico;
  drain.start();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0 || skip.aborted) return resolve();
      const timer = setTimeout(resolve, ms);
      skip.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  const quiet = Math.min(QUIET_BEFORE_CLOSE_MS, times.delayMs / 2);
  await wait(times.delayMs - quiet);
  drain.quiet();
  await wait(quiet);
  onClosing();
  return gracefulClose(portico, times.deadlineMs);
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(resolve, ms, value).unref());
}
