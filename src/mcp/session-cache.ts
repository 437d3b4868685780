// What a replica remembers of the sessions it served, so that a burst of requests on one session
// costs one store round trip a second instead of one each (docs/architecture.md "Sessions").
// The store stays the truth: an entry is trusted for at most `freshMs` after it was read, then
// read again (which also slides the session's TTL); a session updated or deleted on any replica
// is dropped from every replica's memory by a broadcast, and everything is dropped when the
// broadcast may have been missed (the subscription came back after a lost connection).
import type { Session } from "./session-record.js";

/** The most sessions one replica remembers; past it, the oldest entry makes room. */
export const SESSION_CACHE_MAX = 10_000;

/** How long a read is trusted when the idle TTL allows it (at most a quarter of the TTL). */
export const SESSION_FRESH_MS = 1000;

interface Entry {
  readonly session: Session;
  /** Date.now() when the store last answered for it. */
  readonly readAt: number;
}

export class SessionCache {
  readonly #entries = new Map<string, Entry>();
  readonly #freshMs: number;

  constructor(
    ttlSeconds: number,
    private readonly max = SESSION_CACHE_MAX,
  ) {
    this.#freshMs = Math.min(SESSION_FRESH_MS, (ttlSeconds * 1000) / 4);
  }

  /** The session under `key` when it was read from the store less than `freshMs` ago. */
  get(key: string, now: number): Session | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (now - entry.readAt < this.#freshMs) return entry.session;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, session: Session, now: number): void {
    if (this.#entries.size >= this.max && !this.#entries.has(key)) {
      // Oldest first: Map keeps insertion order.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.delete(key);
    this.#entries.set(key, { session, readAt: now });
  }

  drop(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
