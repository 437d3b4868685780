// A request's cancellation state (basic/utilities/cancellation). Its AbortSignal is made only
// when a provider asks for one: a provider's Deadline follows the Cancellation itself (a
// CancelSource), and an AbortController per forwarded call is measurable on the hot path.
import type { AbortListener, CancelSource } from "../providers/types.js";

export class Cancellation implements CancelSource {
  #controller: AbortController | undefined;
  #reason: Error | undefined;
  #listeners: AbortListener[] | undefined;

  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  get reason(): Error | undefined {
    return this.#reason;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Listeners run once, at the abort (as with { once: true } on an AbortSignal). */
  addEventListener(_type: "abort", listener: AbortListener): void {
    if (!this.#reason) (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: "abort", listener: AbortListener): void {
    const at = this.#listeners?.indexOf(listener) ?? -1;
    if (at !== -1) this.#listeners!.splice(at, 1);
  }

  abort(reason: Error): void {
    if (this.#reason) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    for (const listener of listeners ?? []) listener.handleEvent();
  }
}
