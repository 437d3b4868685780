// Replica liveness (src/store/replicas.ts, docs/architecture.md §4): a heartbeat key per replica
// with a short TTL, refreshed on an interval; any replica asks whether another is alive, and
// watches one until it is gone. The store's clock is injected: a heartbeat expires without waiting.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { HEARTBEAT_TTL_SECONDS, Replicas } from "../../src/store/replicas.js";

let now = 1_800_000_000_000;
const store = new MemoryStore({ now: () => now });
const keys = createKeys("t");
const started: Replicas[] = [];

/** A replica whose own timers never fire during a test: the clock only moves when told. */
async function replica(watchMs = 20): Promise<Replicas> {
  const r = new Replicas(store, keys, { beatMs: 3_600_000, watchMs });
  await r.start();
  started.push(r);
  return r;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((r) => r.stop()));
});

const until = async (check: () => boolean, ms = 2000) => {
  for (const end = Date.now() + ms; Date.now() < end && !check();)
    await new Promise((r) => setTimeout(r, 10));
  return check();
};

describe("replica heartbeats", () => {
  it("one key per replica with a short TTL: alive while it lives, dead once it expires", async () => {
    const a = await replica();
    const b = await replica();
    assert.notEqual(a.id, b.id);
    assert.equal(await store.get(keys.replica(a.id)), "1");
    assert.equal(await store.ttl(keys.replica(a.id)), HEARTBEAT_TTL_SECONDS);
    assert.equal(await b.isAlive(a.id), true);
    assert.equal(await a.isAlive(a.id), true, "a replica is alive to itself");
    now += HEARTBEAT_TTL_SECONDS * 1000 + 1; // a's refreshes stopped: killed
    assert.equal(await b.isAlive(a.id), false);
    assert.equal(await b.isAlive("never-was"), false);
    // Cut from the store for a whole TTL, then back: alive again, never taken for dead for good.
    await store.set(keys.replica(a.id), "1", { ttlSeconds: HEARTBEAT_TTL_SECONDS });
    assert.equal(await b.isAlive(a.id), true);
  });

  it("tells each death to the onGone listeners once, however often it is asked", async () => {
    const a = await replica();
    const b = await replica();
    const heard: string[] = [];
    b.onGone((id) => heard.push(id));
    await a.stop();
    assert.equal(await b.isAlive(a.id), false);
    assert.equal(await b.isAlive(a.id), false);
    assert.deepEqual(heard, [a.id]);
  });

  it("a watch calls back once the watched replica is gone, and every onGone listener hears it", async () => {
    const a = await replica();
    const b = await replica();
    const gone: string[] = [];
    const heard: string[] = [];
    b.onGone((id) => heard.push(id));
    b.watch(a.id, () => gone.push("first"));
    b.watch(a.id, () => gone.push("second"));
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(gone, [], "not while it lives");
    await a.stop(); // a graceful stop removes the heartbeat at once
    assert.ok(await until(() => gone.length === 2));
    assert.deepEqual(heard, [a.id]);
    // Watching a replica already known dead calls back at once.
    let late = false;
    b.watch(a.id, () => (late = true));
    assert.ok(await until(() => late));
  });

  it("a stopped watch is not called, and a store that cannot answer proves nothing", async () => {
    const a = await replica();
    const b = await replica();
    let called = false;
    const stop = b.watch(a.id, () => (called = true));
    stop();
    await a.stop();
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(called, false);
    const c = await replica();
    const failing = new Replicas(
      { ...store, get: () => Promise.reject(new Error("down")) } as unknown as MemoryStore,
      keys,
      { watchMs: 10 },
    );
    let wrong = false;
    const unwatch = failing.watch(c.id, () => (wrong = true));
    await new Promise((r) => setTimeout(r, 60));
    unwatch();
    assert.equal(wrong, false);
  });
});
