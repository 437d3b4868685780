// Real Redis for tests: PORTICO_TEST_REDIS_URL when set, otherwise one
// redis-server child per test process on a free loopback port, killed when the process exits.
// No Redis means a loud failure with the fix, never a skipped test. redis-cluster.ts builds a
// Redis Cluster from the same pieces.

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const START_TIMEOUT_MS = 5000;
let started: Promise<{ url: string }> | undefined;
let counter = 0;

/** The Redis the tests use; starts it on first call, then reuses it for the whole process. */
export function getTestRedis(): Promise<{ url: string }> {
  const fromEnv = process.env["PORTICO_TEST_REDIS_URL"];
  if (fromEnv !== undefined && fromEnv !== "") return Promise.resolve({ url: fromEnv });
  started ??= startRedisServer();
  return started;
}

/** A key prefix no other test (or test process) uses, so tests sharing one Redis stay apart. */
export function uniquePrefix(): string {
  counter += 1;
  return `t${process.pid}x${counter}x${randomBytes(4).toString("hex")}`;
}

async function startRedisServer(): Promise<{ url: string }> {
  // Another process may grab the free port before redis-server binds it; try a fresh one then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort();
    } catch (err) {
      if (attempt === 3 || !String(err).includes("Address already in use")) throw err;
    }
  }
}

export interface OwnRedisOptions {
  /**
   * Keep data in an append-only file in this directory, fsynced on every write (a SIGKILL loses
   * nothing); start again with the same directory to find the data again.
   */
  readonly aofDir?: string;
}

/** A redis-server of the caller's own, for tests that stop and restart it (faults). */
export async function startOwnRedis(
  port?: number,
  opts: OwnRedisOptions = {},
): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const { url, port: bound, stop } = await spawnRedis(port ?? (await freePort()), opts);
  return { url, port: bound, stop };
}

async function startOnFreePort(): Promise<{ url: string }> {
  return { url: (await spawnRedis(await freePort())).url };
}

export interface SpawnOptions extends OwnRedisOptions {
  /** Working directory when there is no aofDir (default: the system temp directory). */
  readonly dir?: string;
  /** More redis-server arguments, e.g. cluster mode. */
  readonly extraArgs?: readonly string[];
}

/** A running redis-server child; stop() kills it (SIGKILL) and resolves once it is gone. */
export interface RedisChild {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly stop: () => Promise<void>;
}

/** Starts redis-server on 127.0.0.1:port and resolves once it answers PING. */
export async function spawnRedis(port: number, opts: SpawnOptions = {}): Promise<RedisChild> {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", ""];
  const persistence = opts.aofDir
    ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", opts.aofDir]
    : ["--appendonly", "no", "--dir", opts.dir ?? tmpdir()];
  const child = spawn("redis-server", [...args, ...persistence, ...(opts.extraArgs ?? [])], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  killAtExit(child);

  const exited = new Promise<never>((_, reject) => {
    child.once("error", (err: NodeJS.ErrnoException) => reject(spawnError(err)));
    child.once("exit", (code, signal) =>
      reject(new Error(`redis-server exited early (code ${code}, signal ${signal}):\n${output}`)),
    );
  });
  exited.catch(() => {}); // a later exit fails the tests through the lost connection instead
  try {
    await Promise.race([waitForPong(port), exited]);
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  // Neither the child nor its pipes may keep the test process alive once the tests are done.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.ref(); // so that the test process waits for the exit it asked for
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  return { url: `redis://127.0.0.1:${port}`, port, child, stop };
}

function spawnError(err: NodeJS.ErrnoException): Error {
  if (err.code !== "ENOENT") return err;
  return new Error(
    "redis-server is not on PATH; the store tests need a real Redis. Fix: `apt-get install -y redis-server`, " +
      "or set PORTICO_TEST_REDIS_URL=redis://host:port to use a running one.",
  );
}

function killAtExit(child: ChildProcess): void {
  const kill = () => {
    if (child.exitCode === null) child.kill("SIGKILL");
  };
  const onSignal = (signal: NodeJS.Signals) => {
    kill();
    // Re-raise with the default handler so the process still dies of the signal.
    process.kill(process.pid, signal);
  };
  process.once("exit", kill);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, onSignal);
  // Tests that start and stop many servers must not pile up process listeners.
  child.once("exit", () => {
    process.off("exit", kill);
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.off(signal, onSignal);
  });
}

/**
 * A TCP port free on 127.0.0.1 right now, drawn at random below the kernel's ephemeral range
 * (32768 and up on Linux). Tests stop a server and start it again on the same port (a Redis
 * outage, an upstream restart): a port the kernel handed out for `listen(0)` could be handed to
 * another test process meanwhile, whose server would then answer in place of the stopped one.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = FREE_PORT_LOW + Math.floor(Math.random() * (FREE_PORT_HIGH - FREE_PORT_LOW));
    if (reserve(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port between ${FREE_PORT_LOW} and ${FREE_PORT_HIGH} in 50 tries`);
}

/** Where test processes note the ports freePort gave them, so no other process takes one. */
const RESERVED = join(tmpdir(), "portico-test-ports");

/**
 * Reserves `port` for this process: a file naming its pid, honoured by every test process while
 * that pid lives. A port stopped and started again (an upstream's restart) is free meanwhile, and
 * another test process's freePort must not hand it out then (seen once in CI: its server answered
 * in place of the stopped one).
 */
function reserve(port: number): boolean {
  mkdirSync(RESERVED, { recursive: true });
  const file = join(RESERVED, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: "wx" });
    return true;
  } catch {
    // Taken: by a live process it stays taken; a dead one's reservation is taken over.
    const owner = Number(readFileSync(file, "utf8"));
    if (owner === process.pid) return false;
    if (Number.isInteger(owner) && owner > 0 && alive(owner)) return false;
    writeFileSync(file, String(process.pid));
    return true;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

// Below 22,768: a Redis Cluster node's bus listens on its port + 10,000, also below the ephemeral range.
const FREE_PORT_LOW = 10_000;
const FREE_PORT_HIGH = 22_000;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function waitForPong(port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await pings(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${START_TIMEOUT_MS} ms`);
}

/** True when a Redis on 127.0.0.1:port answers PING. */
export function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once("error", () => finish(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) finish(reply.startsWith("+PONG"));
    });
  });
}
