// How long Portico waits for an upstream's answer to one request: the provider's timeout, started
// again by each progress notification, and paused while the upstream waits on the client (a
// question asked mid-call: the user may take minutes to answer a form, and that is not the
// upstream being slow). Joined with the caller's signal in one controller.

export class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  readonly #outer: AbortSignal | undefined;
  readonly #timeoutMs: number;
  #timer: NodeJS.Timeout | undefined;
  #paused = 0;

  constructor(timeoutMs: number, outer: AbortSignal | undefined) {
    this.#outer = outer;
    this.#timeoutMs = timeoutMs;
    this.#timer = setTimeout(Deadline.#expire, timeoutMs, this);
    if (!outer) return;
    if (outer.aborted) this.controller.abort(outer.reason);
    else outer.addEventListener("abort", this, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  static #expire(this: void, deadline: Deadline): void {
    deadline.timedOut = true;
    deadline.controller.abort(new Error("timed out"));
  }

  /** The caller's signal fired (EventTarget calls this object's handleEvent). */
  handleEvent(): void {
    this.controller.abort(this.#outer?.reason);
  }

  /** Progress: the whole timeout again from now (unless paused). */
  restart(): void {
    this.#timer?.refresh();
  }

  /** No timeout while `waiting` runs (the upstream waits on the client); a whole one after it. */
  async pausedDuring<T>(waiting: Promise<T>): Promise<T> {
    if (this.#paused++ === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    try {
      return await waiting;
    } finally {
      if (--this.#paused === 0 && !this.controller.signal.aborted)
        this.#timer = setTimeout(Deadline.#expire, this.#timeoutMs, this);
    }
  }

  /** No deadline from now on (a listen stream once acknowledged); the caller's signal still counts. */
  stopTimer(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  dispose(): void {
    this.stopTimer();
    this.#paused = Number.POSITIVE_INFINITY; // nothing restarts it
    this.#outer?.removeEventListener("abort", this);
  }
}
