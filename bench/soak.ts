// `npm run soak`: a steady mixed load of both eras against one Portico (dist/main.js, its own
// redis-server, the conformance upstream fixture, each a process) for SOAK_MINUTES (default 10) or
// SOAK_SECONDS, printing at intervals Portico's RSS and heap after a GC, its event-loop delay p99
// (nodejs_eventloop_lag_p99_seconds on /metrics, reset at each scrape) and Redis's used_memory and
// key count. Verdict: no failed call, RSS and heap after warm-up grow ≤ 5 %, p99 stable.
// docs/operations.md#soak.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { modernCaller, oneCall, sessionCaller, Tally, type Era } from "../test/support/load-clients.js";
import { gcAndMeasure, startPortico, startRedis, startUpstream } from "./services.js";

const SECONDS = Number(process.env.SOAK_SECONDS ?? Number(process.env.SOAK_MINUTES ?? 10) * 60);
const INTERVAL_SECONDS = Number(
  process.env.SOAK_INTERVAL_SECONDS ?? Math.min(30, Math.max(5, Math.round(SECONDS / 10))),
);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? Math.max(INTERVAL_SECONDS, SECONDS * 0.2));
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8);
const LISTENERS = Number(process.env.SOAK_LISTENERS ?? 2);
const PAUSE_MS = Number(process.env.SOAK_PAUSE_MS ?? 50);
/** Calls per session (SDK v1) or per client (SDK v2) before it ends and a new one starts. */
const CALLS_PER_CLIENT = 6;
const LISTEN_HOLD_MS = 5000;
const GROWTH_LIMIT = 0.05;

