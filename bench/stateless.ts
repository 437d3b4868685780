// Measurement 6 of `npm run bench` (docs/performance.md): resources/read of perf://hello on the
// 2026-07-28 wire (no session; `_meta` and the MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers) through Portico, the official SDK v2 handler and bare Fastify. Each answer is checked
// once, then the three take turns under the same wrk load.
import { answerOf, firstText, post, rpcBody, type RpcAnswer } from "./mcp-client.js";
import { wrk, type Load, type Run, type RunSpec } from "./measurements.js";
import type { Service } from "./services.js";
import { describeWrk } from "./wrk.js";

export const STATELESS_VERSION = "2026-07-28";
const URI = "perf://hello";

/** The body a 2026-07-28 client sends: the read, with the per-request `_meta` envelope. */
export const STATELESS_READ_BODY = rpcBody(1, "resources/read", {
  uri: URI,
  _meta: {
    "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "portico-bench", version: "1.0.0" },
  },
});

/** The request metadata headers that mirror the body (basic/transports §Request Metadata). */
export const STATELESS_HEADERS: Readonly<Record<string, string>> = {
  "MCP-Protocol-Version": STATELESS_VERSION,
  "Mcp-Method": "resources/read",
  "Mcp-Name": URI,
};

export interface StatelessReply {
  /** The whole response body, as sent. */
  readonly body: string;
  /** Its JSON-RPC result, serialized. */
  readonly resultJson: string;
}

/**
 * POSTs the 2026-07-28 read once and insists on a real answer: HTTP 200 JSON, no session id, a
 * complete result (`resultType`) with the text "hello", not an error.
 */
export async function checkStatelessRead(label: string, url: string): Promise<StatelessReply> {
  const reply = await post(url, STATELESS_READ_BODY, undefined, STATELESS_HEADERS);
  const wrong = (why: string) =>
    new Error(
      `${label}: 2026-07-28 resources/read ${why}: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`,
    );
  let answer: RpcAnswer;
  try {
    answer = answerOf(reply, 1);
  } catch {
    throw wrong("has no answer to id 1");
  }
  if (reply.status !== 200 || answer.error !== undefined) throw wrong("failed");
  if (!reply.headers.get("content-type")?.startsWith("application/json")) throw wrong("is not JSON");
  if (reply.headers.get("mcp-session-id") !== null) throw wrong("made a session");
  if (answer.result?.resultType !== "complete" || firstText(answer) !== "hello")
    throw wrong("is not a complete result with the text 'hello'");
  return { body: reply.text, resultJson: JSON.stringify(answer.result) };
}

export interface StatelessTargets {
  readonly portico: Service;
  readonly redis: Service;
  readonly sdk: Service;
  readonly bare: Service;
  /** The three endpoints the read is posted to. */
  readonly porticoMcp: string;
  readonly sdkMcp: string;
  readonly bareStateless: string;
}

export interface StatelessRuns {
  readonly portico: Run[];
  readonly sdk: Run[];
  readonly bare: Run[];
}

/** Measurement 6: a warm-up each, then rounds of Portico, SDK handler, bare Fastify in turn. */
export async function measureStateless(load: Load, t: StatelessTargets): Promise<StatelessRuns> {
  const common = { body: STATELESS_READ_BODY, headers: STATELESS_HEADERS };
  const sides: Record<keyof StatelessRuns, Omit<RunSpec, "label">> = {
    portico: { ...common, url: t.porticoMcp, watch: [t.portico, t.redis] },
    sdk: { ...common, url: t.sdkMcp, watch: [t.sdk] },
    bare: { ...common, url: t.bareStateless, watch: [t.bare] },
  };
  const names = Object.keys(sides) as Array<keyof StatelessRuns>;
  for (const name of names)
    await wrk(load, { ...sides[name], label: `6 warm-up ${name}`, seconds: load.warmupSeconds });
  const runs: StatelessRuns = { portico: [], sdk: [], bare: [] };
  for (let round = 1; round <= load.rounds; round++)
    for (const name of names)
      runs[name].push(await wrk(load, { ...sides[name], label: `6 round ${round} ${name}` }));
  return runs;
}

/** Measurement 6 as reported: the runs, the load, and the two ratios of best rounds. */
export interface StatelessResults extends StatelessRuns {
  readonly wrkCommand: string;
  readonly warmupSeconds: number;
  /** Best Portico req/s over best SDK handler req/s. */
  readonly sdkRatio: number;
  /** Best Portico req/s over best bare req/s. */
  readonly bareRatio: number;
}

export function statelessResults(runs: StatelessRuns, load: Load): StatelessResults {
  const best = (side: readonly Run[]) => Math.max(...side.map((r) => r.requestsPerSecond));
  return {
    ...runs,
    wrkCommand: describeWrk(load),
    warmupSeconds: load.warmupSeconds,
    sdkRatio: best(runs.portico) / best(runs.sdk),
    bareRatio: best(runs.portico) / best(runs.bare),
  };
}
