// The official conformance CLI and the Node 22 it needs, pinned and installed once into the
// untracked .cache/conformance (the conformance suite's server scenarios: the suite needs Node >= 22 while the project
// targets Node 20, so both stay outside package.json); and a bounded child-process runner.
// Shared by run.ts (server mode) and authorization.ts (authorization-server mode).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const CONFORMANCE_VERSION = "0.2.0-alpha.12";
const NODE_MAJOR = "22";
const NODE_PACKAGE = `node-${process.platform}-${process.arch}`;
const INSTALL_TIMEOUT_MS = 5 * 60_000;

export const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
export const CACHE = join(ROOT, ".cache/conformance");
export const CACHE_MODULES = join(CACHE, "node_modules");

export interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

function installedVersion(pkg: string): string | undefined {
  const file = join(CACHE_MODULES, pkg, "package.json");
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version;
}

/** Runs a command to completion, stopping it after `timeoutMs` or on `signal`; resolves with its exit code. */
export function run(
  command: string,
  args: string[],
  opts: { timeoutMs: number; onOutput?: (chunk: Buffer) => void; signal?: AbortSignal },
): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", opts.onOutput ? "pipe" : "inherit", "pipe"] });
    child.stdout?.on("data", (chunk: Buffer) => opts.onOutput?.(chunk));
    child.stderr?.on("data", (chunk: Buffer) =>
      opts.onOutput ? opts.onOutput(chunk) : process.stderr.write(chunk),
    );
    const stop = (why: string) => {
      console.error(`${why}; stopping ${command}`);
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    };
    const timer = setTimeout(() => stop(`timed out after ${opts.timeoutMs} ms`), opts.timeoutMs);
    const onAbort = () => stop(String(opts.signal?.reason ?? "aborted"));
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      resolvePromise(code ?? (signal ? 128 : 1));
    });
  });
}

/** Installs the pinned CLI and Node 22 into .cache/conformance unless they are already there. */
export async function ensureTooling(): Promise<{ node: string; cli: string }> {
  const haveNode = installedVersion(NODE_PACKAGE)?.startsWith(`${NODE_MAJOR}.`) ?? false;
  const haveCli = installedVersion("@modelcontextprotocol/conformance") === CONFORMANCE_VERSION;
  if (!haveNode || !haveCli) {
    console.log(
      `installing ${NODE_PACKAGE}@${NODE_MAJOR} and conformance@${CONFORMANCE_VERSION} into ${CACHE}`,
    );
    await mkdir(CACHE, { recursive: true });
    const specs = [
      `${NODE_PACKAGE}@${NODE_MAJOR}`,
      `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`,
    ];
    const code = await run("npm", ["install", "--prefix", CACHE, "--no-audit", "--no-fund", ...specs], {
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    if (code !== 0) throw new Error(`npm install into ${CACHE} failed (exit ${code})`);
  }
  const cliDir = join(CACHE_MODULES, "@modelcontextprotocol/conformance");
  const { bin } = JSON.parse(readFileSync(join(cliDir, "package.json"), "utf8")) as {
    bin: string | Record<string, string>;
  };
  const entry = typeof bin === "string" ? bin : bin.conformance;
  if (!entry) throw new Error("conformance package has no `conformance` bin entry");
  return { node: join(CACHE_MODULES, NODE_PACKAGE, "bin/node"), cli: join(cliDir, entry) };
}
