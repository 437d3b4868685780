// The store's outages, recoveries and Sentinel failovers in the log, once each (docs/operations.md,
// "Redis"): while Redis is away every command and every reconnection attempt fails, and a line for
// each would bury the one that matters. The first connection failure logs a warning, the first
// command to succeed after it logs the recovery with how long it lasted; nothing in between. With
// Sentinel, the master reached at boot and each new one after a failover get a line of their own.
import { isConnectionFailure } from "./redis-connection.js";

interface Log {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export class StoreAvailabilityLog {
  /** When the outage being lived through began; undefined while the store answers. */
  #downSince: number | undefined;

  constructor(
    private readonly log: Log,
    private readonly kind: string,
    private readonly now: () => number = Date.now,
  ) {}

  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /**
   * The store's error events: a connection failure starts an outage (logged only if none is under
   * way); anything else (a change listener that threw) is a bug, logged every time.
   */
  readonly error = (err: unknown): void => {
    if (!isConnectionFailure(err)) {
      this.log.error({ err }, "store: a change listener failed");
      return;
    }
    if (this.#downSince !== undefined) return;
    this.#downSince = this.now();
    this.log.warn(
      { store: this.kind, reason: reasonOf(err) },
      `store: ${this.kind} cannot be reached; MCP and admin requests answer 503 until it is back`,
    );
  };

  /** Sentinel mode: the command connection is ready on `master` (at boot, or after a failover). */
  readonly master = (master: string, previous: string | undefined): void => {
    if (previous === undefined)
      this.log.info({ store: this.kind, master }, `store: Redis Sentinel master at ${master}`);
    else
      this.log.info(
        { store: this.kind, master, previous },
        `store: the sentinels named a new Redis master, ${master} (was ${previous}); following it`,
      );
  };

  /** A command completed: the end of an outage, if one was under way. Cheap: called per command. */
  readonly command = (ok: boolean): void => {
    if (!ok || this.#downSince === undefined) return;
    const downMs = this.now() - this.#downSince;
    this.#downSince = undefined;
    this.log.info(
      { store: this.kind, downMs },
      `store: ${this.kind} reachable again after ${formatMs(downMs)}`,
    );
  };
}

function reasonOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  return typeof e.code === "string" ? e.code : String(e.message);
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
