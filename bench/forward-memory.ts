// Measurement 7c of `npm run bench` (docs/performance.md): Portico's memory per active proxied
// session. N session-era clients each initialize (declaring a set of capabilities), acknowledge,
// and make one checked tools/call through Portico to the minimal upstream; none holds a GET
// stream. Heap after GC and VmRSS before and after, divided by N; sockets too.
import { Agent, request } from "node:http";
import { BODIES, FORWARD_EXPECT } from "./forward.js";
import { socketCount } from "./memory.js";
import { PROTOCOL_VERSION, rpcBody } from "./mcp-client.js";
import { gcAndMeasure, type ForwardUpstream, type MemorySnapshot, type Service } from "./services.js";

const CONCURRENCY = 32;
const DEADLINE_MS = 300_000;
const WARMUP_SESSIONS = 200;
const log = (msg: string) => console.error(`bench: ${msg}`);

/** The client capabilities of the two runs: none of the three, and all three. */
export const CAPABILITY_SETS = {
  none: {},
  all: { sampling: {}, elicitation: {}, roots: { listChanged: true } },
} as const;
export type CapabilitySet = keyof typeof CAPABILITY_SETS;

export interface ForwardMemory {
  readonly capabilities: CapabilitySet;
  readonly sessions: number;
  readonly seconds: number;
  readonly before: MemorySnapshot;
  readonly after: MemorySnapshot;
  readonly socketsBefore: number;
  readonly socketsAfter: number;
  readonly heapPerSessionBytes: number;
  /** Upstream sessions the minimal upstream opened during the batch, and how many it holds at its end. */
  readonly upstreamSessionsOpened: number;
  readonly upstreamSessionsOpen: number;
  readonly rssPerSessionBytes: number;
}

interface Reply {
  readonly status: number;
  readonly sessionId: string | undefined;
  readonly text: string;
}

function postOnce(agent: Agent, url: URL, body: string, sessionId?: string): Promise<Reply> {
  const headers: Record<string, string | number> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "content-length": Buffer.byteLength(body),
  };
  if (sessionId !== undefined) {
    headers["mcp-session-id"] = sessionId;
    headers["mcp-protocol-version"] = PROTOCOL_VERSION;
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: "POST", timeout: 10_000, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const sid = res.headers["mcp-session-id"];
        resolve({
          status: res.statusCode ?? 0,
          sessionId: typeof sid === "string" ? sid : undefined,
          text: Buffer.concat(chunks).toString(),
        });
      });
    });
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

/** One client's life: initialize, notifications/initialized, one tools/call; every answer checked. */
async function activeSession(agent: Agent, url: URL, initBody: string, callBody: string): Promise<void> {
  const init = await postOnce(agent, url, initBody);
  if (init.status !== 200 || init.sessionId === undefined)
    throw new Error(`7c initialize: HTTP ${init.status}: ${init.text.slice(0, 300)}`);
  const ack = await postOnce(
    agent,
    url,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    init.sessionId,
  );
  if (ack.status !== 202) throw new Error(`7c notifications/initialized: HTTP ${ack.status}`);
  const call = await postOnce(agent, url, callBody, init.sessionId);
  if (call.status !== 200 || !call.text.includes(FORWARD_EXPECT))
    throw new Error(`7c tools/call: HTTP ${call.status}: ${call.text.slice(0, 300)}`);
}

/** What the minimal upstream's session-era server has opened and holds (its GET /stats). */
async function upstreamStats(upstream: ForwardUpstream): Promise<{ initialized: number; open: number }> {
  const res = await fetch(`${upstream.url}/stats`, { signal: AbortSignal.timeout(5000) });
  return (await res.json()) as { initialized: number; open: number };
}

/** `count` active sessions, CONCURRENCY at a time; returns the seconds it took. */
async function createActive(url: URL, initBody: string, count: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      if (Date.now() - started > DEADLINE_MS)
        throw new Error(`7c: only ${next} of ${count} sessions in ${DEADLINE_MS} ms`);
      next++;
      await activeSession(agent, url, initBody, BODIES.session);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
  return (Date.now() - started) / 1000;
}

/** 7c once: `count` active sessions of clients declaring `capabilities` (after a few not counted). */
export async function measureForwardMemory(
  portico: Service,
  upstream: ForwardUpstream,
  porticoMcp: string,
  count: number,
  capabilities: CapabilitySet,
): Promise<ForwardMemory> {
  const url = new URL(porticoMcp);
  const initBody = rpcBody(1, "initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: CAPABILITY_SETS[capabilities],
    clientInfo: { name: "portico-bench", version: "1.0.0" },
  });
  // A few sessions first, so that what is built once per capability set is not counted per session.
  await createActive(url, initBody, Math.min(WARMUP_SESSIONS, count));
  const before = await gcAndMeasure(portico);
  const socketsBefore = await socketCount(portico.child.pid);
  const upstreamBefore = await upstreamStats(upstream);
  log(
    `7c: ${count} sessions declaring ${capabilities} capabilities, one tools/call each (${CONCURRENCY} at a time)`,
  );
  const seconds = await createActive(url, initBody, count);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = await gcAndMeasure(portico);
  const upstreamAfter = await upstreamStats(upstream);
  return {
    capabilities,
    sessions: count,
    seconds,
    before,
    after,
    socketsBefore,
    socketsAfter: await socketCount(portico.child.pid),
    heapPerSessionBytes: (after.heapUsedBytes - before.heapUsedBytes) / count,
    rssPerSessionBytes: (after.rssBytes - before.rssBytes) / count,
    upstreamSessionsOpened: upstreamAfter.initialized - upstreamBefore.initialized,
    upstreamSessionsOpen: upstreamAfter.open,
  };
}
