// Shared upstream sessions where another replica can find them (docs/storage.md `:upshared`):
// the replica using one records itself as its owner at each sweep; when a replica dies, a survivor
// sees its heartbeat expire and ends the upstream session (HTTP DELETE), so upstreams are not left
// holding the sessions of gateways that are gone.
import type { Keys } from "../../../store/keys.js";
import type { ReplicaLiveness } from "../../../store/replicas.js";
import type { Store } from "../../../store/store.js";
import { ownerGone, ownerToken } from "./in-flight.js";
import { parseSessionRecord } from "../upstream.js";
import type { SessionRecord } from "./client.js";

/** Longer than a few sweeps: a live replica renews well before its leases lapse. */
const LEASE_MS = 5 * 60_000;
const TTL_SECONDS = 15 * 60;

export class SharedLeases {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly tenantId: string,
    private readonly providerId: string,
    private readonly liveness?: ReplicaLiveness,
  ) {}

  /** Renews the leases of the upstream sessions this replica shares now. */
  async renew(records: ReadonlyArray<SessionRecord | undefined>): Promise<void> {
    const owner = ownerToken(Date.now() + LEASE_MS, this.liveness);
    for (const record of records)
      if (record)
        await this.store.hashSet(
          this.#key(),
          `${this.providerId} ${record.sessionId}`,
          `${owner} ${record.protocolVersion}`,
          TTL_SECONDS,
        );
  }

  /** Hands each upstream session whose replica is gone to `end`, after removing its record. */
  async orphans(end: (record: SessionRecord) => Promise<void>): Promise<void> {
    const prefix = `${this.providerId} `;
    for (const [field, value] of Object.entries(await this.store.hashGetAll(this.#key()))) {
      if (!field.startsWith(prefix)) continue;
      const [owner = "", protocolVersion] = value.split(" ");
      if (!(await ownerGone(owner, 0, this.liveness))) continue;
      await this.store.hashDel(this.#key(), field);
      const record = parseSessionRecord(`${field.slice(prefix.length)} ${protocolVersion}`);
      if (record) await end(record).catch(() => undefined);
    }
  }

  /** This replica let go of a shared session (it ended it upstream itself). */
  async release(record: SessionRecord | undefined): Promise<void> {
    if (record) await this.store.hashDel(this.#key(), `${this.providerId} ${record.sessionId}`);
  }

  #key(): string {
    return this.keys.upstreamShared(this.tenantId);
  }
}
