// A Portico replica as its own process (`node src/main.ts`), for tests that kill one: listens on a
// free loopback port, shares a Redis and key prefix with its siblings, seeds its tenants from a
// bootstrap file (PORTICO_CONFIG), and is ready once /readyz answers 200.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { TenantConfig } from "../../src/providers/config.js";
import { TEST_SECRET } from "./portico.js";
import { freePort } from "./redis.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ReplicaProcess {
  readonly url: string;
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** What it wrote to stdout and stderr, for failure messages. */
  output(): string;
  /** SIGKILL: no shutdown, no goodbye; resolves once the process is gone. */
  kill(): Promise<void>;
}

export interface ReplicaOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly tenants: readonly TenantConfig[];
  readonly env?: Record<string, string>;
}

/** Starts one replica and waits until it is ready (at most 60 s on a busy machine). */
export async function startReplicaProcess(opts: ReplicaOptions): Promise<ReplicaProcess> {
  const dir = mkdtempSync(join(tmpdir(), "portico-replica-"));
  const configFile = join(dir, "portico.json");
  writeFileSync(configFile, JSON.stringify({ tenants: opts.tenants }));
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOST: "127.0.0.1",
      PORT: String(port),
      PORTICO_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      PORTICO_SECRET_KEY: TEST_SECRET,
      PORTICO_REDIS_URL: opts.redisUrl,
      PORTICO_REDIS_KEY_PREFIX: opts.prefix,
      PORTICO_CONFIG: configFile,
      ...opts.env,
    },
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      rmSync(dir, { recursive: true, force: true });
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const replica: ReplicaProcess = {
    url,
    child,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    if (child.exitCode !== null) throw new Error(`the replica exited at boot:\n${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return replica;
    await new Promise((r) => setTimeout(r, 200));
  }
  await replica.kill();
  throw new Error(`the replica was not ready within 60 s:\n${output}`);
}
