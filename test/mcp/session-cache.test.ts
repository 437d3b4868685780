// A replica remembers the sessions it read for a second (src/mcp/session-cache.ts), so a burst of
// requests costs one GETEX a second; an update or deletion on any replica reaches every replica's
// memory at once (docs/storage.md "Channels"). Two SessionStores on two Redis connections stand
// for two replicas.
import assert from "node:assert/strict";
import { after, it } from "node:test";
import { SessionCache } from "../../src/mcp/session-cache.js";
import { SessionStore, type Session } from "../../src/mcp/sessions.js";
import { createKeys } from "../../src/store/keys.js";
import { RedisStore } from "../../src/store/redis-store.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";

const { url } = await getTestRedis();
const keys = createKeys(uniquePrefix());
const stores = [new RedisStore(url), new RedisStore(url)];
const [a, b] = stores.map((store) => new SessionStore(store, keys, 3600));
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

it("a session read on a replica is served from memory for a second, and its TTL still slides", async () => {
  const session = await a!.create(init);
  await warm(b!, session.id);
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
  assert.ok(await b!.touch("acme", session.id));
  assert.ok(await a!.delete("acme", session.id));
  await pause(50); // the broadcast's way through Redis; memory alone would keep it for 1 s
  assert.equal(await b!.touch("acme", session.id), undefined);
});

it("a log level set on one replica is what the other reads next", async () => {
  const session = await a!.create(init);
  await warm(b!, session.id);
  assert.equal((await b!.touch("acme", session.id))?.logLevel, undefined);
  assert.ok(await a!.update({ ...session, logLevel: "error" } satisfies Session));
  await pause(50);
  assert.equal((await b!.touch("acme", session.id))?.logLevel, "error");
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
