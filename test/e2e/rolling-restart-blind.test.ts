// A rolling restart behind a balancer that has no health checks (nginx's default): it learns that a
// backend is gone only when its connection is refused, moves a request on only when nothing was
// sent (`proxy_next_upstream error`), and never sends a POST twice. Two replica processes are
// restarted in turn under 20 official SDK clients of both eras; no call may fail: a request that
// reaches a replica while it closes is served, not refused with 503, and no connection the
// replica accepted is reset (docs/operations.md#graceful-shutdown-and-rolling-updates).
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import type { TenantConfig } from "../../src/records/tenant.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startBalancer, type Balancer } from "../support/balancer.js";
import { modernCaller, oneCall, sessionCaller, Tally, type Era } from "../support/load-clients.js";
import { uniquePrefix } from "../support/redis.js";
import { startReplicaProcess, type ReplicaProcess } from "../support/replica-process.js";

let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let balancer: Balancer;
let replicas: ReplicaProcess[];

before(async () => {
  upstream = await startConformanceUpstream();
  const tenants: TenantConfig[] = [
    { id: "acme", auth: "none", providers: [{ id: "ref", kind: "mcp", url: upstream.url }] },
  ];
  balancer = await startBalancer(0);
  const env = {
    PORTICO_PUBLIC_URL: balancer.url,
    PORTICO_SHUTDOWN_DELAY_SECONDS: "1",
    PORTICO_SSE_RETRY_MS: "200",
  };
  const prefix = uniquePrefix();
  replicas = await Promise.all([
    startReplicaProcess({ redisPrefix: prefix, tenants, env }),
    startReplicaProcess({ redisPrefix: prefix, tenants, env }),
  ]);
  balancer.use(replicas.map((r) => r.url));
});

after(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await balancer?.close();
  await upstream?.close();
});

async function until(condition: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it("restarting both replicas in turn under 20 clients loses no call", async () => {
  const tally = new Tally();
  let running = true;
  const client = async (i: number) => {
    const era: Era = i % 2 ? "2026-07-28" : "session";
    for (let j = 0; running;) {
      try {
        const caller = await (era === "session" ? sessionCaller : modernCaller)(`${balancer.url}/mcp/acme`);
        for (const end = j + 10; j < end && running; j++)
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
  const clients = Promise.all(Array.from({ length: 20 }, (_, i) => client(i)));
  await until(() => tally.total >= 100, 20_000, "calls pass before the restarts");
  for (const [index, replica] of replicas.entries()) {
    replica.signal("SIGTERM");
    assert.equal(await replica.exited(), 0, `replica ${index} exits 0`);
    await replica.restart();
    const from = balancer.routed.length;
    await until(
      () => balancer.routed.slice(from).some((r) => r.backend === index && r.status === 200),
      15_000,
      `replica ${index} serves again`,
    );
  }
  const after = tally.total;
  await until(() => tally.total >= after + 100, 20_000, "calls pass after the restarts");
  running = false;
  await clients;
  const cut = balancer.routed
    .filter((r) => r.failure)
    .map((r) => `${r.method} to ${r.backend}: ${r.failure}`);
  assert.deepEqual(
    [...tally.errors],
    [],
    `no call failed (of ${tally.total}); cut by a backend: ${cut.join("; ")}`,
  );
  assert.ok(tally.passed.session > 0 && tally.passed["2026-07-28"] > 0, "both eras called");
});
