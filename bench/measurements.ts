// The five measurements of `npm run bench` (docs/performance.md): each checks that the answers are
// right before timing anything, alternates the two sides of a comparison, and returns raw numbers.
import { sampleSequential, type LatencySummary } from "./latency.js";
import { answerOf, firstText, openSession, post, rpcBody } from "./mcp-client.js";
import { createSessions, measureRedisCost, redisKeyCount, type RedisCost } from "./sessions.js";
import { gcAndMeasure, type MemorySnapshot, type Service } from "./services.js";
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

/** wrk once, insisting that every request succeeded. */
async function wrk(
  label: string,
  load: Load,
  url: string,
  body: string,
  sessionId?: string,
  seconds?: number,
) {
  const durationSeconds = seconds ?? load.durationSeconds;
  log(`${label}: wrk ${durationSeconds} s`);
  const r = await runWrk({ ...load, durationSeconds, url, body, ...(sessionId ? { sessionId } : {}) });
  if (failures(r) > 0)
    throw new Error(`${label}: ${failures(r)} failed requests: ${JSON.stringify(r.errors)}`);
  if (r.requests === 0) throw new Error(`${label}: wrk completed no request`);
  return r;
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

/** The bare route must answer byte for byte what Portico answered. */
export async function checkBare(bareMcp: string, porticoBody: string): Promise<void> {
  const reply = await post(bareMcp, READ_BODY);
  if (reply.status !== 200 || reply.text !== porticoBody)
    throw new Error(`bare Fastify answered HTTP ${reply.status} ${reply.text}, Portico ${porticoBody}`);
}

/** Measurement 1: resources/read req/s, Portico and bare Fastify in alternating rounds. */
export async function measureRead(load: Load, porticoMcp: string, bareMcp: string, sessionId: string) {
  await wrk("1 warm-up Portico", load, porticoMcp, READ_BODY, sessionId, load.warmupSeconds);
  await wrk("1 warm-up bare", load, bareMcp, READ_BODY, undefined, load.warmupSeconds);
  const portico: WrkResult[] = [];
  const bare: WrkResult[] = [];
  for (let round = 1; round <= load.rounds; round++) {
    portico.push(await wrk(`1 round ${round} Portico`, load, porticoMcp, READ_BODY, sessionId));
    bare.push(await wrk(`1 round ${round} bare`, load, bareMcp, READ_BODY));
  }
  return { portico, bare };
}

/** One tools/call of test_simple_text, answer checked (JSON from Portico, SSE from the upstream). */
function toolCall(url: string, sessionId: string) {
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

/** Measurement 2: sequential tools/call latency, direct to the upstream and through Portico. */
export async function measureTool(
  rounds: number,
  calls: number,
  warmup: number,
  porticoMcp: string,
  upstreamMcp: string,
): Promise<{ direct: LatencySummary[]; portico: LatencySummary[] }> {
  const direct = toolCall(upstreamMcp, await openSession(upstreamMcp));
  const via = toolCall(porticoMcp, await openSession(porticoMcp));
  await direct(-1);
  await via(-1);
  const opts = { warmup, count: calls, deadlineMs: 60_000 };
  const out = { direct: [] as LatencySummary[], portico: [] as LatencySummary[] };
  for (let round = 1; round <= rounds; round++) {
    log(`2 round ${round}: ${calls} calls direct, then through Portico`);
    out.direct.push(await sampleSequential(direct, opts));
    out.portico.push(await sampleSequential(via, opts));
  }
  for (const r of [...out.direct, ...out.portico])
    if (r.count < calls) throw new Error(`2: only ${r.count} of ${calls} calls before the deadline`);
  return out;
}

/** Measurement 3: initialize/s (each a new Redis session). */
export async function measureInitialize(load: Load, porticoMcp: string, body: string): Promise<WrkResult[]> {
  await wrk("3 warm-up", load, porticoMcp, body, undefined, load.warmupSeconds);
  const runs: WrkResult[] = [];
  for (let round = 1; round <= load.rounds; round++)
    runs.push(await wrk(`3 round ${round}`, load, porticoMcp, body));
  return runs;
}

/** Measurement 4: the Redis cost of one idle session. */
export function measureRedis(redisUrl: string, porticoMcp: string, count: number): Promise<RedisCost> {
  log(`4: ${count} sessions, MEMORY USAGE of each key`);
  return measureRedisCost(redisUrl, porticoMcp, TENANT, count);
}

/** Measurement 5: Portico's memory before and after `count` more idle sessions. */
export async function measureRss(portico: Service, redisUrl: string, porticoMcp: string, count: number) {
  const before: MemorySnapshot = await gcAndMeasure(portico);
  const redisKeysBefore = await redisKeyCount(redisUrl);
  log(`5: ${count} sessions (64 concurrent initialize requests)`);
  const created = await createSessions(porticoMcp, count, {
    concurrency: 64,
    deadlineMs: 120_000,
    keepIds: false,
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = await gcAndMeasure(portico);
  const redisKeysAfter = await redisKeyCount(redisUrl);
  return {
    sessions: created.count,
    createSeconds: created.seconds,
    before,
    after,
    redisKeysBefore,
    redisKeysAfter,
  };
}
