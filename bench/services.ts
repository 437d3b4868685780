// The servers the bench measures, each in its own process on 127.0.0.1: redis-server, the upstream
// MCP fixture (test/fixtures/conformance-server.ts), Portico from dist/main.js, the bare Fastify
// baseline (bench/bare-fastify.ts), the SDK v2 handler (bench/sdk-handler.ts), and for measurement
// 7 the minimal upstream (bench/upstream.ts) and the bare forwarder (bench/bare-forwarder.ts).
// Also reads a process's CPU time, VmRSS, and V8's heap after a GC.
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { pings } from "../test/support/redis.js";
import { freePort, httpOk, spawnChild, waitReady, type Child } from "./processes.js";

const START_TIMEOUT_MS = 20_000;
export const BENCH_SECRET = "portico-bench-secret-0123456789abcdef";

/** Installed in Portico with --import: on SIGUSR2, two full GCs, then one line of memoryUsage(). */
const GC_HOOK =
  'process.on("SIGUSR2",()=>{globalThis.gc();globalThis.gc();' +
  'process.stderr.write("BENCH_MEM "+JSON.stringify(process.memoryUsage())+"\\n")})';

export interface Service {
  readonly child: Child;
  /** Base URL (`http://127.0.0.1:<port>`) or, for Redis, `redis://127.0.0.1:<port>`. */
  readonly url: string;
}

