// `npm run bench`: builds Portico, starts Redis, the upstream fixture, Portico (dist/main.js), a
// bare Fastify baseline, the SDK v2 handler, the minimal upstream and the bare forwarder each in its
// own process, runs the measurements of docs/performance.md, prints the report and writes a JSON
// copy under .bench/. Every child is killed on exit or signal. Settings: BENCH_DURATION,
// BENCH_ROUNDS, BENCH_CALLS, BENCH_SESSIONS, BENCH_STATELESS_DURATION, BENCH_FORWARD_*, BENCH_ONLY,
// BENCH_CPU_PROF, BENCH_BASELINE (see the doc).
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  FORWARD_SESSION_TENANT,
  FORWARD_STATELESS_TENANT,
  measureFixedRate,
  measureSaturated,
  prepareForward,
  type ForwardTargets,
  type RateLoad,
} from "./forward.js";
import { measureForwardMemory, type ForwardMemory } from "./forward-memory.js";
import { forwardGoals, forwardResults, type ForwardResults } from "./forward-report.js";
import { initializeBody } from "./mcp-client.js";
import * as m from "./measurements.js";
import { measureRedis, measureRss, measureToolSessions } from "./memory.js";
import { atExit, killAll, requireBinary, spawnChild, type Child } from "./processes.js";
import {
  bestP50,
  bestRps,
  formatForwardReport,
  formatReport,
  formatStatelessReport,
  writeJson,
  type Results,
} from "./report.js";
import {
  startBare,
  startBareForwarder,
  startForwardUpstream,
  type ForwardUpstream,
  startPortico,
  startRedis,
  startSdkHandler,
  startUpstream,
  gcAndMeasure,
  type Service,
} from "./services.js";
import {
  checkStatelessRead,
  measureStateless,
  STATELESS_HEADERS,
  STATELESS_READ_BODY,
  statelessResults,
  type StatelessResults,
} from "./stateless.js";
import { describeWrk } from "./wrk.js";
import { formatTracingReport, measureTracing } from "./tracing.js";

const num = (name: string, fallback: number, min = Number.MIN_VALUE) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(n) || n < min)
    throw new Error(`${name} must be a ${min === 0 ? "non-negative" : "positive"} number`);
  return n;
};

const LOAD: m.Load = {
  threads: 1,
  connections: 50,
  durationSeconds: num("BENCH_DURATION", 10),
  warmupSeconds: 3,
  rounds: num("BENCH_ROUNDS", 2),
};
/** Measurement 6: three sides in turn, so shorter rounds (the whole entry stays under ~25 s). */
const STATELESS_LOAD: m.Load = {
  ...LOAD,
  durationSeconds: num("BENCH_STATELESS_DURATION", 3),
  warmupSeconds: 1,
};
/** Measurement 7a: 32 connections (on one session in the session era), 3 s rounds. */
const FORWARD_LOAD: m.Load = {
  ...LOAD,
  connections: 32,
  durationSeconds: num("BENCH_FORWARD_DURATION", 3),
  warmupSeconds: 1,
};
/** Measurement 7b: the open-loop generator's fixed rate. */
const RATE_LOAD: RateLoad = {
  rate: num("BENCH_FORWARD_RATE", 2000),
  seconds: num("BENCH_FORWARD_RATE_SECONDS", 2),
  warmupSeconds: 1,
  rounds: LOAD.rounds,
};
/** Measurement 7c: sessions per capability set; 0 skips 7c (e.g. for a CPU profile of 7a and 7b alone). */
const FORWARD_SESSIONS = num("BENCH_FORWARD_SESSIONS", 10_000, 0);
/** BENCH_ONLY=stateless, forward or tracing runs measurement 6, 7 or the tracing comparison alone. */
const ONLY = process.env.BENCH_ONLY;
const CALLS = num("BENCH_CALLS", 2000);
const WARMUP_CALLS = 500;
const REDIS_SESSIONS = 1000;
const RSS_SESSIONS = num("BENCH_SESSIONS", 50_000);
const TOOL_SESSIONS = 1000;
const LOAD_AT_START = Number(loadavg()[0]!.toFixed(2));

const log = (msg: string) => console.error(`bench: ${msg}`);

