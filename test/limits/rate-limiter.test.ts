// The fixed-window limiter on an injected clock: a minute's budget counted in memory and shared
// through batched flushes, Retry-After to the window's end, refused requests spend nothing, no
// store round trip per request, replicas agree within the documented overshoot, and the subjects
// per-client limits count.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RateLimiter, type Limit } from "../../src/limits/rate-limiter.js";
import { ipSubject, ipv6SiteSubject, principalSubject } from "../../src/limits/subjects.js";
import { MemoryStore } from "../../src/store/memory-store.js";

function setup(startMs = Date.UTC(2026, 0, 1, 12, 0, 0), store = new MemoryStore({ now: () => startMs })) {
  const clock = { now: startMs };
  let incrs = 0;
  const incr = store.incr.bind(store);
  store.incr = (key, by, ttl) => (incrs++, incr(key, by, ttl));
  const refused: string[] = [];
  const limiter = new RateLimiter({
    store,
    now: () => clock.now,
    onRefused: (surface, scope) => refused.push(`${surface}/${scope}`),
  });
  return { clock, store, limiter, refused, incrs: () => incrs };
}

const limit = (scope: Limit["scope"], perMinute: number, name: string = scope): Limit => ({
  scope,
  perMinute,
  key: (w) => `rl:${name}:${w}`,
});

