// Replica liveness in the store (docs/architecture.md §4, docs/storage.md `replica:<id>`): each
// replica refreshes one key with a short TTL on an interval, never per request, so any replica can
// ask whether another is still alive, and watch one until it is gone.
import { randomId } from "../crypto/secrets.js";
import type { Keys } from "./keys.js";
import type { Store } from "./store.js";

/** How often a replica refreshes its heartbeat, and how long one lives unrefreshed. */
export const HEARTBEAT_MS = 2000;
export const HEARTBEAT_TTL_SECONDS = 6;
/** How often the replicas watched here are looked at (one GET each). */
const WATCH_MS = 1000;

/** What other features may ask of replica liveness. */
export interface ReplicaLiveness {
  /** This replica's id (random per process). */
  readonly id: string;
  /** False once the replica's heartbeat expired (it died, or lost the store for a whole TTL). */
  isAlive(id: string): Promise<boolean>;
  /** Calls `onGone` once when the replica is seen dead; the returned function stops watching. */
  watch(id: string, onGone: () => void): () => void;
  /** Calls `listener` with each replica this one finds dead; the returned function stops it. */
  onGone(listener: (id: string) => void): () => void;
}

export interface ReplicasOptions {
  readonly beatMs?: number;
  readonly ttlSeconds?: number;
  readonly watchMs?: number;
}

export class Replicas implements ReplicaLiveness {
  readonly id = randomId(8);
  readonly #watched = new Map<string, Set<() => void>>();
  readonly #listeners = new Set<(id: string) => void>();
  /** Replicas seen dead, so each death is told once (one that comes back is forgotten). */
  readonly #dead = new Set<string>();
  #beat: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly options: ReplicasOptions = {},
  ) {}

  /** Writes the first heartbeat, then keeps it fresh until stop(). */
  async start(): Promise<void> {
    await this.#refresh();
    this.#beat = setInterval(
      () => void this.#refresh().catch(() => undefined),
      this.options.beatMs ?? HEARTBEAT_MS,
    );
    this.#beat.unref();
  }

  /** Stops the heartbeat and removes it: this replica serves nothing more. */
  async stop(): Promise<void> {
    clearInterval(this.#beat);
    clearInterval(this.#poll);
    this.#beat = this.#poll = undefined;
    await this.store.del(this.keys.replica(this.id)).catch(() => undefined);
  }

  async isAlive(id: string): Promise<boolean> {
    if (id === this.id) return true;
    // Always asked: a replica cut from the store for a whole TTL that comes back is alive again.
    const alive = (await this.store.get(this.keys.replica(id))) !== null;
    if (!alive) this.#gone(id);
    else this.#dead.delete(id);
    return alive;
  }

  watch(id: string, onGone: () => void): () => void {
    if (this.#dead.has(id)) {
      queueMicrotask(onGone);
      return () => undefined;
    }
    const watchers = this.#watched.get(id) ?? new Set();
    this.#watched.set(id, watchers);
    watchers.add(onGone);
    if (!this.#poll) {
      this.#poll = setInterval(() => void this.#check(), this.options.watchMs ?? WATCH_MS);
      this.#poll.unref();
    }
    return () => {
      watchers.delete(onGone);
      if (watchers.size === 0 && this.#watched.get(id) === watchers) this.#watched.delete(id);
      this.#idle();
    };
  }

  onGone(listener: (id: string) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  async #refresh(): Promise<void> {
    await this.store.set(this.keys.replica(this.id), "1", {
      ttlSeconds: this.options.ttlSeconds ?? HEARTBEAT_TTL_SECONDS,
    });
  }

  /** One look at every watched replica; a store that cannot answer proves nothing. */
  async #check(): Promise<void> {
    await Promise.all([...this.#watched.keys()].map((id) => this.isAlive(id).catch(() => true)));
  }

  #gone(id: string): void {
    const watchers = this.#watched.get(id);
    this.#watched.delete(id);
    this.#idle();
    for (const onGone of watchers ?? []) onGone();
    if (this.#dead.has(id)) return;
    if (this.#dead.size >= 1000) this.#dead.clear();
    this.#dead.add(id);
    for (const listener of this.#listeners) listener(id);
  }

  #idle(): void {
    if (this.#watched.size > 0 || !this.#poll) return;
    clearInterval(this.#poll);
    this.#poll = undefined;
  }
}
