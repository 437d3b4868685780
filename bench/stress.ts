// `npm run stress`: correctness under load. Two replica processes on one Redis behind a round-robin
// balancer that probes /readyz (test/support/balancer.ts); CLIENTS official-SDK clients, half
// session-era (SDK v1) and half 2026-07-28 (SDK v2), each make CALLS calls mixing progress,
// sampling (its answer usually landing on the other replica) and reads. A 2026-07-28 client's
// sampling is the era bridge under load: the upstream call is held on one replica while the
// client's retry with the answer lands on the other. With STRESS_ROLLING=1, while the load runs,
// replica A is restarted (SIGTERM, exit, start on the same port), then B, and the clients keep
// calling (a new session every few calls) until both are back; STRESS_BLIND=1 takes the balancer's
// readiness probe away (nginx's default: a backend is skipped only once its connection is
// refused). Every answer is checked; exits 1 on any failed call.
import { startConformanceUpstream } from "../test/fixtures/conformance-server.js";
import { startBalancer } from "../test/support/balancer.js";
import { modernCaller, oneCall, sessionCaller, Tally, type Era } from "../test/support/load-clients.js";
import { startReplicaProcess, type ReplicaProcess } from "../test/support/replica-process.js";
import { uniquePrefix } from "../test/support/redis.js";

const CLIENTS = Number(process.env.STRESS_CLIENTS ?? 200);
const CALLS = Number(process.env.STRESS_CALLS ?? 15);
const ROLLING = process.env.STRESS_ROLLING === "1";
const BLIND = process.env.STRESS_BLIND === "1";
/** The replicas' PORTICO_SHUTDOWN_DELAY_SECONDS in a rolling run. */
const DELAY_SECONDS = process.env.STRESS_SHUTDOWN_DELAY_SECONDS ?? "2";
/** In a rolling run, each client ends its session and opens a new one after this many calls. */
const CALLS_PER_SESSION = 5;
/**
 * Every stress client comes from 127.0.0.1: CLIENTS × CALLS requests in well under a minute is
 * past the default per-address limit (docs/security.md), so the limits are set explicitly.
 */
const ENV = {
  PORTICO_RATE_LIMIT_REQUESTS_PER_MINUTE: "100000000",
  PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "100000000",
  PORTICO_MAX_SESSIONS_PER_ADDRESS: "0",
  PORTICO_SHUTDOWN_DELAY_SECONDS: DELAY_SECONDS,
  PORTICO_SSE_RETRY_MS: "250",
};

const log = (msg: string) => console.error(`stress: ${msg}`);

/** SIGTERM, wait for the exit, start again on the same port; resolves once it is ready. */
async function restart(name: string, replica: ReplicaProcess): Promise<void> {
  const t0 = Date.now();
  replica.signal("SIGTERM");
  const code = await replica.exited();
  log(`replica ${name} exited ${code} after ${Date.now() - t0} ms`);
  if (code !== 0) throw new Error(`replica ${name} exited ${code}:\n${replica.output()}`);
  await replica.restart();
  log(`replica ${name} ready again after ${Date.now() - t0} ms`);
}

const upstream = await startConformanceUpstream();
const tenants = [
  { id: "acme", auth: "none" as const, providers: [{ id: "ref", kind: "mcp" as const, url: upstream.url }] },
];
const balancer = await startBalancer(0, BLIND ? {} : { readinessPath: "/readyz" });
const prefix = uniquePrefix();
const env = { ...ENV, PORTICO_PUBLIC_URL: balancer.url };
const [a, b] = await Promise.all([
  startReplicaProcess({ redisPrefix: prefix, tenants, env }),
  startReplicaProcess({ redisPrefix: prefix, tenants, env }),
]);
balancer.use([a.url, b.url]);
const mcpUrl = `${balancer.url}/mcp/acme`;
const tally = new Tally();
let rolled = !ROLLING;
const started = Date.now();

/** One client: CALLS calls on one session, or in a rolling run sessions of a few calls until both replicas are back. */
async function client(i: number): Promise<void> {
  const era: Era = i % 2 ? "2026-07-28" : "session";
  let j = 0;
  while (j < CALLS || !rolled) {
    try {
      const caller = await (era === "session" ? sessionCaller : modernCaller)(mcpUrl);
      const last = ROLLING ? j + CALLS_PER_SESSION : CALLS;
      for (; j < last && (j < CALLS || !rolled); j++)
        await oneCall(caller, `q${i}-${j}`, j % 3).then(
          () => tally.passed[era]++,
          (err: unknown) => tally.note(`${era}: ${String(err)}`),
        );
      await caller.close();
    } catch (err) {
      tally.note(`${era} connect or close: ${String(err)}`);
      j++;
    }
  }
}

try {
  const load = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  if (ROLLING) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await restart("A", a);
    await restart("B", b);
    rolled = true;
  }
  await load;
} finally {
  await Promise.all([a.stop(), b.stop()]);
  await balancer.close();
  await upstream.close();
}
const retried = balancer.routed.filter((r) => r.refusedBy.length > 0).length;
console.log(
  `${CLIENTS} clients over two replica processes behind the ${BLIND ? "blind " : ""}balancer in ${Date.now() - started} ms` +
    (ROLLING
      ? ` (rolling: A then B restarted; ${retried} requests moved on after a refused connection)`
      : ""),
);
for (const [message, count] of tally.errors) console.log(`  ${count} × ${message}`);
for (const r of balancer.routed.filter((r) => r.failure))
  console.log(`  cut by backend ${r.backend}: ${r.method} (${r.mcpMethod ?? "session era"}): ${r.failure}`);
console.log(
  `stress: ${tally.total} passed (session era ${tally.passed.session}, ` +
    `2026-07-28 ${tally.passed["2026-07-28"]}), ${tally.failed} failed`,
);
process.exit(tally.failed === 0 ? 0 : 1);
