// A request's cancellation state (basic/utilities/cancellation). Its AbortSignal is made only
// when a provider asks for one: most requests (lists, static reads) never do, and an
// AbortController per request is measurable on the hot path.
export class Cancellation {
  #controller: AbortController | undefined;
  #reason: Error | undefined;

  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: Error): void {
    if (this.#reason) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
