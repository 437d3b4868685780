// Runs wrk (a tracked child, killed with the bench) with bench/lua/post.lua and parses the one
// JSON line the script prints: requests, duration, error counts (non-2xx included) and latency.
import { fileURLToPath } from "node:url";
import { spawnChild } from "./processes.js";

const SCRIPT = fileURLToPath(new URL("./lua/post.lua", import.meta.url));

export interface WrkOptions {
  readonly url: string;
  /** The JSON-RPC body every request carries. */
  readonly body: string;
  /** Mcp-Session-Id to send; none for initialize. */
  readonly sessionId?: string | undefined;
  /** More request headers (name → value), e.g. the 2026-07-28 MCP-Protocol-Version, Mcp-Method, Mcp-Name. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** When set, every answer's body must contain this text; the others count as `wrong`. */
  readonly expect?: string | undefined;
  readonly threads: number;
  readonly connections: number;
  readonly durationSeconds: number;
}

export interface WrkResult {
  readonly requests: number;
  readonly durationSeconds: number;
  readonly requestsPerSecond: number;
  readonly errors: {
    readonly connect: number;
    readonly read: number;
    readonly write: number;
    /** Responses with a status outside 2xx/3xx. */
    readonly status: number;
    readonly timeout: number;
    /** Answers without the expected text (only counted when `expect` is set). */
    readonly wrong: number;
  };
  readonly latencyMs: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
}

interface WrkJson {
  requests: number;
  durationUs: number;
  errors: WrkResult["errors"];
  latencyUs: { p50: number; p90: number; p99: number; max: number };
}

/** The wrk command line, for the report. */
export function describeWrk(o: Pick<WrkOptions, "threads" | "connections" | "durationSeconds">): string {
  return `wrk -t${o.threads} -c${o.connections} -d${o.durationSeconds}s -s bench/lua/post.lua`;
}

/** Headers as the "Name: value" lines post.lua reads from BENCH_HEADERS. */
function headerLines(headers: Readonly<Record<string, string>>): string {
  const lines = Object.entries(headers).map(([name, value]) => {
    if (/[\r\n:]/.test(name) || /[\r\n]/.test(value)) throw new Error(`wrk: bad header ${name}: ${value}`);
    return `${name}: ${value}`;
  });
  return lines.join("\n");
}

/** One wrk run; rejects if wrk fails or runs 20 s past its duration. */
export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const child = spawnChild({
    name: "wrk",
    command: "wrk",
    args: [`-t${o.threads}`, `-c${o.connections}`, `-d${o.durationSeconds}s`, "-s", SCRIPT, o.url],
    env: {
      ...process.env,
      BENCH_BODY: o.body,
      BENCH_SESSION: o.sessionId ?? "",
      BENCH_HEADERS: headerLines(o.headers ?? {}),
      BENCH_EXPECT: o.expect ?? "",
    },
  });
  const line = await child.nextLine(/^WRK_JSON /, (o.durationSeconds + 20) * 1000).catch(async (err) => {
    await child.stop(1000);
    throw new Error(`${String(err)}\n${child.output()}`);
  });
  await child.stop(2000);
  const j = JSON.parse(line.slice("WRK_JSON ".length)) as WrkJson;
  const durationSeconds = j.durationUs / 1e6;
  const ms = (us: number) => us / 1000;
  return {
    requests: j.requests,
    durationSeconds,
    requestsPerSecond: j.requests / durationSeconds,
    errors: j.errors,
    latencyMs: {
      p50: ms(j.latencyUs.p50),
      p90: ms(j.latencyUs.p90),
      p99: ms(j.latencyUs.p99),
      max: ms(j.latencyUs.max),
    },
  };
}

/** Total failed requests of a run: socket errors, timeouts, non-2xx/3xx statuses, wrong answers. */
export function failures(r: WrkResult): number {
  const e = r.errors;
  return e.connect + e.read + e.write + e.status + e.timeout + e.wrong;
}
