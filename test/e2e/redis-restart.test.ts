// Readiness across a Redis crash: /healthz stays up, /readyz and MCP answer 503 (nothing served
// from memory meanwhile), and once Redis is back from its append-only file, /readyz is 200 again
// and sessions and provider records are still there. A tenant change whose broadcast was missed
// while the subscription was down is picked up as soon as it is back, and so is a client's
// cancellation of a call running here.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { Redis } from "ioredis";
import { startDynamicUpstream, type DynamicUpstream } from "../fixtures/dynamic-server.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { startOwnRedis } from "../support/redis.js";
import { MCP_HEADERS, openSession } from "../support/rpc.js";

let aofDir: string;
let redis: Awaited<ReturnType<typeof startOwnRedis>>;
let portico: RunningPortico;
let admin: AdminClient;
let dynamic: DynamicUpstream;

before(async () => {
  aofDir = await mkdtemp(join(tmpdir(), "portico-aof-"));
  redis = await startOwnRedis(undefined, { aofDir });
  dynamic = await startDynamicUpstream();
  const slow = {
    id: "slow",
    auth: "none" as const,
    providers: [{ id: "dyn", kind: "mcp" as const, url: dynamic.url, prefix: "dyn" }],
  };
  portico = await startPortico({
    tenants: [staticTenant("acme"), staticTenant("other"), slow],
    env: { PORTICO_REDIS_URL: redis.url, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  admin = new AdminClient(portico.url);
});
after(async () => {
  await portico.close();
  await dynamic.close();
  await redis.stop();
  await rm(aofDir, { recursive: true, force: true });
});

const rpc = (tenant: string, message: object, sid?: string) =>
  fetch(portico.mcpUrl(tenant), {
    method: "POST",
    headers: { ...MCP_HEADERS, ...(sid ? { "mcp-session-id": sid } : {}) },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it("/readyz and MCP answer 503 while Redis is down; after its restart sessions and providers are still there", async () => {
  const health = await fetch(`${portico.url}/healthz`);
  assert.deepEqual(await health.json(), { status: "ok" });
  const ready = await fetch(`${portico.url}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: "ready", store: "redis", tenants: 3 });

  const created = await admin.post("/tenants/acme/providers", {
    id: "weather",
    kind: "http",
    tools: [{ name: "forecast", url: "http://127.0.0.1:9/forecast", headers: { "x-api-key": "k-123" } }],
  });
  assert.equal(created.status, 201);
  const sid = await openSession(portico.mcpUrl("acme"));

  await redis.stop();
  const down = await fetch(`${portico.url}/readyz`);
  assert.equal(down.status, 503);
  assert.deepEqual(await down.json(), {
    status: "unavailable",
    reason: "the redis store cannot be reached",
    store: "redis",
  });
  assert.equal((await fetch(`${portico.url}/healthz`)).status, 200, "the process still serves");
  const refused = await rpc("acme", { id: 7, method: "tools/list" }, sid);
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "1");
  const body = (await refused.json()) as { id: number; error: { code: number; message: string } };
  assert.equal(body.id, 7);
  assert.match(body.error.message, /^Service Unavailable: the gateway is temporarily unavailable/);
  const init = await rpc("acme", {
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {} },
  });
  assert.equal(init.status, 503, "no session is opened from memory either");
  assert.equal((await admin.get("/tenants/acme/providers/weather")).status, 503);

  redis = await startOwnRedis(redis.port, { aofDir });
  await eventually("/readyz 200", async () => (await fetch(`${portico.url}/readyz`)).status === 200);
  const tools = await rpc("acme", { id: 8, method: "tools/list" }, sid);
  assert.equal(tools.status, 200, "the session survived the restart");
  const listed = (await tools.json()) as { result: { tools: { name: string }[] } };
  assert.deepEqual(
    listed.result.tools.map((t) => t.name),
    ["forecast"],
  );
  const provider = await admin.get("/tenants/acme/providers/weather");
  assert.equal(provider.status, 200, "the provider record survived the restart");
  assert.deepEqual(provider.body.tools[0].headers, { "x-api-key": { set: true } });
});

it("a tenant change whose broadcast was missed is applied once the subscription is back", async () => {
  assert.equal(await openSession(portico.mcpUrl("other")).then(() => 200), 200);
  // Remove the tenant's record behind Portico's back: its broadcast never happens, as if it was
  // published while this replica's subscription was down.
  const raw = new Redis(redis.url);
  try {
    await raw.del(portico.keys.tenant("other"));
    await raw.srem(portico.keys.tenantIndex(), "other");
    assert.ok(portico.registry.get("other"), "still served from memory: nothing said otherwise");
    await raw.call("CLIENT", "KILL", "TYPE", "pubsub");
  } finally {
    raw.disconnect();
  }
  await eventually("tenant dropped after the resubscription", async () => !portico.registry.get("other"));
  const gone = await rpc("other", {
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {} },
  });
  assert.equal(gone.status, 404);
});

it("a cancellation that went by while the subscription was down ends the call once it is back", async () => {
  const sid = await openSession(portico.mcpUrl("slow"));
  const call = await fetch(portico.mcpUrl("slow"), {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 12,
      method: "tools/call",
      params: { name: "dyn__slow", arguments: { ms: 20_000 }, _meta: { progressToken: 1 } },
    }),
  });
  // The first progress notification makes the answer a stream, carried here: this replica now
  // listens on the session's channel.
  let seen = "";
  const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
  while (!seen.includes("notifications/progress")) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the stream ended early: ${seen}`);
    seen += value;
  }
  // What another replica does with a cancellation POSTed to it: kept, then published. Here the
  // publication never reaches this replica, as if its subscription was down when it went by.
  const raw = new Redis(redis.url);
  try {
    await raw.set(portico.keys.clientCancel("slow", sid, "12"), "1", "EX", 60);
    await raw.call("CLIENT", "KILL", "TYPE", "pubsub");
  } finally {
    raw.disconnect();
  }
  const started = Date.now();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  assert.ok(Date.now() - started < 5000, `the call ended at the resubscription (${Date.now() - started} ms)`);
  assert.ok(!seen.includes('"id":12'), `no response after the cancellation, got: ${seen}`);
  await eventually("the upstream call cancelled", async () =>
    dynamic.events.some((e) => e.startsWith("cancelled:")),
  );
});
