// Measurement 7 as reported (docs/performance.md): the raw runs, the best valid round of each side,
// the ratios and differences the goals are judged on, and the report's lines. A round with any
// failed or wrong answer is invalid: shown, never counted.
import type { ForwardMemory } from "./forward-memory.js";
import {
  ERAS,
  SIDES,
  type ForwardEra,
  type RateLoad,
  type RateRun,
  type RateRuns,
  type SaturatedRuns,
  type Side,
} from "./forward.js";
import type { Load, Run } from "./measurements.js";
import { describeWrk, failures } from "./wrk.js";

export interface ForwardResults {
  readonly wrkCommand: string;
  readonly warmupSeconds: number;
  readonly rateLoad: RateLoad;
  readonly saturated: SaturatedRuns;
  readonly fixedRate: RateRuns;
  readonly memory: ForwardMemory[];
  /** Per era: best valid Portico req/s over best valid bare-forwarder req/s (NaN when none is valid). */
  readonly throughputRatio: Record<ForwardEra, number>;
  /** Per era: Portico's p50 at the fixed rate minus the bare forwarder's, and minus direct (ms). */
  readonly addedP50Ms: Record<ForwardEra, { vsBare: number; vsDirect: number }>;
}

type Goals = Record<string, { goal: string; value: string; met: boolean }>;

const validRun = (r: Run) => failures(r) === 0 && r.requests > 0;
const validRate = (r: RateRun) => r.failed + r.wrong === 0;

/** The valid run with the most req/s, if any. */
export function bestValid(runs: readonly Run[]): Run | undefined {
  return runs
    .filter(validRun)
    .reduce<Run | undefined>((a, b) => (!a || b.requestsPerSecond > a.requestsPerSecond ? b : a), undefined);
}

/** The valid fixed-rate run with the lowest p50, if any. */
export function bestRate(runs: readonly RateRun[]): RateRun | undefined {
  return runs
    .filter(validRate)
    .reduce<RateRun | undefined>((a, b) => (!a || b.latencyMs.p50 < a.latencyMs.p50 ? b : a), undefined);
}

export function forwardResults(
  load: Load,
  rateLoad: RateLoad,
  saturated: SaturatedRuns,
  fixedRate: RateRuns,
  memory: ForwardMemory[],
): ForwardResults {
  const rps = (era: ForwardEra, side: Side) => bestValid(saturated[era][side])?.requestsPerSecond ?? NaN;
  const p50 = (era: ForwardEra, side: Side) => bestRate(fixedRate[era][side])?.latencyMs.p50 ?? NaN;
  const perEra = <T>(f: (era: ForwardEra) => T) => ({ session: f("session"), stateless: f("stateless") });
  return {
    wrkCommand: describeWrk(load),
    warmupSeconds: load.warmupSeconds,
    rateLoad,
    saturated,
    fixedRate,
    memory,
    throughputRatio: perEra((era) => rps(era, "portico") / rps(era, "bare")),
    addedP50Ms: perEra((era) => ({
      vsBare: p50(era, "portico") - p50(era, "bare"),
      vsDirect: p50(era, "portico") - p50(era, "direct"),
    })),
  };
}

const KIB = 1024;
/** Judged on clients declaring none of sampling, elicitation, roots. */
const HEAP_GOAL_BYTES = 5 * KIB;

export function forwardGoals(f: ForwardResults): Goals {
  const goals: Goals = {};
  for (const era of ERAS) {
    const ratio = f.throughputRatio[era];
    goals[`forwardThroughput_${era}`] = {
      goal: "≥ 70 %",
      value: `${(ratio * 100).toFixed(1)} %`,
      met: ratio >= 0.7,
    };
    const added = f.addedP50Ms[era].vsBare;
    goals[`forwardAddedP50_${era}`] = {
      goal: "≤ 0.5 ms",
      value: `${added.toFixed(3)} ms`,
      met: added <= 0.5,
    };
  }
  const none = f.memory.find((m) => m.capabilities === "none");
  if (none)
    goals.forwardHeap = {
      goal: "≤ 5 KiB",
      value: `${(none.heapPerSessionBytes / KIB).toFixed(2)} KiB`,
      met: none.heapPerSessionBytes <= HEAP_GOAL_BYTES,
    };
  return goals;
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : "—");
const kib = (bytes: number) => `${bytes >= 0 ? "+" : "−"}${(Math.abs(bytes) / KIB).toFixed(2)}`;
const ERA_TITLE: Record<ForwardEra, string> = {
  session: "session era (2025-11-25; one Portico session in Redis for every connection)",
  stateless: "2026-07-28 (_meta + MCP-Protocol-Version, Mcp-Method, Mcp-Name; no session)",
};
const SIDE_LABEL: Record<Side, string> = { portico: "Portico", bare: "bare forwarder", direct: "direct" };

function verdict(goals: Goals, key: string): string {
  const g = goals[key];
  return g ? `goal ${g.goal}: ${g.met ? "MET" : "MISSED"}` : "";
}

