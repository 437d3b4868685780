// Live catalog changes across replicas: an official-SDK client connected through replica A gets
// list_changed within one second when a provider is added, changed or removed through replica B,
// only for the lists that changed, and its next list call reflects the change.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

let prefix: string;
let a: RunningPortico;
let b: RunningPortico;
let viaB: AdminClient;
let rc: RecordingClient;

before(async () => {
  prefix = uniquePrefix();
  const env = { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN };
  a = await startPortico({ redisPrefix: prefix, tenants: [staticTenant("acme")], env });
  b = await startPortico({ redisPrefix: prefix, tenants: [staticTenant("acme")], env });
  viaB = new AdminClient(b.url);
  rc = await connectClient(a.mcpUrl("acme"));
  // The SDK opens its standalone GET stream right after initialization: list_changed needs it.
  await rc.client.listTools();
  await rc.streamOpen();
});
after(async () => {
  await rc.client.close();
  await Promise.all([a.close(), b.close()]);
});

/** Waits for the next notification of `method` after `from`, and reports how long it took. */
async function next(method: string, from: number): Promise<number> {
  const started = performance.now();
  const deadline = started + 3000;
  while (performance.now() < deadline) {
    if (rc.notifications.slice(from).some((n) => n.method === method)) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no ${method} within 3 s`);
}

function seen(method: string, from: number): boolean {
  return rc.notifications.slice(from).some((n) => n.method === method);
}

it("providers seeded from PORTICO_CONFIG appear in the API like any other", async () => {
  const res = await viaB.get("/tenants/acme/providers");
  assert.deepEqual(
    res.body.items.map((p: { id: string }) => p.id),
    ["docs"],
  );
  const audit = await viaB.get("/tenants/acme/audit");
  assert.deepEqual(
    audit.body.items.map((e: { actor: string; action: string }) => `${e.actor} ${e.action}`),
    ["bootstrap tenant.create"],
    "the second replica's identical seed changed nothing",
  );
});

it("adding a tool provider through B reaches A's client as tools/list_changed within 1 s", async () => {
  const from = rc.notifications.length;
  const res = await viaB.post("/tenants/acme/providers", {
    id: "weather",
    kind: "http",
    tools: [{ name: "forecast", url: "http://127.0.0.1:9/forecast" }],
  });
  assert.equal(res.status, 201);
  const ms = await next("notifications/tools/list_changed", from);
  assert.ok(ms < 1000, `list_changed after ${Math.round(ms)} ms`);
  const tools = (await rc.client.listTools()).tools.map((t) => t.name);
  assert.deepEqual(tools, ["forecast"]);
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(!seen("notifications/prompts/list_changed", from), "prompts did not change");
  assert.ok(!seen("notifications/resources/list_changed", from), "resources did not change");
});

it("a prompt provider changes only the prompts list; removing the tool provider only the tools", async () => {
  let from = rc.notifications.length;
  await viaB.post("/tenants/acme/providers", {
    id: "review",
    kind: "static",
    prompts: [{ name: "review", messages: [{ role: "user", text: "Review this." }] }],
  });
  assert.ok((await next("notifications/prompts/list_changed", from)) < 1000);
  assert.ok((await rc.client.listPrompts()).prompts.some((p) => p.name === "review"));
  assert.ok(!seen("notifications/tools/list_changed", from));

  from = rc.notifications.length;
  assert.equal((await viaB.delete("/tenants/acme/providers/weather")).status, 204);
  assert.ok((await next("notifications/tools/list_changed", from)) < 1000);
  assert.deepEqual((await rc.client.listTools()).tools, []);
  assert.ok(!seen("notifications/prompts/list_changed", from));
});

it("a change that leaves every list as it was announces nothing", async () => {
  const from = rc.notifications.length;
  const got = await viaB.get("/tenants/acme/providers/review");
  // A provider-level field that no client sees.
  await viaB.patch(
    "/tenants/acme/providers/review",
    { separator: "." },
    { headers: { "if-match": got.headers.get("etag")! } },
  );
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(rc.notifications.length, from, JSON.stringify(rc.notifications.slice(from)));
});

it("seeding again at boot keeps providers added through the API and records nothing", async () => {
  await viaB.post("/tenants/acme/providers", {
    id: "extra",
    kind: "static",
    resources: [{ uri: "extra://x", name: "x", text: "x" }],
  });
  const before = (await viaB.get("/tenants/acme/audit")).body.items.length;
  const c = await startPortico({
    redisPrefix: prefix,
    tenants: [staticTenant("acme")],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  try {
    const ids = (await new AdminClient(c.url).get("/tenants/acme/providers")).body.items.map(
      (p: { id: string }) => p.id,
    );
    assert.deepEqual(ids, ["docs", "review", "extra"]);
    assert.equal((await viaB.get("/tenants/acme/audit")).body.items.length, before);
  } finally {
    await c.close();
  }
});
