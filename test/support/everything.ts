// The reference "everything" MCP server (@modelcontextprotocol/server-everything, a devDependency) in
// Streamable HTTP mode, in its own process on a loopback port: a real upstream whose tool list depends
// on the client's declared capabilities. restart() brings it back on the same port with no sessions.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TenantConfig } from "../../src/records/tenant.js";
import { startPortico, type RunningPortico } from "./portico.js";
import { freePort } from "./redis.js";

export interface EverythingServer {
  /** Its MCP endpoint, http://127.0.0.1:<port>/mcp. */
  readonly url: string;
  readonly port: number;
  /** Kills the process and starts a fresh one on the same port (every upstream session is gone). */
  restart(): Promise<void>;
  /** Kills it; resolves once it has exited. */
  stop(): Promise<void>;
}

const ENTRY = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const READY = /listening on port/;
const START_TIMEOUT_MS = 15_000;

/** Starts server-everything (`streamableHttp` transport, PORT env) and resolves once it listens. */
export async function startEverything(): Promise<EverythingServer> {
  const port = await freePort();
  let child = await spawnEverything(port);
  const stop = async () => {
    await kill(child);
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    async restart() {
      await kill(child);
      child = await spawnEverything(port);
    },
    stop,
  };
}

async function spawnEverything(port: number, attempt = 0): Promise<ChildProcess> {
  // It logs every request on stdout: ignored. Readiness and failures come on stderr.
  const child = spawn(process.execPath, [ENTRY, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  killAtExit(child);
  let output = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`server-everything not listening after ${START_TIMEOUT_MS} ms:\n${output}`)),
        START_TIMEOUT_MS,
      );
      child.stderr?.on("data", (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-4000);
        if (!READY.test(output)) return;
        clearTimeout(timer);
        resolve();
      });
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`server-everything exited early (code ${code}, signal ${signal}):\n${output}`));
      });
    });
  } catch (err) {
    await kill(child);
    // Right after a kill the port can still be held for a moment: retry a few times.
    if (/EADDRINUSE|already in use/.test(String(err)) && attempt < 10) {
      await new Promise((r) => setTimeout(r, 100));
      return spawnEverything(port, attempt + 1);
    }
    throw err;
  }
  child.stderr?.removeAllListeners("data");
  child.stderr?.resume(); // keep draining so it never blocks on a full pipe
  child.unref();
  (child.stderr as { unref?: () => void } | null)?.unref?.();
  return child;
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.ref(); // the test process waits for the exit it asked for
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** Kills the child when the test process exits or is signalled (as test/support/redis.ts does). */
function killAtExit(child: ChildProcess): void {
  const kill = () => {
    if (child.exitCode === null) child.kill("SIGKILL");
  };
  const onSignal = (signal: NodeJS.Signals) => {
    kill();
    process.kill(process.pid, signal); // re-raised with the default handler, so the process still dies of it
  };
  process.once("exit", kill);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, onSignal);
  child.once("exit", () => {
    process.off("exit", kill);
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.off(signal, onSignal);
  });
}

/** Tenant acme (auth none) with server-everything as its one `mcp` provider, unprefixed: names as direct. */
export function everythingTenant(url: string): TenantConfig {
  return { id: "acme", auth: "none", providers: [{ id: "everything", kind: "mcp", url }] };
}

export interface EverythingBehindPortico {
  readonly everything: EverythingServer;
  readonly portico: RunningPortico;
  close(): Promise<void>;
}

/** server-everything and one Portico (on Redis) in front of it as tenant acme. */
export async function startEverythingBehindPortico(): Promise<EverythingBehindPortico> {
  const everything = await startEverything();
  try {
    const portico = await startPortico({ redis: true, tenants: [everythingTenant(everything.url)] });
    return {
      everything,
      portico,
      close: async () => {
        await portico.close();
        await everything.stop();
      },
    };
  } catch (err) {
    await everything.stop();
    throw err;
  }
}
