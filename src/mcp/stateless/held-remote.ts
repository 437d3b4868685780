// A 2026-07-28 retry that lands on another replica than the one holding its call (mrtr.ts,
// basic/patterns/mrtr): the answers go to the holder on the held call's channel, its messages come
// back on a channel of the retry. The held call's key names its replica, so a retry of a call whose
// replica died is answered PORTICO_ERR_MCP_REQUEST_INTERRUPTED as soon as its heartbeat expires.
import { fail } from "../../protocol/errors.js";
import { randomId } from "../../crypto/secrets.js";
import { HEARTBEAT_TTL_SECONDS } from "../../store/replicas.js";
import type { RoundMeta } from "./call-run.js";
import type { MrtrDeps, RoundCall } from "./mrtr-types.js";
import type { StateBinding } from "./request-state.js";
import { interrupted } from "../interrupted.js";

/** Messages on a held call's channel (to its owner) and on a retry's channel (back to the retry). */
export type ToOwner = { t: "resume"; c: string; r: unknown; m: RoundMeta } | { t: "cancel"; c: string };
export type ToRetry =
  | { t: "ack" }
  | { t: "send"; json: string }
  | { t: "end"; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/** How long a retry waits for the replica holding the call to answer before asking if it is alive. */
const ACK_MS = 5000;

/** A retry for a call another replica holds: the answers go there, its messages come back. */
export async function resumeElsewhere(
  deps: MrtrDeps,
  id: string,
  binding: StateBinding,
  call: RoundCall,
): Promise<Record<string, unknown>> {
  const { store, keys, liveness } = deps;
  const holder = await store.get(keys.heldCall(binding.tenant, id));
  if (holder === null) throw gone();
  // "1": held by a replica without a heartbeat (before them); its silence is all there is to go by.
  const replica = holder === "1" || !liveness ? undefined : holder;
  const dead = async () => replica !== undefined && !(await liveness!.isAlive(replica).catch(() => true));
  if (await dead()) throw interrupted();
  const c = randomId();
  // Settles on the owner's answer; fails when the owner's replica is seen dead, or stays silent
  // for a whole input timeout, counted afresh at each message it relays.
  let settle!: (m: ToRetry | Error) => void;
  const outcome = new Promise<Record<string, unknown>>((resolve, reject) => {
    // The owner acknowledges at once; silence from a live replica means the call is gone, but a
    // replica that just died still looks alive for a heartbeat's TTL: the watch below tells.
    let timer = setTimeout(
      () =>
        void dead().then((isDead) => {
          if (isDead) settle(interrupted());
          else timer = setTimeout(() => settle(gone()), replica ? HEARTBEAT_TTL_SECONDS * 1000 : 0);
        }),
      ACK_MS,
    );
    settle = (m) => {
      clearTimeout(timer);
      if (m instanceof Error) return reject(m);
      if (m.t === "send") call.send(m.json);
      if (m.t !== "end") {
        timer = setTimeout(() => settle(gone()), deps.timeoutSeconds * 1000);
        return;
      }
      if (m.error) reject(Object.assign(new Error(m.error.message), m.error));
      else if (m.result) resolve(m.result);
      else reject(gone());
    };
  });
  outcome.catch(() => undefined); // awaited below, unless subscribing fails first
  const unwatch = replica ? liveness!.watch(replica, () => settle(interrupted())) : undefined;
  const unsubscribe = await store
    .subscribe(
      keys.heldCallChannel(binding.tenant, `${id}.${c}`),
      (raw) => {
        const msg = parse<ToRetry>(raw);
        if (msg) settle(msg);
      },
      // The holder's last message, published while the subscription was down, is read where it
      // was kept; its progress messages meanwhile are gone.
      () =>
        void store.get(keys.heldCallEnd(binding.tenant, `${id}.${c}`)).then(
          (kept) => {
            const msg = kept === null ? undefined : parse<ToRetry>(kept);
            if (msg) settle(msg);
          },
          () => undefined,
        ),
    )
    .catch((err: unknown) => {
      unwatch?.();
      throw err;
    });
  const owner = keys.heldCallChannel(binding.tenant, id);
  try {
    // A client already gone sends nothing on: its cancel would reach the owner before the resume.
    let resumed = false;
    let closed = false;
    call.onClose(() => {
      closed = true;
      if (resumed) void store.publish(owner, JSON.stringify({ t: "cancel", c })).catch(() => undefined);
    });
    if (closed) throw new Error("the client closed the response stream");
    resumed = true;
    const params = call.request.params ?? {};
    const resume: ToOwner = { t: "resume", c, r: params.inputResponses, m: roundMeta(call.meta) };
    await store.publish(owner, JSON.stringify(resume));
    return await outcome;
  } finally {
    unwatch?.();
    await unsubscribe().catch(() => undefined);
    void store.del(keys.heldCallEnd(binding.tenant, `${id}.${c}`)).catch(() => undefined);
  }
}

function gone() {
  return fail(
    "PORTICO_ERR_MCP_INVALID_PARAMS",
    "Invalid requestState: the request it belongs to is no longer waiting (it ended, or timed out); send it again without requestState",
  );
}

/** Only what the held call needs of the retry's _meta travels to its owner. */
function roundMeta({ progressToken, logLevel, clientCapabilities }: RoundMeta): RoundMeta {
  return { progressToken, logLevel, clientCapabilities };
}

export function parse<T>(raw: string): T | undefined {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}
