// A Portico replica as its own process (`node --import tsx src/main.ts`), for what only a process
// shows: signals (SIGTERM's drain and close), exiting, and starting again on the same port. Its
// tenants come from a bootstrap file; its output is kept for the failure message. Every replica
// still running when the test process exits is killed.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TenantConfig } from "../../src/records/tenant.js";
import { TEST_SECRET } from "./portico.js";
import { freePort, getTestRedis } from "./redis.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const START_TIMEOUT_MS = 60_000;
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export interface ReplicaOptions {
  readonly tenants: readonly TenantConfig[];
  readonly redisPrefix: string;
  /** Default: the test Redis (getTestRedis). */
  readonly redisUrl?: string;
  /** Default: a free port. */
  readonly port?: number;
  readonly env?: Record<string, string>;
  /** Node flags before `--import tsx` (e.g. --expose-gc). */
  readonly nodeArgs?: readonly string[];
}

export interface ReplicaProcess {
  readonly url: string;
  readonly port: number;
  /** The current process (a new one after restart). */
  readonly pid: number;
  /** Sends `signal` to the current process. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves with the exit code of the current process once it exits. */
  exited(): Promise<number | null>;
  /** Starts the process again on the same port; resolves once /readyz answers 200. */
  restart(): Promise<void>;
  /** SIGTERM and wait for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL: no shutdown, no goodbye; resolves once the process is gone. */
  kill(): Promise<void>;
  /** The last few KB of its output. */
  output(): string;
}

/** Starts a replica and waits until its /readyz answers 200. */
export async function startReplicaProcess(opts: ReplicaOptions): Promise<ReplicaProcess> {
  const dir = mkdtempSync(join(tmpdir(), "portico-replica-"));
  const configFile = join(dir, "portico.json");
  writeFileSync(configFile, JSON.stringify({ tenants: opts.tenants }));
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("PORTICO_") && k !== "PORT" && k !== "NODE_OPTIONS") env[k] = v;
  Object.assign(env, {
    PORT: String(port),
    HOST: "127.0.0.1",
    PORTICO_CONFIG: configFile,
    PORTICO_SECRET_KEY: TEST_SECRET,
    PORTICO_REDIS_URL: opts.redisUrl ?? (await getTestRedis()).url,
    PORTICO_REDIS_KEY_PREFIX: opts.redisPrefix,
    PORTICO_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    ...opts.env,
  });
  let output = "";
  let child!: ChildProcess;
  let exit!: Promise<number | null>;
  const launch = async () => {
    child = spawn(process.execPath, [...(opts.nodeArgs ?? []), "--import", "tsx", "src/main.ts"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    running.add(child);
    const current = child;
    exit = new Promise((resolve) =>
      current.once("exit", (code) => {
        running.delete(current);
        resolve(code);
      }),
    );
    const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    await waitReady(
      url,
      () => current.exitCode !== null || current.signalCode !== null,
      () => output,
    );
  };
  await launch();
  return {
    url,
    port,
    get pid() {
      return child.pid ?? -1;
    },
    signal: (signal) => void child.kill(signal),
    exited: () => exit,
    restart: launch,
    async stop(graceMs = 30_000) {
      if (child.exitCode === null && child.signalCode === null) {
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        child.kill("SIGTERM");
        await exit;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exit;
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => output,
  };
}

async function waitReady(url: string, gone: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone()) throw new Error(`the replica at ${url} exited:\n${output()}`);
    const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
      async (r) => (await r.arrayBuffer(), r.status === 200),
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the replica at ${url} was not ready within ${START_TIMEOUT_MS} ms:\n${output()}`);
}
