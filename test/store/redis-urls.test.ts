// PORTICO_REDIS_URL, PORTICO_REDIS_CLUSTER and PORTICO_REDIS_SENTINELS: one server, a cluster's seed
// nodes whose scheme and credentials apply to every node, or sentinels naming a master; a value
// that cannot work fails the boot saying how to fix it.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../src/config/env.js";
import { createStore } from "../../src/store/create-store.js";
import { clusterEndpoint, redactRedisUrl, sentinelEndpoint } from "../../src/store/redis-urls.js";
import { freePort } from "../support/redis.js";

const fails = (env: Record<string, string>, message: string | RegExp) =>
  assert.throws(
    () => loadConfig(env),
    (err: unknown) =>
      err instanceof ConfigError &&
      (typeof message === "string" ? err.message === message : message.test(err.message)),
  );

describe("PORTICO_REDIS_CLUSTER", () => {
  it("is off unless set; a cluster takes one seed URL or several", () => {
    assert.equal(loadConfig({}).redisCluster, false);
    assert.equal(loadConfig({ PORTICO_REDIS_URL: "redis://r:6379" }).redisCluster, false);
    const cluster = loadConfig({
      PORTICO_REDIS_URL: "rediss://u:p@r-0:6379, rediss://u:p@r-1:6379",
      PORTICO_REDIS_CLUSTER: "true",
    });
    assert.equal(cluster.redisCluster, true);
    assert.equal(cluster.redisUrl, "rediss://u:p@r-0:6379, rediss://u:p@r-1:6379");
    assert.equal(
      loadConfig({ PORTICO_REDIS_URL: "redis://r:6379", PORTICO_REDIS_CLUSTER: "false" }).redisCluster,
      false,
    );
  });

  it("rejects values that cannot work, with the fix in the message", () => {
    fails({ PORTICO_REDIS_CLUSTER: "yes" }, 'PORTICO_REDIS_CLUSTER="yes" must be true or false.');
    fails(
      { PORTICO_REDIS_CLUSTER: "true" },
      "PORTICO_REDIS_CLUSTER=true needs PORTICO_REDIS_URL: a seed node of the cluster.",
    );
    fails(
      { PORTICO_REDIS_URL: "redis://a:6379,redis://b:6379" },
      'PORTICO_REDIS_URL="redis://a:6379,redis://b:6379" lists several URLs, which only a Redis Cluster takes (as seed nodes): set PORTICO_REDIS_CLUSTER=true, or give one URL.',
    );
    const cluster = (url: string, more: Record<string, string> = {}) => ({
      PORTICO_REDIS_URL: url,
      PORTICO_REDIS_CLUSTER: "true",
      ...more,
    });
    fails(cluster("redis://a:6379,rediss://b:6379"), /mixes schemes or credentials/);
    fails(cluster("redis://:x@a:6379,redis://:y@b:6379"), /mixes schemes or credentials/);
    fails(cluster("redis://a:6379/2"), /names database 2, but a Redis Cluster has only database 0\.$/);
    fails(cluster("redis://a:6379?family=6"), /has query parameters, which cluster mode does not read/);
    fails(cluster("redis://a:6379,b:6379"), /must use redis:\/\/ or rediss:\/\//);
    fails(cluster("redis://a:6379,not a url"), /is not a URL\. Example: redis:\/\/127\.0\.0\.1:6379$/);
    fails(cluster(" , "), /names no URL/);
    fails(
      cluster("redis://a:6379", { PORTICO_REDIS_KEY_PREFIX: "app{1}" }),
      'PORTICO_REDIS_KEY_PREFIX="app{1}" must not contain { or } with a Redis Cluster: keys carry their own hash tags.',
    );
  });
});

describe("clusterEndpoint", () => {
  it("takes seeds from every URL, and credentials and TLS from them for every node", () => {
    assert.deepEqual(clusterEndpoint("rediss://app:p%40ss@r-0.redis:7000/0,rediss://app:p%40ss@[::1]"), {
      seeds: [
        { host: "r-0.redis", port: 7000 },
        { host: "::1", port: 6379 },
      ],
      username: "app",
      password: "p@ss",
      tls: true,
    });
    assert.deepEqual(clusterEndpoint("redis://10.0.0.1:6379"), {
      seeds: [{ host: "10.0.0.1", port: 6379 }],
      username: undefined,
      password: undefined,
      tls: false,
    });
  });

  it("redacts every password of a list", () => {
    assert.equal(
      redactRedisUrl("redis://:s3cret@a:1, redis://u:s3cret@b:2"),
      "redis://:***@a:1,redis://u:***@b:2",
    );
  });
});

describe("PORTICO_REDIS_SENTINELS", () => {
  const sentinel = {
    PORTICO_REDIS_URL: "rediss://app:p%40ss@mymaster/2",
    PORTICO_REDIS_SENTINELS: "10.0.0.1:26379, sentinel-1:26380,[::1]:26381",
    PORTICO_REDIS_SENTINEL_MASTER: "mymaster",
  };

  it("takes the sentinels, the master name, and the URL's credentials, database and TLS for the data nodes", () => {
    const config = loadConfig({ ...sentinel, PORTICO_REDIS_SENTINEL_PASSWORD: "s3cret" });
    assert.deepEqual(
      sentinelEndpoint(
        config.redisUrl!,
        config.redisSentinels,
        config.redisSentinelMaster!,
        config.redisSentinelPassword,
      ),
      {
        sentinels: [
          { host: "10.0.0.1", port: 26379 },
          { host: "sentinel-1", port: 26380 },
          { host: "::1", port: 26381 },
        ],
        masterName: "mymaster",
        sentinelPassword: "s3cret",
        username: "app",
        password: "p@ss",
        db: 2,
        tls: true,
      },
    );
  });

  it("refuses bad combinations with the fix in the message", () => {
    fails(
      { ...sentinel, PORTICO_REDIS_CLUSTER: "true" },
      /PORTICO_REDIS_SENTINELS and PORTICO_REDIS_CLUSTER=true exclude each other/,
    );
    const { PORTICO_REDIS_SENTINEL_MASTER: _, ...noMaster } = sentinel;
    fails(noMaster, /PORTICO_REDIS_SENTINELS needs PORTICO_REDIS_SENTINEL_MASTER/);
    const { PORTICO_REDIS_URL: __, ...noUrl } = sentinel;
    fails(
      noUrl,
      /PORTICO_REDIS_SENTINELS needs PORTICO_REDIS_URL for the data nodes' scheme, credentials and database/,
    );
    fails({ PORTICO_REDIS_SENTINEL_MASTER: "mymaster" }, /need PORTICO_REDIS_SENTINELS/);
    fails({ PORTICO_REDIS_SENTINEL_PASSWORD: "x" }, /need PORTICO_REDIS_SENTINELS/);
    fails(
      { ...sentinel, PORTICO_REDIS_URL: "redis://a:6379,redis://b:6379" },
      /PORTICO_REDIS_URL lists several URLs: with PORTICO_REDIS_SENTINELS give one URL/,
    );
    fails({ ...sentinel, PORTICO_REDIS_URL: "redis://mymaster/x" }, /names database x: use a number/);
  });

  it("refuses a sentinel that is not host:port, naming it", () => {
    for (const bad of [
      "sentinel-0",
      "sentinel-0:",
      "sentinel-0:99999",
      "redis://s:26379",
      "::1:26379",
      "s:0",
    ])
      fails(
        { ...sentinel, PORTICO_REDIS_SENTINELS: `s:26379,${bad}` },
        new RegExp(
          `PORTICO_REDIS_SENTINELS entry ${JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is not host:port`,
        ),
      );
  });
});

describe("createStore with sentinels", () => {
  it("fails the boot naming the master and the sentinels when none answers", async () => {
    const port = await freePort();
    await assert.rejects(
      createStore({
        redisUrl: "redis://mymaster/0",
        redisSentinels: [`127.0.0.1:${port}`],
        redisSentinelMaster: "mymaster",
        connectTimeoutMs: 500,
      }),
      (err: Error) =>
        err.message.startsWith(
          `Cannot connect to the Redis master "mymaster" through the sentinels 127.0.0.1:${port} within 0.5 s`,
        ),
    );
  });
});