function versionOf(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 5000 });
  return `${r.stdout}${r.stderr}`.split("\n")[0]?.trim() ?? "?";
}

async function build(): Promise<void> {
  log("building dist/ (tsc -p tsconfig.build.json)");
  const tsc = spawnChild({
    name: "tsc",
    command: process.execPath,
    args: ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"],
  });
  const code = await new Promise<number | null>((resolve) => tsc.process.once("exit", resolve));
  if (code !== 0) throw new Error(`the build failed (exit ${code}):\n${tsc.output()}`);
}

/** Measurement 7's tenants: the minimal upstream of one era each, the era pinned, no prefix. */
function forwardTenants(upstream: { sessionUrl: string; statelessUrl: string }) {
  const tenant = (id: string, url: string, era: string) => ({
    id,
    auth: "none",
    providers: [{ id: "echo", kind: "mcp", url, prefix: "", era }],
  });
  return [
    tenant(FORWARD_SESSION_TENANT, upstream.sessionUrl, "session"),
    tenant(FORWARD_STATELESS_TENANT, upstream.statelessUrl, "stateless"),
  ];
}

/**
 * The bootstrap file: the bench tenant (a static resource and the upstream fixture without a
 * prefix) and measurement 7's two.
 */
async function writeBootstrap(
  dir: string,
  upstreamUrl: string,
  forward: { sessionUrl: string; statelessUrl: string },
): Promise<string> {
  const file = join(dir, "portico.json");
  const tenant = {
    id: m.TENANT,
    auth: "none",
    providers: [
      {
        id: "docs",
        kind: "static",
        resources: [{ uri: "perf://hello", name: "hello", mimeType: "text/plain", text: "hello" }],
      },
      { id: "ref", kind: "mcp", url: upstreamUrl, prefix: "" },
    ],
  };
  await writeFile(file, JSON.stringify({ tenants: [tenant, ...forwardTenants(forward)] }, null, 2));
  return file;
}

function goals(r: Omit<Results, "goals" | "seconds">): Results["goals"] {
  const initRps = bestRps(r.initialize.runs);
  const rssGrowth = r.rss.after.rssBytes / r.rss.before.rssBytes - 1;
  return {
    read: { goal: "≥ 40 %", value: `${(r.read.ratio * 100).toFixed(1)} %`, met: r.read.ratio >= 0.4 },
    tool: { goal: "≤ 2 ms", value: `${r.tool.addedP50Ms.toFixed(3)} ms`, met: r.tool.addedP50Ms <= 2 },
    initialize: { goal: "≥ 6,000/s", value: `${Math.round(initRps)}/s`, met: initRps >= 6000 },
    redis: {
      goal: "≤ 512 B",
      value: `${r.redis.memoryUsageAvgBytes.toFixed(1)} B`,
      met: r.redis.memoryUsageAvgBytes <= 512,
    },
    rss: {
      goal: "flat (RSS +< 10 %)",
      value: `${(rssGrowth * 100).toFixed(1)} %`,
      met: rssGrowth < 0.1,
    },
    ...statelessGoals(r.stateless),
    ...forwardGoals(r.forward),
  };
}

function statelessGoals(s: StatelessResults): Results["goals"] {
  return {
    statelessSdk: { goal: "≥ 5×", value: `${s.sdkRatio.toFixed(1)}×`, met: s.sdkRatio >= 5 },
    statelessBare: {
      goal: "≥ 40 %",
      value: `${(s.bareRatio * 100).toFixed(1)} %`,
      met: s.bareRatio >= 0.4,
    },
  };
}

