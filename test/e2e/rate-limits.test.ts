// Rate limits shared by replicas: a tenant's budget holds when two replicas are hammered at once,
// refusals are 429 with Retry-After and a JSON-RPC error, the admin API changes a tenant's limits
// and every replica applies them, per-client limits count a user (whatever the client) or an IP, and the
// token and registration endpoints have their own per-IP limit.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startIssuer, startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { awayFromMinuteEdge, MCP_HEADERS, openSession, postRpcWithToken } from "../support/rpc.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RpcError {
  id: number;
  error: { code: number; message: string; data?: { retryAfterSeconds?: number } };
}

const ping = (url: string, sid: string, id: number, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": sid, ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }),
  });

describe("a tenant's limit, two replicas", () => {
  let a: RunningPortico;
  let b: RunningPortico;
  let admin: AdminClient;

  before(async () => {
    const redisPrefix = uniquePrefix();
    const opts = { redisPrefix, tenants: [staticTenant("acme")], env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } };
    a = await startPortico(opts);
    b = await startPortico(opts);
    admin = new AdminClient(a.url);
  });
  after(() => Promise.all([a.close(), b.close()]));

  /** Until `replica` serves the tenant with `perMinute` (the change travels by pub/sub). */
  async function applied(replica: RunningPortico, perMinute: number | undefined) {
    for (let i = 0; i < 100; i++) {
      if (replica.registry.get("acme")?.config.limits?.requestsPerMinute === perMinute) return;
      await sleep(20);
    }
    assert.fail(`replica did not apply requestsPerMinute=${perMinute}`);
  }

  it("admits the budget across both replicas hammered concurrently, within the documented overshoot; the rest get 429", async () => {
    const sidA = await openSession(a.mcpUrl("acme"));
    const sidB = await openSession(b.mcpUrl("acme"));
    const patched = await admin.patch("/tenants/acme", { limits: { requestsPerMinute: 40 } });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.limits, { requestsPerMinute: 40 });
    await Promise.all([applied(a, 40), applied(b, 40)]);

    await awayFromMinuteEdge();
    const responses = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        i % 2 === 0 ? ping(a.mcpUrl("acme"), sidA, i) : ping(b.mcpUrl("acme"), sidB, i),
      ),
    );
    const admitted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    // Each replica counts in memory and shares in batches: it may admit up to 16 requests (two
    // batches for larger limits) the other has not seen yet (docs/security.md); a burst that
    // outruns the store waits a second instead, so fewer than 40 may pass at once.
    assert.ok(admitted.length >= 4 && admitted.length <= 40 + 2 * 16, `admitted ${admitted.length}`);
    assert.equal(refused.length, 120 - admitted.length);
    const servedBy = new Set(admitted.map((r) => new URL(r.url).port));
    assert.equal(servedBy.size, 2, "both replicas admitted some");

    // Past a burst's one-second wait, what refuses is the minute's limit itself.
    await sleep(1100);
    let res = await ping(a.mcpUrl("acme"), sidA, 999);
    for (let i = 0; res.status === 200 && i < 50; i++) {
      await res.body?.cancel();
      res = await ping(i % 2 ? a.mcpUrl("acme") : b.mcpUrl("acme"), i % 2 ? sidA : sidB, 1000 + i);
    }
    const retryAfter = Number(res.headers.get("retry-after"));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
      `Retry-After ${retryAfter}`,
    );
    assert.match(res.headers.get("content-type")!, /^application\/json/);
    const body = (await res.json()) as RpcError;
    assert.equal(body.error.code, -32000);
    assert.equal(
      body.error.message,
      `Too Many Requests: this tenant's limit of 40 requests per minute is reached; retry after ${retryAfter} s`,
    );
    assert.deepEqual(body.error.data, { retryAfterSeconds: retryAfter });
    assert.equal(typeof body.id, "number", "the error answers the request's id");
    for (const r of [...admitted, ...refused]) await r.body?.cancel();
  });

  it("the admin API raises, reads and removes the limit, and both replicas apply it at once", async () => {
    const sid = await openSession(a.mcpUrl("acme")).catch(() => undefined);
    assert.equal(sid, undefined, "initialize is refused too while the budget is spent");

    const raised = await admin.patch("/tenants/acme", { limits: { requestsPerMinute: 100_000 } });
    assert.deepEqual(raised.body.limits, { requestsPerMinute: 100_000 });
    await Promise.all([applied(a, 100_000), applied(b, 100_000)]);
    const sidB = await openSession(b.mcpUrl("acme"));
    assert.equal((await ping(b.mcpUrl("acme"), sidB, 1)).status, 200);

    const negative = await admin.patch("/tenants/acme", { limits: { requestsPerMinute: -1 } });
    assert.equal(negative.status, 422);
    assert.equal(negative.body.errors[0].pointer, "/limits/requestsPerMinute");
    const unknown = await admin.patch("/tenants/acme", { limits: { burst: 3 } });
    assert.equal(unknown.status, 422);
    assert.match(unknown.body.errors[0].detail, /unknown field "burst"/);

    const removed = await admin.patch("/tenants/acme", { limits: { requestsPerMinute: null } });
    assert.equal(removed.status, 200);
    assert.equal(removed.body.limits, undefined, "back to the server defaults");
    await Promise.all([applied(a, undefined), applied(b, undefined)]);
    assert.equal((await admin.get("/tenants/acme")).body.limits, undefined);
  });

  it("a tenant created with limits has them", async () => {
    const created = await admin.post("/tenants", {
      id: "capped",
      auth: "none",
      limits: { requestsPerMinute: 5, perClientRequestsPerMinute: 2 },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.limits, { requestsPerMinute: 5, perClientRequestsPerMinute: 2 });
  });
});

