// Redis Sentinel for tests: one master and one replica (`--replicaof`), and three sentinels
// (quorum 2, each with its own configuration file, which they rewrite) on free loopback ports,
// with short failure detection so that a failover takes a few seconds. What the sentinels announce
// is recorded, for a failing test to show. Killed on exit.

import { execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, spawnRedis, type RedisChild } from "./redis.js";

export const MASTER_NAME = "portico";
/** A replica (re)joining is synced at once, not after the default 5 s wait for others to join. */
const DATA_ARGS = ["--repl-diskless-sync-delay", "0"];
/**
 * The sentinels' down-after-milliseconds. Not 1000 or less: a sentinel pings every
 * min(down-after, 1000) ms, and its link to a master it has just switched to starts its clock at
 * once but sends the first PING only a period later, so at 1000 it can mark the new master down
 * before that PING is answered and fail over again, to whatever replica it has. In a crash test
 * that is the old master restarted empty: the second failover made it master and wiped the data
 * (1 run in 5 here, the failures of issue 25).
 */
const DOWN_AFTER_MS = 2000;
/** Events kept for a failing test to show (the newest). */
const EVENTS_KEPT = 400;

export interface TestSentinels {
  /** `host:port,…` as PORTICO_REDIS_SENTINELS takes them. */
  readonly sentinels: string;
  /** Port of the data node the sentinels name as master now. */
  master(): Promise<number>;
  /** Ports of the data nodes running now. */
  dataPorts(): number[];
  /** SIGKILLs the data node on `port`. */
  kill(port: number): Promise<void>;
  /** Starts a data node again on `port`, empty (no persistence); the sentinels make it a replica. */
  restart(port: number): Promise<void>;
  /** Runs a command on one sentinel. */
  sentinel(...args: string[]): Promise<unknown>;
  /** Resolves once `port` is master, every other live node its replica in sync, and the sentinels agree. */
  settled(masterPort: number, timeoutMs?: number): Promise<void>;
  /** What the sentinels announced (`+switch-master …`, `+sdown …`), timed, newest last. */
  events(): string[];
  stop(): Promise<void>;
}

/** How a sentinel is started here: `redis-sentinel` when installed, else `redis-server --sentinel`. */
export function sentinelCommand(): { command: string; args: string[] } | undefined {
  for (const candidate of [
    { command: "redis-sentinel", args: [] },
    { command: "redis-server", args: ["--sentinel"] },
  ])
    try {
      execFileSync(candidate.command, ["--version"], { stdio: "ignore" });
      return candidate;
    } catch {
      // not installed: try the next
    }
  return undefined;
}

