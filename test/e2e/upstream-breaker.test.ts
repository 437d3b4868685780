// The circuit breaker as a user sees it through a running Portico (docs/upstream-mcp.md "Circuit
// breaker"): an upstream that goes away opens its provider's breaker after
// PORTICO_UPSTREAM_BREAKER_FAILURES calls; tools/call then answers at once with an isError result
// saying when it is retried, and the admin API (health, the provider list) and /metrics say so; the
// health probe closes it when the upstream is back.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { openSession, postRpc } from "../support/rpc.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scripted-upstream.js";

let portico: RunningPortico;
let admin: AdminClient;
let upstream: ScriptedUpstream;
let mcpUrl: string;
let sid: string;

before(async () => {
  upstream = await startScriptedUpstream((call) =>
    call.reply({ result: { content: [{ type: "text", text: "done" }] } }),
  );
  portico = await startPortico({
    tenants: [],
    env: {
      PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
      PORTICO_UPSTREAM_BREAKER_FAILURES: "3",
      // Long enough that the checks made while it is open finish before its probe, however slow.
      PORTICO_UPSTREAM_BREAKER_OPEN_MS: "2000",
      PORTICO_UPSTREAM_HEALTH_INTERVAL_MS: "200",
    },
  });
  admin = new AdminClient(portico.url);
  assert.equal((await admin.post("/tenants", { id: "acme", auth: "none" })).status, 201);
  const saved = await admin.post("/tenants/acme/providers", {
    id: "flaky",
    kind: "mcp",
    url: upstream.url,
    era: "session",
    prefix: "f",
  });
  assert.equal(saved.status, 201);
  assert.deepEqual(saved.body.health.breaker, { state: "closed", consecutiveFailures: 0 });
  mcpUrl = `${portico.url}/mcp/acme`;
  sid = await openSession(mcpUrl);
});

after(async () => {
  await portico.close();
  await upstream.close();
});

async function callTool(): Promise<{ isError?: boolean; text: string; ms: number }> {
  const started = performance.now();
  const res = await postRpc(
    mcpUrl,
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "f__work", arguments: {} } },
    sid,
  );
  const body = (await res.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } };
  return {
    isError: body.result.isError,
    text: body.result.content[0]!.text,
    ms: performance.now() - started,
  };
}

async function sample(name: string): Promise<number | undefined> {
  const text = await (await fetch(`${portico.url}/metrics`)).text();
  const match = new RegExp(`^${name}\\{tenant="acme",provider="flaky"\\} (\\S+)$`, "m").exec(text);
  return match ? Number(match[1]) : undefined;
}

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("an upstream that goes away and comes back", () => {
  it("opens the breaker after three failures: calls fail fast, health, the list and metrics say so", async () => {
    assert.equal((await callTool()).text, "done");
    assert.equal(await sample("portico_provider_breaker_state"), 0);
    await upstream.down();
    for (let i = 0; i < 3; i++) assert.equal((await callTool()).isError, true);
    const fast = await callTool();
    assert.equal(fast.isError, true);
    assert.match(
      fast.text,
      /^Provider 'flaky' is unavailable: it is failing \(3 failures in a row, the last: connection refused\); it will be retried in [12] s$/,
    );
    assert.ok(fast.ms < 1000, `${fast.ms} ms`);

    const health = await admin.get("/tenants/acme/providers/flaky/health");
    assert.equal(health.status, 200);
    assert.equal(health.body.status, "unhealthy");
    assert.match(health.body.reason, /^circuit breaker (open|half-open) after 3 failures in a row/);
    assert.equal(health.body.breaker.consecutiveFailures, 3);
    const list = await admin.get("/tenants/acme/providers");
    const listed = (list.body.items as Array<{ id: string; health: { breaker?: { state: string } } }>).find(
      (p) => p.id === "flaky",
    );
    assert.match(listed!.health.breaker!.state, /^(open|half-open)$/);
    assert.ok((await sample("portico_provider_breaker_state"))! >= 1);
    assert.ok((await sample("portico_upstream_fast_failed_total"))! >= 1);
  });

  it("the health probe closes it once the upstream is back, and calls go through", async () => {
    await upstream.up();
    await until(
      async () => (await admin.get("/tenants/acme/providers/flaky/health")).body.status === "healthy",
    );
    const health = await admin.get("/tenants/acme/providers/flaky/health");
    assert.deepEqual(health.body.breaker, { state: "closed", consecutiveFailures: 0 });
    assert.equal(await sample("portico_provider_breaker_state"), 0);
    assert.equal((await callTool()).text, "done");
  });
});
