// A rolling restart loses nothing (docs/operations.md#graceful-shutdown-and-rolling-updates): two
// replica processes behind a balancer that probes /readyz; official SDK clients of both eras call
// continuously; SIGTERM to one replica turns its /readyz 503 at once while it still serves (its
// /healthz and its MCP endpoint answer), a call in flight on it finishes, it exits 0 after the
// delay and that call, no client call fails, and started again it takes its share once more. A
// second signal during the delay skips the rest of it.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import type { TenantConfig } from "../../src/records/tenant.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startBalancer, type Balancer } from "../support/balancer.js";
import { connectClient } from "../support/clients.js";
import { modernCaller, oneCall, sessionCaller, Tally, type Era } from "../support/load-clients.js";
import { uniquePrefix } from "../support/redis.js";
import { startReplicaProcess, type ReplicaProcess } from "../support/replica-process.js";

const DELAY_MS = 2000;
const SLOW_CALL_MS = 3500;

// An HTTP tool that answers after the number of milliseconds it is asked to wait.
const arrivals: number[] = [];
const slow = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const { ms } = JSON.parse(Buffer.concat(chunks).toString()) as { ms: number };
    arrivals.push(ms);
    setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(`{"waited":${ms}}`), ms);
  });
});

let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let balancer: Balancer;
let a: ReplicaProcess;
let b: ReplicaProcess;

before(async () => {
  await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
  upstream = await startConformanceUpstream();
  const tenants: TenantConfig[] = [
    {
      id: "acme",
      auth: "none",
      providers: [
        { id: "ref", kind: "mcp", url: upstream.url },
        {
          id: "slow",
          kind: "http",
          tools: [
            {
              name: "wait",
              url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`,
              timeoutMs: 30_000,
            },
          ],
        },
      ],
    },
  ];
  balancer = await startBalancer(0, { readinessPath: "/readyz", pollMs: 250 });
  const env = {
    PORTICO_PUBLIC_URL: balancer.url,
    PORTICO_SHUTDOWN_DELAY_SECONDS: String(DELAY_MS / 1000),
    PORTICO_SSE_RETRY_MS: "200",
  };
  const prefix = uniquePrefix();
  [a, b] = await Promise.all([
    startReplicaProcess({ redisPrefix: prefix, tenants, env }),
    startReplicaProcess({ redisPrefix: prefix, tenants, env }),
  ]);
  balancer.use([a.url, b.url]);
});

after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await balancer?.close();
  await upstream?.close();
  slow.close();
});

/** Clients of both eras calling through the balancer until `stop` is called. */
function load(clients: number) {
  const tally = new Tally();
  let running = true;
  const one = async (i: number) => {
    const era: Era = i % 2 ? "2026-07-28" : "session";
    for (let j = 0; running;) {
      try {
        const caller = await (era === "session" ? sessionCaller : modernCaller)(`${balancer.url}/mcp/acme`);
        for (const end = j + 6; j < end && running; j++)
          await oneCall(caller, `c${i}-${j}`, j % 3).then(
            () => tally.passed[era]++,
            (err: unknown) => tally.note(`${era} call: ${String(err)}`),
          );
        await caller.close();
      } catch (err) {
        tally.note(`${era} connect or close: ${String(err)}`);
      }
    }
  };
  const done = Promise.all(Array.from({ length: clients }, (_, i) => one(i)));
  return {
    tally,
    stop: () => ((running = false), done),
  };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const status = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2000) }).then(async (r) => (await r.arrayBuffer(), r.status));

it("SIGTERM drains one replica: not ready at once, still serving, nothing lost, back after a restart", async () => {
  const traffic = load(6);
  await until(() => traffic.tally.total >= 30, 15_000, "calls pass before the restart");

  // A call in flight on A when the signal comes (its client talks to A directly).
  const direct = await connectClient(`${a.url}/mcp/acme`);
  const inFlight = direct.client.callTool({ name: "wait", arguments: { ms: SLOW_CALL_MS } });
  await until(() => arrivals.includes(SLOW_CALL_MS), 10_000, "the slow call reaches the tool");

  const signalled = Date.now();
  a.signal("SIGTERM");
  await until(async () => (await status(`${a.url}/readyz`)) === 503, 1000, "/readyz turns 503");
  assert.ok(Date.now() - signalled < 1000, "not ready at once");
  assert.equal(await status(`${a.url}/healthz`), 200, "live during the delay");
  const tools = await direct.client.listTools();
  assert.ok(
    tools.tools.some((t) => t.name === "wait"),
    "A still serves MCP requests during the delay",
  );
  await until(() => !balancer.ready(0), 1000, "the balancer takes A out of the rotation");
  const servedBeforeExit = balancer.routed.length;

  assert.deepEqual(
    (await inFlight).structuredContent,
    { waited: SLOW_CALL_MS },
    "the call in flight was answered",
  );
  assert.equal(await a.exited(), 0, "A exits 0");
  const exitedAfter = Date.now() - signalled;
  assert.ok(exitedAfter >= DELAY_MS, `A served on through the delay (exited after ${exitedAfter} ms)`);
  assert.ok(exitedAfter < DELAY_MS + SLOW_CALL_MS + 5000, `A exited promptly (${exitedAfter} ms)`);
  await direct.transport.close();
  assert.ok(balancer.routed.length > servedBeforeExit, "the load went on through B");

  await a.restart();
  const restartedFrom = balancer.routed.length;
  await until(
    () => balancer.routed.slice(restartedFrom).some((r) => r.backend === 0 && r.status === 200),
    10_000,
    "the restarted replica serves again",
  );
  await stop(traffic);
});

async function stop(traffic: ReturnType<typeof load>) {
  await traffic.stop();
  assert.deepEqual([...traffic.tally.errors], [], "no call failed");
  assert.ok(traffic.tally.passed.session > 0 && traffic.tally.passed["2026-07-28"] > 0, "both eras called");
}

it("a second signal during the delay skips the rest of it", async () => {
  const c = await startReplicaProcess({
    redisPrefix: uniquePrefix(),
    tenants: [{ id: "acme", auth: "none", providers: [] }],
    env: { PORTICO_SHUTDOWN_DELAY_SECONDS: "60" },
  });
  try {
    c.signal("SIGTERM");
    await until(async () => (await status(`${c.url}/readyz`)) === 503, 1000, "/readyz turns 503");
    const second = Date.now();
    c.signal("SIGINT");
    assert.equal(await c.exited(), 0, "closed gracefully, not killed");
    assert.ok(Date.now() - second < 5000, `exited ${Date.now() - second} ms after the second signal`);
  } finally {
    await c.stop();
  }
});

it("a first SIGINT (Ctrl-C at a terminal) closes without the delay", async () => {
  const c = await startReplicaProcess({
    redisPrefix: uniquePrefix(),
    tenants: [{ id: "acme", auth: "none", providers: [] }],
    env: { PORTICO_SHUTDOWN_DELAY_SECONDS: "60" },
  });
  try {
    const sent = Date.now();
    c.signal("SIGINT");
    assert.equal(await c.exited(), 0, "closed gracefully, not killed");
    assert.ok(Date.now() - sent < 5000, `exited ${Date.now() - sent} ms after SIGINT`);
  } finally {
    await c.stop();
  }
});
