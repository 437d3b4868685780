// Request rate limits shared by every replica (docs/storage.md "rl" keys): one counter per subject
// and fixed minute in the store, raised with one atomic INCR (created with its TTL). A replica
// remembers counters it saw over their limit until their minute ends, so a client hammering past
// its limit is refused without a store round trip.
import type { Store } from "../store/store.js";

const WINDOW_MS = 60_000;
/** Counters outlive their minute by a little, for clocks a second or so apart. */
const COUNTER_TTL_SECONDS = 62;
/** Bound on the counters remembered as over their limit. */
const MAX_REMEMBERED = 10_000;

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
}

export interface RateLimiterOptions {
  readonly store: Store;
  /** Epoch milliseconds; tests inject a clock. */
  readonly now?: () => number;
  /** Sees every refusal (metrics). */
  readonly onRefused?: (surface: LimitSurface, scope: LimitScope) => void;
}

export class RateLimiter {
  readonly #store: Store;
  readonly #now: () => number;
  readonly #onRefused: RateLimiterOptions["onRefused"];
  /** Counters of the current window seen over a limit: key → the count seen. */
  #over = new Map<string, number>();
  #overWindow = 0;

  constructor(opts: RateLimiterOptions) {
    this.#store = opts.store;
    this.#now = opts.now ?? Date.now;
    this.#onRefused = opts.onRefused;
  }

  /**
   * Counts one request against each active limit, all counters raised at once (one round trip,
   * pipelined with whatever else the caller issued in the same tick). Resolves to the refusal
   * of the first limit exceeded, or undefined when the request may proceed.
   */
  async take(surface: LimitSurface, limits: readonly Limit[]): Promise<Refusal | undefined> {
    const now = this.#now();
    const window = Math.floor(now / WINDOW_MS);
    const retryAfterSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    if (window !== this.#overWindow) {
      this.#over = new Map();
      this.#overWindow = window;
    }
    const active = limits.filter((l) => l.perMinute > 0);
    if (active.length === 0) return undefined;
    const keys = active.map((l) => l.key(window));
    const known = active.findIndex((l, i) => (this.#over.get(keys[i]!) ?? 0) > l.perMinute);
    if (known >= 0) return this.#refuse(surface, active[known]!, retryAfterSeconds);

    const counts = await Promise.all(keys.map((key) => this.#store.incr(key, 1, COUNTER_TTL_SECONDS)));
    const exceeded = active.findIndex((l, i) => counts[i]! > l.perMinute);
    if (exceeded < 0) return undefined;
    active.forEach((l, i) => {
      if (counts[i]! > l.perMinute) this.#remember(keys[i]!, counts[i]!);
      // A refused request spends nothing: give back what the other counters took for it.
      else void this.#store.incr(keys[i]!, -1, COUNTER_TTL_SECONDS).catch(() => undefined);
    });
    return this.#refuse(surface, active[exceeded]!, retryAfterSeconds);
  }

  #remember(key: string, count: number): void {
    if (this.#over.size >= MAX_REMEMBERED) this.#over.clear();
    this.#over.set(key, count);
  }

  #refuse(surface: LimitSurface, limit: Limit, retryAfterSeconds: number): Refusal {
    this.#onRefused?.(surface, limit.scope);
    return { scope: limit.scope, perMinute: limit.perMinute, retryAfterSeconds };
  }
}