/** Starts the seven servers (each pushed to `children` for teardown) and checks every answer once. */
async function startAndCheck(children: Service[], dir: string) {
  const redis = await startRedis(dir);
  children.push(redis);
  const upstream = await startUpstream();
  children.push(upstream);
  const forwardUpstream = await startForwardUpstream();
  children.push(forwardUpstream);
  const configFile = await writeBootstrap(dir, upstream.url, forwardUpstream);
  const cpuProfDir = process.env.BENCH_CPU_PROF;
  const portico = await startPortico({
    redisUrl: redis.url,
    configFile,
    ...(cpuProfDir ? { cpuProfDir } : {}),
  });
  children.push(portico);
  const fresh = await gcAndMeasure(portico);
  const porticoMcp = `${portico.url}/mcp/${m.TENANT}`;

  log("checking answers before timing anything");
  const { sessionId, resultJson } = await m.checkRead(porticoMcp);
  const stateless = await checkStatelessRead("Portico", porticoMcp);
  const bare = await startBare({ sessionJson: resultJson, statelessJson: stateless.resultJson });
  children.push(bare);
  const bareMcp = `${bare.url}/mcp/${m.TENANT}`;
  await m.checkBare(bareMcp, JSON.stringify({ jsonrpc: "2.0", id: 1, result: JSON.parse(resultJson) }));
  const bareStateless = `${bare.url}/stateless/${m.TENANT}`;
  await m.checkBare(bareStateless, stateless.body, STATELESS_READ_BODY, STATELESS_HEADERS);
  const sdk = await startSdkHandler();
  children.push(sdk);
  const sdkMcp = `${sdk.url}/mcp/${m.TENANT}`;
  await checkStatelessRead("SDK handler", sdkMcp);
  const toolSessions = await m.checkTools(porticoMcp, upstream.url);
  const bareForwarder = await startBareForwarder(
    forwardUpstream,
    cpuProfDir ? `${cpuProfDir}/bare-forwarder` : undefined,
  );
  children.push(bareForwarder);
  const forward: ForwardTargets = { portico, redis, upstream: forwardUpstream, bareForwarder };
  const forwardTargets = await prepareForward(forward);
  const targets = {
    portico,
    redis,
    bare,
    sdk,
    porticoMcp,
    bareMcp,
    bareStateless,
    sdkMcp,
    upstreamMcp: upstream.url,
  };
  return { targets, fresh, readSession: sessionId, toolSessions, forwardTargets, forwardUpstream };
}

function machine(started: number): Results["machine"] {
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? "?",
    node: process.version,
    wrk: versionOf("wrk", ["--version"]).split(" [")[0] ?? "wrk",
    redis: /v=(\S+)/.exec(versionOf("redis-server", ["--version"]))?.[1] ?? "?",
    date: new Date(started).toISOString(),
    loadAvgAtStart: LOAD_AT_START,
    loadAvgAtEnd: Number(loadavg()[0]!.toFixed(2)),
  };
}

/** 7c for both capability sets, the second on top of the first (each measured as a difference). */
async function measureForwardSessions(portico: Service, upstream: ForwardUpstream): Promise<ForwardMemory[]> {
  if (FORWARD_SESSIONS === 0) return [];
  const url = `${portico.url}/mcp/${FORWARD_SESSION_TENANT}`;
  return [
    await measureForwardMemory(portico, upstream, url, FORWARD_SESSIONS, "none"),
    await measureForwardMemory(portico, upstream, url, FORWARD_SESSIONS, "all"),
  ];
}

async function measureAll(children: Service[], dir: string, started: number): Promise<Results> {
  const {
    targets: t,
    fresh,
    readSession,
    toolSessions,
    forwardTargets,
    forwardUpstream,
  } = await startAndCheck(children, dir);
  const read = await m.measureRead(LOAD, t, readSession);
  // Right after 1, before the session-heavy measurements fill Redis and Portico's heap.
  const stateless = statelessResults(await measureStateless(STATELESS_LOAD, t), STATELESS_LOAD);
  const saturated = await measureSaturated(FORWARD_LOAD, forwardTargets);
  const fixedRate = await measureFixedRate(RATE_LOAD, forwardTargets);
  const initialize = { runs: await m.measureInitialize(LOAD, t, initializeBody()) };
  const tool = await m.measureTool(
    { rounds: LOAD.rounds, calls: CALLS, warmup: WARMUP_CALLS },
    t,
    toolSessions,
  );
  const redisCost = await measureRedis(t.redis.url, t.porticoMcp, REDIS_SESSIONS);
  const rss = await measureRss(t.portico, t.redis.url, t.porticoMcp, RSS_SESSIONS);
  const toolRss = await measureToolSessions(t.portico, t.porticoMcp, TOOL_SESSIONS);
  // Last: its sessions' upstream clients stay in Portico's heap until the sweep.
  const memory = await measureForwardSessions(t.portico, forwardUpstream);

  const partial = {
    machine: machine(started),
    wrkCommand: describeWrk(LOAD),
    rounds: LOAD.rounds,
    read: { ...read, ratio: bestRps(read.portico) / bestRps(read.bare) },
    tool: {
      calls: CALLS,
      warmup: WARMUP_CALLS,
      ...tool,
      addedP50Ms: bestP50(tool.portico).p50 - bestP50(tool.direct).p50,
    },
    initialize,
    redis: redisCost,
    rss: { ...rss, fresh },
    toolSessions: toolRss,
    stateless,
    forward: forwardResults(FORWARD_LOAD, RATE_LOAD, saturated, fixedRate, memory),
  };
  return { ...partial, goals: goals(partial), seconds: (Date.now() - started) / 1000 };
}

