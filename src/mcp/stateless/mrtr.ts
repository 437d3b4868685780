// Multi round-trip requests on the stateless lane (basic/patterns/mrtr, 2026-07-28), for
// tools/call, prompts/get and resources/read. Two kinds of InputRequiredResult leave here, both
// with a requestState sealed by RequestStates:
//  - pass-through: a 2026-07-28 upstream answered input_required. Its requestState travels inside
//    ours; the retry, on any replica, hands both back to it. Nothing is held.
//  - held: a session-era upstream asked the client something mid-call (CallRun). Its call stays
//    open on this replica; the state names it. A retry here resumes it; a retry on another
//    replica reaches it through the store (a presence key, then the held call's channel), and its
//    messages and answer travel back on a channel of that retry. A call nobody retries in time is
//    cancelled upstream.
import { ipSubject, principalSubject } from "../../limits/subjects.js";
import { fail } from "../../protocol/errors.js";
import { randomId } from "../../crypto/secrets.js";
import type { Unsubscribe } from "../../store/store.js";
import { CallRun, type InputRequest } from "./call-run.js";
import { toErrorResponse } from "../../protocol/jsonrpc.js";
import { digestOf, type StateBinding } from "./request-state.js";
import type { MrtrDeps, RoundCall, StartCall } from "./mrtr-types.js";
import { parse, resumeElsewhere, type ToOwner, type ToRetry } from "./held-remote.js";
import { currentTraceparent, linkEarlier } from "../../tracing/spans.js";

interface Held {
  readonly run: CallRun;
  readonly binding: StateBinding;
  timer: NodeJS.Timeout | undefined;
  /** A retry is being served: a second one at the same time is refused. */
  busy: boolean;
  unsubscribe: Promise<Unsubscribe>;
  /** Cancels of remote retries in progress, by their correlation id. */
  readonly remote: Map<string, () => void>;
  /** The tenant and client whose share of held calls this one takes. */
  readonly client: string | undefined;
}

export class Mrtr {
  readonly #held = new Map<string, Held>();
  readonly #heldByTenant = new Map<string, number>();

  constructor(private readonly deps: MrtrDeps) {}

  /** Held calls on this replica (metrics, tests). */
  get holding(): number {
    return this.#held.size;
  }

  /** Serves one request of a method that may answer input_required. */
  async serve(call: RoundCall, start: StartCall): Promise<Record<string, unknown>> {
    const { params = {} } = call.request;
    const binding = bindingOf(call);
    const state =
      params.requestState === undefined ? undefined : this.deps.states.open(binding, params.requestState);
    // A retry's span links to the round that asked (docs/operations.md "Tracing").
    linkEarlier(state?.trace);
    if (state?.held !== undefined) {
      const held = this.#held.get(state.held);
      return held
        ? this.#resume(state.held, held, params.inputResponses, call)
        : resumeElsewhere(this.deps, state.held, binding, call);
    }
    const run = new CallRun(call.meta);
    run.start(start(run, { inputResponses: recordOf(params.inputResponses), requestState: state?.upstream }));
    return this.#drive(run, binding, call, undefined);
  }

