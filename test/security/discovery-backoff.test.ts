// No amplification through discovery (docs/security.md "Bounded by default"): anonymous requests
// to /oauth/authorize render a login page that asks the tenant's OpenID provider for its metadata.
// When that provider fails, the failure is remembered per issuer with a growing back-off shared by
// the replicas, so a burst of strangers' requests makes Portico fetch it a handful of times, not
// once per request.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { FetchBackoff } from "../../src/limits/fetch-backoff.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort, uniquePrefix } from "../support/redis.js";

describe("a failing identity provider under a burst of anonymous sign-ins", () => {
  let idp: Server;
  let fetched = 0;
  let a: RunningPortico;
  let b: RunningPortico;
  let issuer: string;

  before(async () => {
    idp = createServer((_req, res) => {
      fetched++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
    const idpIssuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    const tenants = [
      {
        ...staticTenant("sso"),
        auth: "oauth" as const,
        identity: {
          type: "oidc" as const,
          issuer: idpIssuer,
          clientId: "portico",
          clientSecret: "x".repeat(32),
        },
      },
    ];
    const redisPrefix = uniquePrefix();
    const env = { PORTICO_PUBLIC_URL: issuer, PORTICO_RATE_LIMIT_OAUTH_AUTHORIZE_REQUESTS_PER_MINUTE: "0" };
    a = await startPortico({ tenants, redisPrefix, env: { ...env, PORT: String(port) } });
    b = await startPortico({ tenants, redisPrefix, env });
  });

  after(async () => {
    await a.close();
    await b.close();
    await new Promise<void>((resolve) => idp.close(() => resolve()));
  });

  it("fetches the provider a bounded number of times across both replicas, and still shows the login page", async () => {
    const client = await TestOAuthClient.register(issuer);
    const { url } = await client.authorizationUrl("sso");
    const started = Date.now();
    const pages: number[] = [];
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          fetch(`${i % 2 ? a.url : b.url}${url.pathname}${url.search}`, { redirect: "manual" }),
        ),
      );
      for (const r of answers) {
        pages.push(r.status);
        await r.body?.cancel();
      }
    }
    const seconds = (Date.now() - started) / 1000;
    assert.ok(
      pages.every((s) => s === 200),
      "every request still gets its login page",
    );
    // Back-offs of 1, 2, 4 … s from the first failure: in `seconds`, at most log2(seconds) + 2 more.
    const bound = Math.ceil(Math.log2(seconds + 1)) + 2;
    assert.ok(
      fetched >= 1 && fetched <= bound,
      `${fetched} fetches in ${seconds.toFixed(1)} s for 100 requests`,
    );
  });
});

describe("the back-off itself", () => {
  let now = 1_000_000;
  const clock = () => now;
  const store = new MemoryStore({ now: clock });
  const keys = createKeys(uniquePrefix());

  it("doubles with each failure in a row, up to its cap, and is shared by every replica", async () => {
    const one = new FetchBackoff(store, keys, { now: clock, maxMs: 5000 });
    const two = new FetchBackoff(store, keys, { now: clock, maxMs: 5000 });
    const target = "https://idp.example";
    assert.equal(await one.wait(target), 0);
    assert.equal(await one.failed(target), 1000);
    assert.equal(await two.wait(target), 1000, "the other replica knows");
    now += 1000;
    assert.equal(await two.wait(target), 0);
    assert.equal(await two.failed(target), 2000);
    assert.equal(await one.wait(target), 2000);
    assert.equal(
      await two.failed(target),
      2000,
      "a failure while it runs (another replica's) is not counted again",
    );
    now += 2000;
    assert.equal(await one.failed(target), 4000);
    now += 4000;
    assert.equal(await one.failed(target), 5000, "capped");
    await two.succeeded(target);
    now += 1;
    assert.equal(await one.wait(target), 0, "a success on either ends it everywhere");
    assert.equal(await one.failed(target), 1000, "and the next run starts over");
  });

  it("guard refuses while the back-off runs, without calling the fetch", async () => {
    const backoff = new FetchBackoff(store, keys, { now: clock });
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(new Error("down"));
    };
    const refused = (seconds: number) => new Error(`wait ${seconds} s`);
    await assert.rejects(backoff.guard("t2", failing, refused), /down/);
    await assert.rejects(backoff.guard("t2", failing, refused), /wait 1 s/);
    assert.equal(calls, 1);
    now += 1000;
    assert.equal(await backoff.guard("t2", () => Promise.resolve("ok"), refused), "ok");
    assert.equal(await backoff.wait("t2"), 0);
  });
});
