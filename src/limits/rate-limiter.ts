// Request rate limits shared by every replica (docs/storage.md "rl" keys, docs/security.md
// "Bounded by default"): one counter per subject and fixed minute in the store. The hot path counts
// in memory only; each replica flushes its increments in batches (every FLUSH_MS, or at once when a
// counter's unflushed share reaches a twentieth of its limit) and reads the global total back.
import type { Store } from "../store/store.js";

const WINDOW_MS = 60_000;
/** Counters outlive their minute by a little, for clocks a second or so apart. */
const COUNTER_TTL_SECONDS = 62;
/** How often a replica adds its counts to the shared counters and reads their totals back. */
export const FLUSH_MS = 200;
/**
 * Counts a replica may have unconfirmed per counter: two batches, but never fewer than this, so
 * a client's few parallel requests (its lists at startup) pass under a small limit too.
 */
const MIN_UNCONFIRMED = 16;
/** Counters one replica tracks at most in a minute; past it, the oldest window's are dropped. */
const MAX_TRACKED = 100_000;

export type LimitSurface = "mcp" | "oauth";
export type LimitScope = "tenant" | "client";

/** One limit a request counts against. */
export interface Limit {
  readonly scope: LimitScope;
  /** Requests allowed per minute; 0 or less: no limit (nothing is counted). */
  readonly perMinute: number;
  /** The counter's key for a window (epoch minutes), from store/keys.ts. */
  readonly key: (window: number) => string;
}

/** Why a request was refused. */
export interface Refusal {
  readonly scope: LimitScope;
  readonly perMinute: number;
  /** Whole seconds until the window ends (at least 1): the Retry-After value. */
  readonly retryAfterSeconds: number;
  /** True when the limit is not reached but a burst outran the store (a second's wait). */
  readonly burst?: boolean;
}

export interface RateLimiterOptions {
  readonly store: Store;
  /** Epoch milliseconds; tests inject a clock. */
  readonly now?: () => number;
  /** Sees every refusal (metrics). */
  readonly onRefused?: (surface: LimitSurface, scope: LimitScope) => void;
  /** Sees a flush the store failed (logs); its counts are kept for the next one. */
  readonly onFlushError?: (err: unknown) => void;
}

/** One counter as this replica knows it. */
interface Counter {
  readonly key: string;
  readonly window: number;
  /** Admitted here, not yet sent to the shared counter. */
  pending: number;
  /** Admitted here and on their way to the shared counter. */
  sending: number;
  /** The shared total last read back (every replica's flushed counts). */
  global: number;
  /** Flush when pending reaches this many: a twentieth of the limit, at least 1. */
  batch: number;
}

export class RateLimiter {
  readonly #store: Store;
  readonly #now: () => number;
  readonly #onRefused: RateLimiterOptions["onRefused"];
  readonly #onFlushError: RateLimiterOptions["onFlushError"];
  readonly #counters = new Map<string, Counter>();
  /** Counters with unflushed counts: what a flush sends, without walking every counter. */
  readonly #dirty = new Map<string, Counter>();
  /** The counters one take() admits against (reused: take is synchronous). */
  readonly #admitting: Counter[] = [];
  /** The window whose older counters were last forgotten. */
  #swept = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  /** Counts arrived during a flush that asked for another. */
  #again = false;

  constructor(opts: RateLimiterOptions) {
    this.#store = opts.store;
    this.#now = opts.now ?? Date.now;
    this.#onRefused = opts.onRefused;
    this.#onFlushError = opts.onFlushError;
  }

  /**
   * Counts one request against each active limit, in memory (no store round trip): the refusal
   * of the first limit whose last-known total plus this replica's unflushed count is reached, or
   * undefined when the request may proceed. A refused request counts against nothing.
   */
  take(surface: LimitSurface, limits: readonly Limit[]): Refusal | undefined {
    const now = this.#now();
    const window = Math.floor(now / WINDOW_MS);
    const admitting = this.#admitting;
    admitting.length = 0;
    for (const limit of limits) {
      if (limit.perMinute <= 0) continue;
      const key = limit.key(window);
      const counter = this.#counter(key, window, limit.perMinute);
      const unconfirmed = counter.pending + counter.sending;
      const reached = counter.global + unconfirmed >= limit.perMinute;
      // Two batches unconfirmed: a burst faster than the store answers, which other replicas
      // cannot see yet (the overshoot bound, docs/security.md); it waits a second.
      if (reached || unconfirmed >= Math.max(2 * counter.batch, MIN_UNCONFIRMED)) {
        const retryAfterSeconds = reached
          ? Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000))
          : 1;
        this.#onRefused?.(surface, limit.scope);
        if (reached) return { scope: limit.scope, perMinute: limit.perMinute, retryAfterSeconds };
        return { scope: limit.scope, perMinute: limit.perMinute, retryAfterSeconds, burst: true };
      }
      admitting.push(counter);
    }
    if (admitting.length === 0) return undefined;
    let full = false;
    for (const counter of admitting) {
      if (counter.pending++ === 0) this.#dirty.set(counter.key, counter);
      if (counter.pending >= counter.batch) full = true;
    }
    if (full) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
    return undefined;
  }

  #counter(key: string, window: number, perMinute: number): Counter {
    let counter = this.#counters.get(key);
    if (counter === undefined) {
      if (this.#counters.size >= MAX_TRACKED) this.#forgetOlderThan(window + 1);
      counter = { key, window, pending: 0, sending: 0, global: 0, batch: 1 };
      this.#counters.set(key, counter);
    }
    counter.batch = Math.max(1, Math.floor(perMinute / 20));
    return counter;
  }

  /**
   * Adds every unflushed count to its shared counter (one pipelined round trip) and reads the
   * totals back; counters of past windows are forgotten once flushed. Resolves when done.
   */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#flushing) {
      this.#again = true;
      return this.#flushing;
    }
    this.#flushing = this.#flushWhileNeeded().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #flushWhileNeeded(): Promise<void> {
    do {
      this.#again = false;
      await this.#flushOnce();
    } while (this.#again);
  }

  async #flushOnce(): Promise<void> {
    const current = Math.floor(this.#now() / WINDOW_MS);
    if (current !== this.#swept) {
      this.#swept = current;
      this.#forgetOlderThan(current);
    }
    const sent: Array<Promise<void>> = [];
    for (const counter of this.#dirty.values()) {
      const by = counter.pending;
      counter.pending = 0;
      counter.sending += by;
      sent.push(
        this.#store.incr(counter.key, by, COUNTER_TTL_SECONDS).then(
          (total) => {
            counter.sending -= by;
            // The total only grows within a minute: one lower than what was known plus this batch
            // means the store lost the counter (a restart, a failover), not a fresh budget.
            counter.global = Math.max(counter.global + by, total);
          },
          (err: unknown) => {
            // The store is away: this replica keeps enforcing what it counted itself.
            counter.sending -= by;
            counter.global += by;
            this.#onFlushError?.(err);
          },
        ),
      );
    }
    this.#dirty.clear();
    await Promise.all(sent);
  }

  /** Forgets counters of windows before `window` that have nothing left to send. */
  #forgetOlderThan(window: number): void {
    for (const [key, counter] of this.#counters)
      if (counter.window < window && counter.pending === 0 && counter.sending === 0)
        this.#counters.delete(key);
  }

  /** Flushes what is left and stops the timer (the app closes). */
  async close(): Promise<void> {
    await this.flush();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
