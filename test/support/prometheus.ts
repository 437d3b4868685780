// Prometheus for tests: a parser of the text exposition format, and a real Prometheus server
// (Debian's `prometheus` package) scraping one target, queried through its HTTP API.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "./redis.js";

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a text exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (m[2] ?? "").matchAll(LABEL))
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels`. */
export function sumOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);
}

/** The path of an executable on PATH; fails with how to install it when it is missing. */
export function findBinary(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const path = join(dir, name);
    if (dir !== "" && existsSync(path)) return path;
  }
  return assert.fail(
    `${name} is not installed: install Debian's prometheus package (apt-get install -y prometheus, as .ci/run does), which provides /usr/bin/prometheus and /usr/bin/promtool`,
  );
}

type Api = (path: string) => Promise<unknown>;

export interface RunningPrometheus {
  /** Its base URL, http://127.0.0.1:<port>. */
  readonly url: string;
  /** Polls `check` every 200 ms until it returns a value; fails after `timeoutMs`. */
  until<T>(what: string, check: (api: Api) => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus scraping `target` (host:port) every second, with a bearer token if given, on
 * `port` when given (a free one otherwise).
 */
export async function runPrometheus(
  target: string,
  bearer?: string,
  port?: number,
): Promise<RunningPrometheus> {
  const binary = findBinary("prometheus");
  const dir = await mkdtemp(join(tmpdir(), "portico-prometheus-"));
  const auth = bearer ? `\n    authorization:\n      credentials: "${bearer}"` : "";
  const config = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: portico${auth}
    static_configs:
      - targets: ["${target}"]
`;
  await writeFile(join(dir, "prometheus.yml"), config);
  port ??= await freePort();
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr.on("data", (chunk: Buffer) => void (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const api: Api = async (path) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    assert.equal(res.status, 200, `${path}: HTTP ${res.status}`);
    return res.json();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    async until(what, check, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null) assert.fail(`prometheus exited (${child.exitCode}):\n${log}`);
        const found = await check(api).catch(() => undefined);
        if (found !== undefined) return found;
        if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; prometheus said:\n${log}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(kill);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