const log = (msg: string) => console.error(`soak: ${msg}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  readonly atSeconds: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly loopP99Ms: number;
  readonly redisUsedBytes: number;
  readonly redisKeys: number;
  readonly calls: number;
  readonly failed: number;
}

let running = true;
const tally = new Tally();

/** A client of one era: CALLS_PER_CLIENT calls, then it ends (a session: DELETE) and a new one starts. */
async function caller(url: string, era: Era, i: number): Promise<void> {
  for (let j = 0; running;) {
    try {
      const c = await (era === "session" ? sessionCaller : modernCaller)(url);
      for (const end = j + CALLS_PER_CLIENT; j < end && running; j++) {
        await oneCall(c, `s${i}-${j}`, j % 3).then(
          () => tally.passed[era]++,
          (err: unknown) => tally.note(`${era}: ${String(err)}`),
        );
        await sleep(PAUSE_MS);
      }
      await c.close();
    } catch (err) {
      if (running) tally.note(`${era} connect or close: ${String(err)}`);
      await sleep(PAUSE_MS);
    }
  }
}

/** Holds a 2026-07-28 `subscriptions/listen` stream for a few seconds, then opens another. */
async function listener(url: string, i: number): Promise<void> {
  for (let n = 0; running; n++) {
    const abort = new AbortController();
    const hold = setTimeout(() => abort.abort(), LISTEN_HOLD_MS);
    try {
      const res = await fetch(url, {
        method: "POST",
        signal: abort.signal,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "subscriptions/listen",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: `listen-${i}-${n}`,
          method: "subscriptions/listen",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
              "io.modelcontextprotocol/clientInfo": { name: "soak-listener", version: "1" },
            },
            notifications: { toolsListChanged: true, resourcesListChanged: true },
          },
        }),
      });
      if (res.status !== 200) tally.note(`listen: HTTP ${res.status}`);
      for await (const chunk of res.body ?? []) void chunk;
    } catch (err) {
      if (!abort.signal.aborted) tally.note(`listen: ${String(err)}`);
    } finally {
      clearTimeout(hold);
    }
  }
}

async function loopP99Ms(porticoUrl: string): Promise<number> {
  const text = await (await fetch(`${porticoUrl}/metrics`)).text();
  const v = /^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text)?.[1];
  return v === undefined ? NaN : Number(v) * 1000;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;

function printSample(s: Sample): void {
  console.log(
    `${String(s.atSeconds).padStart(5)} s  rss ${mb(s.rssBytes)} MB  heap ${mb(s.heapUsedBytes)} MB  ` +
      `loop p99 ${s.loopP99Ms.toFixed(1)} ms  redis ${mb(s.redisUsedBytes)} MB ${s.redisKeys} keys  ` +
      `calls ${s.calls} (${s.failed} failed)`,
  );
}

/** The verdict over the samples taken after warm-up; true when it passes. */
function verdict(samples: readonly Sample[]): boolean {
  const after = samples.filter((s) => s.atSeconds >= WARMUP_SECONDS);
  if (after.length < 2) {
    console.log("verdict: too few samples after warm-up (run longer)");
    return false;
  }
  const first = after[0]!;
  const last = after.at(-1)!;
  const growth = (k: "rssBytes" | "heapUsedBytes") => (last[k] - first[k]) / first[k];
  const half = Math.ceil(after.length / 2);
  const p99Early = median(after.slice(0, half).map((s) => s.loopP99Ms));
  const p99Late = median(after.slice(half - (after.length % 2 ? 1 : 0)).map((s) => s.loopP99Ms));
  const checks: Array<[string, boolean]> = [
    [`no failed call (${tally.failed} failed of ${tally.total + tally.failed})`, tally.failed === 0],
    [
      `RSS growth after warm-up ${(growth("rssBytes") * 100).toFixed(1)} % ≤ 5 %`,
      growth("rssBytes") <= GROWTH_LIMIT,
    ],
    [
      `heap growth after warm-up ${(growth("heapUsedBytes") * 100).toFixed(1)} % ≤ 5 %`,
      growth("heapUsedBytes") <= GROWTH_LIMIT,
    ],
    [
      `event-loop p99 stable: median ${p99Early.toFixed(1)} ms, then ${p99Late.toFixed(1)} ms (≤ 1.5× + 5 ms)`,
      p99Late <= p99Early * 1.5 + 5,
    ],
  ];
  const redisGrowth = last.redisKeys - first.redisKeys;
  for (const [what, ok] of checks) console.log(`  ${ok ? "ok  " : "FAIL"} ${what}`);
  console.log(
    `  info Redis after warm-up: ${mb(first.redisUsedBytes)} → ${mb(last.redisUsedBytes)} MB, ` +
      `${first.redisKeys} → ${last.redisKeys} keys (${redisGrowth >= 0 ? "+" : ""}${redisGrowth})`,
  );
  return checks.every(([, ok]) => ok);
}

/** Redis's keys by pattern (ids masked), and how many have no TTL: what would grow without bound. */
async function printKeys(redis: Redis): Promise<void> {
  const patterns = new Map<string, { keys: number; noTtl: number }>();
  for await (const batch of redis.scanStream({ count: 1000 }) as AsyncIterable<string[]>)
    for (const key of batch) {
      const tag = key.indexOf("}") + 1;
      const pattern = key.slice(0, tag) + key.slice(tag).replace(/:[A-Za-z0-9_.-]{6,}(?=:|$)/g, ":…");
      const entry = patterns.get(pattern) ?? { keys: 0, noTtl: 0 };
      entry.keys++;
      if ((await redis.ttl(key)) === -1) entry.noTtl++;
      patterns.set(pattern, entry);
    }
  const top = [...patterns].sort((x, y) => y[1].keys - x[1].keys).slice(0, 8);
  for (const [pattern, { keys, noTtl }] of top)
    console.log(`  keys ${String(keys).padStart(6)} ${pattern} (${noTtl} without TTL)`);
}

const build = spawnSync(process.execPath, ["scripts/build-if-stale.js"], { stdio: "inherit" });
if (build.status !== 0) throw new Error("the build failed");
const dir = mkdtempSync(join(tmpdir(), "portico-soak-"));
const redisService = await startRedis(dir);
const upstream = await startUpstream();
const configFile = join(dir, "portico.json");
const providers = [{ id: "ref", kind: "mcp", url: upstream.url }];
writeFileSync(configFile, JSON.stringify({ tenants: [{ id: "acme", auth: "none", providers }] }));
const portico = await startPortico({ redisUrl: redisService.url, configFile });
const redis = new Redis(redisService.url);
const mcpUrl = `${portico.url}/mcp/acme`;
log(
  `${SECONDS} s: ${CLIENTS} clients (half SDK v1 sessions, half SDK v2 2026-07-28), ${LISTENERS} listen ` +
    `streams, a sample every ${INTERVAL_SECONDS} s, warm-up ${WARMUP_SECONDS} s`,
);

const load = [
  ...Array.from({ length: CLIENTS }, (_, i) => caller(mcpUrl, i % 2 ? "2026-07-28" : "session", i)),
  ...Array.from({ length: LISTENERS }, (_, i) => listener(mcpUrl, i)),
];
const started = Date.now();
const samples: Sample[] = [];
let passed: boolean;
try {
  // The last sample falls at the end of the run, not a moment after it.
  while (Date.now() - started < SECONDS * 1000 - 1000) {
    await sleep(Math.min(INTERVAL_SECONDS * 1000, started + SECONDS * 1000 - Date.now()));
    const loop = await loopP99Ms(portico.url);
    const memory = await gcAndMeasure(portico);
    const info = await redis.info("memory");
    const sample: Sample = {
      atSeconds: Math.round((Date.now() - started) / 1000),
      rssBytes: memory.rssBytes,
      heapUsedBytes: memory.heapUsedBytes,
      loopP99Ms: loop,
      redisUsedBytes: Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN),
      redisKeys: await redis.dbsize(),
      calls: tally.total,
      failed: tally.failed,
    };
    samples.push(sample);
    printSample(sample);
  }
  running = false;
  await Promise.all(load);
  for (const [message, count] of tally.errors) console.log(`  ${count} × ${message}`);
  console.log(
    `soak: ${tally.total} calls (session era ${tally.passed.session}, 2026-07-28 ${tally.passed["2026-07-28"]}) ` +
      `in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  passed = verdict(samples);
  await printKeys(redis);
} finally {
  running = false;
  redis.disconnect();
  await portico.child.stop();
  await upstream.child.stop();
  await redisService.child.stop();
}
console.log(`soak: ${passed ? "PASS" : "FAIL"}`);
process.exit(passed ? 0 : 1);
