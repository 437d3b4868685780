// The official MCP Python SDK for tests: a venv made once per requirements file and Python version
// (node_modules/.cache/portico-py/<hash>), `pip install` from the machine's configured index, or from
// a local one under /opt when pip has none configured. No Python means a loud failure with the fix,
// never a skipped test; only PORTICO_SKIP_PYTHON=1, set by hand, skips (README.md, "Development").
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
export const PYTHON_FIXTURES = join(ROOT, "test/fixtures/python");
const REQUIREMENTS = join(PYTHON_FIXTURES, "requirements.txt");
const LOCAL_INDEX = "/opt/pypi/simple";
const LOCAL_WHEELS = "/opt/wheels";
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** A test's skip option: a reason when the developer set PORTICO_SKIP_PYTHON=1, otherwise false. */
export const skipPython: string | false =
  process.env["PORTICO_SKIP_PYTHON"] === "1" ? "PORTICO_SKIP_PYTHON=1 is set" : false;

let ready: Promise<string> | undefined;

/** The venv's python, with the requirements installed; made on first call, reused afterwards. */
export function venvPython(): Promise<string> {
  ready ??= Promise.resolve().then(makeVenv);
  return ready;
}

function makeVenv(): string {
  const base = process.env["PORTICO_PYTHON"] ?? "python3";
  const version = run(
    base,
    ["--version"],
    `${base} was not found: install Python 3.10+ (apt-get install python3)`,
  );
  const key = createHash("sha256")
    .update(version)
    .update(readFileSync(REQUIREMENTS))
    .digest("hex")
    .slice(0, 16);
  const dir = join(ROOT, "node_modules/.cache/portico-py", key);
  const python = join(dir, "bin/python");
  if (existsSync(join(dir, ".complete"))) return python;
  // Built aside and renamed into place, so test files starting together never see half a venv.
  const building = `${dir}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(join(dir, ".."), { recursive: true });
  try {
    install(base, building);
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    throw err;
  }
  try {
    renameSync(building, dir);
  } catch {
    // Another test process finished first: use its venv.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, ".complete")))
      throw new Error(`Python for the tests: ${dir} is not a venv this helper made; remove it`);
  }
  return python;
}

/** A venv at `building` with the requirements installed and importable. */
function install(base: string, building: string): void {
  run(
    base,
    ["-m", "venv", building],
    "`python3 -m venv` failed: install the venv module (apt-get install python3-venv)",
  );
  const pip = ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q"];
  run(
    join(building, "bin/python"),
    [...pip, ...indexArgs(base), "-r", REQUIREMENTS],
    "pip could not install test/fixtures/python/requirements.txt: check the machine's pip index (pip config list), or set PORTICO_SKIP_PYTHON=1 to skip the Python tests locally",
  );
  run(
    join(building, "bin/python"),
    ["-c", "import mcp.client.streamable_http, mcp.client.sse, mcp.server.mcpserver"],
    "the installed mcp package lacks its client or server",
  );
  writeFileSync(join(building, ".complete"), "");
}

/**
 * Where pip looks: the machine's own configuration when it names an index (PIP_INDEX_URL, pip.conf),
 * otherwise the local index and wheels under /opt when this machine has them, otherwise PyPI.
 */
function indexArgs(base: string): string[] {
  if (process.env["PIP_INDEX_URL"]) return [];
  const configured = spawnSync(base, ["-m", "pip", "config", "get", "global.index-url"], {
    encoding: "utf8",
  });
  if (configured.status === 0 && configured.stdout.trim() !== "") return [];
  if (!existsSync(LOCAL_INDEX)) return [];
  const wheels = existsSync(LOCAL_WHEELS) ? ["--find-links", LOCAL_WHEELS] : [];
  return ["--index-url", `file://${LOCAL_INDEX}`, ...wheels];
}

/** Runs a command to completion; throws `fix` with its output when it fails. */
function run(command: string, args: readonly string[], fix: string): string {
  const done = spawnSync(command, args, { encoding: "utf8", timeout: INSTALL_TIMEOUT_MS });
  if (done.status === 0) return `${done.stdout}${done.stderr}`.trim();
  const output = `${done.error?.message ?? ""}\n${done.stdout ?? ""}\n${done.stderr ?? ""}`.trim();
  throw new Error(`Python for the tests: ${fix}\n${command} ${args.join(" ")}:\n${output.slice(-4000)}`);
}

export interface PythonRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a script of test/fixtures/python/ in the venv with this environment added; rejects on timeout. */
export async function runPython(
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<PythonRun> {
  const python = await venvPython();
  const child = spawn(python, [join(PYTHON_FIXTURES, script)], {
    env: { ...process.env, ...env, PYTHONUNBUFFERED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`${script} did not finish in ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`),
      );
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON report a script prints as its last stdout line; throws with its stderr when there is none. */
export function reportOf<T>(done: PythonRun): T {
  const last = done.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(
      `the Python script exited ${done.code} without a report\nstdout:\n${done.stdout}\nstderr:\n${done.stderr}`,
    );
  }
}

export interface PythonServer {
  /** The server's MCP endpoint. */
  readonly url: string;
  /** What it printed so far, for failure messages. */
  output(): string;
  close(): Promise<void>;
}

/**
 * Starts a server script of test/fixtures/python/ on a free loopback port (its PORT) and waits until
 * the port answers; the endpoint is /mcp.
 */
export async function startPythonServer(
  script: string,
  port: number,
  timeoutMs = 30_000,
): Promise<PythonServer> {
  const python = await venvPython();
  const child = spawn(python, [join(PYTHON_FIXTURES, script)], {
    env: { ...process.env, PORT: String(port), PYTHONUNBUFFERED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited (${child.exitCode}):\n${output}`);
    if (await listening(port)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${script} did not listen on ${port} within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    output: () => output,
    async close() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}