function saturatedLines(runs: readonly Run[], side: Side): string[] {
  const best = bestValid(runs);
  const rounds = runs.map((r) => `${int(r.requestsPerSecond)}${validRun(r) ? "" : " INVALID"}`).join(" / ");
  const failed = runs.map(failures).reduce((a, b) => a + b, 0);
  const head = `     ${SIDE_LABEL[side].padEnd(15)}${int(best?.requestsPerSecond ?? NaN).padStart(8)} req/s   (rounds ${rounds}; failed ${failed})`;
  if (!best) return [head, "                    no valid round"];
  const l = best.latencyMs;
  const cpu = Object.entries(best.cpuUsPerRequest)
    .map(([name, us]) => `${name} ${us.toFixed(1)} µs`)
    .join(", ");
  return [head, `${" ".repeat(20)}wrk p50 ${ms(l.p50)}, p99 ${ms(l.p99)} ms; CPU per request: ${cpu}`];
}

function rateLine(runs: readonly RateRun[], side: Side): string {
  const b = bestRate(runs);
  const rounds = runs.map((r) => `${ms(r.latencyMs.p50)}${validRate(r) ? "" : " INVALID"}`).join(" / ");
  if (!b) return `     ${SIDE_LABEL[side].padEnd(15)}no valid round (p50 per round ${rounds})`;
  const l = b.latencyMs;
  const cols = [l.p50, l.p90, l.p99].map((n) => ` ${ms(n).padStart(8)}`).join("");
  return `     ${SIDE_LABEL[side].padEnd(15)}${cols}${int(b.achievedRate).padStart(10)}/s   send lag p50 ${ms(b.sendLagMs.p50)}, p99 ${ms(b.sendLagMs.p99)}; service p50 ${ms(b.serviceMs.p50)} (p50 per round ${rounds})`;
}

function memoryLines(m: ForwardMemory, goals: Goals): string[] {
  const what =
    m.capabilities === "none"
      ? "declaring no sampling, elicitation or roots"
      : "declaring sampling, elicitation and roots";
  return [
    `     ${int(m.sessions)} clients ${what}: heap ${kib(m.heapPerSessionBytes)} KiB, RSS ${kib(m.rssPerSessionBytes)} KiB per session` +
      (m.capabilities === "none" ? `   ${verdict(goals, "forwardHeap")}` : ""),
    `${" ".repeat(7)}heap ${(m.before.heapUsedBytes / 1048576).toFixed(1)} → ${(m.after.heapUsedBytes / 1048576).toFixed(1)} MiB, RSS ${(m.before.rssBytes / 1048576).toFixed(1)} → ${(m.after.rssBytes / 1048576).toFixed(1)} MiB, Portico's sockets ${int(m.socketsBefore)} → ${int(m.socketsAfter)}; made in ${m.seconds.toFixed(1)} s`,
    `${" ".repeat(7)}upstream sessions opened ${int(m.upstreamSessionsOpened)} (the upstream holds ${int(m.upstreamSessionsOpen)})`,
  ];
}

/** The report's lines for measurement 7. */
export function forwardLines(f: ForwardResults, goals: Goals): string[] {
  const r = f.rateLoad;
  const lines = [
    "7. tools/call forwarded to a minimal node:http upstream: Portico vs bare forwarder (Fastify + undici Pool) vs direct",
    `   a. saturated: ${f.wrkCommand} per round after a ${f.warmupSeconds} s warm-up each; rounds take turns; best valid round kept`,
  ];
  for (const era of ERAS) {
    lines.push(`   ${ERA_TITLE[era]}`);
    for (const side of SIDES) lines.push(...saturatedLines(f.saturated[era][side], side));
    const ratio = f.throughputRatio[era];
    lines.push(
      `     Portico ÷ bare forwarder ${Number.isFinite(ratio) ? (ratio * 100).toFixed(1) : "—"} %   ${verdict(goals, `forwardThroughput_${era}`)}`,
    );
  }
  lines.push(
    `   b. latency at a fixed ${int(r.rate)} calls/s, open loop, timed from each call's due time: ${r.seconds} s after ${r.warmupSeconds} s warm-up, ${r.rounds} rounds in turn, lowest p50 kept (ms)`,
  );
  for (const era of ERAS) {
    lines.push(
      `   ${ERA_TITLE[era]}`,
      `${" ".repeat(20)}${["p50", "p90", "p99"].map((h) => ` ${h.padStart(8)}`).join("")}  achieved`,
    );
    for (const side of SIDES) lines.push(rateLine(f.fixedRate[era][side], side));
    const a = f.addedP50Ms[era];
    lines.push(
      `     p50 added: vs bare forwarder ${ms(a.vsBare)} ms (${verdict(goals, `forwardAddedP50_${era}`)}), vs direct ${ms(a.vsDirect)} ms`,
    );
  }
  lines.push(
    "   c. Portico's memory per active proxied session (session era, one tools/call each, no GET stream; after two full GCs)",
  );
  if (f.memory.length === 0) lines.push("     skipped (BENCH_FORWARD_SESSIONS=0)");
  for (const m of f.memory) lines.push(...memoryLines(m, goals));
  return lines;
}
