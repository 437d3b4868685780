// The Store contract (src/store/store.ts), run against MemoryStore (frozen, injected clock) and
// RedisStore, on a real redis-server (test/support/redis.ts) and on a real three-node Redis Cluster
// (test/support/redis-cluster.ts). All must behave the same.

import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { Redis } from "ioredis";
import { createStore } from "../../src/store/create-store.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { RedisStore } from "../../src/store/redis-store.js";
import type { CommandObserver, Store } from "../../src/store/store.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";
import { getTestRedisCluster } from "../support/redis-cluster.js";

interface Backend {
  readonly name: string;
  open(onError?: (err: unknown) => void, onCommand?: CommandObserver): Promise<Store>;
  /** Lets `ms` pass for the store: moves the fake clock, or really waits. */
  elapse(ms: number): Promise<void>;
}

/** A loopback port that was free a moment ago, so nothing answers there. */
function closedPort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    }),
  );
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let fakeNow = Date.now();
const memory: Backend = {
  name: "MemoryStore",
  open: async (onError, onCommand) =>
    new MemoryStore({ now: () => fakeNow, ...(onError && { onError }), ...(onCommand && { onCommand }) }),
  elapse: async (ms) => void (fakeNow += ms),
};
const redis: Backend = {
  name: "RedisStore",
  open: async (onError, onCommand) =>
    new RedisStore((await getTestRedis()).url, {
      ...(onError && { onError }),
      ...(onCommand && { onCommand }),
    }),
  elapse: sleep,
};
const cluster: Backend = {
  name: "RedisStore on a Redis Cluster",
  open: async (onError, onCommand) => {
    const store = new RedisStore((await getTestRedisCluster()).url, {
      cluster: true,
      ...(onError && { onError }),
      ...(onCommand && { onCommand }),
    });
    await store.ready(5000);
    return store;
  },
  elapse: sleep,
};

