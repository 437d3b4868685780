// Login back-off (docs/security.md "Login brute force"), shared by every replica through the store:
// failures are counted per (tenant, username, client address) and per (tenant, username), keyed by
// the submitted name whether or not the user exists. It is checked before the password is hashed.
// The account-wide back-off slows only addresses that have failed on the name and never signed in
// to it, so a stranger cannot lock the user out of an address they never failed from, nor of one
// they signed in from before (after a typo there during a spray).
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ipSubject, ipv6SiteSubject } from "../limits/subjects.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

/** Failures are counted for an hour from the first one. */
export const FAILURE_WINDOW_SECONDS = 3600;
/** The account-wide back-off is gentler: at most a minute. */
export const ACCOUNT_MAX_SECONDS = 60;
/** How long an address the user signed in from stays spared by the account-wide back-off. */
export const KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600;
/** How long a refused attempt waits before its answer, until a real hash has been timed. */
const DEFAULT_HASH_MS = 100;

export interface LoginThrottleOptions {
  readonly store: Store;
  readonly keys: Keys;
  /** Failures from one address before its back-off; 0: none. */
  readonly failures: number;
  /** Failures from all addresses before the account-wide back-off; 0: none. */
  readonly accountFailures: number;
  /** Longest per-address back-off, in seconds. */
  readonly maxSeconds: number;
  readonly metrics?: Metrics;
  /** Told when a back-off starts (audit), not on every refused attempt. */
  readonly onStart?: (start: ThrottleStart) => Promise<void>;
}

/** One login attempt: the tenant, the username as submitted, the client address (request.ip). */
export interface LoginAttempt {
  readonly tenant: string;
  readonly username: string;
  readonly ip: string;
}

/** An attempt as begin() counted it: whether its password may be checked. */
export interface LoginTicket extends LoginAttempt {
  readonly account: string;
  readonly address: string;
  /** Attempts from the address on the name since its last success, this one included. */
  readonly attempts: number;
  readonly allowed: boolean;
}

/** A back-off that has just started. */
export interface ThrottleStart {
  readonly tenant: string;
  readonly username: string;
  readonly scope: "address" | "account";
  /** The address subject (ip:…); account-wide: the address whose failure started it. */
  readonly address: string;
  readonly failures: number;
}

/** The digest naming an account in keys: usernames are attacker-chosen, of any length. */
function accountOf(username: string): string {
  return createHash("sha256").update(username).digest("base64url").slice(0, 22);
}

/** Back-off after the `failures`-th failure with threshold `threshold`: 1 s, 2 s, 4 s … `max`. */
export function backoffSeconds(failures: number, threshold: number, max: number): number {
  return Math.min(max, 2 ** Math.min(30, failures - threshold));
}

export class LoginThrottle {
  readonly #o: LoginThrottleOptions;
  /** A moving average of the password hash's duration, so refusals take as long as a check. */
  #hashMs = DEFAULT_HASH_MS;
  #timed = false;

  constructor(options: LoginThrottleOptions) {
    this.#o = options;
  }

