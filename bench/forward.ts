// Measurement 7 of `npm run bench` (docs/performance.md): a forwarded tools/call, for each era,
// through Portico vs the bare forwarder (Fastify + undici Pool) vs the upstream directly
// (bench/upstream.ts): (a) saturated throughput, wrk at 32 connections; (b) latency at a fixed rate
// from an open-loop generator (bench/fixed-rate.ts). Every side's answer is checked first.
import { answerOf, firstText, openSession, post, rpcBody } from "./mcp-client.js";
import { wrk, type Load, type Run } from "./measurements.js";
import { spawnChild } from "./processes.js";
import type { ForwardUpstream, Service } from "./services.js";
import { STATELESS_VERSION } from "./stateless.js";

export const FORWARD_SESSION_TENANT = "fwd-session";
export const FORWARD_STATELESS_TENANT = "fwd-stateless";
/** The echo tool's argument: the answer must carry it back ("echo: <text>"). */
const TEXT = "portico-forward-7";
export const FORWARD_EXPECT = `echo: ${TEXT}`;
export const ERAS = ["session", "stateless"] as const;
export type ForwardEra = (typeof ERAS)[number];
export const SIDES = ["portico", "bare", "direct"] as const;
export type Side = (typeof SIDES)[number];

const CALL = { name: "echo", arguments: { text: TEXT } };
/** The tools/call body of each era: the same bytes to every side. */
export const BODIES: Record<ForwardEra, string> = {
  session: rpcBody(2, "tools/call", CALL),
  stateless: rpcBody(2, "tools/call", {
    ...CALL,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "portico-bench", version: "1.0.0" },
    },
  }),
};
/** The request metadata headers of a 2026-07-28 tools/call (basic/transports §Request Metadata). */
const STATELESS_CALL_HEADERS = {
  "MCP-Protocol-Version": STATELESS_VERSION,
  "Mcp-Method": "tools/call",
  "Mcp-Name": CALL.name,
};

const log = (msg: string) => console.error(`bench: ${msg}`);

export interface ForwardTargets {
  readonly portico: Service;
  readonly redis: Service;
  readonly upstream: ForwardUpstream;
  readonly bareForwarder: Service;
}

/** Where one side's calls go, with what, and whose CPU time they cost. */
interface Target {
  readonly url: string;
  readonly sessionId?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly watch: readonly Service[];
}

type Targets = Record<ForwardEra, Record<Side, Target>>;

