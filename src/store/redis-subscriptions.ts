// Pub/sub on Redis for RedisStore: one subscriber connection, opened on the first subscribe and
// shared by every local listener of every channel. ioredis subscribes again after a reconnection,
// but what was published meanwhile is lost: each subscription's owner is then told to re-read
// what it follows (docs/storage.md). A cluster subscriber whose node stays away is replaced by one
// through another node.
import type { Redis } from "ioredis";
import { nodeKey, openSubscriber, quit, type CommandClient } from "./redis-connection.js";
import type { ClusterEndpoint } from "./redis-urls.js";
import type { Unsubscribe } from "./store.js";

type Listener = (message: string) => void;

interface Channel {
  readonly listeners: Set<Listener>;
  /** Settles when Redis confirmed the SUBSCRIBE. */
  readonly active: Promise<unknown>;
}

export class RedisSubscriptions {
  #subscriber: Redis | undefined;
  #closed = false;
  readonly #channels = new Map<string, Channel>();
  /** Per subscription: what to run when it is active again after a lost connection. */
  readonly #resyncs = new Map<Listener, () => void>();

  constructor(
    private readonly redis: CommandClient,
    private readonly cluster: ClusterEndpoint | undefined,
    private readonly onError: (err: unknown) => void,
  ) {}

  async subscribe(channel: string, listener: Listener, onResync?: () => void): Promise<Unsubscribe> {
    // A fresh wrapper per call, so subscribing the same function twice gives two subscriptions.
    const own: Listener = (message) => listener(message);
    if (onResync) this.#resyncs.set(own, onResync);
    let state = this.#channels.get(channel);
    if (state === undefined) {
      state = { listeners: new Set(), active: this.#connection().subscribe(channel) };
      this.#channels.set(channel, state);
    }
    state.listeners.add(own);
    try {
      await state.active;
    } catch (err) {
      if (this.#channels.get(channel) === state) this.#channels.delete(channel);
      this.#resyncs.delete(own);
      throw err;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      this.#resyncs.delete(own);
      const current = this.#channels.get(channel);
      if (current === undefined || !current.listeners.delete(own) || current.listeners.size > 0) return;
      this.#channels.delete(channel);
      // Commands on one connection run in order, so a later SUBSCRIBE still wins over this.
      await this.#subscriber?.unsubscribe(channel);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#channels.clear();
    this.#resyncs.clear();
    if (this.#subscriber) await quit(this.#subscriber);
  }

  #connection(): Redis {
    return (this.#subscriber ??= this.#open(false));
  }

  /** `lost`: this connection replaces one that ended, so it starts with a resync. */
  #open(lost: boolean, avoid?: string): Redis {
    const subscriber = openSubscriber(this.redis, this.cluster, avoid);
    subscriber.on("error", (err: unknown) => this.onError(err));
    subscriber.on("message", (channel: string, message: string) => this.#dispatch(channel, message));
    // ioredis subscribes again after a reconnection, but what was published meanwhile is lost.
    subscriber.on("close", () => (lost = true));
    subscriber.on("ready", () => {
      if (!lost) return;
      lost = false;
      void this.#resync(subscriber);
    });
    // A cluster subscriber whose node stays away ends: listen through another node from then on.
    subscriber.on("end", () => {
      if (this.#closed || this.#subscriber !== subscriber) return;
      this.#subscriber = this.#channels.size === 0 ? undefined : this.#open(true, nodeKey(subscriber));
    });
    return subscriber;
  }

  /** Once the channels are subscribed again, tells their owners to re-read what they follow. */
  async #resync(subscriber: Redis): Promise<void> {
    const channels = [...this.#channels.keys()];
    try {
      // Replies come in order: when this one is in, ioredis's own resubscription is active too.
      if (channels.length > 0) await subscriber.subscribe(...channels);
    } catch (err) {
      this.onError(err);
      return; // the next reconnection tries again
    }
    for (const resync of [...this.#resyncs.values()]) {
      try {
        resync();
      } catch (err) {
        this.onError(err);
      }
    }
  }

  #dispatch(channel: string, message: string): void {
    const state = this.#channels.get(channel);
    if (state === undefined) return;
    for (const listener of [...state.listeners]) {
      if (!state.listeners.has(listener)) continue;
      try {
        listener(message);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
