// Redis going away and coming back: requests fail fast with 503 and a JSON-RPC error that says
// so, nothing crashes, and Portico serves again once Redis is back.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { startOwnRedis } from "../support/redis.js";

let redis: Awaited<ReturnType<typeof startOwnRedis>>;
let portico: RunningPortico;
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

before(async () => {
  redis = await startOwnRedis();
  portico = await startPortico({ tenants: [staticTenant("acme")], env: { PORTICO_REDIS_URL: redis.url } });
});
after(async () => {
  await portico.close();
  await redis.stop();
});

const initialize = () =>
  fetch(portico.mcpUrl("acme"), {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    }),
  });

it("answers 503 while Redis is down, and serves again when it is back", async () => {
  const ok = await initialize();
  const sid = ok.headers.get("mcp-session-id")!;
  assert.equal(ok.status, 200);

  await redis.stop();
  const started = Date.now();
  const down = await fetch(portico.mcpUrl("acme"), {
    method: "POST",
    headers: { ...HEADERS, "mcp-session-id": sid },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
  });
  assert.equal(down.status, 503);
  const body = (await down.json()) as { id: number; error: { message: string } };
  assert.equal(body.id, 2);
  assert.match(body.error.message, /session store cannot be reached/);
  assert.ok(Date.now() - started < 5000, "fails fast");
  const ready = await fetch(`${portico.url}/readyz`);
  assert.equal(ready.status, 503);

  redis = await startOwnRedis(redis.port);
  let again = await initialize();
  for (let i = 0; i < 50 && again.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    again = await initialize();
  }
  assert.equal(again.status, 200);
});