/** POSTs the era's tools/call once; throws unless the echo comes back. */
async function checkCall(label: string, era: ForwardEra, t: Target): Promise<void> {
  const reply = await post(t.url, BODIES[era], t.sessionId, t.headers);
  let text: string | undefined;
  try {
    text = firstText(answerOf(reply, 2));
  } catch {
    text = undefined;
  }
  if (reply.status !== 200 || text !== FORWARD_EXPECT)
    throw new Error(`7 ${label}: tools/call answered HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
}

/**
 * One session per side for the session era (through Portico: a session in Redis; through the bare
 * forwarder: the upstream's, relayed), the 2026-07-28 headers for the other; one checked call each.
 */
export async function prepareForward(t: ForwardTargets): Promise<Targets> {
  const porticoMcp = (tenant: string) => `${t.portico.url}/mcp/${tenant}`;
  const session = {
    portico: porticoMcp(FORWARD_SESSION_TENANT),
    bare: `${t.bareForwarder.url}/forward/session`,
    direct: t.upstream.sessionUrl,
  };
  const stateless = {
    portico: porticoMcp(FORWARD_STATELESS_TENANT),
    bare: `${t.bareForwarder.url}/forward/stateless`,
    direct: t.upstream.statelessUrl,
  };
  const watch: Record<Side, readonly Service[]> = {
    portico: [t.portico, t.redis, t.upstream],
    bare: [t.bareForwarder, t.upstream],
    direct: [t.upstream],
  };
  const targets = { session: {}, stateless: {} } as Targets;
  for (const side of SIDES) {
    const sessionId = await openSession(session[side]);
    targets.session[side] = { url: session[side], sessionId, headers: {}, watch: watch[side] };
    targets.stateless[side] = { url: stateless[side], headers: STATELESS_CALL_HEADERS, watch: watch[side] };
  }
  for (const era of ERAS)
    for (const side of SIDES) await checkCall(`${era} ${side}`, era, targets[era][side]);
  return targets;
}

export type SaturatedRuns = Record<ForwardEra, Record<Side, Run[]>>;

/** 7a: per era, a warm-up per side, then rounds of Portico, bare forwarder, direct in turn. */
export async function measureSaturated(load: Load, targets: Targets): Promise<SaturatedRuns> {
  const out = { session: {}, stateless: {} } as SaturatedRuns;
  for (const era of ERAS) {
    const spec = (side: Side) => {
      const t = targets[era][side];
      const base = { url: t.url, body: BODIES[era], headers: t.headers, watch: t.watch };
      return {
        ...base,
        ...(t.sessionId && { sessionId: t.sessionId }),
        expect: FORWARD_EXPECT,
        tolerateFailures: true,
      };
    };
    for (const side of SIDES) {
      await wrk(load, { ...spec(side), label: `7a ${era} warm-up ${side}`, seconds: load.warmupSeconds });
      out[era][side] = [];
    }
    for (let round = 1; round <= load.rounds; round++)
      for (const side of SIDES)
        out[era][side].push(await wrk(load, { ...spec(side), label: `7a ${era} round ${round} ${side}` }));
  }
  return out;
}

/** What bench/fixed-rate.ts prints. */
export interface RateRun {
  readonly rate: number;
  readonly requests: number;
  readonly achievedRate: number;
  readonly failed: number;
  readonly wrong: number;
  readonly firstError: string;
  /** From the moment each request was due to its whole answer. */
  readonly latencyMs: { p50: number; p90: number; p99: number; max: number };
  readonly sendLagMs: { p50: number; p99: number; max: number };
  readonly serviceMs: { p50: number; p99: number };
}

export interface RateLoad {
  readonly rate: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
}

async function runFixedRate(label: string, load: RateLoad, era: ForwardEra, t: Target): Promise<RateRun> {
  log(`${label}: ${load.rate}/s for ${load.warmupSeconds} + ${load.seconds} s`);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...t.headers,
  };
  if (t.sessionId !== undefined) {
    headers["mcp-session-id"] = t.sessionId;
    headers["mcp-protocol-version"] = "2025-11-25";
  }
  const child = spawnChild({
    name: "fixed-rate",
    command: process.execPath,
    args: ["--import", "tsx", "bench/fixed-rate.ts"],
    env: {
      ...process.env,
      BENCH_URL: t.url,
      BENCH_BODY: BODIES[era],
      BENCH_HEADERS: JSON.stringify(headers),
      BENCH_EXPECT: FORWARD_EXPECT,
      BENCH_RATE: String(load.rate),
      BENCH_SECONDS: String(load.seconds),
      BENCH_WARMUP_SECONDS: String(load.warmupSeconds),
    },
  });
  // A side that cannot keep the rate takes longer: every call is still sent and waited for.
  const timeoutMs = (load.seconds + load.warmupSeconds) * 20_000 + 60_000;
  const line = await child.nextLine(/^RATE_JSON /, timeoutMs).catch(async (err) => {
    await child.stop(1000);
    throw new Error(`${String(err)}\n${child.output()}`);
  });
  await child.stop(2000);
  const run = JSON.parse(line.slice("RATE_JSON ".length)) as RateRun;
  if (run.failed + run.wrong > 0)
    log(`${label}: INVALID, ${run.failed} failed, ${run.wrong} wrong; first: ${run.firstError}`);
  return run;
}

export type RateRuns = Record<ForwardEra, Record<Side, RateRun[]>>;

/** 7b: per era, rounds of Portico, bare forwarder, direct in turn at the fixed rate. */
export async function measureFixedRate(load: RateLoad, targets: Targets): Promise<RateRuns> {
  const out = { session: {}, stateless: {} } as RateRuns;
  for (const era of ERAS) {
    for (const side of SIDES) out[era][side] = [];
    for (let round = 1; round <= load.rounds; round++)
      for (const side of SIDES)
        out[era][side].push(
          await runFixedRate(`7b ${era} round ${round} ${side}`, load, era, targets[era][side]),
        );
  }
  return out;
}