async function until(what: string, condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function inbox() {
  const messages: string[] = [];
  return { messages, listener: (message: string) => void messages.push(message) };
}

const idParts = (id: string) => id.split("-").map(Number) as [number, number];
const idLess = (a: string, b: string) => {
  const [am, as] = idParts(a);
  const [bm, bs] = idParts(b);
  return am < bm || (am === bm && as < bs);
};

for (const backend of [memory, redis, cluster]) {
  describe(`Store contract: ${backend.name}`, () => {
    let store: Store;
    let p: string;
    const errors: unknown[] = [];
    before(async () => void (store = await backend.open((err) => errors.push(err))));
    after(() => store.close());
    beforeEach(() => void (p = uniquePrefix()));

    it("gets and sets strings; a plain set clears the TTL", async () => {
      assert.equal(store.kind, backend === memory ? "memory" : "redis");
      assert.equal(await store.get(`${p}:k`), null);
      assert.equal(await store.set(`${p}:k`, "v1", { ttlSeconds: 100 }), true);
      assert.equal(await store.get(`${p}:k`), "v1");
      assert.ok((await store.ttl(`${p}:k`)) >= 99);
      assert.equal(await store.set(`${p}:k`, "v2"), true);
      assert.equal(await store.get(`${p}:k`), "v2");
      assert.equal(await store.ttl(`${p}:k`), -1);
    });

    it("onlyIfPresent writes only an existing key, keeping its TTL with keepTtl", async () => {
      assert.equal(await store.set(`${p}:xx`, "first", { onlyIfPresent: true }), false);
      assert.equal(await store.get(`${p}:xx`), null);
      await store.set(`${p}:xx`, "first", { ttlSeconds: 100 });
      assert.equal(await store.set(`${p}:xx`, "second", { onlyIfPresent: true, keepTtl: true }), true);
      assert.equal(await store.get(`${p}:xx`), "second");
      assert.ok((await store.ttl(`${p}:xx`)) > 90);
    });

    it("onlyIfAbsent writes only a missing key", async () => {
      assert.equal(await store.set(`${p}:k`, "first", { onlyIfAbsent: true }), true);
      assert.equal(await store.set(`${p}:k`, "second", { onlyIfAbsent: true }), false);
      assert.equal(await store.get(`${p}:k`), "first");
    });

    it("keepTtl keeps the current TTL, ttlSeconds wins over it", async () => {
      await store.set(`${p}:k`, "a", { ttlSeconds: 100 });
      await store.set(`${p}:k`, "b", { keepTtl: true });
      assert.equal(await store.get(`${p}:k`), "b");
      assert.ok((await store.ttl(`${p}:k`)) >= 99);
      await store.set(`${p}:k`, "c", { keepTtl: true, ttlSeconds: 500 });
      assert.ok((await store.ttl(`${p}:k`)) >= 499);
      await store.set(`${p}:new`, "x", { keepTtl: true });
      assert.equal(await store.ttl(`${p}:new`), -1);
    });

    it("rejects TTLs that are not positive integers", async () => {
      await assert.rejects(store.set(`${p}:k`, "v", { ttlSeconds: 0 }), RangeError);
      await assert.rejects(store.getAndTouch(`${p}:k`, 1.5), RangeError);
      await assert.rejects(store.hashSet(`${p}:h`, "f", "v", -1), RangeError);
      assert.equal(await store.ttl(`${p}:h`), -2);
    });

    it("keys of every type expire after their TTL", async () => {
      await store.set(`${p}:s`, "v", { ttlSeconds: 1 });
      await store.hashSet(`${p}:h`, "f", "v", 1);
      await store.setAdd(`${p}:set`, "m", 1);
      await store.incr(`${p}:n`, 1, 1);
      await store.streamAppend(`${p}:x`, "d", { maxLen: 10, ttlSeconds: 1 });
      await backend.elapse(1100);
      assert.equal(await store.get(`${p}:s`), null);
      assert.equal(await store.hashGet(`${p}:h`, "f"), null);
      assert.deepEqual(await store.setMembers(`${p}:set`), []);
      assert.equal(await store.get(`${p}:n`), null);
      assert.deepEqual(await store.streamReadAfter(`${p}:x`, "0-0", 10), []);
      for (const k of ["s", "h", "set", "n", "x"]) assert.equal(await store.ttl(`${p}:${k}`), -2);
    });

    it("getAndTouch reads and slides the TTL", async () => {
      assert.equal(await store.getAndTouch(`${p}:missing`, 10), null);
      assert.equal(await store.ttl(`${p}:missing`), -2);
      await store.set(`${p}:k`, "v", { ttlSeconds: 1 });
      assert.equal(await store.getAndTouch(`${p}:k`, 2), "v");
      assert.equal(await store.ttl(`${p}:k`), 2);
      await backend.elapse(1100); // past the original 1 s TTL
      assert.equal(await store.get(`${p}:k`), "v");
      assert.equal(await store.ttl(`${p}:k`), 1);
    });

    it("del returns how many keys existed", async () => {
      await store.set(`${p}:a`, "1");
      await store.hashSet(`${p}:b`, "f", "1");
      assert.equal(await store.del(`${p}:a`, `${p}:b`, `${p}:c`), 2);
      assert.equal(await store.del(`${p}:a`), 0);
      assert.equal(await store.del(), 0);
      assert.equal(await store.get(`${p}:a`), null);
    });

    it("expire and ttl follow Redis (-1 no TTL, -2 missing, <= 0 deletes)", async () => {
      assert.equal(await store.ttl(`${p}:k`), -2);
      assert.equal(await store.expire(`${p}:k`, 10), false);
      await store.set(`${p}:k`, "v");
      assert.equal(await store.ttl(`${p}:k`), -1);
      assert.equal(await store.expire(`${p}:k`, 10), true);
      assert.equal(await store.ttl(`${p}:k`), 10);
      await store.setAdd(`${p}:set`, "m");
      assert.equal(await store.expire(`${p}:set`, 20), true);
      assert.equal(await store.ttl(`${p}:set`), 20);
      assert.equal(await store.expire(`${p}:k`, 0), true);
      assert.equal(await store.ttl(`${p}:k`), -2);
    });

    it("incr counts atomically; a TTL is set only on a new key", async () => {
      assert.equal(await store.incr(`${p}:n`), 1);
      assert.equal(await store.incr(`${p}:n`, 5), 6);
      assert.equal(await store.incr(`${p}:n`, -10), -4);
      assert.equal(await store.incr(`${p}:n`, 1, 100), -3);
      assert.equal(await store.ttl(`${p}:n`), -1); // existed, so no TTL added
      assert.equal(await store.incr(`${p}:w`, 2, 100), 2);
      await store.incr(`${p}:w`, 1, 5);
      assert.ok((await store.ttl(`${p}:w`)) >= 99); // not reset by later calls
      const totals = await Promise.all(Array.from({ length: 50 }, () => store.incr(`${p}:c`, 1, 100)));
      assert.deepEqual(
        [...totals].sort((a, b) => a - b),
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      await store.set(`${p}:text`, "abc");
      await assert.rejects(store.incr(`${p}:text`), /not an integer/);
    });

    it("hashes: set, get, get all, delete; the last field's removal deletes the key", async () => {
      assert.equal(await store.hashGet(`${p}:h`, "f"), null);
      assert.deepEqual(await store.hashGetAll(`${p}:h`), {});
      await store.hashSet(`${p}:h`, "a", "1");
      await store.hashSet(`${p}:h`, "b", "2", 100);
      await store.hashSet(`${p}:h`, "a", "3");
      assert.equal(await store.hashGet(`${p}:h`, "a"), "3");
      assert.deepEqual(await store.hashGetAll(`${p}:h`), { a: "3", b: "2" });
      assert.ok((await store.ttl(`${p}:h`)) >= 99);
      await store.hashSet(`${p}:h`, "c", "4", 200); // a TTL on write is (re)set every time
      assert.ok((await store.ttl(`${p}:h`)) >= 199);
      for (const f of ["a", "b", "c", "missing"]) await store.hashDel(`${p}:h`, f);
      assert.equal(await store.ttl(`${p}:h`), -2);
    });

    it("sets: add, members, remove; the last member's removal deletes the key", async () => {
      assert.deepEqual(await store.setMembers(`${p}:s`), []);
      await store.setAdd(`${p}:s`, "b");
      await store.setAdd(`${p}:s`, "a", 100);
      await store.setAdd(`${p}:s`, "b");
      assert.deepEqual((await store.setMembers(`${p}:s`)).sort(), ["a", "b"]);
      assert.ok((await store.ttl(`${p}:s`)) >= 99);
      await store.setRemove(`${p}:s`, "a");
      assert.deepEqual(await store.setMembers(`${p}:s`), ["b"]);
      await store.setRemove(`${p}:s`, "b");
      assert.equal(await store.ttl(`${p}:s`), -2);
    });

    it("rejects operations on a key of another type (WRONGTYPE)", async () => {
      await store.set(`${p}:str`, "v");
      await store.hashSet(`${p}:h`, "f", "v");
      await assert.rejects(store.hashGet(`${p}:str`, "f"), /WRONGTYPE/);
      await assert.rejects(store.setAdd(`${p}:str`, "m"), /WRONGTYPE/);
      await assert.rejects(store.get(`${p}:h`), /WRONGTYPE/);
      await assert.rejects(store.streamAppend(`${p}:h`, "d", { maxLen: 5, ttlSeconds: 5 }), /WRONGTYPE/);
      assert.deepEqual(await store.hashGetAll(`${p}:h`), { f: "v" }); // the failed commands wrote nothing
    });

    it("streams: increasing ids, exclusive reads after an id, TTL on every append", async () => {
      const key = `${p}:x`;
      const ids: string[] = [];
      for (let i = 0; i < 20; i++)
        ids.push(await store.streamAppend(key, `d${i}`, { maxLen: 100, ttlSeconds: 50 }));
      for (const id of ids) assert.match(id, /^\d+-\d+$/);
      for (let i = 1; i < ids.length; i++)
        assert.ok(idLess(ids[i - 1]!, ids[i]!), `${ids[i - 1]} < ${ids[i]}`);
      const all = await store.streamReadAfter(key, "0-0", 100);
      assert.deepEqual(
        all,
        ids.map((id, i) => ({ id, data: `d${i}` })),
      );
      assert.deepEqual(await store.streamReadAfter(key, ids[4]!, 3), all.slice(5, 8));
      assert.deepEqual(await store.streamReadAfter(key, ids[19]!, 10), []);
      assert.deepEqual(await store.streamReadAfter(`${p}:none`, "0-0", 10), []);
      assert.equal(await store.ttl(key), 50);
      await store.streamAppend(key, "more", { maxLen: 100, ttlSeconds: 80 });
      assert.equal(await store.ttl(key), 80);
    });

    it("streams read newest first before an id; a stream without ttlSeconds is durable", async () => {
      const key = `${p}:audit`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await store.streamAppend(key, `d${i}`, { maxLen: 100 }));
      assert.equal(await store.ttl(key), -1);
      const newest = await store.streamReadBefore(key, undefined, 2);
      assert.deepEqual(newest, [
        { id: ids[4], data: "d4" },
        { id: ids[3], data: "d3" },
      ]);
      const rest = await store.streamReadBefore(key, ids[3], 10);
      assert.deepEqual(
        rest.map((e) => e.data),
        ["d2", "d1", "d0"],
      );
      assert.deepEqual(await store.streamReadBefore(`${p}:none`, undefined, 10), []);
    });

    it("sorted sets: members up to a score, lowest first, limited; moved by a new score", async () => {
      const key = `${p}:z`;
      await store.sortedAdd(key, "c", 30);
      await store.sortedAdd(key, "a", 10);
      await store.sortedAdd(key, "b", 20);
      assert.deepEqual(await store.sortedUpTo(key, 25, 10), ["a", "b"]);
      assert.deepEqual(await store.sortedUpTo(key, Infinity, 2), ["a", "b"]);
      await store.sortedAdd(key, "a", 40);
      assert.deepEqual(await store.sortedUpTo(key, Infinity, Infinity), ["b", "c", "a"]);
      await store.sortedRemove(key, "b");
      assert.deepEqual(await store.sortedUpTo(key, 35, 10), ["c"]);
      await store.sortedRemove(key, "c");
      await store.sortedRemove(key, "a");
      assert.equal(await store.ttl(key), -2, "an empty sorted set vanishes");
      assert.deepEqual(await store.sortedUpTo(`${p}:none`, Infinity, 5), []);
    });

    it("sortedCount counts a sorted set's members; 0 when it does not exist", async () => {
      const key = `${p}:zc`;
      assert.equal(await store.sortedCount(key), 0);
      await store.sortedAdd(key, "a", 1);
      await store.sortedAdd(key, "b", 2);
      await store.sortedAdd(key, "a", 3);
      assert.equal(await store.sortedCount(key), 2);
      await store.sortedRemove(key, "a");
      assert.equal(await store.sortedCount(key), 1);
      await store.set(`${p}:s`, "v");
      await assert.rejects(store.sortedCount(`${p}:s`), /WRONGTYPE/);
    });

    it("onCommand sees each command's duration and outcome", async () => {
      const seen: Array<[number, boolean]> = [];
      const observed = await backend.open(undefined, (seconds, ok) => void seen.push([seconds, ok]));
      try {
        await observed.set(`${p}:k`, "v");
        await observed.hashSet(`${p}:h`, "f", "v", 60); // a MULTI: one round trip
        await assert.rejects(observed.hashGet(`${p}:k`, "f"), /WRONGTYPE/);
        assert.deepEqual(
          seen.map(([, ok]) => ok),
          [true, true, false],
        );
        assert.ok(seen.every(([seconds]) => seconds >= 0 && seconds < 5));
      } finally {
        await observed.close();
      }
    });

    it("compareAndSet writes or deletes only over the expected value", async () => {
      const key = `${p}:cas`;
      assert.equal(await store.compareAndSet(key, "x", "y"), false);
      assert.equal(await store.compareAndSet(key, null, "v1"), true);
      assert.equal(await store.compareAndSet(key, null, "v2"), false);
      assert.equal(await store.compareAndSet(key, "v0", "v2"), false);
      assert.equal(await store.get(key), "v1");
      assert.equal(await store.compareAndSet(key, "v1", "v2"), true);
      assert.equal(await store.get(key), "v2");
      assert.equal(await store.compareAndSet(key, "v2", null), true);
      assert.equal(await store.get(key), null);
      await store.hashSet(`${p}:h`, "f", "v");
      await assert.rejects(store.compareAndSet(`${p}:h`, null, "v"), /WRONGTYPE/);
    });

    it("streams stay bounded near maxLen and keep the newest entries", async () => {
      const key = `${p}:x`;
      let first = "";
      for (let i = 0; i < 1000; i++) {
        const id = await store.streamAppend(key, String(i), { maxLen: 10, ttlSeconds: 60 });
        first ||= id;
      }
      const kept = await store.streamReadAfter(key, "0-0", 10_000);
      // Redis trims whole radix-tree nodes (MAXLEN ~), so "about 10" means 10 up to 10 + 100.
      assert.ok(kept.length >= 10 && kept.length <= 110, `kept ${kept.length}`);
      assert.equal(kept.at(-1)?.data, "999");
      assert.deepEqual(
        kept.map((e) => Number(e.data)),
        Array.from({ length: kept.length }, (_, i) => 1000 - kept.length + i),
      );
      assert.notEqual(kept[0]?.id, first);
    });

    it("pub/sub delivers in publish order, to every subscriber, only on its channel", async () => {
      const a = inbox();
      const b = inbox();
      const other = inbox();
      const unsubs = [
        await store.subscribe(`${p}:ch`, a.listener),
        await store.subscribe(`${p}:ch`, b.listener),
        await store.subscribe(`${p}:other`, other.listener),
      ];
      const sent = Array.from({ length: 100 }, (_, i) => `m${i}`);
      await Promise.all(sent.map((m) => store.publish(`${p}:ch`, m)));
      await until("100 messages on both", () => a.messages.length === 100 && b.messages.length === 100);
      assert.deepEqual(a.messages, sent);
      assert.deepEqual(b.messages, sent);
      assert.deepEqual(other.messages, []);
      for (const unsubscribe of unsubs) await unsubscribe();
    });

    it("unsubscribe stops delivery; resubscribing after the last one left works", async () => {
      const gone = inbox();
      const stays = inbox();
      const unsubscribeGone = await store.subscribe(`${p}:ch`, gone.listener);
      const unsubscribeStays = await store.subscribe(`${p}:ch`, stays.listener);
      await store.publish(`${p}:ch`, "one");
      await until("first message", () => gone.messages.length === 1 && stays.messages.length === 1);
      // Published before the unsubscribe, but not yet delivered: must not arrive after it.
      const publishing = store.publish(`${p}:ch`, "two");
      await unsubscribeGone();
      await unsubscribeGone(); // idempotent
      await publishing;
      await until("second message", () => stays.messages.length === 2);
      assert.deepEqual(gone.messages, ["one"]);
      await unsubscribeStays();
      const again = inbox();
      const unsubscribeAgain = await store.subscribe(`${p}:ch`, again.listener);
      await store.publish(`${p}:ch`, "three");
      await until("message after resubscribe", () => again.messages.length === 1);
      assert.deepEqual(stays.messages, ["one", "two"]);
      await unsubscribeAgain();
    });

    it("a throwing listener goes to onError and does not stop the others", async () => {
      const ok = inbox();
      const boom = new Error("listener failed");
      const unsubs = [
        await store.subscribe(`${p}:ch`, () => {
          throw boom;
        }),
        await store.subscribe(`${p}:ch`, ok.listener),
      ];
      await store.publish(`${p}:ch`, "m");
      await until("delivery", () => ok.messages.length === 1);
      assert.ok(errors.includes(boom));
      for (const unsubscribe of unsubs) await unsubscribe();
    });

    it("ping answers", async () => {
      await store.ping();
    });
  });
}

const shared = [
  { name: "RedisStore", cluster: false, open: getTestRedis },
  { name: "RedisStore on a Redis Cluster", cluster: true, open: getTestRedisCluster },
];
for (const target of shared) {
  describe(`${target.name} across replicas`, () => {
    let a: Store;
    let b: Store;
    /** A plain connection to each node: a cluster node counts only its own subscribers. */
    let nodes: Redis[];
    before(async () => {
      const { url } = await target.open();
      const opts = { redisUrl: url, redisCluster: target.cluster };
      [a, b] = await Promise.all([createStore(opts), createStore(opts)]);
      nodes = url.split(",").map((node) => new Redis(node));
    });
    after(() => Promise.all([a.close(), b.close(), ...nodes.map((node) => node.quit())]));

    it("a value written through one instance is read through another", async () => {
      const p = uniquePrefix();
      await a.set(`${p}:k`, "shared", { ttlSeconds: 60 });
      assert.equal(await b.get(`${p}:k`), "shared");
      assert.equal(await b.getAndTouch(`${p}:k`, 90), "shared");
      assert.equal(await a.ttl(`${p}:k`), 90);
    });

    it("a message published on one instance reaches subscribers on the other", async () => {
      const p = uniquePrefix();
      const got = inbox();
      const unsubscribe = await b.subscribe(`${p}:ch`, got.listener);
      await a.publish(`${p}:ch`, "hello");
      await until("cross-replica message", () => got.messages.length === 1);
      assert.deepEqual(got.messages, ["hello"]);
      await unsubscribe();
    });

    it("messages published one after another on one instance arrive in that order on the other", async () => {
      // In a cluster, messages sent through different nodes can overtake each other.
      const channels = [`${uniquePrefix()}:ch`, `portico:{t:${uniquePrefix()}}:s:x:bus`];
      const sent = Array.from({ length: 1000 }, (_, i) => `m${i}`);
      for (const channel of channels) {
        const got = inbox();
        const unsubscribe = await b.subscribe(channel, got.listener);
        for (const [i, message] of sent.entries()) {
          // Some awaited, some not, some batches cut short: as requests publish.
          const publishing = a.publish(channel, message);
          if (i % 3 === 0) await publishing;
          if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        await until("every message", () => got.messages.length === sent.length);
        assert.deepEqual(got.messages, sent);
        await unsubscribe();
      }
    });

    it("holds one Redis subscription per channel, dropped with the last listener", async () => {
      const p = uniquePrefix();
      const numsub = async () => {
        const counts = await Promise.all(nodes.map((node) => node.pubsub("NUMSUB", `${p}:ch`)));
        return counts.reduce((sum, reply) => sum + (reply as [string, number])[1], 0);
      };
      const first = await a.subscribe(`${p}:ch`, () => {});
      const second = await a.subscribe(`${p}:ch`, () => {});
      assert.equal(await numsub(), 1);
      await first();
      assert.equal(await numsub(), 1);
      await second();
      assert.equal(await numsub(), 0);
    });
  });
}

describe("createStore", () => {
  it("builds the embedded store without a Redis URL", async () => {
    const store = await createStore({});
    assert.equal(store.kind, "memory");
    await store.close();
  });

  it("fails with a coded error naming the URL (password hidden) when Redis is unreachable", async () => {
    const port = await closedPort();
    await assert.rejects(
      createStore({ redisUrl: `redis://:s3cret@127.0.0.1:${port}`, connectTimeoutMs: 300 }),
      (err) => {
        assert.equal((err as { code?: string }).code, "PORTICO_ERR_STORE_UNAVAILABLE");
        assert.match(
          (err as Error).message,
          new RegExp(`^Cannot connect to Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}`),
        );
        assert.doesNotMatch((err as Error).message, /s3cret/);
        return true;
      },
    );
  });
});
