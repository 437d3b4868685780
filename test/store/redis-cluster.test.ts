// RedisStore on a Redis Cluster when nodes go away (the contract itself runs in
// store-contract.test.ts): a misconfiguration or a cluster that never answers fails the boot with a
// message naming it, the subscriber moves to another node and owners re-read what they follow, and
// commands fail fast with the 503 error while the whole cluster is down and work again once back.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { createStore } from "../../src/store/create-store.js";
import { RedisStore } from "../../src/store/redis-store.js";
import { freePort, getTestRedis, uniquePrefix } from "../support/redis.js";
import { startRedisCluster, type TestCluster } from "../support/redis-cluster.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Which of these nodes has a subscriber to `channel` (PUBSUB NUMSUB counts a node's own). */
async function subscriberNode(ports: readonly number[], channel: string): Promise<number | undefined> {
  for (const port of ports) {
    const node = new Redis({ port, lazyConnect: true, retryStrategy: () => null });
    try {
      const [, count] = (await node.pubsub("NUMSUB", channel)) as [string, number];
      if (count > 0) return port;
    } finally {
      node.disconnect();
    }
  }
  return undefined;
}

// Bounded: a node that never comes back must fail this file, not hold the whole run (seen once).
describe("RedisStore on a Redis Cluster whose nodes fail", { timeout: 120_000 }, () => {
  let cluster: TestCluster;
  let store: RedisStore;
  let publisher: RedisStore;
  const errors: unknown[] = [];
  before(async () => {
    // Without full coverage the other nodes serve on while one is down, as with a replica taking over.
    cluster = await startRedisCluster({ requireFullCoverage: false });
    store = new RedisStore(cluster.url, { cluster: true, onError: (err) => errors.push(err) });
    publisher = new RedisStore(cluster.url, { cluster: true, onError: () => {} });
    await Promise.all([store.ready(5000), publisher.ready(5000)]);
  });
  after(async () => {
    await Promise.all([store.close(), publisher.close()]);
    await cluster.stop();
  });

  it("createStore refuses one node of a cluster without cluster mode, and a single server with it", async () => {
    const node = cluster.url.split(",")[0]!;
    await assert.rejects(createStore({ redisUrl: node, connectTimeoutMs: 2000 }), {
      code: "PORTICO_ERR_CONFIG_INVALID",
      message: `Redis at ${node} is a node of a Redis Cluster: set PORTICO_REDIS_CLUSTER=true`,
    });
    const { url } = await getTestRedis();
    await assert.rejects(createStore({ redisUrl: url, redisCluster: true, connectTimeoutMs: 1000 }), {
      code: "PORTICO_ERR_STORE_UNAVAILABLE",
      message: new RegExp(
        `^Cannot connect to the Redis Cluster at ${url} within 1 s: .*cluster support disabled \\(not a cluster: unset PORTICO_REDIS_CLUSTER\\)$`,
      ),
    });
  });

  it("createStore names the seeds (passwords hidden) when none answers", async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const url = `redis://:s3cret@127.0.0.1:${p1},redis://:s3cret@127.0.0.1:${p2}`;
    await assert.rejects(createStore({ redisUrl: url, redisCluster: true, connectTimeoutMs: 300 }), (err) => {
      assert.equal((err as { code?: string }).code, "PORTICO_ERR_STORE_UNAVAILABLE");
      const seeds = `redis://:\\*\\*\\*@127\\.0\\.0\\.1:${p1},redis://:\\*\\*\\*@127\\.0\\.0\\.1:${p2}`;
      assert.match(
        (err as Error).message,
        new RegExp(`^Cannot connect to the Redis Cluster at ${seeds} within 0.3 s: `),
      );
      assert.doesNotMatch((err as Error).message, /s3cret/);
      return true;
    });
  });

  it("moves the subscriber to another node when its node goes away, and resyncs the owners", async () => {
    const p = uniquePrefix();
    // Channels spread over the slots, so some are served by the nodes that stay.
    const channels = Array.from({ length: 12 }, (_, i) => `${p}:{c${i}}:bus`);
    const got = new Map<string, string[]>(channels.map((c) => [c, []]));
    let resyncs = 0;
    for (const channel of channels)
      await store.subscribe(
        channel,
        (m) => got.get(channel)!.push(m),
        () => resyncs++,
      );
    const lost = await subscriberNode(cluster.ports, channels[0]!);
    assert.ok(lost !== undefined, "one node carries the subscriptions");

    await cluster.stopNode(lost);
    await eventually("the owners told to resync", () => resyncs === channels.length);
    const moved = await subscriberNode(
      cluster.ports.filter((port) => port !== lost),
      channels[0]!,
    );
    assert.ok(moved !== undefined && moved !== lost, `subscriber on ${moved}, was on ${lost}`);
    // Channels whose slot the stopped node served cannot be published on until it is back.
    const sent = await Promise.allSettled(channels.map((c) => publisher.publish(c, "after")));
    const delivered = channels.filter((_, i) => sent[i]!.status === "fulfilled");
    assert.ok(delivered.length > 0 && delivered.length < channels.length, `${delivered.length} published`);
    await eventually("delivery through the new node", () =>
      delivered.every((c) => got.get(c)!.join() === "after"),
    );

    await cluster.startNode(lost);
    await cluster.waitUntilOk();
    await eventually("publishing on every channel again", async () => {
      const again = await Promise.allSettled(channels.map((c) => publisher.publish(c, "back")));
      return again.every((r) => r.status === "fulfilled");
    });
    await eventually("every channel delivers", () => channels.every((c) => got.get(c)!.includes("back")));
  });

  it("fails commands fast with the 503 error while the cluster is down, and serves once it is back", async () => {
    const p = uniquePrefix();
    let resynced = 0;
    await store.subscribe(
      `${p}:bus`,
      () => {},
      () => resynced++,
    );
    await store.set(`${p}:k`, "v");
    await Promise.all(cluster.ports.map((port) => cluster.stopNode(port)));

    for (const command of [
      () => store.get(`${p}:k`),
      () => store.publish(`${p}:bus`, "m"),
      () => store.ping(),
    ]) {
      const started = Date.now();
      await assert.rejects(command(), (err: { code?: string; message: string }) => {
        assert.equal(err.code, "PORTICO_ERR_STORE_UNAVAILABLE");
        assert.match(err.message, /session store cannot be reached/);
        return true;
      });
      assert.ok(Date.now() - started < 3000, `failed fast (${Date.now() - started} ms)`);
    }

    for (const port of cluster.ports) await cluster.startNode(port);
    await cluster.waitUntilOk();
    await eventually("commands work again", () =>
      store.set(`${p}:k`, "again").then(
        () => true,
        () => false,
      ),
    );
    assert.equal(await store.get(`${p}:k`), "again");
    await eventually("the subscription resynced", () => resynced > 0);
    assert.ok(errors.length > 0, "connection errors went to onError");
  });
});
