// Many idle sessions for bench measurements 4 and 5: initialize requests from a pool of keep-alive
// connections (node:http), and what one session costs in Redis (MEMORY USAGE of its key, the
// record's length, and the growth of used_memory), keys named by src/store/keys.ts.
import { Agent, request } from "node:http";
import { Redis } from "ioredis";
import { createKeys } from "../src/store/keys.js";
import { initializeBody } from "./mcp-client.js";

export interface CreateOptions {
  readonly concurrency: number;
  readonly deadlineMs: number;
  /** Keep the session ids (measurement 4); 50,000 are only counted. */
  readonly keepIds: boolean;
}

export interface Created {
  readonly count: number;
  readonly ids: string[];
  readonly seconds: number;
}

/** Sends `count` initialize requests, `concurrency` at a time; throws on the first wrong answer. */
export async function createSessions(mcpUrl: string, count: number, o: CreateOptions): Promise<Created> {
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });
  const url = new URL(mcpUrl);
  const body = initializeBody();
  const ids: string[] = [];
  const deadline = Date.now() + o.deadlineMs;
  const started = Date.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < count) {
      if (Date.now() > deadline)
        throw new Error(`only ${done} of ${count} sessions after ${o.deadlineMs} ms`);
      next++;
      const sid = await initialize(agent, url, body);
      if (o.keepIds) ids.push(sid);
      done++;
    }
  };
  try {
    await Promise.all(Array.from({ length: o.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return { count: done, ids, seconds: (Date.now() - started) / 1000 };
}

function initialize(agent: Agent, url: URL, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        method: "POST",
        timeout: 10_000,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const sid = res.headers["mcp-session-id"];
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode === 200 && typeof sid === "string" && text.includes('"protocolVersion"'))
            resolve(sid);
          else reject(new Error(`initialize: HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("initialize timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

export interface RedisCost {
  readonly sessions: number;
  /** MEMORY USAGE <key> SAMPLES 0, averaged over the sessions. */
  readonly memoryUsageAvgBytes: number;
  readonly memoryUsageMinBytes: number;
  readonly memoryUsageMaxBytes: number;
  /** The stored record (the value), bytes. */
  readonly recordBytes: number;
  readonly record: string;
  /** The key name, bytes. */
  readonly keyBytes: number;
  /** Keys Redis gained per session (1 means the record is the only key). */
  readonly keysPerSession: number;
  /** INFO used_memory growth per session: includes the expires dict and allocator rounding. */
  readonly usedMemoryPerSessionBytes: number;
}

/** Creates `count` sessions through Portico and measures each one's key in Redis. */
export async function measureRedisCost(
  redisUrl: string,
  mcpUrl: string,
  tenant: string,
  count: number,
): Promise<RedisCost> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const keys = createKeys("portico");
    const keysBefore = await redis.dbsize();
    const usedBefore = await usedMemory(redis);
    const { ids } = await createSessions(mcpUrl, count, {
      concurrency: 20,
      deadlineMs: 60_000,
      keepIds: true,
    });
    const usedAfter = await usedMemory(redis);
    const keysAfter = await redis.dbsize();
    const sizes: number[] = [];
    for (const sid of ids) {
      const size = (await redis.call("MEMORY", "USAGE", keys.session(tenant, sid), "SAMPLES", "0")) as
        number | null;
      if (size === null) throw new Error(`session key of ${sid} is missing`);
      sizes.push(size);
    }
    const sampleKey = keys.session(tenant, ids[0]!);
    const record = (await redis.get(sampleKey)) ?? "";
    return {
      sessions: ids.length,
      memoryUsageAvgBytes: sizes.reduce((a, b) => a + b, 0) / sizes.length,
      memoryUsageMinBytes: Math.min(...sizes),
      memoryUsageMaxBytes: Math.max(...sizes),
      recordBytes: Buffer.byteLength(record),
      record,
      keyBytes: Buffer.byteLength(sampleKey),
      keysPerSession: (keysAfter - keysBefore) / ids.length,
      usedMemoryPerSessionBytes: (usedAfter - usedBefore) / ids.length,
    };
  } finally {
    redis.disconnect();
  }
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN);
}

/** Keys in the bench's Redis (it holds nothing but this deployment). */
export async function redisKeyCount(redisUrl: string): Promise<number> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return await redis.dbsize();
  } finally {
    redis.disconnect();
  }
}
