// Child processes of the bench (redis-server, the upstream fixture, Portico, bare Fastify, wrk):
// spawn, wait until ready within a deadline, keep their output, and kill every one of them when the
// bench ends, fails or is interrupted. Nothing here binds anything but 127.0.0.1.
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

const running = new Set<ChildProcess>();
let cleanupInstalled = false;

export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly process: ChildProcess;
  /** The last few KB of stdout and stderr. */
  output(): string;
  /** Resolves with the first line (after this call) that matches `pattern`. */
  nextLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/** Throws with the install command when `binary` is not on PATH. */
export function requireBinary(binary: string, fix: string): void {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return;
    } catch {
      // not in this directory
    }
  }
  throw new Error(`${binary} is not on PATH; the bench needs it. Fix: ${fix}`);
}

const exitTasks: Array<() => void> = [];

/** Kills every child still running (SIGKILL) and runs the exit tasks: the last resort. */
export function killAll(): void {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const task of exitTasks.splice(0)) task();
}

/** Runs `task` (synchronous) when the bench exits, fails or is interrupted. */
export function atExit(task: () => void): void {
  installCleanup();
  exitTasks.push(task);
}

/** Makes sure `child` dies with the bench. */
export function track(child: ChildProcess): void {
  installCleanup();
  running.add(child);
  child.once("exit", () => running.delete(child));
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once("exit", killAll);
  const exitCodes = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
  for (const [signal, code] of Object.entries(exitCodes))
    process.once(signal, () => {
      console.error(`\nbench: ${signal}, stopping child processes`);
      killAll();
      process.exit(code);
    });
}

/** Spawns a tracked child whose output is kept and split into lines. */
export function spawnChild(opts: SpawnOptions): Child {
  const child = spawn(opts.command, opts.args, { stdio: ["ignore", "pipe", "pipe"], env: opts.env });
  track(child);
  let tail = "";
  let partial = "";
  const waiters = new Set<(line: string) => void>();
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-8000);
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) for (const w of [...waiters]) w(line);
  };
  // Always drained, so a chatty child never blocks on a full pipe.
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  child.on("error", (err) => (tail += `\n[spawn error: ${err.message}]`));
  return {
    name: opts.name,
    pid: child.pid ?? -1,
    process: child,
    output: () => tail,
    nextLine: (pattern, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${opts.name}: no line matching ${pattern} within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = (line: string) => {
          if (!pattern.test(line)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(line);
        };
        waiters.add(check);
      }),
    stop: (graceMs = 5000) => stopChild(child, graceMs),
  };
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls `probe` every 50 ms until it is true; fails if the child exits or the deadline passes. */
export async function waitReady(
  child: Child,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const p = child.process;
    if (p.exitCode !== null || p.signalCode !== null)
      throw new Error(
        `${child.name} exited (code ${p.exitCode}, signal ${p.signalCode}):\n${child.output()}`,
      );
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${child.output()}`);
}

/** True once GET `url` answers 200. */
export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status === 200;
}

export { freePort } from "../test/support/redis.js";