/** The environment of a child without the caller's Portico settings or loaders. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("PORTICO_") && !k.startsWith("OTEL_") && k !== "NODE_OPTIONS" && k !== "PORT")
      env[k] = v;
  return { ...env, ...extra };
}

export async function startRedis(dir: string): Promise<Service> {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const child = spawnChild({ name: "redis-server", command: "redis-server", args: [...args, "--dir", dir] });
  await waitReady(child, () => pings(port), START_TIMEOUT_MS);
  return { child, url: `redis://127.0.0.1:${port}` };
}

/** The conformance fixture; its url is the MCP endpoint (…/mcp). */
export async function startUpstream(): Promise<Service> {
  const port = await freePort();
  const child = spawnChild({
    name: "upstream fixture",
    command: process.execPath,
    args: ["--import", "tsx", "test/fixtures/conformance-server.ts"],
    env: childEnv({ PORT: String(port) }),
  });
  const line = child.nextLine(/listening on /, START_TIMEOUT_MS);
  await waitReady(child, () => line.then(() => true), START_TIMEOUT_MS);
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

/** The two MCP endpoints of bench/upstream.ts (measurement 7): one per era, on its own port. */
export interface ForwardUpstream extends Service {
  readonly sessionUrl: string;
  readonly statelessUrl: string;
}

/** bench/upstream.ts: a session-era-only and a 2026-07-28-only server in one process. */
export async function startForwardUpstream(): Promise<ForwardUpstream> {
  const child = spawnChild({
    name: "bench upstream",
    command: process.execPath,
    args: ["--import", "tsx", "bench/upstream.ts"],
    env: childEnv({}),
  });
  const line = child.nextLine(/listening on session=\d+ stateless=\d+/, START_TIMEOUT_MS);
  await waitReady(child, () => line.then(() => true), START_TIMEOUT_MS);
  const [, session, stateless] = /session=(\d+) stateless=(\d+)/.exec(await line)!;
  return {
    child,
    url: `http://127.0.0.1:${session}`,
    sessionUrl: `http://127.0.0.1:${session}/mcp`,
    statelessUrl: `http://127.0.0.1:${stateless}/mcp`,
  };
}

/**
 * bench/bare-forwarder.ts in front of `upstream`: POST /forward/session and /forward/stateless.
 * With `cpuProfDir`, it writes a CPU profile there too, to compare with Portico's frame by frame.
 */
export async function startBareForwarder(upstream: ForwardUpstream, cpuProfDir?: string): Promise<Service> {
  const port = await freePort();
  const profile = cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", cpuProfDir] : [];
  const child = spawnChild({
    name: "bare forwarder",
    command: process.execPath,
    args: [...profile, "--import", "tsx", "bench/bare-forwarder.ts"],
    env: childEnv({
      PORT: String(port),
      BENCH_UPSTREAM_SESSION: upstream.sessionUrl,
      BENCH_UPSTREAM_STATELESS: upstream.statelessUrl,
    }),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, () => httpOk(`${url}/healthz`), START_TIMEOUT_MS);
  return { child, url };
}

export interface PorticoOptions {
  readonly redisUrl: string;
  readonly configFile: string;
  /** Write a V8 CPU profile here when Portico exits. */
  readonly cpuProfDir?: string;
  /** Its entry point; default this checkout's dist/main.js (the tracing entry runs a baseline build too). */
  readonly main?: string;
  /** More environment (the tracing entry's OTEL_* variables). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Portico from dist/main.js (node --expose-gc, plus the SIGUSR2 GC hook). */
export async function startPortico(opts: PorticoOptions): Promise<Service> {
  const port = await freePort();
  const flags = ["--expose-gc", "--import", `data:text/javascript,${encodeURIComponent(GC_HOOK)}`];
  if (opts.cpuProfDir) flags.push("--cpu-prof", "--cpu-prof-dir", opts.cpuProfDir);
  const child = spawnChild({
    name: "portico",
    command: process.execPath,
    args: [...flags, opts.main ?? "dist/main.js"],
    env: childEnv({
      PORT: String(port),
      HOST: "127.0.0.1",
      PORTICO_REDIS_URL: opts.redisUrl,
      PORTICO_CONFIG: opts.configFile,
      PORTICO_LOG_LEVEL: "warn",
      PORTICO_SECRET_KEY: BENCH_SECRET,
      // Every bench client comes from 127.0.0.1, far past the defaults (docs/security.md): the
      // request limits are set as high as they go, so the limiter still counts every request
      // (its cost is measured), and the per-address session cap is off (50,000 sessions).
      PORTICO_RATE_LIMIT_REQUESTS_PER_MINUTE: "100000000",
      PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "100000000",
      PORTICO_MAX_SESSIONS_PER_ADDRESS: "0",
      // No balancer to drain from: stop at once, well inside stop()'s grace, so the CPU profile is
      // written before a SIGKILL could come.
      PORTICO_SHUTDOWN_DELAY_SECONDS: "0",
      ...opts.env,
    }),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, () => httpOk(`${url}/readyz`), START_TIMEOUT_MS);
  return { child, url };
}

/** The JSON-RPC results the bare routes answer with: Portico's, byte for byte. */
export interface BareResults {
  /** resources/read over a session (measurement 1), at /mcp/:tenant. */
  readonly sessionJson: string;
  /** resources/read on 2026-07-28 (measurement 6), at /stateless/:tenant. */
  readonly statelessJson: string;
}

/** The bare Fastify routes answering Portico's results. */
export async function startBare(results: BareResults): Promise<Service> {
  const port = await freePort();
  const child = spawnChild({
    name: "bare fastify",
    command: process.execPath,
    args: ["--import", "tsx", "bench/bare-fastify.ts"],
    env: childEnv({
      PORT: String(port),
      BENCH_RESULT_JSON: results.sessionJson,
      BENCH_STATELESS_RESULT_JSON: results.statelessJson,
    }),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, () => httpOk(`${url}/healthz`), START_TIMEOUT_MS);
  return { child, url };
}

/** The official SDK v2 `createMcpHandler` serving perf://hello at /mcp/:tenant. */
export async function startSdkHandler(): Promise<Service> {
  const port = await freePort();
  const child = spawnChild({
    name: "sdk handler",
    command: process.execPath,
    args: ["--import", "tsx", "bench/sdk-handler.ts"],
    env: childEnv({ PORT: String(port) }),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, () => httpOk(`${url}/healthz`), START_TIMEOUT_MS);
  return { child, url };
}

export interface MemorySnapshot {
  /** VmRSS from /proc/<pid>/status, bytes. */
  readonly rssBytes: number;
  /** V8 heap in use after two full GCs, bytes. */
  readonly heapUsedBytes: number;
  readonly externalBytes: number;
  readonly arrayBuffersBytes: number;
}

/** VmRSS of a process, in bytes (Linux /proc). */
export async function vmRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

/** CPU time (user + system) a process has used so far, in seconds (/proc/<pid>/stat, 10 ms steps). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after "(comm)": state is field 3, utime 14 and stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Makes Portico collect garbage (SIGUSR2 hook), then reads its heap and its VmRSS. */
export async function gcAndMeasure(portico: Service): Promise<MemorySnapshot> {
  const line = portico.child.nextLine(/^BENCH_MEM /, 10_000);
  portico.child.process.kill("SIGUSR2");
  const usage = JSON.parse((await line).slice("BENCH_MEM ".length)) as NodeJS.MemoryUsage;
  // Let the allocator hand freed pages back before reading RSS.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return {
    rssBytes: await vmRssBytes(portico.child.pid),
    heapUsedBytes: usage.heapUsed,
    externalBytes: usage.external,
    arrayBuffersBytes: usage.arrayBuffers,
  };
}
