// Full CRUD of every admin resource on real Redis, through the document-checked client: tenants,
// providers (ETags, secrets kept and never echoed, dry runs, refresh, health), catalog, sessions,
// API keys and the audit log; then deleting a tenant removes everything it owned.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startDynamicUpstream, type DynamicUpstream } from "../fixtures/dynamic-server.js";
import { startMinimalUpstream, type MinimalUpstream } from "../fixtures/minimal-server.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { openSession, postRpc } from "../support/rpc.js";

const SECRET = "upstream-secret-7f3a9c";
let portico: RunningPortico;
let admin: AdminClient;
let minimal: MinimalUpstream;
let dynamic: DynamicUpstream;

before(async () => {
  minimal = await startMinimalUpstream();
  dynamic = await startDynamicUpstream();
  portico = await startPortico({ tenants: [], redis: true, env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } });
  admin = new AdminClient(portico.url);
  assert.equal((await admin.post("/tenants", { id: "acme", auth: "none", name: "Acme" })).status, 201);
});
after(async () => {
  await portico.close();
  await minimal.close();
  await dynamic.close();
});

const weather = {
  id: "weather",
  kind: "http",
  prefix: "wx",
  tools: [{ name: "forecast", url: "http://127.0.0.1:9/forecast", headers: { "X-Api-Key": SECRET } }],
};