/** Starts the master, its replica and three sentinels; resolves once the sentinels see both nodes. */
export async function startSentinels(): Promise<TestSentinels> {
  const how = sentinelCommand();
  if (how === undefined) throw new Error("neither redis-sentinel nor redis-server is installed");
  const dir = await mkdtemp(join(tmpdir(), "portico-sentinel-"));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", removeDir);
  const nodes = new Map<number, RedisChild>();
  const sentinelPorts: number[] = [];
  const sentinelStops: Array<() => Promise<void>> = [];
  const clients: Redis[] = [];
  const stop = async () => {
    for (const client of clients) client.disconnect();
    await Promise.all([...nodes.values()].map((n) => n.stop()));
    await Promise.all(sentinelStops.map((s) => s()));
    removeDir();
    process.off("exit", removeDir);
  };
  try {
    const master = await spawnRedis(await freePort(), { dir, extraArgs: DATA_ARGS });
    nodes.set(master.port, master);
    const replica = await spawnRedis(await freePort(), {
      dir,
      extraArgs: [...DATA_ARGS, "--replicaof", "127.0.0.1", String(master.port)],
    });
    nodes.set(replica.port, replica);
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      await writeFile(
        conf,
        [
          `port ${port}`,
          "bind 127.0.0.1",
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${MASTER_NAME} 3000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          "",
        ].join("\n"),
      );
      sentinelStops.push(startSentinel(how, conf));
      sentinelPorts.push(port);
    }
    const events: string[] = [];
    for (const port of sentinelPorts) {
      const watcher = new Redis({ port, host: "127.0.0.1" });
      watcher.on("error", () => undefined);
      clients.push(watcher);
      watcher.on("pmessage", (_pattern: string, channel: string, message: string) => {
        // Hellos and the sentinels' discovery of each other are noise; the rest is the story.
        if (channel.startsWith("__sentinel__") || /^\+(sentinel|slave|reboot)$/.test(channel)) return;
        events.push(`${new Date().toISOString()} sentinel :${port} ${channel} ${message}`);
        if (events.length > EVENTS_KEPT) events.shift();
      });
      await watcher.psubscribe("*");
    }
    const admin = new Redis({ port: sentinelPorts[0], host: "127.0.0.1", lazyConnect: true });
    admin.on("error", () => undefined);
    clients.push(admin);
    const sentinel = (...args: string[]) => admin.call("SENTINEL", ...args);
    const masterPort = async () => {
      const [, port] = (await sentinel("get-master-addr-by-name", MASTER_NAME)) as [string, string];
      return Number(port);
    };
    const settled = async (port: number, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (await agreed(port, sentinelPorts, [...nodes.keys()])) return;
        if (Date.now() > deadline) throw new Error(`Sentinel setup not settled on master ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    await settled(master.port, 20_000);
    return {
      sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(","),
      master: masterPort,
      dataPorts: () => [...nodes.keys()],
      kill: async (port) => {
        await nodes.get(port)?.stop();
        nodes.delete(port);
      },
      restart: async (port) => void nodes.set(port, await spawnRedis(port, { dir, extraArgs: DATA_ARGS })),
      sentinel,
      settled,
      events: () => [...events],
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function startSentinel(how: { command: string; args: string[] }, conf: string): () => Promise<void> {
  const child = spawn(how.command, [conf, ...how.args], { stdio: "ignore" });
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  child.unref();
  return () =>
    new Promise<void>((resolve) => {
      process.off("exit", kill);
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.ref(); // so that the test process waits for the exit it asked for
      child.once("exit", () => resolve());
      kill();
    });
}

/** Every sentinel names `master`, sees the others, and every live node besides it is an in-sync replica. */
async function agreed(
  master: number,
  sentinelPorts: readonly number[],
  dataPorts: readonly number[],
): Promise<boolean> {
  const ask = async (port: number, ...args: string[]) => {
    const client = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 0, lazyConnect: true });
    client.on("error", () => undefined);
    try {
      await client.connect();
      return await client.call(...(args as [string, ...string[]]));
    } catch {
      return undefined;
    } finally {
      client.disconnect();
    }
  };
  for (const port of sentinelPorts) {
    const addr = (await ask(port, "SENTINEL", "get-master-addr-by-name", MASTER_NAME)) as
      string[] | undefined;
    if (Number(addr?.[1]) !== master) return false;
    const replicas = (await ask(port, "SENTINEL", "replicas", MASTER_NAME)) as string[][] | undefined;
    const others = dataPorts.filter((p) => p !== master);
    const seen = (replicas ?? []).filter((r) => {
      const fields = Object.fromEntries(r.flatMap((v, i) => (i % 2 === 0 ? [[v, r[i + 1]]] : [])));
      return others.includes(Number(fields.port)) && !String(fields.flags).includes("down");
    });
    if (seen.length !== others.length) return false;
    const peers = (await ask(port, "SENTINEL", "sentinels", MASTER_NAME)) as unknown[] | undefined;
    if ((peers?.length ?? 0) < sentinelPorts.length - 1) return false;
  }
  for (const port of dataPorts) {
    const reply = await ask(port, "INFO", "replication");
    const info = typeof reply === "string" ? reply : "";
    if (port === master ? !/^role:master/m.test(info) : !/^master_link_status:up/m.test(info)) return false;
  }
  return true;
}
