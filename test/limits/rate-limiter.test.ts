// The fixed-window limiter on an injected clock: a minute's budget, Retry-After to the window's
// end, refused requests spend nothing, counters over their limit are answered from memory, and
// the subjects per-client limits count.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RateLimiter, type Limit } from "../../src/limits/rate-limiter.js";
import { clientIdSubject, ipSubject } from "../../src/limits/subjects.js";
import { MemoryStore } from "../../src/store/memory-store.js";

function setup(startMs = Date.UTC(2026, 0, 1, 12, 0, 0)) {
  const clock = { now: startMs };
  const store = new MemoryStore({ now: () => clock.now });
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
    for (let i = 0; i < 3; i++) assert.equal(await limiter.take("mcp", [limit("tenant", 3)]), undefined);
    assert.deepEqual(await limiter.take("mcp", [limit("tenant", 3)]), {
      scope: "tenant",
      perMinute: 3,
      retryAfterSeconds: 45,
    });
    assert.deepEqual(refused, ["mcp/tenant"]);
    clock.now += 45_000; // the next minute
    assert.equal(await limiter.take("mcp", [limit("tenant", 3)]), undefined);
  });

  it("Retry-After is at least 1 s, even in the window's last milliseconds", async () => {
    const { clock, limiter } = setup();
    clock.now += 59_999;
    await limiter.take("oauth", [limit("client", 1)]);
    assert.equal((await limiter.take("oauth", [limit("client", 1)]))?.retryAfterSeconds, 1);
  });

  it("a request refused by one limit gives back what the others counted", async () => {
    const { limiter, store } = setup();
    const tenant = limit("tenant", 10);
    for (let i = 0; i < 2; i++) await limiter.take("mcp", [tenant, limit("client", 2, "noisy")]);
    for (let i = 0; i < 5; i++)
      assert.equal((await limiter.take("mcp", [tenant, limit("client", 2, "noisy")]))?.scope, "client");
    await new Promise((resolve) => setImmediate(resolve)); // the give-backs are not awaited
    const window = Math.floor(Date.UTC(2026, 0, 1, 12, 0, 0) / 60_000);
    assert.equal(await store.get(`rl:tenant:${window}`), "2", "only the admitted requests count");
    // The tenant's other 8 requests are still there for another client.
    for (let i = 0; i < 8; i++)
      assert.equal(await limiter.take("mcp", [tenant, limit("client", 100, "quiet")]), undefined);
    assert.equal((await limiter.take("mcp", [tenant, limit("client", 100, "quiet")]))?.scope, "tenant");
  });

  it("a counter seen over its limit is refused from memory until the window ends, unless the limit grows", async () => {
    const { clock, limiter, incrs } = setup();
    for (let i = 0; i < 3; i++) await limiter.take("mcp", [limit("client", 2)]);
    const before = incrs();
    for (let i = 0; i < 100; i++) assert.ok(await limiter.take("mcp", [limit("client", 2)]));
    assert.equal(incrs(), before, "no store round trip for a known refusal");
    assert.equal(
      await limiter.take("mcp", [limit("client", 10)]),
      undefined,
      "a raised limit applies at once",
    );
    clock.now += 60_000;
    assert.equal(await limiter.take("mcp", [limit("client", 2)]), undefined);
  });

  it("limits of 0 count nothing and touch no store", async () => {
    const { limiter, incrs } = setup();
    assert.equal(await limiter.take("mcp", [limit("tenant", 0), limit("client", 0)]), undefined);
    assert.equal(incrs(), 0);
  });
});

describe("per-client subjects", () => {
  it("an OAuth client by a digest of its client_id", () => {
    const s = clientIdSubject("https://client.example/metadata.json");
    assert.match(s, /^c:[A-Za-z0-9_-]{22}$/);
    assert.equal(s, clientIdSubject("https://client.example/metadata.json"));
    assert.notEqual(s, clientIdSubject("another"));
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
