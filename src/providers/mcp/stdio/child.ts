// The child process of a `stdio` upstream (docs/upstream-mcp.md "stdio upstreams"; MCP
// basic/transports §stdio): started from this replica's bootstrap file with a clean environment
// (its `env` and PATH only), stdout read as newline-delimited messages (a line past the bound is
// dropped and logged, never buffered), stderr logged line by line under the provider's name at a
// bounded rate, and stopped in the spec's order: stdin closed, then SIGTERM, then SIGKILL.
import { spawn, type ChildProcess } from "node:child_process";
import type { FastifyBaseLogger } from "fastify";
import type { StdioLaunch } from "../../../config/stdio-launch.js";

/** How a child ended, in words fit for health and logs (never its environment). */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: string | null;
  readonly reason: string;
}

export interface ChildOptions {
  readonly launch: StdioLaunch;
  readonly log: FastifyBaseLogger;
  /** What every log line of this child carries: its tenant and provider. */
  readonly fields: { readonly tenant: string; readonly provider: string };
  /** The longest stdout line kept, in bytes; longer lines are dropped. */
  readonly maxLineBytes: number;
}

/** stderr lines logged per second at most (a burst of STDERR_BURST first); the rest are counted. */
const STDERR_PER_SECOND = 20;
const STDERR_BURST = 100;
/** The longest stderr line logged, in characters (the rest is cut). */
const STDERR_LINE_CHARS = 2048;
/** Non-JSON or over-long stdout lines logged per minute at most. */
const NOISE_PER_MINUTE = 10;
/**
 * What may wait in this process for the child to read its stdin, in bytes: past it, new requests
 * are refused (a child that stops reading would otherwise make Portico buffer without bound).
 */
export const STDIN_BACKLOG_LIMIT = 4 * 1024 * 1024;
/** The spec's "reasonable time" between closing stdin, SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 2000;

/** The child's environment: its `env` and PATH, nothing of Portico's own. */
export function childEnv(launch: StdioLaunch): Record<string, string> {
  return { ...(launch.path !== undefined && { PATH: launch.path }), ...launch.env };
}

/** The command and arguments, wrapped in `sh -c 'ulimit …; exec "$0" "$@"'` when limits are set. */
export function commandLine(launch: StdioLaunch): [string, string[]] {
  const l = launch.limits;
  const ulimits = [
    l?.memoryMiB !== undefined && `ulimit -v ${l.memoryMiB * 1024}`,
    l?.cpuSeconds !== undefined && `ulimit -t ${l.cpuSeconds}`,
    l?.openFiles !== undefined && `ulimit -n ${l.openFiles}`,
  ].filter((x): x is string => typeof x === "string");
  if (ulimits.length === 0 || process.platform === "win32") return [launch.command, [...launch.args]];
  return ["/bin/sh", ["-c", `${ulimits.join(" && ")} && exec "$0" "$@"`, launch.command, ...launch.args]];
}

/** Splits a byte stream into lines of at most `max` bytes; a longer line is skipped to its end. */
export class LineSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  #skipping = false;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    private readonly onTooLong: (bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (!this.#skipping) {
        if (this.#size + piece.length > this.max) {
          this.#skipping = true;
          this.#parts = [];
        } else if (piece.length > 0) this.#parts.push(piece);
      }
      this.#size += piece.length;
      if (nl === -1) return;
      this.#end();
      start = nl + 1;
    }
  }

  #end(): void {
    if (this.#skipping) this.onTooLong(this.#size);
    else {
      const bytes = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts);
      let line = bytes.toString("utf8");
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line.trim() !== "") this.onLine(line);
    }
    this.#parts = [];
    this.#size = 0;
    this.#skipping = false;
  }
}

/** A token bucket: `take()` is true while the rate allows. */
class Bucket {
  #tokens: number;
  #at = Date.now();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.#tokens = burst;
  }

  take(): boolean {
    const now = Date.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.perSecond);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

export class StdioChild {
  /** Settles once the process is gone (never rejects). */
  readonly exited: Promise<ChildExit>;
  readonly #process: ChildProcess;
  readonly #opts: ChildOptions;
  readonly #secrets: readonly string[];
  readonly #stderrRate = new Bucket(STDERR_PER_SECOND, STDERR_BURST);
  readonly #noiseRate = new Bucket(NOISE_PER_MINUTE / 60, NOISE_PER_MINUTE);
  #stderrDropped = 0;
  #gone = false;
  #stopping = false;
  /** Each stdout line (one JSON-RPC message, the spec says). */
  onLine: (line: string) => void = () => undefined;

