// Failures of an outbound fetch remembered per target (an identity provider's or an upstream
// authorization server's metadata), shared by every replica: after a failure the target is not
// fetched again until a back-off has passed, 1 s after the first failure in a row and doubling up
// to a cap. Requests anyone can make (an anonymous /oauth/authorize) start those fetches, so
// without it a stranger could make Portico fetch a failing provider hundreds of times a minute.
import { createHash } from "node:crypto";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

export interface FetchBackoffOptions {
  /** The first back-off, in milliseconds (doubled after each further failure in a row). */
  readonly firstMs?: number;
  /** The longest back-off, in milliseconds. */
  readonly maxMs?: number;
  /** Epoch milliseconds; tests inject a clock. */
  readonly now?: () => number;
}

/** A run of failures is forgotten this long after its last one. */
const FORGET_SECONDS = 15 * 60;

/**
 * Nothing is kept in memory: a fetch is rare where it succeeds (its result is cached) and, while
 * it fails, one store read per attempt is what replaces the fetch.
 */
export class FetchBackoff {
  readonly #firstMs: number;
  readonly #maxMs: number;
  readonly #now: () => number;

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    options: FetchBackoffOptions = {},
  ) {
    this.#firstMs = options.firstMs ?? 1000;
    this.#maxMs = options.maxMs ?? 300_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Runs `fetch` for `target` unless its back-off is running, in which case `refused(seconds)` is
   * thrown; a failure of `fetch` starts or lengthens the back-off, a success ends it. The store's
   * own failures never hide the fetch's outcome.
   */
  async guard<T>(target: string, fetch: () => Promise<T>, refused: (seconds: number) => Error): Promise<T> {
    const wait = await this.wait(target).catch(() => 0);
    if (wait > 0) throw refused(Math.ceil(wait / 1000));
    let value: T;
    try {
      value = await fetch();
    } catch (err) {
      await this.failed(target).catch(() => undefined);
      throw err;
    }
    await this.succeeded(target).catch(() => undefined);
    return value;
  }

  /** Milliseconds until `target` may be fetched again; 0 when it may be now. */
  async wait(target: string): Promise<number> {
    const now = this.#now();
    const until = Number(await this.store.get(this.keys.fetchBlocked(digest(target))));
    return until > now ? until - now : 0;
  }

  /**
   * Counts a failure of `target` unless a back-off already runs (replicas that failed on the same
   * outage count it once); returns the back-off in force, in milliseconds.
   */
  async failed(target: string): Promise<number> {
    const id = digest(target);
    const failures = Number(await this.store.get(this.keys.fetchFailures(id))) + 1;
    const backoff = Math.min(this.#maxMs, this.#firstMs * 2 ** Math.min(30, failures - 1));
    const until = this.#now() + backoff;
    const blocked = (onlyIfAbsent: boolean) =>
      this.store.set(this.keys.fetchBlocked(id), String(until), {
        ttlSeconds: Math.ceil(backoff / 1000),
        onlyIfAbsent,
      });
    if (!(await blocked(true))) {
      const running = await this.wait(target);
      if (running > 0) return running;
      await blocked(false); // the one in force ended this very moment (its key outlives it by under a second)
    }
    await this.store.set(this.keys.fetchFailures(id), String(failures), { ttlSeconds: FORGET_SECONDS });
    return backoff;
  }

  /** A success: the run of failures is over, on every replica. */
  async succeeded(target: string): Promise<void> {
    const id = digest(target);
    await this.store.del(this.keys.fetchFailures(id), this.keys.fetchBlocked(id));
  }
}

function digest(target: string): string {
  return createHash("sha256").update(target).digest("base64url").slice(0, 22);
}
