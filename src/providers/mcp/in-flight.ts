// Upstream calls in flight, where another replica can find them (docs/storage.md `:upcalls`,
// docs/upstream-mcp.md "Healing and health"): a call still running after a second is recorded
// with a lease renewed while it runs, so when a replica dies, a survivor sees the lease lapse and
// sends notifications/cancelled upstream for it. Quick calls never touch the store: one timer per
// provider checks the calls in flight, not one per call.
import type { Keys } from "../../store/keys.js";
import type { Store } from "../../store/store.js";
import { parseSessionRecord } from "../mcp-upstream.js";
import type { SessionRecord } from "./session-client.js";

/** How often calls in flight are looked at (and how old one is when it is first recorded). */
const TICK_MS = 1000;
/** A record's lease, renewed every RENEW_MS while the call runs. */
const LEASE_MS = 90_000;
const RENEW_MS = 30_000;

export interface InFlightCall {
  readonly record: SessionRecord | undefined;
  id: number;
  readonly startedAt: number;
  renewedAt: number;
}

export class InFlight {
  readonly #calls = new Set<InFlightCall>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly tenantId: string,
    private readonly providerId: string,
  ) {}

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
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The calls of this provider whose lease lapsed a while ago (their replica is gone), removed from
   * the store as they are handed over: `cancel` tells the upstream.
   */
  async orphans(cancel: (record: SessionRecord, requestId: number) => Promise<void>): Promise<void> {
    const all = await this.store.hashGetAll(this.#key());
    const now = Date.now();
    const prefix = `${this.providerId} `;
    for (const [field, value] of Object.entries(all)) {
      if (!field.startsWith(prefix)) continue;
      const [leaseUntil, protocolVersion] = value.split(" ");
      if (Number(leaseUntil) + RENEW_MS > now) continue;
      const [, sessionId, requestId] = field.split(" ");
      await this.store.hashDel(this.#key(), field);
      const record = parseSessionRecord(`${sessionId} ${protocolVersion}`);
      if (record && Number.isInteger(Number(requestId)))
        await cancel(record, Number(requestId)).catch(() => undefined);
    }
  }

  #tick(): void {
    const now = Date.now();
    for (const call of this.#calls) {
      if (!call.record || call.id === 0 || now - call.startedAt < TICK_MS) continue;
      if (call.renewedAt !== 0 && now - call.renewedAt < RENEW_MS) continue;
      call.renewedAt = now;
      const value = `${now + LEASE_MS} ${call.record.protocolVersion}`;
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
