// How many clients one address may register in an hour (docs/oauth.md "Dynamic registration"): a
// counter per client IP (IPv6 by /64) and fixed hour in the store, shared by every replica, and
// for IPv6 one per /48 (one site's usual allocation, whose /64s are cheap to hop) at ten times
// the budget. A registration is rare and writes a record anyway, so each is counted at once.
import { ipSubject, ipv6SiteSubject } from "../limits/subjects.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

const HOUR_MS = 3_600_000;
/** Counters outlive their hour by a minute, for clocks a little apart. */
const COUNTER_TTL_SECONDS = 3_660;
/** An IPv6 /48 may register this many times an address's budget. */
const SITE_FACTOR = 10;

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
    const count = (subject: string) =>
      this.store.incr(this.keys.oauthRegistrations(subject, hour), 1, COUNTER_TTL_SECONDS);
    const site = ipv6SiteSubject(ip);
    const [own, shared] = await Promise.all([count(ipSubject(ip)), site ? count(site) : 0]);
    if (own <= this.perHour && shared <= this.perHour * SITE_FACTOR) return undefined;
    return Math.max(1, Math.ceil(((hour + 1) * HOUR_MS - now) / 1000));
  }
}
