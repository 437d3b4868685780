// Server-to-client requests of the session era (sampling, elicitation, roots) waiting for the
// client's answer: the client may POST it to any replica, and the session channel carries it here.
import { fail } from "../../protocol/errors.js";
import type { RpcResponse } from "../../protocol/jsonrpc.js";
import { randomId } from "../../crypto/secrets.js";
import type { StreamHub } from "./streams.js";

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(err: unknown): void;
}

export class ClientAsks {
  /**
   * Requests waiting for the client's answer, by tenant, session and the id Portico gave them: an
   * answer settles only a request of the session it was POSTed to (ids count up, so another
   * session, of any tenant, could otherwise answer this one's questions).
   */
  readonly #pending = new Map<string, Pending>();
  readonly #replica = randomId(6);
  #counter = 0;

  constructor(
    private readonly hub: StreamHub,
    private readonly inputTimeoutSeconds: number,
  ) {}

  /** Sends a server-to-client request through `send` and waits for the answer, from any replica. */
  async request(
    tenant: string,
    sid: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal | undefined,
    send: (json: string) => Promise<void>,
  ): Promise<Record<string, unknown>> {
    const id = `${this.#replica}-${++this.#counter}`;
    const release = this.hub.hold(tenant, sid);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let unlisten: (() => void) | undefined;
    try {
      await this.hub.held(tenant, sid); // answers may arrive on another replica
      const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
        this.#pending.set(pendingKey(tenant, sid, id), { resolve, reject });
        // A person may be answering (a form, a sampling approval): the input timeout, as for a
        // 2026-07-28 client's retry, not the upstream's.
        timer = setTimeout(
          () => reject(fail("PORTICO_ERR_PROVIDER_TIMEOUT", `The client did not answer ${method} in time`)),
          this.inputTimeoutSeconds * 1000,
        );
        onAbort = () => reject(signal?.reason instanceof Error ? signal.reason : new Error("cancelled"));
        signal?.addEventListener("abort", onAbort, { once: true });
        // An answer POSTed to another replica while this one's subscription was down went by
        // unheard: it was kept in the store first, so it is read there once the subscription is back.
        unlisten = this.hub.onLost(tenant, sid, () => {
          void this.hub.keptAnswer(tenant, sid, id).then(
            (kept) => kept !== null && this.settle(tenant, sid, JSON.parse(kept) as RpcResponse),
            () => undefined,
          );
        });
      });
      const message: Record<string, unknown> = { jsonrpc: "2.0", id, method };
      if (params !== undefined) message.params = params;
      await send(JSON.stringify(message));
      return await answer;
    } finally {
      clearTimeout(timer);
      unlisten?.();
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      this.#pending.delete(pendingKey(tenant, sid, id));
      release();
    }
  }

  /**
   * Passes a client's answer on to the replica whose request it answers: kept in the store (for the
   * input timeout) and published on the session's channel.
   */
  async forward(tenant: string, sid: string, r: RpcResponse): Promise<void> {
    const json = JSON.stringify(r);
    await this.hub.keepAnswer(tenant, sid, String(r.id), json, this.inputTimeoutSeconds);
    await this.hub.publish(tenant, sid, { k: "res", d: json });
  }

  /** Settles the request of session `sid` that `r` answers, when it waits on this replica; false otherwise. */
  settle(tenant: string, sid: string, r: RpcResponse): boolean {
    const key = pendingKey(tenant, sid, String(r.id));
    const pending = this.#pending.get(key);
    if (!pending) return false;
    this.#pending.delete(key);
    if ("result" in r) pending.resolve(r.result);
    else
      pending.reject(Object.assign(new Error(r.error.message), { code: r.error.code, data: r.error.data }));
    return true;
  }
}

function pendingKey(tenant: string, sid: string, id: string): string {
  return `${tenant}\u0000${sid}\u0000${id}`;
}
