// Revoked access tokens, known to every replica without a Redis round trip per request: a
// revocation is written once (a key per jti with a TTL, plus an index scored by expiry) and
// broadcast; each replica keeps the live ones in memory, loads the index when it starts, re-reads
// it as soon as its subscription is back after a lost connection, and every 30 s besides.
import type { Keys } from "../store/keys.js";
import type { Store, Unsubscribe } from "../store/store.js";

const RELOAD_EVERY_MS = 30_000;

export class RevocationList {
  /** jti → expiry (epoch seconds). */
  readonly #revoked = new Map<string, number>();
  #ready: Promise<void> | undefined;
  #unsubscribe: Unsubscribe | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a revocation until `expiresAt` (epoch s) on every replica. */
  async add(jti: string, expiresAt: number, ttlSeconds: number): Promise<void> {
    await this.#start();
    const member = `${expiresAt}:${jti}`;
    await this.store.set(this.keys.revokedToken(jti), "1", { ttlSeconds });
    await this.store.sortedAdd(this.keys.revokedTokens(), member, expiresAt);
    await this.store.waitForReplica(this.keys.replicationProbe()).catch(() => false); // a revoked token must not verify again after a failover
    this.#remember(member);
    await this.store.publish(this.keys.revocationsChannel(), member);
  }

  /** Whether a jti is revoked: answered from memory. */
  async has(jti: string): Promise<boolean> {
    await this.#start();
    const exp = this.#revoked.get(jti);
    if (exp === undefined) return false;
    if (exp * 1000 > this.now()) return true;
    this.#revoked.delete(jti);
    return false;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#unsubscribe?.();
  }

  #start(): Promise<void> {
    this.#ready ??= (async () => {
      // Subscribe before loading, so nothing revoked in between is missed.
      this.#unsubscribe = await this.store.subscribe(
        this.keys.revocationsChannel(),
        (m) => this.#remember(m),
        () => void this.#load().catch(() => undefined),
      );
      await this.#load();
      this.#timer = setInterval(() => void this.#load().catch(() => undefined), RELOAD_EVERY_MS);
      this.#timer.unref();
    })().catch(async (err: unknown) => {
      // Not started (the store was away): the next check starts again rather than failing for good.
      this.#ready = undefined;
      await this.#unsubscribe?.().catch(() => undefined);
      this.#unsubscribe = undefined;
      throw err;
    });
    return this.#ready;
  }

  async #load(): Promise<void> {
    const nowSeconds = Math.floor(this.now() / 1000);
    const index = this.keys.revokedTokens();
    for (const member of await this.store.sortedUpTo(index, Infinity, Infinity)) this.#remember(member);
    // Entries whose tokens have expired are dropped from the index by whoever sees them first.
    for (const member of await this.store.sortedUpTo(index, nowSeconds, 1000))
      await this.store.sortedRemove(index, member);
  }

  #remember(member: string): void {
    const colon = member.indexOf(":");
    const exp = Number(member.slice(0, colon));
    if (colon > 0 && exp * 1000 > this.now()) this.#revoked.set(member.slice(colon + 1), exp);
  }
}