  /**
   * Counts an attempt before its password is checked, and says whether it may be: one store round
   * trip (INCRBY and GET, pipelined), plus a SET NX once the address is past the threshold.
   * Attempts are counted (atomically, before the hash) since the address's last success, so
   * parallel guesses cannot all slip in before the first failure is recorded: from the threshold
   * on, one attempt per back-off period gets through (the one that sets the back-off key), the
   * others are refused and given back.
   * Refused as well: the name is in account-wide back-off and the address has tried it before.
   */
  async begin(attempt: LoginAttempt): Promise<LoginTicket> {
    const { store, keys, failures, accountFailures, maxSeconds, metrics } = this.#o;
    const ticket = { ...attempt, account: accountOf(attempt.username), address: ipSubject(attempt.ip) };
    if (failures <= 0 && accountFailures <= 0) return { ...ticket, attempts: 0, allowed: true };
    const { tenant, account, address } = ticket;
    const counter = keys.loginFailures(tenant, account, address);
    const [attempts, accountBlock] = await Promise.all([
      store.incr(counter, 1, FAILURE_WINDOW_SECONDS),
      accountFailures > 0 ? store.get(keys.loginBlock(tenant, account)) : null,
    ]);
    const refuse = async (scope: "address" | "account"): Promise<LoginTicket> => {
      metrics?.loginThrottled(scope);
      // A refused attempt is given back: the back-off grows with the guesses checked, not with
      // the ones turned away (or a user retrying during a spray would wait the longest).
      await store.incr(counter, -1, FAILURE_WINDOW_SECONDS);
      return { ...ticket, attempts: attempts - 1, allowed: false };
    };
    if (accountBlock !== null && (await this.#accountRefuses(ticket, attempts))) return refuse("account");
    if (failures > 0 && attempts >= failures) {
      const ttlSeconds = backoffSeconds(attempts, failures, maxSeconds);
      const key = keys.loginBlock(tenant, account, address);
      if (!(await store.set(key, "1", { ttlSeconds, onlyIfAbsent: true }))) return refuse("address");
    }
    return { ...ticket, attempts, allowed: true };
  }

  /**
   * Under an account-wide back-off (an attack in progress: only then is the store read here),
   * whether it refuses this address: one that failed on the name, or an IPv6 address whose /48
   * did (a stranger hopping /64s of one site), unless the user signed in from it before.
   */
  async #accountRefuses(ticket: Omit<LoginTicket, "attempts" | "allowed">, attempts: number) {
    const { store, keys } = this.#o;
    const { tenant, account, address } = ticket;
    const site = attempts > 1 ? undefined : ipv6SiteSubject(ticket.ip);
    if (attempts <= 1 && site === undefined) return false;
    const [known, siteFailures] = await Promise.all([
      store.get(keys.loginKnown(tenant, account, address)),
      site === undefined ? null : store.get(keys.loginFailures(tenant, account, site)),
    ]);
    if (known !== null) return false;
    return attempts > 1 || Number(siteFailures ?? 0) > 0;
  }

  /** Records a wrong password (or unknown user); starts the account-wide back-off at its threshold. */
  async failed(ticket: LoginTicket): Promise<ThrottleStart[]> {
    const { store, keys, failures, accountFailures, maxSeconds } = this.#o;
    if (failures <= 0 && accountFailures <= 0) return [];
    const { tenant, username, account, address, attempts } = ticket;
    // An IPv6 address's /48 is counted too, so the account-wide back-off sees a site hopping /64s.
    const site = ipv6SiteSubject(ticket.ip);
    const [all] = await Promise.all([
      store.incr(keys.loginFailures(tenant, account), 1, FAILURE_WINDOW_SECONDS),
      store.setAdd(keys.loginAddresses(tenant, account), address, FAILURE_WINDOW_SECONDS),
      site && store.incr(keys.loginFailures(tenant, account, site), 1, FAILURE_WINDOW_SECONDS),
      site && store.setAdd(keys.loginAddresses(tenant, account), site, FAILURE_WINDOW_SECONDS),
    ]);
    const starts: ThrottleStart[] = [];
    if (failures > 0 && attempts === failures)
      starts.push({ tenant, username, scope: "address", address, failures: attempts });
    if (accountFailures > 0 && all >= accountFailures) {
      const ttlSeconds = backoffSeconds(all, accountFailures, Math.min(ACCOUNT_MAX_SECONDS, maxSeconds));
      await store.set(keys.loginBlock(tenant, account), "1", { ttlSeconds });
      if (all === accountFailures)
        starts.push({ tenant, username, scope: "account", address, failures: all });
    }
    for (const start of starts) await this.#o.onStart?.(start);
    return starts;
  }

  /**
   * A successful login: the address's count and back-off on the name are reset, and the address is
   * remembered as the user's, which the account-wide back-off spares (the per-address one does not).
   */
  async succeeded(ticket: LoginTicket): Promise<void> {
    const { store, keys, failures, accountFailures } = this.#o;
    if (failures <= 0 && accountFailures <= 0) return;
    const { tenant, account, address } = ticket;
    await Promise.all([
      store.del(keys.loginFailures(tenant, account, address), keys.loginBlock(tenant, account, address)),
      accountFailures > 0
        ? store.set(keys.loginKnown(tenant, account, address), "1", { ttlSeconds: KNOWN_ADDRESS_SECONDS })
        : undefined,
    ]);
  }

  /** Clears every count and back-off of a username on a tenant (admin API). */
  async clear(tenant: string, username: string): Promise<void> {
    const { store, keys } = this.#o;
    const account = accountOf(username);
    const addresses = await store.setMembers(keys.loginAddresses(tenant, account));
    await store.del(
      keys.loginFailures(tenant, account),
      keys.loginBlock(tenant, account),
      keys.loginAddresses(tenant, account),
      ...addresses.flatMap((a) => [
        keys.loginFailures(tenant, account, a),
        keys.loginBlock(tenant, account, a),
      ]),
    );
  }

  /** Notes how long a password check took (a refused attempt then takes about as long). */
  timed(ms: number): void {
    this.#hashMs = this.#timed ? this.#hashMs * 0.8 + ms * 0.2 : ms;
    this.#timed = true;
  }

  /** Waits about as long as a password check: a refusal is not told apart by its timing. */
  async paced(): Promise<void> {
    await sleep(this.#hashMs);
  }
}
