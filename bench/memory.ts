// Measurements 4 and 5 of `npm run bench` (docs/performance.md): what an idle session costs in
// Redis and in Portico's memory, plus 5b, the memory and sockets Portico keeps for sessions that
// have made one upstream tool call (informational, no goal).
import { readdir, readlink } from "node:fs/promises";
import { toolCall, TENANT } from "./measurements.js";
import { openSession } from "./mcp-client.js";
import { createSessions, measureRedisCost, redisKeyCount, type RedisCost } from "./sessions.js";
import { gcAndMeasure, type MemorySnapshot, type Service } from "./services.js";

const log = (msg: string) => console.error(`bench: ${msg}`);

/** Measurement 4: the Redis cost of one idle session. */
export function measureRedis(redisUrl: string, porticoMcp: string, count: number): Promise<RedisCost> {
  log(`4: ${count} sessions, MEMORY USAGE of each key`);
  return measureRedisCost(redisUrl, porticoMcp, TENANT, count);
}

export interface RssResult {
  readonly sessions: number;
  readonly createSeconds: number;
  readonly before: MemorySnapshot;
  readonly after: MemorySnapshot;
  readonly redisKeysBefore: number;
  readonly redisKeysAfter: number;
}

/** Measurement 5: Portico's memory before and after `count` more idle sessions. */
export async function measureRss(
  portico: Service,
  redisUrl: string,
  porticoMcp: string,
  count: number,
): Promise<RssResult> {
  const before = await gcAndMeasure(portico);
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

export interface ToolSessionsResult {
  readonly sessions: number;
  readonly before: MemorySnapshot;
  readonly after: MemorySnapshot;
  /** Open sockets of the Portico process (/proc/<pid>/fd). */
  readonly socketsBefore: number;
  readonly socketsAfter: number;
}

/** Measurement 5b: `count` sessions that each make one tools/call, then sit idle. */
export async function measureToolSessions(
  portico: Service,
  porticoMcp: string,
  count: number,
): Promise<ToolSessionsResult> {
  const before = await gcAndMeasure(portico);
  const socketsBefore = await socketCount(portico.child.pid);
  log(`5b: ${count} sessions with one tools/call each (25 at a time)`);
  const deadline = Date.now() + 120_000;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      if (Date.now() > deadline) throw new Error(`5b: only ${next} of ${count} sessions in 120 s`);
      next++;
      await toolCall(porticoMcp, await openSession(porticoMcp))(0);
    }
  };
  await Promise.all(Array.from({ length: 25 }, worker));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = await gcAndMeasure(portico);
  return {
    sessions: count,
    before,
    after,
    socketsBefore,
    socketsAfter: await socketCount(portico.child.pid),
  };
}

/** Sockets a process holds open. */
export async function socketCount(pid: number): Promise<number> {
  const fds = await readdir(`/proc/${pid}/fd`);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")));
  return links.filter((l) => l.startsWith("socket:")).length;
}
