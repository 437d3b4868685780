// A real Redis Cluster for tests: PORTICO_TEST_REDIS_CLUSTER_URL when set,
// otherwise three masters (no replicas) on free loopback ports, formed with `redis-cli --cluster
// create`, and killed when the test process exits. No redis-server means a loud failure.

import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, spawnRedis, type RedisChild } from "./redis.js";

const run = promisify(execFile);
const FORM_TIMEOUT_MS = 10_000;

export interface ClusterOptions {
  /** How many masters share the 16384 slots (no replicas); 3 unless set. */
  readonly masters?: number;
  /** `cluster-node-timeout`: how long a node may be silent before it counts as failing. */
  readonly nodeTimeoutMs?: number;
  /** `cluster-require-full-coverage`: with `false`, the other nodes serve on while one is down. */
  readonly requireFullCoverage?: boolean;
}

export interface TestCluster {
  /** Comma-separated seed URLs, as PORTICO_REDIS_URL takes them in cluster mode. */
  readonly url: string;
  readonly ports: readonly number[];
  /** Kills one node (SIGKILL); its slots are not served until it is started again. */
  stopNode(port: number): Promise<void>;
  /** Starts a stopped node again on its port, with its cluster configuration (data is gone). */
  startNode(port: number): Promise<void>;
  /** Resolves once every node reports `cluster_state:ok`. */
  waitUntilOk(): Promise<void>;
  /** Kills every node and removes their files. */
  stop(): Promise<void>;
}

let shared: Promise<{ url: string }> | undefined;

/** The cluster the tests share; starts it on first call, then reuses it for the whole process. */
export function getTestRedisCluster(): Promise<{ url: string }> {
  const fromEnv = process.env["PORTICO_TEST_REDIS_CLUSTER_URL"];
  if (fromEnv !== undefined && fromEnv !== "") return Promise.resolve({ url: fromEnv });
  shared ??= startRedisCluster();
  return shared;
}

/** A cluster of the caller's own, for tests that stop and start its nodes. */
export async function startRedisCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), "portico-cluster-"));
  // The shared cluster is never stopped: its nodes die with the process, its files go with them.
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", removeDir);
  const nodes = new Map<number, RedisChild>();
  const args = (port: number) => [
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    join(dir, `nodes-${port}.conf`),
    "--cluster-node-timeout",
    String(opts.nodeTimeoutMs ?? 5000),
    "--cluster-require-full-coverage",
    opts.requireFullCoverage === false ? "no" : "yes",
  ];
  const stop = async () => {
    await Promise.all([...nodes.values()].map((n) => n.stop()));
    await rm(dir, { recursive: true, force: true });
    process.off("exit", removeDir);
  };
  try {
    for (let i = 0; i < (opts.masters ?? 3); i++) {
      const node = await startNode(dir, args);
      nodes.set(node.port, node);
    }
    const ports = [...nodes.keys()];
    await formCluster(ports);
    const waitUntilOk = () => Promise.all(ports.map(waitForClusterOk)).then(() => undefined);
    await waitUntilOk();
    return {
      url: ports.map((p) => `redis://127.0.0.1:${p}`).join(","),
      ports,
      stopNode: async (port) => nodes.get(port)?.stop(),
      startNode: async (port) => void nodes.set(port, await spawnRedis(port, { dir, extraArgs: args(port) })),
      waitUntilOk,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One cluster-enabled node; its cluster bus listens on port + 10000, so both must be free. */
async function startNode(dir: string, args: (port: number) => string[]): Promise<RedisChild> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    if (port + 10000 > 65535 || !(await isFree(port + 10000))) continue;
    try {
      return await spawnRedis(port, { dir, extraArgs: args(port) });
    } catch (err) {
      if (attempt >= 3 || !String(err).includes("Address already in use")) throw err;
    }
  }
}

async function formCluster(ports: readonly number[]): Promise<void> {
  const nodes = ports.map((p) => `127.0.0.1:${p}`);
  try {
    await run("redis-cli", ["--cluster", "create", ...nodes, "--cluster-replicas", "0", "--cluster-yes"], {
      timeout: FORM_TIMEOUT_MS,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      throw new Error(
        "redis-cli is not on PATH; the cluster tests need it to form a Redis Cluster. Fix: `apt-get install -y redis-tools` " +
          "(or redis-server), or set PORTICO_TEST_REDIS_CLUSTER_URL=redis://host:port to use a running cluster.",
        { cause: err },
      );
    throw err;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Waits until the node itself reports the cluster healthy (every slot served). */
async function waitForClusterOk(port: number): Promise<void> {
  const deadline = Date.now() + FORM_TIMEOUT_MS;
  for (;;) {
    const info = await run("redis-cli", ["-p", String(port), "cluster", "info"]).then(
      ({ stdout }) => stdout,
      (err: unknown) => String(err),
    );
    if (info.includes("cluster_state:ok")) return;
    if (Date.now() > deadline)
      throw new Error(`cluster node ${port}: no cluster_state:ok within ${FORM_TIMEOUT_MS} ms:\n${info}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