/** BENCH_ONLY=stateless: the same servers and checks, then measurement 6 alone. */
async function measureStatelessOnly(children: Service[], dir: string, started: number) {
  const { targets } = await startAndCheck(children, dir);
  const stateless = statelessResults(await measureStateless(STATELESS_LOAD, targets), STATELESS_LOAD);
  return {
    machine: machine(started),
    stateless,
    goals: statelessGoals(stateless),
    seconds: (Date.now() - started) / 1000,
  };
}

/** BENCH_ONLY=forward: the same servers and checks, then measurement 7 alone. */
async function measureForwardOnly(children: Service[], dir: string, started: number) {
  const { targets, forwardTargets, forwardUpstream } = await startAndCheck(children, dir);
  const saturated = await measureSaturated(FORWARD_LOAD, forwardTargets);
  const fixedRate = await measureFixedRate(RATE_LOAD, forwardTargets);
  const memory = await measureForwardSessions(targets.portico, forwardUpstream);
  const forward: ForwardResults = forwardResults(FORWARD_LOAD, RATE_LOAD, saturated, fixedRate, memory);
  return {
    machine: machine(started),
    forward,
    goals: forwardGoals(forward),
    seconds: (Date.now() - started) / 1000,
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  if (ONLY !== undefined && ONLY !== "stateless" && ONLY !== "forward" && ONLY !== "tracing")
    throw new Error(
      `BENCH_ONLY=${ONLY}: the entries that run alone are "stateless", "forward" and "tracing"`,
    );
  if (LOAD_AT_START > 0.5)
    log(`the 1-minute load average is ${LOAD_AT_START} before starting: other work will lower the numbers`);
  process.chdir(fileURLToPath(new URL("..", import.meta.url)));
  requireBinary("wrk", "`apt-get install -y wrk`");
  requireBinary("redis-server", "`apt-get install -y redis-server`");
  await build();
  const dir = await mkdtemp(join(tmpdir(), "portico-bench-"));
  atExit(() => rmSync(dir, { recursive: true, force: true }));
  const children: Service[] = [];
  try {
    if (ONLY === "stateless") {
      const results = await measureStatelessOnly(children, dir, started);
      console.log(formatStatelessReport(results));
      log(`JSON copy: ${await writeJson(results, "stateless")}`);
    } else if (ONLY === "tracing") {
      const tracing = await measureTracing(children, dir, LOAD, { calls: CALLS, warmup: WARMUP_CALLS });
      const results = { machine: machine(started), tracing, seconds: (Date.now() - started) / 1000 };
      console.log(formatTracingReport(tracing));
      log(`JSON copy: ${await writeJson(results, "tracing")}`);
    } else if (ONLY === "forward") {
      const results = await measureForwardOnly(children, dir, started);
      console.log(formatForwardReport(results));
      log(`JSON copy: ${await writeJson(results, "forward")}`);
    } else {
      const results = await measureAll(children, dir, started);
      console.log(formatReport(results));
      log(`JSON copy: ${await writeJson(results)}`);
    }
  } finally {
    // Reverse start order: Portico closes while Redis is up (and writes its CPU profile, if asked).
    const order: Child[] = children.map((s) => s.child).reverse();
    for (const child of order) await child.stop().catch(() => undefined);
    killAll(); // every child has stopped by now: this runs the exit tasks (the temp dir)
  }
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  killAll();
  process.exitCode = 1;
});