  /** Cancels every held call (shutdown): their upstream calls end now, not at the timeout. */
  closeAll(): void {
    for (const id of [...this.#held.keys()]) this.#release(id, new Error("the server is shutting down"));
  }

  /** Waits on the run for `call` and turns where it stops into the answer. */
  async #drive(
    run: CallRun,
    binding: StateBinding,
    call: RoundCall,
    heldId: string | undefined,
  ): Promise<Record<string, unknown>> {
    let attached = true;
    let closed = false;
    /** The held call named by the answer being written. */
    let naming: string | undefined;
    run.attach({ meta: call.meta, send: (json) => call.send(json) });
    // Closing the stream cancels the request: the call, or the held call whose state it never got.
    call.onClose(() => {
      closed = true;
      if (attached) run.cancel(new Error("the client closed the response stream"));
      else if (naming !== undefined)
        this.#release(naming, new Error("the client closed the response stream"));
    });
    const stop = await run.next();
    attached = false;
    run.detach();
    if (stop.kind === "input") {
      const client = heldId === undefined ? this.#admitHold(run, binding.tenant, call) : undefined;
      const id = heldId ?? (await this.#hold(run, binding, client));
      if (closed) this.#release(id, new Error("the client closed the response stream"));
      else if (heldId !== undefined) this.#restartTimer(heldId);
      naming = id;
      return this.#inputRequired(stop.requests, binding, id);
    }
    if (heldId !== undefined) this.#release(heldId);
    if (stop.kind === "error") throw stop.error;
    return this.#sealed(stop.result, binding);
  }

  /**
   * Serves the first request of a call whose provider cannot ask anything mid-call (its upstream
   * speaks 2026-07-28): there is nothing to hold, so no run; only the upstream's own rounds are
   * relayed, their state sealed. Retries go through serve(), which opens that state.
   */
  async relay(call: RoundCall, work: Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const result = await work;
    return result.resultType === "input_required" ? this.#sealed(result, bindingOf(call)) : result;
  }

  /** A 2026-07-28 upstream's round: its state goes back to it inside ours. */
  #sealed(result: Record<string, unknown>, binding: StateBinding): Record<string, unknown> {
    if (result.resultType !== "input_required") return result;
    const upstream = typeof result.requestState === "string" ? result.requestState : undefined;
    return {
      ...result,
      requestState: this.deps.states.seal(binding, { upstream, trace: currentTraceparent() }),
    };
  }

  #inputRequired(requests: Record<string, InputRequest>, binding: StateBinding, id: string) {
    return {
      resultType: "input_required",
      inputRequests: requests,
      requestState: this.deps.states.seal(binding, { held: id, trace: currentTraceparent() }),
    };
  }