describe("tenants", () => {
  it("create, get, list in pages, update with If-Match, and refuse duplicates", async () => {
    const created = await admin.post("/tenants", { id: "beta", auth: "none" });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("location"), "/admin/v1/tenants/beta");
    assert.match(created.body.mcpUrl, /\/mcp\/beta$/);
    assert.equal((await admin.post("/tenants", { id: "beta", auth: "none" })).status, 409);

    const first = await admin.get("/tenants?limit=1");
    assert.equal(first.body.items.length, 1);
    assert.ok(first.body.nextCursor);
    const second = await admin.get(`/tenants?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    assert.notEqual(second.body.items[0].id, first.body.items[0].id);

    const got = await admin.get("/tenants/beta");
    const etag = got.headers.get("etag")!;
    const renamed = await admin.patch(
      "/tenants/beta",
      { name: "Beta Inc" },
      { headers: { "if-match": etag } },
    );
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, "Beta Inc");
    const stale = await admin.patch(
      "/tenants/beta",
      { name: "Lost update" },
      { headers: { "if-match": etag } },
    );
    assert.equal(stale.status, 412);
    assert.equal((await admin.get("/tenants/beta")).body.name, "Beta Inc");
  });
});

describe("providers", () => {
  it("create answers 201 with ETag and Location; secrets are write-only", async () => {
    const res = await admin.post("/tenants/acme/providers", weather);
    assert.equal(res.status, 201);
    assert.match(res.headers.get("etag")!, /^"[A-Za-z0-9_-]+"$/);
    assert.equal(res.headers.get("location"), "/admin/v1/tenants/acme/providers/weather");
    assert.deepEqual(res.body.tools[0].headers, { "X-Api-Key": { set: true } });
    const got = await admin.get("/tenants/acme/providers/weather");
    assert.ok(!JSON.stringify(got.body).includes(SECRET));
    const listed = await admin.get("/tenants/acme/providers");
    assert.deepEqual(
      listed.body.items.map((p: { id: string }) => p.id),
      ["weather"],
    );
    assert.ok(!JSON.stringify(listed.body).includes(SECRET));
  });

  it("PUT keeps a secret sent back as {set: true}; a stale If-Match gets 412", async () => {
    const got = await admin.get("/tenants/acme/providers/weather");
    const etag = got.headers.get("etag")!;
    const replaced = await admin.put(
      "/tenants/acme/providers/weather",
      { ...got.body, tools: [{ ...got.body.tools[0], description: "Forecast by city" }] },
      { headers: { "if-match": etag } },
    );
    assert.equal(replaced.status, 200);
    assert.notEqual(replaced.headers.get("etag"), etag);
    const live = portico.registry.get("acme")!.config.providers.find((p) => p.id === "weather");
    assert.deepEqual(live?.kind === "http" && live.tools[0]?.headers, { "X-Api-Key": SECRET });
    const stale = await admin.put("/tenants/acme/providers/weather", got.body, {
      headers: { "if-match": etag },
    });
    assert.equal(stale.status, 412);
    assert.match(stale.body.detail, /changed since you read it/);
  });

  it("PATCH merges (RFC 7396) and cannot change the id or kind", async () => {
    const patched = await admin.patch("/tenants/acme/providers/weather", { prefix: "weather" });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.prefix, "weather");
    assert.deepEqual(patched.body.tools[0].headers, { "X-Api-Key": { set: true } });
    const rekind = await admin.patch("/tenants/acme/providers/weather", { kind: "static" });
    assert.equal(rekind.status, 422);
    assert.equal(rekind.body.pointer, "/kind");
  });

  it("a dry run of an mcp provider connects and reports the catalog it would add, saving nothing", async () => {
    const res = await admin.post("/tenants/acme/providers?dryRun=true", {
      id: "mini",
      kind: "mcp",
      url: minimal.url,
      prefix: "mini",
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.connection.ok, true);
    assert.deepEqual(res.body.catalog.tools, ["mini__add"]);
    assert.deepEqual(res.body.catalog.resources, ["minimal://readme"]);
    assert.equal((await admin.get("/tenants/acme/providers/mini")).status, 404);
    const down = await admin.post("/tenants/acme/providers?dryRun=true", {
      id: "down",
      kind: "mcp",
      url: "http://127.0.0.1:9/mcp",
    });
    assert.equal(down.status, 200);
    assert.equal(down.body.connection.ok, false);
    assert.match(down.body.connection.error, /\S/);
  });

  it("an upstream's bearer token is kept through PUT and reaches only the upstream", async () => {
    const created = await admin.post("/tenants/acme/providers", {
      id: "mini",
      kind: "mcp",
      url: minimal.url,
      prefix: "mini",
      auth: { type: "bearer", token: SECRET },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.auth, { type: "bearer", token: { set: true } });
    const put = await admin.put("/tenants/acme/providers/mini", { ...created.body, timeoutMs: 5000 });
    assert.equal(put.status, 200);
    const seen = minimal.authorizations.length;
    const sid = await openSession(portico.mcpUrl("acme"));
    const call = await postRpc(
      portico.mcpUrl("acme"),
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "mini__add", arguments: { a: 1, b: 2 } },
      },
      sid,
    );
    assert.equal(call.status, 200);
    assert.ok(minimal.authorizations.slice(seen).includes(`Bearer ${SECRET}`));
  });

  it("refresh re-reads an upstream's catalog; health checks it now", async () => {
    assert.equal(
      (
        await admin.post("/tenants/acme/providers", {
          id: "dyn",
          kind: "mcp",
          url: dynamic.url,
          prefix: "dyn",
        })
      ).status,
      201,
    );
    const health = await admin.get("/tenants/acme/providers/dyn/health");
    assert.equal(health.body.status, "healthy");
    assert.equal(typeof health.body.latencyMs, "number");
    const refreshed = await admin.post("/tenants/acme/providers/dyn/refresh");
    assert.equal(refreshed.status, 200);
    assert.ok(refreshed.body.tools >= 2);
    const static_ = await admin.get("/tenants/acme/providers/weather/health");
    assert.equal(static_.body.status, "healthy");
  });

  it("an upstream whose tools collide with another provider's is refused with 409 naming both", async () => {
    const http = await admin.post("/tenants/acme/providers", {
      id: "echoer",
      kind: "http",
      tools: [{ name: "echo", url: "http://127.0.0.1:9/echo" }],
    });
    assert.equal(http.status, 201);
    const clash = await admin.post("/tenants/acme/providers", { id: "dyn2", kind: "mcp", url: dynamic.url });
    assert.equal(clash.status, 409);
    assert.match(clash.body.detail, /"dyn2".*tool "echo" is served by provider "echoer"/);
    assert.match(clash.body.detail, /To fix: give it a "prefix" for its tools and prompts\.$/);
    assert.equal((await admin.get("/tenants/acme/providers/dyn2")).status, 404);
    assert.equal((await admin.delete("/tenants/acme/providers/echoer")).status, 204);
  });

  it("a resource URI another provider serves: 409 saying what fixes it, which a prefix cannot", async () => {
    // Provider "mini" (above) serves the minimal upstream's minimal://readme.
    const fix =
      /To fix: a "prefix" renames tools and prompts, not resource URIs: remove the resource from one of the providers \(a static provider's "resources"; an upstream MCP server serves its own list\), or serve the two providers in separate tenants\.$/;
    for (const body of [
      {
        id: "docs2",
        kind: "static",
        prefix: "d",
        resources: [{ uri: "minimal://readme", name: "r", text: "ours" }],
      },
      { id: "min2", kind: "mcp", url: minimal.url, prefix: "m" },
    ]) {
      const clash = await admin.post("/tenants/acme/providers", body);
      assert.equal(clash.status, 409, JSON.stringify(clash.body));
      assert.match(
        clash.body.detail,
        new RegExp(`"${body.id}".*resource "minimal://readme" is served by provider "mini"`),
      );
      assert.doesNotMatch(clash.body.detail, /give it (a|another) "prefix"/);
      assert.match(clash.body.detail, fix);
      assert.equal((await admin.get(`/tenants/acme/providers/${body.id}`)).status, 404);
    }
  });

  it("the catalog shows every entry under its exposed name, with provider and health", async () => {
    const res = await admin.get("/tenants/acme/catalog");
    const tools = res.body.tools as { provider: string; health: string; entry: { name: string } }[];
    assert.ok(tools.some((t) => t.entry.name === "weather__forecast" && t.provider === "weather"));
    assert.ok(
      tools.some((t) => t.entry.name === "dyn__echo" && t.provider === "dyn" && t.health === "healthy"),
    );
    assert.ok(res.body.resources.some((r: { entry: { uri: string } }) => r.entry.uri === "minimal://readme"));
  });

  it("delete answers 204; the provider is gone", async () => {
    assert.equal((await admin.delete("/tenants/acme/providers/dyn")).status, 204);
    assert.equal((await admin.get("/tenants/acme/providers/dyn")).status, 404);
    assert.equal((await admin.delete("/tenants/acme/providers/dyn")).status, 404);
  });
});

describe("sessions", () => {
  it("lists live sessions with client and protocol; deleting one makes its next request 404", async () => {
    const sid = await openSession(portico.mcpUrl("acme"), "2025-06-18");
    const list = await admin.get("/tenants/acme/sessions");
    const mine = list.body.items.find((s: { id: string }) => s.id === sid);
    assert.ok(mine, "the new session is listed");
    assert.equal(mine.protocolVersion, "2025-06-18");
    assert.ok(Date.parse(mine.lastSeenAt) <= Date.now() + 1000);
    assert.equal((await admin.get(`/tenants/acme/sessions/${sid}`)).body.id, sid);
    assert.equal((await admin.delete(`/tenants/acme/sessions/${sid}`)).status, 204);
    const after = await postRpc(portico.mcpUrl("acme"), { jsonrpc: "2.0", id: 1, method: "ping" }, sid);
    assert.equal(after.status, 404);
    assert.equal((await admin.delete(`/tenants/acme/sessions/${sid}`)).status, 404);
  });
});

describe("API keys", () => {
  it("a key is shown once, listed without its secret, works, and stops working when revoked", async () => {
    const created = await admin.post("/tenants/acme/api-keys", { name: "ci" });
    assert.equal(created.status, 201);
    const { token, id } = created.body as { token: string; id: string };
    assert.match(token, /^portico_/);
    const list = await admin.get("/tenants/acme/api-keys");
    assert.ok(list.body.items.some((k: { id: string }) => k.id === id));
    assert.ok(!JSON.stringify(list.body).includes(token));
    const scoped = new AdminClient(portico.url, token);
    assert.equal((await scoped.get("/tenants/acme/providers")).status, 200);
    assert.equal((await admin.delete(`/tenants/acme/api-keys/${id}`)).status, 204);
    const refused = await scoped.get("/tenants/acme/providers");
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate")!, /^Bearer .*error="invalid_token"/);
    const revoked = (await admin.get("/tenants/acme/api-keys")).body.items.find(
      (k: { id: string }) => k.id === id,
    );
    assert.ok(revoked.revokedAt);
  });

  it("platform keys can create tenants", async () => {
    const created = await admin.post("/api-keys", { name: "ops" });
    const ops = new AdminClient(portico.url, created.body.token);
    assert.equal((await ops.post("/tenants", { id: "gamma", auth: "none" })).status, 201);
    assert.equal((await ops.delete("/tenants/gamma")).status, 204);
  });
});

describe("audit", () => {
  it("records every write, newest first, with its actor and secrets redacted", async () => {
    const first = await admin.get("/tenants/acme/audit?limit=3");
    assert.equal(first.body.items.length, 3);
    const all = [...first.body.items];
    let cursor = first.body.nextCursor;
    while (cursor) {
      const next = await admin.get(`/tenants/acme/audit?limit=3&cursor=${encodeURIComponent(cursor)}`);
      all.push(...next.body.items);
      cursor = next.body.nextCursor;
    }
    const actions = all.map((e: { action: string }) => e.action);
    assert.equal(actions.at(-1), "tenant.create");
    for (const action of [
      "provider.create",
      "provider.update",
      "provider.delete",
      "session.delete",
      "api-key.create",
      "api-key.revoke",
    ])
      assert.ok(actions.includes(action), `${action} in ${actions.join()}`);
    const ids = all.map((e: { id: string }) => e.id);
    assert.deepEqual([...ids].sort().reverse(), ids, "newest first");
    assert.ok(!JSON.stringify(all).includes(SECRET), "secrets redacted");
    assert.ok(all.every((e: { actor: string }) => e.actor === "platform token"));
  });
});

describe("deleting a tenant", () => {
  it("removes its providers, sessions, keys and audit log; the platform log keeps the deletion", async () => {
    const sid = await openSession(portico.mcpUrl("acme"));
    const key = (await admin.post("/tenants/acme/api-keys", { name: "doomed" })).body.token as string;
    assert.equal((await admin.delete("/tenants/acme")).status, 204);
    assert.equal((await admin.get("/tenants/acme")).status, 404);
    assert.equal((await admin.get("/tenants/acme/providers")).status, 404);
    const ping = await postRpc(portico.mcpUrl("acme"), { jsonrpc: "2.0", id: 1, method: "ping" }, sid);
    assert.equal(ping.status, 404);
    assert.equal((await new AdminClient(portico.url, key).get("/tenants/acme/providers")).status, 401);
    const recreated = await admin.post("/tenants", { id: "acme", auth: "none" });
    assert.equal(recreated.status, 201);
    const audit = await admin.get("/tenants/acme/audit");
    assert.deepEqual(
      audit.body.items.map((e: { action: string }) => e.action),
      ["tenant.create"],
    );
    const platform = await admin.get("/audit");
    assert.ok(
      platform.body.items.some(
        (e: { action: string; target: string }) => e.action === "tenant.delete" && e.target === "acme",
      ),
    );
  });
});

describe("provider health on save and in the list", () => {
  it("an unreachable upstream is saved (201) with its health and a warning, within a few seconds", async () => {
    assert.equal((await admin.post("/tenants", { id: "checked", auth: "none" })).status, 201);
    const started = Date.now();
    const down = await admin.post("/tenants/checked/providers", {
      id: "down",
      kind: "mcp",
      url: "http://127.0.0.1:9/mcp",
    });
    const tookMs = Date.now() - started;
    assert.equal(down.status, 201);
    assert.ok(tookMs < 10_000, `the save took ${tookMs} ms`);
    assert.equal(down.body.health.status, "unhealthy");
    assert.match(down.body.health.reason, /\S/);
    assert.match(down.body.health.checkedAt, /^\d{4}-\d\d-\d\dT/);
    assert.match(
      down.body.warning,
      /^Saved, but the provider is unhealthy \(.+\): clients see none of its entries until it answers\. GET \/admin\/v1\/tenants\/checked\/providers\/down\/health to check again\.$/,
    );
    assert.equal((await admin.get("/tenants/checked/providers/down")).status, 200, "saved all the same");
  });

  it("a reachable upstream answers healthy with its latency, and no warning", async () => {
    const up = await admin.post("/tenants/checked/providers", {
      id: "up",
      kind: "mcp",
      url: minimal.url,
      prefix: "up",
    });
    assert.equal(up.status, 201);
    assert.equal(up.body.health.status, "healthy");
    assert.equal(typeof up.body.health.latencyMs, "number");
    assert.equal(up.body.warning, undefined);
    // What a save answers can be sent back as is: health and warning are read-only, never stored.
    const put = await admin.put("/tenants/checked/providers/up", { ...up.body, timeoutMs: 4000 });
    assert.equal(put.status, 200);
    assert.equal(put.body.health.status, "healthy");
    const stored = await admin.get("/tenants/checked/providers/up");
    assert.equal(stored.body.health, undefined);
    assert.equal(stored.body.timeoutMs, 4000);
    const patched = await admin.patch("/tenants/checked/providers/down", { timeoutMs: 3000 });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.health.status, "unhealthy");
    assert.match(patched.body.warning, /unhealthy/);
  });

  it("the list shows each provider's last known health, without a round trip", async () => {
    const list = await admin.get("/tenants/checked/providers");
    assert.equal(list.status, 200);
    const byId = Object.fromEntries(list.body.items.map((p: any) => [p.id, p.health]));
    assert.equal(byId.up.status, "healthy");
    assert.equal(byId.down.status, "unhealthy");
    assert.match(byId.down.reason, /\S/);
    assert.equal(byId.up.checkedAt, undefined);
  });
});
