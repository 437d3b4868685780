// What the `portico connect` end-to-end tests share: a bridge's own token cache and sign-in "browser"
// (test/fixtures/connect-login.ts), and the bridge (src/cli.ts through tsx) as a plain child process
// fed raw JSON-RPC lines (docs/connect.md).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root: the bridge runs from there. */
export const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
/** The bridge's argv before `connect`: the CLI's source through tsx. */
export const BRIDGE_ARGS = ["--import", "tsx", "src/cli.ts"];
const LOGIN = `"${process.execPath}" --import tsx "${join(ROOT, "test/fixtures/connect-login.ts")}"`;

/** A bridge's config directory (token cache), and the file its "browser" notes each sign-in in. */
export interface BridgeHome {
  readonly configDir: string;
  readonly marker: string;
}

export function newBridgeHome(): BridgeHome {
  const configDir = mkdtempSync(join(tmpdir(), "portico-connect-"));
  const marker = join(configDir, "logins.txt");
  writeFileSync(marker, "");
  return { configDir, marker };
}

/** The environment of a bridge using `home`; `extra` names the user the "browser" signs in as. */
export function bridgeEnv(home: BridgeHome, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    PORTICO_CONNECT_CONFIG_DIR: home.configDir,
    PORTICO_CONNECT_BROWSER: LOGIN,
    CONNECT_TEST_MARKER: home.marker,
    ...extra,
  };
}

export interface RawRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The bridge as a plain child process: `lines` are written to its stdin one by one (each after
 * the previous one's answer when it is a request, unless wrapped as `{ noWait: message }`), then
 * stdin is closed; resolves on exit.
 */
export async function runRaw(
  args: string[],
  env: Record<string, string>,
  lines: Array<object | string> = [],
): Promise<RawRun> {
  const child = spawn(process.execPath, [...BRIDGE_ARGS, ...args], {
    cwd: ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  for (const line of lines) {
    const noWait = typeof line === "object" && "noWait" in line;
    const message = noWait ? (line as { noWait: object }).noWait : line;
    child.stdin.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
    const id = typeof message === "string" || noWait ? undefined : (message as { id?: unknown }).id;
    if (id !== undefined)
      await Promise.race([exited, waitFor(() => stdout.includes(`"id":${JSON.stringify(id)},`), 20_000)]);
  }
  child.stdin.end();
  const code = await exited;
  return { code, stdout, stderr };
}

/** The messages of a raw run's stdout, one per line. */
export function stdoutMessages(run: RawRun): Array<Record<string, any>> {
  return run.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, any>);
}

export async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) assert.fail("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
