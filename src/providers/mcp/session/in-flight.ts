// Upstream calls in flight, where another replica can find them (docs/storage.md `:upcalls`,
// docs/upstream-mcp.md "Healing and health"): a call still running after a second is recorded
// with the replica that runs it, so when a replica dies, a survivor sees its heartbeat expire and
// sends notifications/cancelled upstream for it. Quick calls never touch the store: one timer per
// provider checks the calls in flight, not one per call.
import type { Keys } from "../../../store/keys.js";
import type { ReplicaLiveness } from "../../../store/replicas.js";
import type { Store } from "../../../store/store.js";
import { parseSessionRecord } from "../upstream.js";
import type { SessionRecord } from "./client.js";

/** How often calls in flight are looked at (and how old one is when it is first recorded). */
const TICK_MS = 1000;
/** A record's lease, renewed every RENEW_MS while the call runs (keeps its key; without a heartbeat, its owner). */
const LEASE_MS = 90_000;
const RENEW_MS = 30_000;

/**
 * Whether the replica that wrote an owner token is gone (docs/architecture.md §4): `r:<id>` asks
 * its heartbeat; a number is a lease end (ms), written by a replica without one, gone `graceMs` after.
 */
export async function ownerGone(
  owner: string,
  graceMs: number,
  liveness?: ReplicaLiveness,
): Promise<boolean> {
  if (!owner.startsWith("r:")) return Number(owner) + graceMs <= Date.now();
  // A store that cannot answer proves nothing.
  return liveness !== undefined && !(await liveness.isAlive(owner.slice(2)).catch(() => true));
}

/** The owner token records are written with: this replica's id, else a lease ending at `leaseUntil`. */
export function ownerToken(leaseUntil: number, liveness?: ReplicaLiveness): string {
  return liveness ? `r:${liveness.id}` : String(leaseUntil);
}

export interface InFlightCall {
  readonly record: SessionRecord | undefined;
  id: number;
  readonly startedAt: number;
  renewedAt: number;
}

/** Tells the upstream that a call a dead replica left running is cancelled. */
export type CancelOrphan = (record: SessionRecord, requestId: number) => Promise<void>;

export class InFlight {
  readonly #calls = new Set<InFlightCall>();
  #timer: NodeJS.Timeout | undefined;
  readonly #unwatch: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly tenantId: string,
    private readonly providerId: string,
    private readonly cancel: CancelOrphan,
    private readonly liveness?: ReplicaLiveness,
  ) {
    // A replica seen dead (a stream it owned was resumed here): its calls are cancelled now.
    this.#unwatch = liveness?.onGone(() => void this.orphans().catch(() => undefined));
  }

  /** A call starts (its id is set once it is known: InFlightCall.id). */
  begin(record: SessionRecord | undefined): InFlightCall {
    const call: InFlightCall = { record, id: 0, startedAt: Date.now(), renewedAt: 0 };
    this.#calls.add(call);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#tick(), TICK_MS);
      this.#timer.unref();
    }
    return call;
  }

  /** A call ended: its record, if it had one, goes. */
  end(call: InFlightCall): void {
    this.#calls.delete(call);
    if (call.renewedAt !== 0) void this.store.hashDel(this.#key(), this.#field(call)).catch(() => undefined);
    if (this.#calls.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  close(): void {
    this.#unwatch?.();
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The calls of this provider whose replica is gone (its heartbeat expired, or its lease lapsed a
   * while ago), removed from the store as they are handed over: `cancel` tells the upstream.
   */
  async orphans(): Promise<void> {
    const all = await this.store.hashGetAll(this.#key());
    const prefix = `${this.providerId} `;
    for (const [field, value] of Object.entries(all)) {
      if (!field.startsWith(prefix)) continue;
      const [owner = "", protocolVersion] = value.split(" ");
      if (!(await ownerGone(owner, RENEW_MS, this.liveness))) continue;
      const [, sessionId, requestId] = field.split(" ");
      await this.store.hashDel(this.#key(), field);
      const record = parseSessionRecord(`${sessionId} ${protocolVersion}`);
      if (record && Number.isInteger(Number(requestId)))
        await this.cancel(record, Number(requestId)).catch(() => undefined);
    }
  }

  #tick(): void {
    const now = Date.now();
    for (const call of this.#calls) {
      if (!call.record || call.id === 0 || now - call.startedAt < TICK_MS) continue;
      if (call.renewedAt !== 0 && now - call.renewedAt < RENEW_MS) continue;
      call.renewedAt = now;
      const value = `${ownerToken(now + LEASE_MS, this.liveness)} ${call.record.protocolVersion}`;
      const ttlSeconds = LEASE_MS / 1000 + 300;
      void this.store.hashSet(this.#key(), this.#field(call), value, ttlSeconds).catch(() => undefined);
    }
  }

  #key(): string {
    return this.keys.upstreamCalls(this.tenantId);
  }

  #field(call: InFlightCall): string {
    return `${this.providerId} ${call.record!.sessionId} ${call.id}`;
  }
}
