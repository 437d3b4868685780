// Store outages in the log (src/store/availability-log.ts): a real redis-server stopped under a
// Portico serving requests gives one warning however many requests fail, its restart one line
// saying it is back, and a second outage its own warning.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import { StoreAvailabilityLog } from "../../src/store/availability-log.js";
import { staticTenant, TEST_SECRET } from "../support/portico.js";
import { startOwnRedis } from "../support/redis.js";
import { MCP_HEADERS, openSession } from "../support/rpc.js";

type Line = { level: number; msg: string; [field: string]: unknown };

let redis: Awaited<ReturnType<typeof startOwnRedis>>;
let portico: Portico;
let url: string;
// An outage, not a data loss: the restarted server has what the stopped one had (tenants included).
const aofDir = mkdtempSync(join(tmpdir(), "portico-availability-"));
const raw: string[] = [];
const lines = () => raw.map((l) => JSON.parse(l) as Line);
const about = (word: RegExp) => lines().filter((l) => l.msg.startsWith("store:") && word.test(l.msg));

before(async () => {
  redis = await startOwnRedis(undefined, { aofDir });
  const config = loadConfig({
    PORT: "0",
    PORTICO_LOG_LEVEL: "info",
    PORTICO_SECRET_KEY: TEST_SECRET,
    PORTICO_REDIS_URL: redis.url,
  });
  portico = await buildApp(config, {
    tenants: [staticTenant("acme")],
    logStream: { write: (line) => void raw.push(line) },
  });
  await portico.app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(portico.app.server.address() as AddressInfo).port}`;
});
after(async () => {
  await portico.app.close();
  await redis.stop();
});

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ping = (sid: string) =>
  fetch(`${url}/mcp/acme`, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": sid },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });

it(
  "logs an outage once however many requests fail, and the recovery once",
  { timeout: 120_000 },
  async () => {
    const sid = await openSession(`${url}/mcp/acme`);
    assert.deepEqual(about(/./), [], "nothing about the store while it answers");

    for (let outage = 1; outage <= 2; outage++) {
      const port = redis.port;
      await redis.stop();
      // Many requests failing at once (each MCP request tries several commands while Redis is away).
      const failed = await Promise.all([
        ...Array.from({ length: 3 }, () => ping(sid)),
        ...Array.from({ length: 10 }, () => fetch(`${url}/readyz`)),
      ]);
      assert.deepEqual(new Set(failed.map((r) => r.status)), new Set([503]));
      // ioredis keeps trying to reconnect meanwhile: each failed attempt is an error event.
      await new Promise((r) => setTimeout(r, 500));
      const down = about(/cannot be reached/);
      assert.equal(down.length, outage, JSON.stringify(down));
      assert.equal(down.at(-1)!.level, 40);
      assert.equal(
        down.at(-1)!.msg,
        "store: redis cannot be reached; MCP and admin requests answer 503 until it is back",
      );
      assert.equal(down.at(-1)!.reason, "ECONNREFUSED");
      assert.equal(about(/reachable again/).length, outage - 1);

      redis = await startOwnRedis(port, { aofDir });
      await eventually("/readyz 200", async () => (await fetch(`${url}/readyz`)).status === 200);
      for (let i = 0; i < 5; i++) await fetch(`${url}/readyz`);
      const up = about(/reachable again/);
      assert.equal(up.length, outage, JSON.stringify(up));
      assert.equal(up.at(-1)!.level, 30);
      assert.match(up.at(-1)!.msg, /^store: redis reachable again after \d+(\.\d)? m?s$/);
      assert.equal(typeof up.at(-1)!.downMs, "number");
      assert.equal(about(/cannot be reached/).length, outage, "no warning after the recovery");
    }
  },
);

it("a listener that throws is a bug: logged every time, and starts no outage", () => {
  const logged: Array<[string, string]> = [];
  const log = {
    warn: (_: object, msg: string) => void logged.push(["warn", msg]),
    info: (_: object, msg: string) => void logged.push(["info", msg]),
    error: (_: object, msg: string) => void logged.push(["error", msg]),
  };
  let now = 1000;
  const availability = new StoreAvailabilityLog(log, "redis", () => now);
  availability.error(new TypeError("x is undefined"));
  availability.error(new TypeError("x is undefined"));
  assert.equal(availability.down, false);
  availability.command(true);
  availability.error(new Error("connect ECONNREFUSED 127.0.0.1:6379"));
  availability.command(false);
  availability.error(new Error("Connection is closed."));
  now += 2500;
  availability.command(true);
  availability.command(true);
  assert.deepEqual(logged, [
    ["error", "store: a change listener failed"],
    ["error", "store: a change listener failed"],
    ["warn", "store: redis cannot be reached; MCP and admin requests answer 503 until it is back"],
    ["info", "store: redis reachable again after 2.5 s"],
  ]);
});
