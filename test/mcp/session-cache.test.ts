// A replica remembers the sessions it read for a second (src/mcp/session-cache.ts), so a burst of
// requests costs one GETEX a second; an update or deletion on any replica reaches every replica's
// memory at once (docs/storage.md "Channels"). Two SessionStores on two Redis connections stand
// for two replicas.
import assert from "node:assert/strict";
import { after, it } from "node:test";
import { SessionCache } from "../../src/mcp/session-cache.js";
import { SessionStore } from "../../src/mcp/sessions.js";
import type { Session } from "../../src/mcp/session-record.js";
import { createKeys } from "../../src/store/keys.js";
import { RedisStore } from "../../src/store/redis-store.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";

const { url } = await getTestRedis();
const keys = createKeys(uniquePrefix());
const stores = [new RedisStore(url), new RedisStore(url)];
// b's reads that reach Redis are counted (a touch its memory answers costs none).
let reads = 0;
const counted = new Proxy(stores[1]!, {
  get(target, prop) {
    if (prop === "getAndTouch")
      return (...args: Parameters<RedisStore["getAndTouch"]>) => (reads++, target.getAndTouch(...args));
    const value = Reflect.get(target, prop) as unknown;
    return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  },
});
const [a, b] = [stores[0]!, counted].map((store) => new SessionStore(store, keys, 3600));
after(async () => {
  await Promise.all([a!.close(), b!.close()]);
  await Promise.all(stores.map((s) => s.close()));
});

const init = {
  tenantId: "acme",
  protocolVersion: "2025-11-25",
  clientCapabilities: {},
  principal: "",
  clientName: "c/1",
};

/** Touches until the store's subscription is live (the first read starts it). */
async function warm(sessions: SessionStore, id: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    await sessions.touch("acme", id);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Touches b until a touch reads Redis again and memory answers the next one, and returns when
 * that read began: b's memory trusts the session for a second from then. warm() alone can end
 * anywhere in that second (50 touches take longer on a busy machine), leaving a few ms at worst.
 */
async function fresh(id: string): Promise<number> {
  for (;;) {
    const before = reads;
    const at = Date.now();
    await b!.touch("acme", id);
    if (reads > before) {
      await b!.touch("acme", id);
      if (reads === before + 1) return at;
    }
    await pause(5);
  }
}

/** Touches b until check() holds for what it reads; returns how long after `since` that was. */
async function touchUntil(id: string, check: (s: Session | undefined) => boolean, since: number) {
  const deadline = Date.now() + 5000;
  while (!check(await b!.touch("acme", id)) && Date.now() < deadline) await pause(10);
  return Date.now() - since;
}

it("a session read on a replica is served from memory for a second, and its TTL still slides", async () => {
  const session = await a!.create(init);
  await warm(b!, session.id);
  await fresh(session.id);
  const key = keys.session("acme", session.id);
  // Another writer changes the record behind the replicas' backs (no broadcast): memory wins
  // for up to a second, then the store is read again.
  await stores[0]!.set(key, JSON.stringify({ v: "2025-06-18", c: 0, t: 1 }), { keepTtl: true });
  assert.equal((await b!.touch("acme", session.id))?.protocolVersion, "2025-11-25");
  await pause(1100);
  assert.equal((await b!.touch("acme", session.id))?.protocolVersion, "2025-06-18");
  assert.ok((await stores[0]!.ttl(key)) > 3590, "the read slid the TTL");
});

it("a session deleted on one replica is gone from the other's memory at once", async () => {
  const session = await a!.create(init);
  await warm(b!, session.id);
  const since = await fresh(session.id);
  assert.ok(await a!.delete("acme", session.id));
  // The broadcast's way through Redis (slow on a busy machine): waited for, but memory alone
  // would keep the session until a second after `since`.
  const ms = await touchUntil(session.id, (s) => s === undefined, since);
  assert.ok(ms < 1000, `still served ${ms} ms after the read: dropped by age, not by the broadcast`);
});

it("a log level set on one replica is what the other reads next", async () => {
  const session = await a!.create(init);
  await warm(b!, session.id);
  const since = await fresh(session.id);
  assert.equal((await b!.touch("acme", session.id))?.logLevel, undefined);
  assert.ok(await a!.update({ ...session, logLevel: "error" } satisfies Session));
  const ms = await touchUntil(session.id, (s) => s?.logLevel === "error", since);
  assert.ok(ms < 1000, `the old level served ${ms} ms after the read: dropped by age, not by the broadcast`);
});

it("a session that expired is not served from memory (a short TTL shortens the trust)", async () => {
  const short = new SessionStore(stores[0]!, keys, 1);
  try {
    const session = await short.create(init);
    await warm(short, session.id);
    await pause(1100); // idle for 1.1 s: expired in the store; memory trusts a read for 250 ms
    assert.equal(await short.touch("acme", session.id), undefined);
  } finally {
    await short.close();
  }
});

it("the cache is bounded, and forgets what it was told to", () => {
  const cache = new SessionCache(3600, 3);
  const s = (id: string) => ({ id }) as Session;
  for (const id of ["1", "2", "3", "4"]) cache.set(id, s(id), 0);
  assert.equal(cache.size, 3);
  assert.equal(cache.get("1", 0), undefined, "the oldest made room");
  assert.equal(cache.get("4", 999)?.id, "4");
  assert.equal(cache.get("4", 1000), undefined, "a read is trusted for less than a second");
  cache.drop("3");
  assert.equal(cache.get("3", 0), undefined);
  cache.clear();
  assert.equal(cache.size, 0);
});
