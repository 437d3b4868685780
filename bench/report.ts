// The bench's results: their shape, the plain-text report printed at the end, and the JSON copy
// written under .bench/ (gitignored) as bench-<time>.json and latest.json.
import { mkdir, writeFile } from "node:fs/promises";
import { forwardLines, type ForwardResults } from "./forward-report.js";
import type { LatencySummary } from "./latency.js";
import type { RssResult, ToolSessionsResult } from "./memory.js";
import type { Run } from "./measurements.js";
import type { RedisCost } from "./sessions.js";
import type { MemorySnapshot } from "./services.js";
import type { StatelessResults } from "./stateless.js";
import { failures, type WrkResult } from "./wrk.js";

export interface Results {
  readonly machine: {
    nproc: number;
    cpu: string;
    node: string;
    wrk: string;
    redis: string;
    date: string;
    /** 1-minute load average before the bench started and when it ended (its own load included). */
    loadAvgAtStart: number;
    loadAvgAtEnd: number;
  };
  readonly wrkCommand: string;
  readonly rounds: number;
  readonly read: {
    readonly portico: Run[];
    readonly bare: Run[];
    /** Best Portico req/s over best bare req/s. */
    readonly ratio: number;
  };
  readonly tool: {
    readonly calls: number;
    readonly warmup: number;
    readonly direct: LatencySummary[];
    readonly portico: LatencySummary[];
    /** Best (lowest-p50) Portico round minus best direct round, ms. */
    readonly addedP50Ms: number;
  };
  readonly initialize: { readonly runs: Run[] };
  readonly redis: RedisCost;
  readonly rss: RssResult & { readonly fresh: MemorySnapshot };
  readonly toolSessions: ToolSessionsResult;
  readonly stateless: StatelessResults;
  readonly forward: ForwardResults;
  readonly goals: Record<string, { goal: string; value: string; met: boolean }>;
  readonly seconds: number;
}

export const bestRps = (runs: readonly WrkResult[]) => Math.max(...runs.map((r) => r.requestsPerSecond));
export const bestP50 = (runs: readonly LatencySummary[]) =>
  runs.reduce((best, r) => (r.p50 < best.p50 ? r : best), runs[0]!);

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => n.toFixed(3);
const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);

/** The goal verdicts of a report. */
type Goals = Results["goals"];

function wrkLines(label: string, runs: readonly Run[], withLatency = false): string[] {
  const rounds = runs.map((r) => int(r.requestsPerSecond)).join(" / ");
  const failed = runs.map(failures).reduce((a, b) => a + b, 0);
  const p50 = runs.map((r) => r.latencyMs.p50.toFixed(2)).join(" / ");
  const best = runs.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
  const cpu = Object.entries(best.cpuUsPerRequest)
    .map(([name, us]) => `${name} ${us.toFixed(1)} µs`)
    .join(", ");
  const l = best.latencyMs;
  return [
    `   ${pad(label, 14)}${lpad(int(bestRps(runs)), 8)} req/s   (rounds ${rounds}; wrk p50 ${p50} ms; failed ${failed})`,
    ...(withLatency
      ? [
          `   ${pad("", 14)}latency in the best round: p50 ${ms(l.p50)}, p90 ${ms(l.p90)}, p99 ${ms(l.p99)} ms`,
        ]
      : []),
    `   ${pad("", 14)}CPU per request in the best round: ${cpu}`,
  ];
}

function latencyLine(label: string, runs: readonly LatencySummary[]): string {
  const b = bestP50(runs);
  const rounds = runs.map((r) => ms(r.p50)).join(" / ");
  return `   ${pad(label, 14)}${lpad(ms(b.p50), 8)}${lpad(ms(b.p90), 8)}${lpad(ms(b.p99), 8)}   (p50 per round ${rounds}; n=${b.count})`;
}

function memLine(label: string, m: MemorySnapshot): string {
  return `   ${pad(label, 32)} RSS ${lpad(mib(m.rssBytes), 6)} MiB   heap used ${lpad(mib(m.heapUsedBytes), 6)} MiB`;
}

function toolSessionLines(t: ToolSessionsResult): string[] {
  const perSession = (a: number, b: number) => ((b - a) / t.sessions / 1024).toFixed(1);
  return [
    `5b. (no goal) ${int(t.sessions)} sessions that each made one upstream tools/call, then idle`,
    memLine("before", t.before),
    memLine("after", t.after),
    `   per session: RSS +${perSession(t.before.rssBytes, t.after.rssBytes)} KiB, heap +${perSession(t.before.heapUsedBytes, t.after.heapUsedBytes)} KiB; open sockets ${int(t.socketsBefore)} → ${int(t.socketsAfter)}`,
  ];
}

const verdictOf = (g: Goals) => (k: string) => `goal ${g[k]!.goal}: ${g[k]!.met ? "MET" : "MISSED"}`;

function machineLines(m: Results["machine"]): [title: string, load: string] {
  return [
    `Portico bench — ${m.nproc} cores (${m.cpu}), Node ${m.node}, ${m.wrk}, Redis ${m.redis}`,
    `1-minute load average: ${m.loadAvgAtStart} before the bench (idle machine: ~0), ${m.loadAvgAtEnd} at its end`,
  ];
}