  /** A retry of a call held here: the answers go to the run, then the run is waited on again. */
  async #resume(
    id: string,
    held: Held,
    responses: unknown,
    call: RoundCall,
  ): Promise<Record<string, unknown>> {
    if (held.busy)
      throw fail(
        "PORTICO_ERR_MCP_INVALID_PARAMS",
        "Invalid requestState: this request is already being retried",
      );
    held.run.answer(responses);
    // Answers missing or malformed: ask again for what is still open (mrtr §Error Handling).
    if (held.run.waiting) {
      this.#restartTimer(id);
      return this.#inputRequired(held.run.requests(), held.binding, id);
    }
    clearTimeout(held.timer);
    held.busy = true;
    try {
      return await this.#drive(held.run, held.binding, call, id);
    } finally {
      held.busy = false;
    }
  }

  /** Refuses to hold one more call of a tenant at its limit: the call is cancelled upstream. */
  #admitHold(run: CallRun, tenant: string, call: RoundCall): string | undefined {
    const max = this.deps.maxHeldPerTenant ?? Number.POSITIVE_INFINITY;
    if ((this.#heldByTenant.get(tenant) ?? 0) >= max)
      this.#refuseHold(run, `${max} requests of this tenant already wait for input on this server`);
    // One client cannot take the tenant's held calls from everyone else: the user, whatever the
    // OAuth client, else the address (docs/security.md "Bounded by default").
    const { maxHeldPerPrincipal = 0, maxHeldPerAddress = 0 } = this.deps;
    const own = call.user !== undefined ? maxHeldPerPrincipal : maxHeldPerAddress;
    if (own <= 0 || (call.user === undefined && !call.peer)) return undefined;
    const subject = call.user !== undefined ? principalSubject(call.user) : ipSubject(call.peer!.ip);
    const client = `${tenant}|${subject}`;
    if ((this.#heldByTenant.get(client) ?? 0) >= own)
      this.#refuseHold(
        run,
        `${call.user !== undefined ? "this user" : "this address"} already has ${own} requests waiting for input on this tenant`,
      );
    return client;
  }

  #refuseHold(run: CallRun, why: string): never {
    const err = fail(
      "PORTICO_ERR_MCP_RATE_LIMITED",
      `Too Many Requests: ${why}; answer or abandon some, then retry`,
      {
        retryAfterSeconds: this.deps.timeoutSeconds,
      },
    );
    run.cancel(err);
    throw err;
  }

  async #hold(run: CallRun, binding: StateBinding, client: string | undefined): Promise<string> {
    const { store, keys, timeoutSeconds } = this.deps;
    const id = randomId();
    this.#count(binding.tenant, 1);
    if (client !== undefined) this.#count(client, 1);
    const held: Held = {
      run,
      binding,
      timer: undefined,
      busy: false,
      remote: new Map(),
      client,
      unsubscribe: store.subscribe(keys.heldCallChannel(binding.tenant, id), (raw) =>
        this.#onOwnerMessage(id, raw),
      ),
    };
    this.#held.set(id, held);
    this.#restartTimer(id);
    // The retry may land anywhere as soon as the client has the state: be reachable first.
    try {
      await Promise.all([
        held.unsubscribe,
        // Its value names this replica: a retry elsewhere tells at once when it is gone.
        store.set(keys.heldCall(binding.tenant, id), this.deps.liveness?.id ?? "1", {
          ttlSeconds: timeoutSeconds,
        }),
      ]);
    } catch (err) {
      // Unreachable, the call could never be resumed: it ends now, not at the timeout.
      this.#release(id, err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
    return id;
  }

  /** Held calls by tenant, and by tenant and client (`<tenant>|<subject>`). */
  #count(key: string, by: 1 | -1): void {
    const n = (this.#heldByTenant.get(key) ?? 0) + by;
    if (n > 0) this.#heldByTenant.set(key, n);
    else this.#heldByTenant.delete(key);
  }

  #restartTimer(id: string): void {
    const held = this.#held.get(id);
    if (!held) return;
    clearTimeout(held.timer);
    held.timer = setTimeout(
      () => this.#release(id, new Error("the client did not retry in time")),
      this.deps.timeoutSeconds * 1000,
    );
    held.timer.unref();
    const { store, keys, timeoutSeconds } = this.deps;
    void store.expire(keys.heldCall(held.binding.tenant, id), timeoutSeconds).catch(() => undefined);
  }

  /** Forgets a held call; with a reason, its upstream call is cancelled too. */
  #release(id: string, reason?: Error): void {
    const held = this.#held.get(id);
    if (!held) return;
    this.#held.delete(id);
    this.#count(held.binding.tenant, -1);
    if (held.client !== undefined) this.#count(held.client, -1);
    clearTimeout(held.timer);
    if (reason) held.run.cancel(reason);
    void held.unsubscribe.then((unsubscribe) => unsubscribe()).catch(() => undefined);
    void this.deps.store.del(this.deps.keys.heldCall(held.binding.tenant, id)).catch(() => undefined);
  }

  /** The owner's side of a retry that landed on another replica. */
  #onOwnerMessage(id: string, raw: string): void {
    const held = this.#held.get(id);
    const msg = parse<ToOwner>(raw);
    if (!held || !msg) return;
    if (msg.t === "cancel") {
      held.remote.get(msg.c)?.();
      return;
    }
    const { store, keys, timeoutSeconds } = this.deps;
    const retry = `${id}.${msg.c}`;
    const channel = keys.heldCallChannel(held.binding.tenant, retry);
    // The last message is kept before it is published: a retry whose subscription was down when it
    // went by reads it there (held-remote.ts).
    const reply = (m: ToRetry) =>
      void (
        m.t === "end"
          ? store.set(keys.heldCallEnd(held.binding.tenant, retry), JSON.stringify(m), {
              ttlSeconds: timeoutSeconds,
            })
          : Promise.resolve()
      )
        .then(() => store.publish(channel, JSON.stringify(m)))
        .catch(() => undefined);
    reply({ t: "ack" });
    const call: RoundCall = {
      tenant: held.binding.tenant,
      principal: held.binding.principal,
      request: { jsonrpc: "2.0", id: 0, method: held.binding.method },
      meta: msg.m,
      send: (json) => reply({ t: "send", json }),
      onClose: (listener) => held.remote.set(msg.c, listener),
    };
    // The retry's close listener stays until the held call ends: a client that leaves after the
    // answer was relayed, before it got it, still releases the call the answer names.
    this.#resume(id, held, msg.r, call).then(
      (result) => reply({ t: "end", result }),
      (err: unknown) => {
        const response = toErrorResponse(null, err, "stateless");
        reply({ t: "end", error: "error" in response ? response.error : undefined });
      },
    );
  }
}

/** What a request's state is bound to; the digest (a hash of the params) is made only when used. */
function bindingOf(call: RoundCall): StateBinding {
  const { method, params = {} } = call.request;
  let digest: string | undefined;
  return {
    // A virtual server's calls are held and their states bound under its own path (§8).
    tenant: call.server === undefined ? call.tenant : `${call.tenant}/${call.server}`,
    principal: call.principal,
    method,
    get digest() {
      return (digest ??= digestOf(method, params));
    },
  };
}

function recordOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