describe("per-client limits", () => {
  let portico: RunningPortico;
  let issuer: string;
  const ada = { username: "ada", password: "correct horse battery" };
  const bob = { username: "bob", password: "battery horse correct" };

  before(async () => {
    ({ portico, issuer } = await startIssuer({
      tenant: "guarded",
      users: [ada, bob],
      tenants: [staticTenant("open")],
      env: {
        PORTICO_TRUSTED_PROXIES: "127.0.0.1/32",
        PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "3",
      },
    }));
  });
  after(() => portico.close());

  it("count each client IP apart (X-Forwarded-For from a trusted proxy)", async () => {
    await awayFromMinuteEdge();
    const url = portico.mcpUrl("open");
    const init = (ip: string) =>
      fetch(url, {
        method: "POST",
        headers: { ...MCP_HEADERS, "x-forwarded-for": ip },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {} },
        }),
      });
    const first = await init("198.51.100.1");
    const sid = first.headers.get("mcp-session-id")!;
    const asFirst = { "x-forwarded-for": "198.51.100.1" };
    assert.equal((await ping(url, sid, 1, asFirst)).status, 200);
    assert.equal((await ping(url, sid, 2, asFirst)).status, 200);
    const refused = await ping(url, sid, 3, asFirst);
    assert.equal(refused.status, 429);
    assert.match(
      ((await refused.json()) as RpcError).error.message,
      /this client's limit of 3 requests per minute/,
    );
    // Another address behind the same proxy has its own budget.
    assert.equal((await ping(url, sid, 4, { "x-forwarded-for": "198.51.100.2" })).status, 200);
  });

  it("count each user apart, and one user's clients together (anyone may register a client)", async () => {
    await awayFromMinuteEdge(15_000);
    const one = await TestOAuthClient.register(issuer, "one");
    const two = await TestOAuthClient.register(issuer, "two");
    const [t1, t2, tb] = [
      await one.tokens("guarded", ada),
      await two.tokens("guarded", ada),
      await one.tokens("guarded", bob),
    ];
    const call = (token: string, message: object, sid?: string) =>
      postRpcWithToken(`${issuer}/mcp/guarded`, token, message, sid);
    const initialize = {
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    };
    const s1 = (await call(t1.access_token, initialize)).headers.get("mcp-session-id")!;
    const sb = (await call(tb.access_token, initialize)).headers.get("mcp-session-id")!;
    assert.equal((await call(t1.access_token, { id: 1, method: "ping" }, s1)).status, 200);
    assert.equal((await call(t1.access_token, { id: 2, method: "ping" }, s1)).status, 200);
    const refused = await call(t1.access_token, { id: 3, method: "ping" }, s1);
    assert.equal(refused.status, 429);
    assert.ok(refused.headers.get("retry-after"));
    const other = await call(t2.access_token, initialize);
    assert.equal(other.status, 429, "ada's other client shares her budget");
    assert.equal(
      (await call(tb.access_token, { id: 1, method: "ping" }, sb)).status,
      200,
      "another user of the same client",
    );
  });
});

describe("the token and registration endpoints", () => {
  let portico: RunningPortico;

  before(async () => {
    portico = await startPortico({
      redis: true,
      tenants: [],
      env: { PORTICO_RATE_LIMIT_OAUTH_REQUESTS_PER_MINUTE: "2" },
    });
  });
  after(() => portico.close());

  it("refuse a client IP past its budget with 429, Retry-After and an RFC 6749 error, each endpoint apart", async () => {
    await awayFromMinuteEdge();
    const register = () =>
      fetch(`${portico.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          redirect_uris: ["http://127.0.0.1:9999/cb"],
          token_endpoint_auth_method: "none",
        }),
      });
    assert.equal((await register()).status, 201);
    assert.equal((await register()).status, 201);
    const refused = await register();
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    assert.equal(refused.headers.get("cache-control"), "no-store");
    const body = (await refused.json()) as { error: string; error_description: string };
    assert.equal(body.error, "temporarily_unavailable");
    assert.match(body.error_description, /^too many requests from this address; retry after \d+ s$/);

    const token = () =>
      fetch(`${portico.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=authorization_code&client_id=nobody&code=x",
      });
    assert.equal((await token()).status, 401, "the token endpoint has its own budget");
    assert.equal((await token()).status, 401);
    assert.equal((await token()).status, 429);
  });
});
