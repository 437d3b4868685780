// Picks the store at boot (DESIGN.md §4): Redis when a URL is configured, otherwise the embedded
// in-process store. An unreachable Redis fails the boot with a message naming it.

import { fail } from "../errors.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import type { CommandObserver, Store } from "./store.js";

export interface CreateStoreOptions {
  /** `redis://` or `rediss://` URL; unset means the embedded store (one process only). */
  readonly redisUrl?: string;
  /** How long to wait for Redis before giving up; 5 s unless set. */
  readonly connectTimeoutMs?: number;
  /** Receives Redis connection errors after boot (the store itself logs nothing). */
  readonly onError?: (err: unknown) => void;
  /** Sees every store command complete or fail (metrics). */
  readonly onCommand?: CommandObserver;
}

/** Builds the configured store; with Redis, resolves only once the connection is ready. */
export async function createStore(opts: CreateStoreOptions): Promise<Store> {
  const { onError, onCommand } = opts;
  const observers = { ...(onError && { onError }), ...(onCommand && { onCommand }) };
  if (opts.redisUrl === undefined) return new MemoryStore(observers);
  const store = new RedisStore(opts.redisUrl, observers);
  const timeoutMs = opts.connectTimeoutMs ?? 5000;
  try {
    await store.ready(timeoutMs);
  } catch (err) {
    await store.close();
    const reason = describe(err instanceof Error && err.cause !== undefined ? err.cause : err);
    throw fail(
      "PORTICO_ERR_STORE_UNAVAILABLE",
      `Cannot connect to Redis at ${redactUrl(opts.redisUrl)} within ${timeoutMs / 1000} s: ${reason}`,
    );
  }
  return store;
}

/** The URL without its password, safe for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    // Connection failures carry an errno code such as ECONNREFUSED or ENOTFOUND.
    const code = (err as NodeJS.ErrnoException).code;
    return code !== undefined && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
  }
  return "no answer";
}
