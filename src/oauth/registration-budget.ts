// How many clients one address may register in an hour (docs/oauth.md "Dynamic registration"): a
// counter per client IP (IPv6 by /64) and fixed hour in the store, shared by every replica. A
// registration is rare and writes a record anyway, so each one is counted in the store at once.
import { ipSubject } from "../limits/subjects.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

const HOUR_MS = 3_600_000;
/** Counters outlive their hour by a minute, for clocks a little apart. */
const COUNTER_TTL_SECONDS = 3_660;

export class RegistrationBudget {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    /** Registrations per address per hour; 0 or less: no budget. */
    private readonly perHour: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts a registration from `ip`. Undefined when it is within the hour's budget; else the
   * whole seconds until the hour ends (the Retry-After value).
   */
  async take(ip: string): Promise<number | undefined> {
    if (this.perHour <= 0) return undefined;
    const now = this.now();
    const hour = Math.floor(now / HOUR_MS);
    const key = this.keys.oauthRegistrations(ipSubject(ip), hour);
    const count = await this.store.incr(key, 1, COUNTER_TTL_SECONDS);
    if (count <= this.perHour) return undefined;
    return Math.max(1, Math.ceil(((hour + 1) * HOUR_MS - now) / 1000));
  }
}
