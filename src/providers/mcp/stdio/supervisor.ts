// The children of one `stdio` provider on this replica (docs/upstream-mcp.md "stdio upstreams"):
// the shared child every client's requests go to, restarted with exponential back-off after it
// ends, and (serverRequests "child-per-client") a child per client session that declares sampling,
// elicitation or roots. Only the launch this replica's bootstrap file gives is ever run; a provider
// the file does not define opens nothing and says why.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { StdioLaunch } from "../../../config/stdio-launch.js";
import { MAX_UPSTREAM_MESSAGE_SIZE } from "../answer-reader.js";
import type { OpenSession, SessionHandlers } from "../session/client.js";
import { UpstreamGone } from "../upstream-errors.js";
import { describeFailure } from "../upstream.js";
import { StdioChild, type ChildExit } from "./child.js";
import { StdioSession, type StdioSessionOptions } from "./session.js";

/** Events of the children, for health and metrics (providers/factory.ts counts them). */
export interface StdioEvents {
  /** A child started (`shared`: the provider's, else a client's own). */
  started?(shared: boolean): void;
  /** A child ended; `restartMs`: when the shared one may start again (undefined for a client's own). */
  exited?(exit: ChildExit, shared: boolean, restartMs: number | undefined): void;
}

export interface StdioSupervisorDeps {
  /** The launch of this replica's bootstrap file; undefined when the file does not define the provider. */
  readonly launch: StdioLaunch | undefined;
  readonly log: FastifyBaseLogger;
  readonly fields: { readonly tenant: string; readonly provider: string };
  readonly roots?: StdioSessionOptions["roots"];
  /** The shared child's log messages tied to no call. */
  readonly onLog?: (params: Record<string, unknown>) => void;
  /** Run on each new shared session before it serves (a log level to restore). */
  readonly opened?: (session: StdioSession) => Promise<void>;
  readonly events?: StdioEvents;
  /** How long an initialize may take. */
  readonly initTimeoutMs: number;
}

/** The first restart's delay, doubled after each child that ran less than STABLE_MS, up to MAX. */
export const RESTART_INITIAL_MS = 1000;
const RESTART_MAX_MS = 60_000;
const STABLE_MS = 30_000;

/** Clients' own children (child-per-client) per provider and replica; past it, clients share. */
export const MAX_OWN_CHILDREN = 32;

export class StdioSupervisor {
  readonly #children = new Set<StdioChild>();
  #own = 0;
  #failures = 0;
  #startAt = 0;
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(private readonly deps: StdioSupervisorDeps) {}

  /** The shared child's session: waits out the restart back-off, then starts a child. */
  readonly openShared: OpenSession = async (capabilities, handlers) => {
    const wait = this.#startAt - Date.now();
    if (wait > 0) await new Promise<void>((resolve) => this.#sleep(wait, resolve));
    const { roots, onLog } = this.deps;
    const session = await this.#open(true, capabilities, handlers, { roots, onLog });
    await this.deps.opened?.(session);
    return session;
  };

  /** A client session's own child: its requests go to that client (`handlers`) outside calls too. */
  readonly openOwn: OpenSession = (capabilities, handlers) =>
    this.#open(false, capabilities, handlers, { roots: this.deps.roots, askHandlers: true });

  /** True while a client may get a child of its own (MAX_OWN_CHILDREN running or starting). */
  get roomForOwn(): boolean {
    return this.#own < MAX_OWN_CHILDREN;
  }

  /** Stops every child (the spec's order: stdin, SIGTERM, SIGKILL). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
    await Promise.allSettled([...this.#children].map((c) => c.stop()));
  }

  async #open(
    shared: boolean,
    capabilities: object,
    handlers: SessionHandlers,
    options: StdioSessionOptions,
  ): Promise<StdioSession> {
    const { launch, log, fields } = this.deps;
    if (this.#closed) throw new UpstreamGone("the provider is closed");
    if (!launch)
      throw new UpstreamGone(
        "this replica's bootstrap file does not define this stdio provider (its command is never stored: each replica runs only what its own file says)",
      );
    const child = new StdioChild({ launch, log, fields, maxLineBytes: MAX_UPSTREAM_MESSAGE_SIZE });
    this.#children.add(child);
    if (!shared) this.#own++;
    const startedAt = Date.now();
    this.deps.events?.started?.(shared);
    // Counted once: the child's own end, or its failed initialize (Portico then stops it, yet it
    // is a crash as much as an exit is: back-off, metrics and health say so).
    let counted = false;
    const crashed = (exit: ChildExit): number | undefined => {
      counted = true;
      let restartMs: number | undefined;
      if (shared) {
        this.#failures = Date.now() - startedAt >= STABLE_MS ? 1 : this.#failures + 1;
        restartMs = Math.min(RESTART_INITIAL_MS * 2 ** (this.#failures - 1), RESTART_MAX_MS);
        this.#startAt = Date.now() + restartMs;
      }
      if (!this.#closed) {
        log.warn({ ...fields, code: exit.code, signal: exit.signal, restartMs }, exit.reason);
        this.deps.events?.exited?.(exit, shared, restartMs);
      }
      return restartMs;
    };
    void child.exited.then((exit) => {
      this.#children.delete(child);
      if (!shared) this.#own--;
      // Stopped by Portico (a closed or replaced session, a failed initialize already counted).
      if (!child.stopping && !counted) crashed(exit);
    });
    const signal = AbortSignal.timeout(this.deps.initTimeoutMs);
    try {
      // A child that ends while initializing fails the initialize with its reason (counted above).
      return await StdioSession.initialize(child, capabilities, handlers, signal, options);
    } catch (err) {
      if (counted || this.#closed) throw err;
      const reason = `the stdio server failed to initialize: ${initFailure(err)}`;
      const restartMs = crashed({ code: null, signal: null, reason });
      throw new UpstreamGone(restartMs === undefined ? reason : restarting(reason, restartMs));
    }
  }

  #sleep(ms: number, resolve: () => void): void {
    const done = (): void => {
      clearTimeout(timer);
      if (this.#wake === done) this.#wake = undefined;
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    this.#wake = done;
  }
}

/** A reason, with when the shared child starts again (health's words, stdio-part.ts). */
export function restarting(reason: string, restartMs: number): string {
  return `${reason}; restarting in ${Math.ceil(restartMs / 1000)} s`;
}

/** Why an initialize failed, in words safe for health (an error answer's text is the child's own). */
function initFailure(err: unknown): string {
  return err instanceof McpError ? `it answered with error ${err.code}` : describeFailure(err);
}
