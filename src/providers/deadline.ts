// How long Portico waits for an upstream's answer to one request: the provider's timeout, started
// again by each progress notification, and paused while the upstream waits on the client (a
// question asked mid-call: the user may take minutes to answer a form, and that is not the
// upstream being slow). However much progress it reports, a call runs at most MAX_RUNS_OF_TIMEOUT
// timeouts of its own time (the spec's maximum timeout, basic/patterns/cancellation): an upstream
// that only ever reports progress ends. Joined with the caller's signal; undici takes the deadline
// itself as the request's signal (an EventEmitter face), so a call allocates no AbortController
// unless something asks for a real AbortSignal.

import type { CancelSource } from "./types.js";

/** The longest a call may run while reporting progress, in multiples of its timeout. */
export const MAX_RUNS_OF_TIMEOUT = 10;

/** What undici accepts as a request's signal besides an AbortSignal: `aborted`, `reason`, an EventEmitter's abort event. */
export interface Abortable {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** A real AbortSignal following it, for APIs that take nothing else. */
  readonly signal: AbortSignal;
  on(event: "abort", listener: () => void): unknown;
  once(event: "abort", listener: () => void): unknown;
  removeListener(event: "abort", listener: () => void): unknown;
}

export class Deadline implements Abortable {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #listeners: Array<() => void> | undefined;
  timedOut = false;
  /** The hard stop ended it (progress kept coming), not a silence. */
  capped = false;
  readonly #outer: CancelSource | undefined;
  readonly #timeoutMs: number;
  /** One timer: the silence timeout, or the hard stop once that comes first. */
  #timer: NodeJS.Timeout | undefined;
  /** The timer is set for the hard stop (not a silence). */
  #timerIsCap = false;
  /** The hard stop, counting only the time the call is not waiting on the client. */
  #capAt: number;
  #budgetMs: number;
  #runningSince = Date.now();
  #paused = 0;
  /** stopTimer() or dispose() ran: no timer ever again. */
  #stopped = false;

  constructor(timeoutMs: number, outer: CancelSource | undefined) {
    this.#outer = outer;
    this.#timeoutMs = timeoutMs;
    this.#budgetMs = timeoutMs * MAX_RUNS_OF_TIMEOUT;
    this.#capAt = this.#runningSince + this.#budgetMs;
    this.#timer = setTimeout(Deadline.#fire, timeoutMs, this);
    if (!outer) return;
    if (outer.aborted) this.#abort(outer.reason);
    else outer.addEventListener("abort", this, { once: true });
  }

  /** An AbortSignal that follows the deadline (made on first use). */
  get controller(): AbortController {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  on(_event: "abort", listener: () => void): this {
    (this.#listeners ??= []).push(listener);
    return this;
  }

  once(event: "abort", listener: () => void): this {
    return this.on(event, listener);
  }

  removeListener(_event: "abort", listener: () => void): this {
    const at = this.#listeners?.indexOf(listener) ?? -1;
    if (at !== -1) this.#listeners!.splice(at, 1);
    return this;
  }

  #abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }

  static #fire(this: void, deadline: Deadline): void {
    if (deadline.#timerIsCap) deadline.capped = true;
    deadline.timedOut = true;
    deadline.stopTimer();
    deadline.#abort(new Error("timed out"));
  }

  /** What a timed-out call is told, naming the provider. */
  message(providerId: string): string {
    return this.capped
      ? `Provider '${providerId}' did not finish within ${MAX_RUNS_OF_TIMEOUT} of its timeouts (${this.#timeoutMs * MAX_RUNS_OF_TIMEOUT} ms), however much progress it reported`
      : `Provider '${providerId}' did not answer in time`;
  }

  /** The caller's signal fired (EventTarget calls this object's handleEvent). */
  handleEvent(): void {
    this.#abort(this.#outer?.reason);
  }

  /** Progress: the whole timeout again from now (unless paused), within the hard stop. */
  restart(): void {
    if (!this.#timer || this.#timerIsCap) return;
    const now = Date.now();
    if (now + this.#timeoutMs < this.#capAt) return void this.#timer.refresh();
    clearTimeout(this.#timer);
    this.#timerIsCap = true;
    this.#timer = setTimeout(Deadline.#fire, Math.max(0, this.#capAt - now), this);
  }

  /** No timeout while `waiting` runs (the upstream waits on the client); a whole one after it. */
  async pausedDuring<T>(waiting: Promise<T>): Promise<T> {
    if (this.#stopped) return waiting;
    if (this.#paused++ === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#budgetMs -= Date.now() - this.#runningSince;
    }
    try {
      return await waiting;
    } finally {
      if (--this.#paused === 0 && !this.#stopped && !this.#aborted) {
        this.#runningSince = Date.now();
        // At least a whole timeout after the client answered, whatever the call had used before.
        this.#capAt = this.#runningSince + Math.max(this.#timeoutMs, this.#budgetMs);
        this.#timerIsCap = false;
        this.#timer = setTimeout(Deadline.#fire, this.#timeoutMs, this);
      }
    }
  }

  /** No deadline from now on (a listen stream once acknowledged); the caller's signal still counts. */
  stopTimer(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  dispose(): void {
    this.stopTimer();
    this.#outer?.removeEventListener("abort", this);
  }
}