  constructor(opts: ChildOptions) {
    this.#opts = opts;
    // env values are secrets: a child that prints one on stderr does not put it in the logs.
    this.#secrets = Object.values(opts.launch.env).filter((v) => v.length >= 4);
    const [command, args] = commandLine(opts.launch);
    // Its own process group, so stopping it reaches what it started (npx runs node, uvx python).
    this.#process = spawn(command, args, {
      cwd: opts.launch.cwd,
      env: childEnv(opts.launch),
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
      windowsHide: true,
    });
    this.exited = new Promise((resolve) => {
      let error: NodeJS.ErrnoException | undefined;
      this.#process.once("error", (err) => {
        error = err;
        // A command that could not start emits no "exit".
        if (this.#process.pid === undefined) this.#ended(resolve, null, null, err);
      });
      this.#process.once("exit", (code, signal) => this.#ended(resolve, code, signal, error));
    });
    const stdout = new LineSplitter(
      opts.maxLineBytes,
      (line) => this.onLine(line),
      (bytes) => this.noise(`a stdout line of ${bytes} bytes (over ${opts.maxLineBytes}) was dropped`),
    );
    this.#process.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
    const stderr = new LineSplitter(
      STDERR_LINE_CHARS * 4,
      (line) => this.#stderr(line),
      () => this.#stderr("(an over-long stderr line was dropped)"),
    );
    this.#process.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));
    // A child that exits while a write is pending makes stdin emit EPIPE: its exit says it all.
    this.#process.stdin!.on("error", () => undefined);
  }

  get pid(): number | undefined {
    return this.#process.pid;
  }

  get running(): boolean {
    return !this.#gone;
  }

  /** True once Portico asked it to stop (its end is no crash). */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Bytes written to its stdin that it has not read yet (beyond what the pipe holds). */
  get backlog(): number {
    return this.#process.stdin!.writableLength;
  }

  /** True while the child's unread stdin is past STDIN_BACKLOG_LIMIT: it takes no new request. */
  get backlogged(): boolean {
    return this.backlog > STDIN_BACKLOG_LIMIT;
  }

  /** Writes one message as a line; false when the child is gone. */
  write(line: string): boolean {
    if (this.#gone || !this.#process.stdin!.writable) return false;
    this.#process.stdin!.write(`${line}\n`);
    return true;
  }

  /** Logs what the child did wrong on stdout (rate-bounded: a child spewing noise costs little). */
  noise(what: string): void {
    if (this.#noiseRate.take()) this.#opts.log.warn(this.#opts.fields, `stdio server: ${what}`);
  }

  /** Stops it as the spec says: close stdin, wait; SIGTERM, wait; SIGKILL. */
  async stop(graceMs = STOP_GRACE_MS): Promise<ChildExit> {
    if (!this.#gone && !this.#stopping) {
      this.#stopping = true;
      this.#process.stdin!.end();
      if (!(await this.#within(graceMs))) {
        this.#signal("SIGTERM");
        if (!(await this.#within(graceMs))) this.#signal("SIGKILL");
      }
    }
    return this.exited;
  }

  /** Kills it at once (and what it started). */
  kill(): void {
    this.#signal("SIGKILL");
  }

  async #within(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const done = await Promise.race([this.exited.then(() => true), timeout]);
    clearTimeout(timer);
    return done;
  }

  #signal(signal: NodeJS.Signals): void {
    if (this.#gone || this.#process.pid === undefined) return;
    try {
      if (process.platform === "win32") this.#process.kill(signal);
      else process.kill(-this.#process.pid, signal);
    } catch {
      this.#process.kill(signal);
    }
  }

  #ended(
    resolve: (exit: ChildExit) => void,
    code: number | null,
    signal: string | null,
    error: NodeJS.ErrnoException | undefined,
  ): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#flushDropped();
    const reason =
      code === null && signal === null
        ? `the stdio server could not be started (${error?.code ?? "error"})`
        : signal !== null
          ? `the stdio server was killed (${signal})`
          : `the stdio server exited (code ${code})`;
    resolve({ code, signal, reason });
  }

  #stderr(line: string): void {
    if (!this.#stderrRate.take()) {
      this.#stderrDropped++;
      return;
    }
    this.#flushDropped();
    let text = line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS)}…` : line;
    for (const secret of this.#secrets) text = text.replaceAll(secret, "[redacted]");
    this.#opts.log.info({ ...this.#opts.fields, stderr: text }, "stdio server stderr");
  }

  #flushDropped(): void {
    if (this.#stderrDropped === 0) return;
    this.#opts.log.warn(
      { ...this.#opts.fields, dropped: this.#stderrDropped },
      `stdio server stderr: ${this.#stderrDropped} lines not logged (over ${STDERR_PER_SECOND} a second)`,
    );
    this.#stderrDropped = 0;
  }
}
