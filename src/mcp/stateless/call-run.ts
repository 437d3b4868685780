// One 2026-07-28 call in progress (tools/call, prompts/get, resources/read) whose provider may ask
// the client something mid-call: a session-era upstream sends sampling, elicitation or roots
// requests while its tool runs. 2026-07-28 has no server-to-client requests, so the call stops at
// the first question: the lane answers the client with an InputRequiredResult while the upstream
// call stays open, waiting, until the client's retry brings the answers (basic/patterns/mrtr).
import { Cancellation } from "../cancellation.js";
import { isAnswerTo } from "../../protocol/input-requests.js";
import type { RequestMeta } from "./request-meta.js";

/** What the request now waiting on a run says of itself: progress, log messages and questions follow it. */
export type RoundMeta = Pick<RequestMeta, "progressToken" | "logLevel" | "clientCapabilities">;

/** The request now waiting on a run: where its messages go, and what its _meta says. */
export interface Waiter {
  readonly meta: RoundMeta;
  send(json: string): void;
}

/** One question for the client: a request object of an InputRequests map. */
export interface InputRequest {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** Where a run stands when the request waiting on it must be answered. */
export type Stop =
  | { readonly kind: "result"; readonly result: Record<string, unknown> }
  | { readonly kind: "error"; readonly error: unknown }
  | { readonly kind: "input"; readonly requests: Record<string, InputRequest> };

interface Pending extends InputRequest {
  resolve(answer: Record<string, unknown>): void;
  reject(err: Error): void;
}

/** Input request keys name what is asked, then a counter unique within the call. */
const KEY_OF: Readonly<Record<string, string>> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

const NOBODY: Waiter = {
  meta: { progressToken: undefined, logLevel: undefined, clientCapabilities: {} },
  send: () => undefined,
};

export class CallRun {
  readonly cancellation = new Cancellation();
  readonly #pending = new Map<string, Pending>();
  #asked = 0;
  #ended: Stop | undefined;
  #done: Promise<Stop> = new Promise(() => undefined);
  #wake: (() => void) | undefined;
  #waiter: Waiter = NOBODY;
  #meta: RoundMeta;

  /** `meta` is the first request's, until a retry attaches with its own. */
  constructor(meta: RoundMeta) {
    this.#meta = meta;
  }

  /** The call's work; the run ends when it settles. */
  start(work: Promise<Record<string, unknown>>): void {
    this.#done = work.then(
      (result): Stop => (this.#ended ??= { kind: "result", result }),
      (error: unknown): Stop => (this.#ended ??= { kind: "error", error }),
    );
  }

  /**
   * Progress and log messages go to the request now waiting on the run, and nowhere between
   * requests; they follow that request's progress token and log level (a retry's own, not the
   * first request's), and questions asked meanwhile need the capabilities it declares.
   */
  attach(waiter: Waiter): void {
    this.#waiter = waiter;
    this.#meta = waiter.meta;
  }

  detach(): void {
    this.#waiter = NOBODY;
  }

  /** The _meta of the request waiting on the run, or of the last one that did. */
  get meta(): RoundMeta {
    return this.#meta;
  }

  send(json: string): void {
    this.#waiter.send(json);
  }

  /** The provider asks the client something; resolves with the client's answer from a retry. */
  ask(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const key = `${KEY_OF[method] ?? "input"}-${++this.#asked}`;
    return new Promise((resolve, reject) => {
      this.#pending.set(key, { method, params, resolve, reject });
      this.#wake?.();
    });
  }

  /** Ends the run with an error the client gets (e.g. a capability it did not declare), and cancels it. */
  fail(error: Error): void {
    this.#ended ??= { kind: "error", error };
    this.#wake?.();
    this.cancel(error);
  }

  /**
   * Waits for the next stop: the call's end, or questions the client has to answer. Questions
   * asked in the same turn of the event loop travel together.
   */
  async next(): Promise<Stop> {
    if (this.#ended) return this.#ended;
    if (this.#pending.size === 0) {
      const asked = new Promise<undefined>((resolve) => (this.#wake = () => resolve(undefined)));
      const stop = await Promise.race([this.#done, asked]);
      this.#wake = undefined;
      if (stop) return stop;
      await new Promise((resolve) => setImmediate(resolve));
      if (this.#ended) return this.#ended;
    }
    return { kind: "input", requests: this.requests() };
  }

  /** The questions still unanswered. */
  requests(): Record<string, InputRequest> {
    const out: Record<string, InputRequest> = {};
    for (const [key, { method, params }] of this.#pending) out[key] = { method, params };
    return out;
  }

  get waiting(): boolean {
    return this.#pending.size > 0;
  }

  /**
   * Hands the client's answers to the questions they match. Keys it did not ask for are ignored,
   * and an answer without the shape of its question's result counts as missing (it is asked again).
   */
  answer(responses: unknown): void {
    if (typeof responses !== "object" || responses === null || Array.isArray(responses)) return;
    for (const [key, pending] of this.#pending) {
      const answer = Object.hasOwn(responses, key) ? (responses as Record<string, unknown>)[key] : undefined;
      if (typeof answer !== "object" || answer === null || Array.isArray(answer)) continue;
      if (!isAnswerTo(pending.method, answer as Record<string, unknown>)) continue;
      this.#pending.delete(key);
      pending.resolve(answer as Record<string, unknown>);
    }
  }

  /** Cancels the call: its upstream work stops, and its unanswered questions fail. */
  cancel(reason: Error): void {
    this.cancellation.abort(reason);
    for (const pending of this.#pending.values()) pending.reject(reason);
    this.#pending.clear();
  }
}
