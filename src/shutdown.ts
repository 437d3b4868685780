// Graceful shutdown of a replica (main.ts calls it on SIGTERM; tests call it directly, since
// importing main.ts starts a process): first a drain delay (readiness 503, everything else served,
// connections closed after each answer), then new connections are refused, SSE streams end with a
// retry hint so clients resume them on another replica, in-flight requests and the work that
// outlives its connection finish up to a deadline (docs/operations.md#graceful-shutdown-and-rolling-updates).
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";

/** After the deadline, how long the store and providers get to close before we give up on them. */
const AFTER_DEADLINE_MS = 2000;
/** How often, while closing, kept-alive connections that went idle are looked at (and closed). */
const IDLE_SWEEP_MS = 100;
/**
 * How long a graceful close keeps a kept-alive connection that is idle, counted for each connection
 * from its last byte in or out (from the close for those idle before), and for how long no request
 * may have come in on any connection before one is closed (IdleConnections). A balancer without health
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
      // On the raw response, so answers written by hand (SSE streams) close their connection too.
      if (this.#active && !this.#quiet) closeAfterAnswer(reply.raw);
      done();
    });
    const connections = new Set<Socket>();
    app.server.on("connection", (socket: Socket) => {
      connections.add(socket);
      socket.once("close", () => connections.delete(socket));
    });
    let sweep: NodeJS.Timeout | undefined;
    app.addHook("preClose", async () => {
      const server = app.server;
      if (this.#deadline === undefined) {
        // A plain close: connections are closed as soon as they go idle. The server closes those
        // idle when it stops, not those whose response (an SSE stream ended by preClose, a call in
        // flight) ends later; kept alive, they would hold the close for the keep-alive timeout.
        sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        return;
      }
      // A graceful one: a connection is closed once idle for IDLE_GRACE_MS, each counted on its
      // own. Fastify and the server would close the idle ones right after this hook.
      const idle = new IdleConnections(server.closeIdleConnections.bind(server), connections);
      server.closeIdleConnections = () => undefined;
      sweep = setInterval(() => idle.sweep(IDLE_GRACE_MS), IDLE_SWEEP_MS);
      // The listener closes right after this hook (the others are synchronous). Closing it resets
      // the connections the kernel accepted that the event loop has not taken yet: closed just
      // after the poll phase took them, the fewest are left there.
      await new Promise((resolve) => setImmediate(resolve));
    });
    app.addHook("onClose", async () => clearInterval(sweep));
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

/**
 * Makes an answer close its connection. `shouldKeepAlive` alone is not enough: a `Connection:
 * keep-alive` header set on the response (@fastify/sse sets one on every stream it starts) turns
 * it back on as the head is written, and the connection would stay open, idle, after the stream.
 */
function closeAfterAnswer(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  const writeHead = Reflect.get(res, "writeHead") as (
    this: ServerResponse,
    ...args: unknown[]
  ) => ServerResponse;
  Reflect.set(res, "writeHead", function (this: ServerResponse, ...args: unknown[]) {
    this.setHeader("connection", "close");
    return writeHead.apply(this, args);
  });
}

/**
 * The connections of a closing server, when bytes last went in or out of each, and when a request
 * last came in on any (a first look counts as both: the close began then). `sweep` closes those
 * the server counts idle (no request being read, no answer being written) and quiet for long
 * enough, once no request has come in for as long; the others, a call in flight however quiet
 * or an answer just sent, are left open.
 */
class IdleConnections {
  /** The server's own closeIdleConnections. */
  readonly #closeIdle: () => void;
  readonly #connections: ReadonlySet<Socket>;
  readonly #seen = new WeakMap<Socket, { read: number; written: number; at: number }>();
  #requestAt = Date.now();

  constructor(closeIdle: () => void, connections: ReadonlySet<Socket>) {
    this.#closeIdle = closeIdle;
    this.#connections = connections;
    this.#look();
  }

  /**
   * Closes the connections idle for `ms` or more, if no request came in for as long; called from
   * a timer. A balancer that still sends (its connections refused, it uses up those it holds, each
   * closed after its answer) may reach for any connection it holds next, the longest idle too;
   * one that sent nothing for `ms` has no more for this replica, or none on those.
   */
  sweep(ms: number): void {
    this.#look();
    // After the poll phase that follows: a request whose bytes reached the kernel while this
    // process was busy (the timer ran late) is read there first, and its connection is no longer
    // idle or quiet. Closed before, it would be reset with the request unread.
    setImmediate(() => {
      const now = this.#look();
      if (now - this.#requestAt < ms) return;
      for (const socket of this.#idle())
        if (now - (this.#seen.get(socket)?.at ?? now) >= ms) socket.destroy();
    });
  }

  /** Notes the connections whose bytes moved since the last look; returns the time of this one. */
  #look(): number {
    const now = Date.now();
    for (const socket of this.#connections) {
      const { bytesRead: read, bytesWritten: written } = socket;
      const seen = this.#seen.get(socket);
      if (seen?.read === read && seen.written === written) continue;
      if (seen && seen.read !== read) this.#requestAt = now;
      this.#seen.set(socket, { read, written, at: now });
    }
    return now;
  }

  /**
   * The connections the server counts idle: those its closeIdleConnections would close. It is the
   * only public knowledge of that (a request half read, an answer not yet ended keep a connection
   * busy), so it is asked with `destroy` noting the connection instead of closing it.
   */
  #idle(): Socket[] {
    const idle: Socket[] = [];
    const note = function (this: Socket) {
      idle.push(this);
      return this;
    };
    const sockets = [...this.#connections];
    const own = sockets.map((socket) => Object.getOwnPropertyDescriptor(socket, "destroy"));
    for (const socket of sockets)
      Object.defineProperty(socket, "destroy", { value: note, configurable: true });
    try {
      this.#closeIdle();
    } finally {
      sockets.forEach((socket, i) => {
        const descriptor = own[i];
        if (descriptor) Object.defineProperty(socket, "destroy", descriptor);
        else Reflect.deleteProperty(socket, "destroy");
      });
    }
    return idle;
  }
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(resolve, ms, value).unref());
}
