// The browser half of the bridge's sign-in (RFC 8252 §7.3): a one-shot HTTP listener on
// 127.0.0.1 and a free port for the authorization response, and opening the authorization URL in
// the user's browser (or a command of the user's choosing; the URL is always printed on stderr).
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ConnectEnv } from "../config/connect.js";
import { ConnectError } from "./connect-error.js";

export interface Loopback {
  readonly redirectUri: string;
  /** The first request to /callback: its full URL (code or error, state, iss). */
  readonly response: Promise<URL>;
  close(): void;
}

const PAGE = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>portico connect</title><p>${text}</p>`;

/**
 * Listens on 127.0.0.1 (any port) for one authorization response; others get 404. The response
 * fails after `timeoutMs`, or at once when `signal` aborts (Ctrl-C while the user has not signed in).
 */
export async function startLoopback(timeoutMs: number, signal?: AbortSignal): Promise<Loopback> {
  let settle!: (url: URL) => void;
  let fail!: (err: Error) => void;
  const response = new Promise<URL>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback" || req.method !== "GET") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const full = new URL(`${redirectUri}${url.search}`);
    const failed = url.searchParams.has("error");
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
      .end(
        PAGE(
          failed ? "Sign-in did not complete. You can close this tab." : "Signed in. You can close this tab.",
        ),
      );
    settle(full);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const timer = setTimeout(
    () =>
      fail(
        new ConnectError(
          `no sign-in within ${Math.round(timeoutMs / 1000)} s: run the command again to retry`,
        ),
      ),
    timeoutMs,
  );
  timer.unref();
  const cancel = () => fail(new ConnectError("sign-in cancelled"));
  if (signal?.aborted) cancel();
  signal?.addEventListener("abort", cancel, { once: true });
  void response.catch(() => undefined).finally(() => clearTimeout(timer));
  return {
    redirectUri,
    response,
    close: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * Opens `url` with PORTICO_CONNECT_BROWSER (run by the shell, the URL as its last argument) or the
 * platform's opener. Failing to open is not an error: the URL is on stderr for the user to copy.
 */
export function openBrowser(url: string, env: ConnectEnv): void {
  const [command, args] = env.browserCommand
    ? env.platform === "win32"
      ? ["cmd", ["/c", `${env.browserCommand} "${url}"`]]
      : ["/bin/sh", ["-c", `${env.browserCommand} "$1"`, "sh", url]]
    : env.platform === "darwin"
      ? ["open", [url]]
      : env.platform === "win32"
        ? ["cmd", ["/c", "start", '""', `"${url}"`]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, {
      // The bridge's stdout is the protocol: a child's output goes to stderr.
      stdio: ["ignore", process.stderr, process.stderr],
      detached: env.browserCommand === undefined,
      windowsVerbatimArguments: env.platform === "win32",
    });
    child.on("error", () => undefined);
    if (env.browserCommand === undefined) child.unref();
  } catch {
    // the URL is printed; the user opens it
  }
}