describe("RateLimiter", () => {
  it("admits a minute's budget, then refuses with the seconds left in the window", async () => {
    const { clock, limiter, refused } = setup();
    clock.now += 15_000; // 15 s into the minute
    for (let i = 0; i < 3; i++) {
      assert.equal(limiter.take("mcp", [limit("tenant", 3)]), undefined);
      await limiter.flush();
    }
    assert.deepEqual(limiter.take("mcp", [limit("tenant", 3)]), {
      scope: "tenant",
      perMinute: 3,
      retryAfterSeconds: 45,
    });
    assert.deepEqual(refused, ["mcp/tenant"]);
    clock.now += 45_000; // the next minute
    assert.equal(limiter.take("mcp", [limit("tenant", 3)]), undefined);
  });

  it("Retry-After is at least 1 s, even in the window's last milliseconds", async () => {
    const { clock, limiter } = setup();
    clock.now += 59_999;
    limiter.take("oauth", [limit("client", 1)]);
    await limiter.flush();
    assert.equal(limiter.take("oauth", [limit("client", 1)])?.retryAfterSeconds, 1);
  });

  it("a request refused by one limit counts against none", async () => {
    const { limiter, store } = setup();
    const tenant = limit("tenant", 10);
    for (let i = 0; i < 2; i++) {
      limiter.take("mcp", [tenant, limit("client", 2, "noisy")]);
      await limiter.flush();
    }
    for (let i = 0; i < 5; i++)
      assert.equal(limiter.take("mcp", [tenant, limit("client", 2, "noisy")])?.scope, "client");
    await limiter.flush();
    const window = Math.floor(Date.UTC(2026, 0, 1, 12, 0, 0) / 60_000);
    assert.equal(await store.get(`rl:tenant:${window}`), "2", "only the admitted requests count");
    // The tenant's other 8 requests are still there for another client.
    for (let i = 0; i < 8; i++) {
      assert.equal(limiter.take("mcp", [tenant, limit("client", 100, "quiet")]), undefined);
      await limiter.flush();
    }
    assert.equal(limiter.take("mcp", [tenant, limit("client", 100, "quiet")])?.scope, "tenant");
  });

  it("counts in memory: a store round trip per batch, never per request", async () => {
    const { limiter, incrs } = setup();
    const big = limit("tenant", 60_000); // batches of 3000
    for (let i = 0; i < 2_999; i++) assert.equal(limiter.take("mcp", [big]), undefined);
    assert.equal(incrs(), 0, "nothing sent before the batch is full or the timer fires");
    limiter.take("mcp", [big]);
    await limiter.flush();
    assert.equal(incrs(), 1, "one increment carried 3000 requests");
  });

  it("a flush sends only the counters that counted since the last one", async () => {
    const { limiter, incrs } = setup();
    for (let i = 0; i < 1000; i++) limiter.take("mcp", [limit("client", 1000, `c${i}`)]);
    await limiter.flush();
    assert.equal(incrs(), 1000);
    limiter.take("mcp", [limit("client", 1000, "c7")]);
    await limiter.flush();
    assert.equal(incrs(), 1001, "one counter counted: one increment");
  });

  it("flushes on its own within a fraction of a second", async () => {
    const { clock, limiter, store } = setup(Date.now(), new MemoryStore());
    limiter.take("mcp", [limit("tenant", 1000, "timer")]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The limiter's clock, not Date.now(): a minute may have begun during the 400 ms.
    const window = Math.floor(clock.now / 60_000);
    assert.equal(await store.get(`rl:timer:${window}`), "1");
    await limiter.close();
  });

  it("a burst faster than the store answers waits a second past two batches (16 at least)", () => {
    const { limiter } = setup();
    const l = limit("client", 1000); // batches of 50
    for (let i = 0; i < 100; i++) assert.equal(limiter.take("mcp", [l]), undefined);
    assert.deepEqual(limiter.take("mcp", [l]), {
      scope: "client",
      perMinute: 1000,
      retryAfterSeconds: 1,
      burst: true,
    });
  });

  it("a few parallel requests pass under a small limit", () => {
    const { limiter } = setup();
    const l = limit("client", 20); // batches of 1
    for (let i = 0; i < 16; i++) assert.equal(limiter.take("mcp", [l]), undefined, `request ${i}`);
    assert.equal(limiter.take("mcp", [l])?.burst, true);
  });

  it("a counter over its limit is refused from memory until the window ends, unless the limit grows", async () => {
    const { clock, limiter, incrs } = setup();
    for (let i = 0; i < 3; i++) limiter.take("mcp", [limit("client", 2)]);
    await limiter.flush();
    const before = incrs();
    for (let i = 0; i < 100; i++) assert.ok(limiter.take("mcp", [limit("client", 2)]));
    await limiter.flush();
    assert.equal(incrs(), before, "no store round trip for a refusal");
    assert.equal(limiter.take("mcp", [limit("client", 10)]), undefined, "a raised limit applies at once");
    clock.now += 60_000;
    assert.equal(limiter.take("mcp", [limit("client", 2)]), undefined);
  });

  it("two replicas on one store agree, overshooting by at most 16 (or two batches) each", async () => {
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    const store = new MemoryStore({ now: () => start });
    const a = setup(start, store).limiter;
    const b = new RateLimiter({ store, now: () => start });
    const l = limit("tenant", 100); // batches of 5
    let admitted = 0;
    for (let round = 0; round < 100; round++) {
      for (const replica of [a, b]) if (replica.take("mcp", [l]) === undefined) admitted++;
      if (round % 3 === 2) await Promise.all([a.flush(), b.flush()]);
    }
    await Promise.all([a.flush(), b.flush()]);
    assert.ok(admitted >= 100 && admitted <= 100 + 2 * 16, `admitted ${admitted}`);
    assert.ok(a.take("mcp", [l]) && b.take("mcp", [l]), "both replicas refuse once the total is known");
  });

  it("keeps enforcing its own counts when the store fails", async () => {
    const { limiter, store } = setup();
    const errors: unknown[] = [];
    const failing = new RateLimiter({
      store: Object.assign(Object.create(store) as MemoryStore, {
        incr: () => Promise.reject(new Error("store down")),
      }),
      onFlushError: (err) => errors.push(err),
    });
    for (let i = 0; i < 3; i++) {
      assert.equal(failing.take("mcp", [limit("tenant", 3)]), undefined);
      await failing.flush();
    }
    assert.equal(errors.length, 3, "each failed flush is reported");
    assert.ok(failing.take("mcp", [limit("tenant", 3)]), "refused from its own count");
    await limiter.close();
  });

  it("a store that lost its counters (a Redis restart) does not hand a replica a fresh budget", async () => {
    const { limiter, store } = setup();
    const l = limit("client", 10); // batches of 1
    for (let i = 0; i < 6; i++) {
      assert.equal(limiter.take("mcp", [l]), undefined);
      await limiter.flush();
    }
    await store.del(l.key(Math.floor(Date.UTC(2026, 0, 1, 12, 0, 0) / 60_000)));
    // The replica still knows the total it read; the restarted store's count only adds to it.
    let admitted = 0;
    for (let i = 0; i < 20; i++) {
      if (limiter.take("mcp", [l]) === undefined) admitted++;
      await limiter.flush();
    }
    assert.equal(admitted, 4, "the 4 left of the minute's 10");
  });

  it("limits of 0 count nothing and touch no store", async () => {
    const { limiter, incrs } = setup();
    assert.equal(limiter.take("mcp", [limit("tenant", 0), limit("client", 0)]), undefined);
    await limiter.flush();
    assert.equal(incrs(), 0);
  });
});

describe("per-client subjects", () => {
  it("one user by a digest of the sub, whatever the client", () => {
    const s = principalSubject("alice");
    assert.match(s, /^p:[A-Za-z0-9_-]{22}$/);
    assert.equal(s, principalSubject("alice"));
    assert.notEqual(s, principalSubject("bob"));
  });

  it("an IPv6 address's site is its /48; IPv4 and IPv4-mapped addresses have none", () => {
    assert.equal(ipv6SiteSubject("2001:db8:aa:1::7"), "ip:2001:db8:aa::/48");
    assert.equal(ipv6SiteSubject("2001:0db8:00aa:ffff:1:2:3:4"), "ip:2001:db8:aa::/48");
    assert.equal(ipv6SiteSubject("2001:db8::1"), "ip:2001:db8:0::/48");
    assert.equal(ipv6SiteSubject("192.0.2.7"), undefined);
    assert.equal(ipv6SiteSubject("::ffff:192.0.2.7"), undefined);
  });

  it("IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64", () => {
    assert.equal(ipSubject("192.0.2.7"), "ip:192.0.2.7");
    assert.equal(ipSubject("::ffff:192.0.2.7"), "ip:192.0.2.7");
    assert.equal(ipSubject("2001:db8:0:1::42"), "ip:2001:db8:0:1::/64");
    assert.equal(ipSubject("2001:db8:0:1:ffff:1:2:3"), "ip:2001:db8:0:1::/64");
    assert.equal(ipSubject("2001:0db8::1"), "ip:2001:db8:0:0::/64");
    assert.equal(ipSubject("::1"), "ip:0:0:0:0::/64");
    assert.equal(ipSubject("fe80::1%eth0"), "ip:fe80:0:0:0::/64");
    assert.equal(ipSubject("not an address"), "ip:unknown");
  });
});
