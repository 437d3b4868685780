// Measurements 1–3 of `npm run bench` (docs/performance.md) and the checks that run before any
// timing: every answer is verified first, the two sides of a comparison alternate, raw numbers out.
import { sampleSequential, type LatencySummary } from "./latency.js";
import { answerOf, firstText, openSession, post, rpcBody } from "./mcp-client.js";
import { cpuSeconds, type Service } from "./services.js";
import { failures, runWrk, type WrkResult } from "./wrk.js";

export const TENANT = "bench";
export const TOOL_TEXT = "This is a simple text response for testing.";
export const READ_BODY = rpcBody(1, "resources/read", { uri: "perf://hello" });

export interface Load {
  readonly threads: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
}

const log = (msg: string) => console.error(`bench: ${msg}`);

/** A wrk run, with the CPU time each watched process spent per request. */
export interface Run extends WrkResult {
  /** Microseconds of CPU (user + system) per completed request, by process name. */
  readonly cpuUsPerRequest: Record<string, number>;
}

export interface RunSpec {
  readonly label: string;
  readonly url: string;
  readonly body: string;
  readonly sessionId?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Text every answer must contain (checked by wrk's Lua script). */
  readonly expect?: string;
  /** Report failed requests in the run instead of aborting the bench (the report marks it invalid). */
  readonly tolerateFailures?: boolean;
  /** Default: the load's duration. */
  readonly seconds?: number;
  /** Processes whose CPU time to attribute to the requests. */
  readonly watch: readonly Service[];
}

/** wrk once, insisting that every request succeeded. */
export async function wrk(load: Load, spec: RunSpec): Promise<Run> {
  const durationSeconds = spec.seconds ?? load.durationSeconds;
  log(`${spec.label}: wrk ${durationSeconds} s`);
  const cpuBefore = await Promise.all(spec.watch.map((s) => cpuSeconds(s.child.pid)));
  const r = await runWrk({
    ...load,
    durationSeconds,
    url: spec.url,
    body: spec.body,
    sessionId: spec.sessionId,
    headers: spec.headers,
    expect: spec.expect,
  });
  const cpuAfter = await Promise.all(spec.watch.map((s) => cpuSeconds(s.child.pid)));
  if (failures(r) > 0 && spec.tolerateFailures) log(`${spec.label}: INVALID, ${JSON.stringify(r.errors)}`);
  else if (failures(r) > 0)
    throw new Error(`${spec.label}: ${failures(r)} failed requests: ${JSON.stringify(r.errors)}`);
  if (r.requests === 0 && !spec.tolerateFailures) throw new Error(`${spec.label}: wrk completed no request`);
  const cpuUsPerRequest: Record<string, number> = {};
  spec.watch.forEach(
    (s, i) =>
      (cpuUsPerRequest[s.child.name] = ((cpuAfter[i]! - cpuBefore[i]!) * 1e6) / Math.max(1, r.requests)),
  );
  return { ...r, cpuUsPerRequest };
}

/** resources/read through Portico; returns the exact JSON-RPC result it answers with. */
export async function checkRead(porticoMcp: string): Promise<{ sessionId: string; resultJson: string }> {
  const sessionId = await openSession(porticoMcp);
  const reply = await post(porticoMcp, READ_BODY, sessionId);
  const answer = answerOf(reply, 1);
  if (reply.status !== 200 || firstText(answer) !== "hello")
    throw new Error(`Portico resources/read: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
  return { sessionId, resultJson: JSON.stringify(answer.result) };
}

/** The bare route must answer `body` (READ_BODY by default) byte for byte as Portico answered it. */
export async function checkBare(
  bareUrl: string,
  porticoBody: string,
  body: string = READ_BODY,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> {
  const reply = await post(bareUrl, body, undefined, headers);
  if (reply.status !== 200 || reply.text !== porticoBody)
    throw new Error(`bare Fastify answered HTTP ${reply.status} ${reply.text}, Portico ${porticoBody}`);
}

export interface Targets {
  readonly portico: Service;
  readonly redis: Service;
  readonly bare: Service;
  readonly porticoMcp: string;
  readonly bareMcp: string;
}

/** Measurement 1: resources/read req/s, Portico and bare Fastify in alternating rounds. */
export async function measureRead(load: Load, t: Targets, sessionId: string) {
  const p = { url: t.porticoMcp, body: READ_BODY, sessionId, watch: [t.portico, t.redis] };
  const b = { url: t.bareMcp, body: READ_BODY, watch: [t.bare] };
  await wrk(load, { ...p, label: "1 warm-up Portico", seconds: load.warmupSeconds });
  await wrk(load, { ...b, label: "1 warm-up bare", seconds: load.warmupSeconds });
  const portico: Run[] = [];
  const bare: Run[] = [];
  for (let round = 1; round <= load.rounds; round++) {
    portico.push(await wrk(load, { ...p, label: `1 round ${round} Portico` }));
    bare.push(await wrk(load, { ...b, label: `1 round ${round} bare` }));
  }
  return { portico, bare };
}

/** One tools/call of test_simple_text, answer checked (JSON from Portico, SSE from the upstream). */
export function toolCall(url: string, sessionId: string) {
  return async (i: number) => {
    const id = i + 2;
    const reply = await post(
      url,
      rpcBody(id, "tools/call", { name: "test_simple_text", arguments: {} }),
      sessionId,
    );
    if (reply.status !== 200 || firstText(answerOf(reply, id)) !== TOOL_TEXT)
      throw new Error(`tools/call at ${url}: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
  };
}

export interface ToolSessions {
  readonly direct: string;
  readonly portico: string;
}

/**
 * One verified tools/call on each side, before timing anything. The one through Portico also puts
 * Portico in the state every deployment with an mcp provider reaches (its AsyncLocalStorage on).
 */
export async function checkTools(porticoMcp: string, upstreamMcp: string): Promise<ToolSessions> {
  const sessions = { direct: await openSession(upstreamMcp), portico: await openSession(porticoMcp) };
  await toolCall(upstreamMcp, sessions.direct)(-1);
  await toolCall(porticoMcp, sessions.portico)(-1);
  return sessions;
}

/** Measurement 2: sequential tools/call latency, direct to the upstream and through Portico. */
export async function measureTool(
  o: { rounds: number; calls: number; warmup: number },
  t: Targets & { upstreamMcp: string },
  sessions: ToolSessions,
): Promise<{ direct: LatencySummary[]; portico: LatencySummary[] }> {
  const direct = toolCall(t.upstreamMcp, sessions.direct);
  const via = toolCall(t.porticoMcp, sessions.portico);
  const opts = { warmup: o.warmup, count: o.calls, deadlineMs: 60_000 };
  const out = { direct: [] as LatencySummary[], portico: [] as LatencySummary[] };
  for (let round = 1; round <= o.rounds; round++) {
    log(`2 round ${round}: ${o.calls} calls direct, then through Portico`);
    out.direct.push(await sampleSequential(direct, opts));
    out.portico.push(await sampleSequential(via, opts));
  }
  for (const r of [...out.direct, ...out.portico])
    if (r.count < o.calls) throw new Error(`2: only ${r.count} of ${o.calls} calls before the deadline`);
  return out;
}

/** Measurement 3: initialize/s (each a new Redis session). */
export async function measureInitialize(load: Load, t: Targets, body: string): Promise<Run[]> {
  const spec = { url: t.porticoMcp, body, watch: [t.portico, t.redis] };
  await wrk(load, { ...spec, label: "3 warm-up", seconds: load.warmupSeconds });
  const runs: Run[] = [];
  for (let round = 1; round <= load.rounds; round++)
    runs.push(await wrk(load, { ...spec, label: `3 round ${round}` }));
  return runs;
}