function statelessLines(s: StatelessResults, g: Goals): string[] {
  const verdict = verdictOf(g);
  return [
    "6. resources/read perf://hello on 2026-07-28 (no session: _meta + MCP-Protocol-Version, Mcp-Method, Mcp-Name)",
    `   load: ${s.wrkCommand} per round after a ${s.warmupSeconds} s warm-up each; rounds take turns, best kept`,
    ...wrkLines("Portico", s.portico, true),
    ...wrkLines("SDK handler", s.sdk, true),
    ...wrkLines("bare Fastify", s.bare, true),
    `   Portico ÷ SDK handler ${s.sdkRatio.toFixed(1)}×   ${verdict("statelessSdk")}`,
    `   Portico ÷ bare Fastify ${(s.bareRatio * 100).toFixed(1)} %   ${verdict("statelessBare")}`,
  ];
}

/** The report of `BENCH_ONLY=stateless`: measurement 6 alone. */
export function formatStatelessReport(
  r: Pick<Results, "machine" | "stateless" | "goals" | "seconds">,
): string {
  return [
    "",
    ...machineLines(r.machine),
    "",
    ...statelessLines(r.stateless, r.goals),
    "",
    `bench took ${r.seconds.toFixed(0)} s`,
    "",
  ].join("\n");
}

/** The report of `BENCH_ONLY=forward`: measurement 7 alone. */
export function formatForwardReport(r: Pick<Results, "machine" | "forward" | "goals" | "seconds">): string {
  return [
    "",
    ...machineLines(r.machine),
    "",
    ...forwardLines(r.forward, r.goals),
    "",
    `bench took ${r.seconds.toFixed(0)} s`,
    "",
  ].join("\n");
}

/** The report printed at the end of a run. */
export function formatReport(r: Results): string {
  const verdict = verdictOf(r.goals);
  const rssDelta = r.rss.after.rssBytes - r.rss.before.rssBytes;
  const heapDelta = r.rss.after.heapUsedBytes - r.rss.before.heapUsedBytes;
  const [title, load] = machineLines(r.machine);
  return [
    "",
    title,
    `load: ${r.wrkCommand}; ${r.rounds} alternating rounds per comparison, best round kept`,
    load,
    "",
    "1. resources/read perf://hello over a Redis-held session",
    ...wrkLines("Portico", r.read.portico),
    ...wrkLines("bare Fastify", r.read.bare),
    `   ratio ${(r.read.ratio * 100).toFixed(1)} %   ${verdict("read")}`,
    "",
    `2. tools/call test_simple_text, ${r.tool.calls} sequential calls after ${r.tool.warmup} warm-up (ms)`,
    `   ${pad("", 14)}${lpad("p50", 8)}${lpad("p90", 8)}${lpad("p99", 8)}`,
    latencyLine("direct", r.tool.direct),
    latencyLine("via Portico", r.tool.portico),
    `   added at p50 ${ms(r.tool.addedP50Ms)} ms   ${verdict("tool")}`,
    "",
    "3. initialize through Portico (each one a new session in Redis)",
    ...wrkLines("Portico", r.initialize.runs),
    `   ${verdict("initialize")}`,
    "",
    `4. Redis per idle session (${int(r.redis.sessions)} sessions)`,
    `   MEMORY USAGE avg ${r.redis.memoryUsageAvgBytes.toFixed(1)} B (min ${r.redis.memoryUsageMinBytes}, max ${r.redis.memoryUsageMaxBytes})`,
    `   record ${r.redis.recordBytes} B ${r.redis.record}; key ${r.redis.keyBytes} B; keys per session ${r.redis.keysPerSession.toFixed(2)}`,
    `   INFO used_memory growth ${r.redis.usedMemoryPerSessionBytes.toFixed(1)} B per session (with TTL entry and allocator slack)`,
    `   ${verdict("redis")}`,
    "",
    `5. Portico memory with ${int(r.rss.sessions)} more idle sessions (after two full GCs, VmRSS from /proc)`,
    memLine("fresh, before any load", r.rss.fresh),
    memLine(`before (${int(r.rss.redisKeysBefore)} keys in Redis)`, r.rss.before),
    memLine(`after (${int(r.rss.redisKeysAfter)} keys in Redis)`, r.rss.after),
    `   RSS ${rssDelta >= 0 ? "+" : ""}${mib(rssDelta)} MiB (${(rssDelta / r.rss.sessions).toFixed(1)} B/session), heap ${heapDelta >= 0 ? "+" : ""}${mib(heapDelta)} MiB; created in ${r.rss.createSeconds.toFixed(1)} s`,
    `   ${verdict("rss")}`,
    "",
    ...toolSessionLines(r.toolSessions),
    "",
    ...statelessLines(r.stateless, r.goals),
    "",
    ...forwardLines(r.forward, r.goals),
    "",
    `bench took ${r.seconds.toFixed(0)} s`,
    "",
  ].join("\n");
}

/**
 * Writes the JSON copy; returns its path. A run of one entry (`only`) goes to
 * bench-<only>-<time>.json and latest-<only>.json, leaving a full run's latest.json alone.
 */
export async function writeJson(r: Pick<Results, "machine">, only?: string): Promise<string> {
  await mkdir(".bench", { recursive: true });
  const json = JSON.stringify(r, null, 2) + "\n";
  const tag = only === undefined ? "" : `-${only}`;
  const file = `.bench/bench${tag}-${r.machine.date.replace(/[:.]/g, "-")}.json`;
  await writeFile(file, json);
  await writeFile(`.bench/latest${tag}.json`, json);
  return file;
}
