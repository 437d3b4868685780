// A per-provider circuit breaker, in memory on each replica (docs/upstream-mcp.md "Circuit
// breaker"): after `failures` upstream failures in a row (no answer, a timeout, HTTP 5xx) calls fail
// fast for a cool-down that doubles at each reopening; then one probe (the provider's health probe
// in the background, else the next call) closes it or opens it again. The closed path costs a
// comparison and a counter update: no clock, no timer, no allocation.
import { fail, type PorticoError } from "../protocol/errors.js";

export type BreakerState = "closed" | "open" | "half-open";

/** What the admin API and metrics show of a breaker. */
export interface BreakerStatus {
  readonly state: BreakerState;
  /** Upstream failures in a row so far. */
  readonly consecutiveFailures: number;
  /** When an open breaker lets its next probe through (ISO 8601). */
  readonly retryAt?: string;
  /** The last failure, in Portico's words. */
  readonly lastFailure?: string;
}

export interface BreakerOptions {
  /** Failures in a row that open the breaker; 0 turns the breaker off. */
  readonly failures: number;
  /** The first cool-down; each reopening without a successful call in between doubles it. */
  readonly openMs: number;
  /** The longest cool-down. */
  readonly maxOpenMs: number;
}

export interface BreakerHooks {
  /** The breaker changed state (one log line each). */
  readonly changed?: (state: BreakerState, status: BreakerStatus) => void;
  /** A call was refused without reaching the upstream. */
  readonly fastFailed?: () => void;
  /**
   * The background probe (the provider's health probe): resolves when the upstream answers. Without
   * it, the first call after the cool-down is let through as the probe.
   */
  readonly probe?: () => Promise<unknown>;
  /** The clock (tests move it). */
  readonly now?: () => number;
}

export const BREAKER_STATE_VALUE: Readonly<Record<BreakerState, number>> = {
  closed: 0,
  "half-open": 1,
  open: 2,
};

export class CircuitBreaker {
  #state: BreakerState = "closed";
  #failures = 0;
  /** Openings since the last successful call: the cool-down's exponent. */
  #opens = 0;
  #retryAt = 0;
  #lastFailure: string | undefined;
  /** A probe is out (half-open): other calls fail fast meanwhile. */
  #probing = false;
  /** The probe out is a call (not the background probe). */
  #callProbe = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #now: () => number;

  constructor(
    private readonly providerId: string,
    private readonly options: BreakerOptions,
    private readonly hooks: BreakerHooks = {},
  ) {
    this.#now = hooks.now ?? Date.now;
  }

  get state(): BreakerState {
    return this.#state;
  }

  /** Whether a call may go upstream now; false means fail it fast with refusal(). */
  admits(): boolean {
    if (this.#state === "closed") return true;
    if (this.#probing || this.#now() < this.#retryAt) {
      this.hooks.fastFailed?.();
      return false;
    }
    // The cool-down is over and no probe is out: this call is the probe.
    this.#probing = true;
    this.#callProbe = true;
    this.#move("half-open");
    return true;
  }

  /** The upstream answered (a result, a JSON-RPC error, a 4xx): it is up. */
  succeeded(): void {
    this.#failures = 0;
    this.#opens = 0;
    if (this.#state !== "closed") this.#close();
  }

  /** The upstream failed (no answer, a timeout, HTTP 5xx); `why` in Portico's words. */
  failed(why: string): void {
    this.#lastFailure = why;
    this.#failures++;
    if (
      this.#state === "half-open" ||
      (this.#state === "closed" && this.options.failures > 0 && this.#failures >= this.options.failures)
    )
      this.#open();
  }

  /** A call let through as the probe ended without a verdict (the client cancelled it). */
  released(): void {
    if (this.#state !== "half-open" || !this.#callProbe) return;
    this.#probing = false;
    this.#callProbe = false;
    // Back to open, its cool-down over: the next call probes.
    this.#move("open");
  }

  /** The error a refused call gets: the same shape as an unavailable provider's. */
  refusal(): PorticoError {
    const seconds = Math.max(1, Math.ceil((this.#retryAt - this.#now()) / 1000));
    const when = this.#probing ? "it is being retried now" : `it will be retried in ${seconds} s`;
    return fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${this.providerId}' is unavailable: it is failing (${this.#failures} failures in a row, the last: ${this.#lastFailure ?? "unknown"}); ${when}`,
    );
  }

  status(): BreakerStatus {
    return {
      state: this.#state,
      consecutiveFailures: this.#failures,
      ...(this.#state !== "closed" && { retryAt: new Date(this.#retryAt).toISOString() }),
      ...(this.#lastFailure !== undefined && this.#failures > 0 && { lastFailure: this.#lastFailure }),
    };
  }

  /** Stops the background probe (the provider is closed). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #open(): void {
    const coolDown = Math.min(this.options.openMs * 2 ** this.#opens, this.options.maxOpenMs);
    this.#opens++;
    this.#probing = false;
    this.#callProbe = false;
    this.#retryAt = this.#now() + coolDown;
    this.#move("open");
    if (this.hooks.probe) {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.#probe(), coolDown).unref();
    }
  }

  /** The background probe after a cool-down, unless a call already took that role. */
  #probe(): void {
    this.#timer = undefined;
    if (this.#state !== "open" || this.#probing) return;
    this.#probing = true;
    this.#callProbe = false;
    this.#move("half-open");
    this.hooks.probe!().then(
      () => {
        // The upstream answers its health probe: closed, with the back-off kept until a call succeeds.
        if (this.#state === "half-open") this.#close();
      },
      (err: unknown) => {
        if (this.#state !== "half-open") return;
        this.#lastFailure = err instanceof Error ? err.message : String(err);
        this.#open();
      },
    );
  }

  #close(): void {
    this.close();
    this.#probing = false;
    this.#callProbe = false;
    this.#failures = 0;
    this.#move("closed");
  }

  #move(state: BreakerState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.hooks.changed?.(state, this.status());
  }
}

/** A breaker's state as the metrics gauge shows it; undefined without a breaker. */
export function breakerValue(status: BreakerStatus | undefined): number | undefined {
  return status && BREAKER_STATE_VALUE[status.state];
}
