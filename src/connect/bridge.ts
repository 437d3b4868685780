// `portico connect <url>` (docs/connect.md): a stdio MCP server for local clients that relays to a
// Portico tenant (or any Streamable HTTP MCP server). The HTTP side speaks 2026-07-28 when the
// server offers it (server/discover), else the session era.
import type { Readable, Writable } from "node:stream";
import { loadConnectEnv, type ConnectEnv } from "../config/connect.js";
import { META } from "../protocol/era.js";
import { isRecord } from "../protocol/jsonrpc.js";
import { PORTICO_VERSION } from "../protocol/version.js";
import { ConnectError, describe } from "./connect-error.js";
import { ACCEPT_BOTH, HttpPeer, readMessages } from "./http-peer.js";
import { BridgeOAuth } from "./oauth-client.js";
import { SessionRelay } from "./session-relay.js";
import { StatelessRelay } from "./stateless-relay.js";
import { signInWait } from "./sign-in-wait.js";
import { lineSink, readLines } from "./stdio.js";
import { TokenCache } from "./token-cache.js";

/** How long requests still running when stdin closes may take before they are cancelled. */
const SHUTDOWN_GRACE_MS = 2000;

export type HttpEra = "auto" | "session" | "2026-07-28";

export interface ConnectOptions {
  readonly url: string;
  readonly era: HttpEra;
  readonly clientId?: string;
  readonly loginTimeoutMs?: number;
}

export interface ConnectIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env?: ConnectEnv;
  /**
   * Ends the bridge as if stdin had closed (SIGINT, SIGTERM), without the grace; a sign-in still
   * waiting for the browser, or the first contact, is cancelled at once.
   */
  readonly signal?: AbortSignal;
}

/** Runs the bridge until stdin closes; resolves to the exit code. Errors are one line on stderr. */
export async function runConnect(options: ConnectOptions, io: ConnectIo): Promise<number> {
  const log = (line: string) => void io.stderr.write(`portico connect: ${line}\n`);
  try {
    const server = serverUrl(options.url);
    const env = io.env ?? loadConnectEnv();
    const auth = new BridgeOAuth({
      server,
      env,
      cache: new TokenCache(env.configDir),
      clientId: options.clientId,
      loginTimeoutMs: options.loginTimeoutMs ?? 300_000,
      log,
      waiting: signInWait(io.stderr),
      ...(io.signal && { signal: io.signal }),
    });
    const peer = new HttpPeer(server, auth);
    const era = options.era === "auto" ? await untilAborted(discoverEra(peer), io.signal) : options.era;
    const sink = lineSink(io.stdout);
    const relay = era === "session" ? new SessionRelay(peer, sink, log) : new StatelessRelay(peer, sink, log);
    // stdin closed is the local client's shutdown (basic/transports §stdio): what is still running
    // gets a moment, then is cancelled with the session.
    await readLines(io.stdin, sink, (m) => relay.handle(m), SHUTDOWN_GRACE_MS, io.signal).catch(
      (err: unknown) => {
        if (!io.signal?.aborted) throw err;
      },
    );
    await relay.close();
    return 0;
  } catch (err) {
    log(err instanceof ConnectError ? err.message : describe(err));
    return 1;
  }
}

/** `work`, or a ConnectError as soon as `signal` aborts (whatever `work` still waits for). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  let cancel = () => {};
  const aborted = new Promise<never>((_, reject) => {
    cancel = () => reject(new ConnectError("cancelled"));
    if (signal.aborted) cancel();
    signal.addEventListener("abort", cancel, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", cancel));
}

/** The URL as given, when it is an absolute http(s) URL without credentials. */
function serverUrl(text: string): URL {
  if (!URL.canParse(text))
    throw new ConnectError(`not a URL: ${JSON.stringify(text)} (expected https://host/mcp/{tenant})`);
  const url = new URL(text);
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new ConnectError(`not an http(s) URL: ${url.protocol} (expected https://host/mcp/{tenant})`);
  if (url.username !== "" || url.password !== "")
    throw new ConnectError("the URL must not carry credentials: the bridge signs in with OAuth");
  url.hash = "";
  return url;
}

/**
 * Asks the server for server/discover as a 2026-07-28 client would (basic/versioning): a result
 * listing 2026-07-28 means that revision; anything else (a session-era server's refusal) means the
 * session era. This is also the first contact: unreachable servers and sign-ins surface here.
 */
async function discoverEra(peer: HttpPeer): Promise<HttpEra> {
  const body = {
    jsonrpc: "2.0",
    id: 0,
    method: "server/discover",
    params: {
      _meta: {
        [META.protocolVersion]: "2026-07-28",
        [META.clientInfo]: { name: "portico-connect", version: PORTICO_VERSION },
        [META.clientCapabilities]: {},
      },
    },
  };
  const response = await peer.send(
    "POST",
    {
      "content-type": "application/json",
      accept: ACCEPT_BOTH,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "server/discover",
    },
    JSON.stringify(body),
  );
  if (response.status >= 500) {
    await response.body?.cancel().catch(() => undefined);
    throw new ConnectError(`${peer.url.href} answered HTTP ${response.status}`);
  }
  let offered = false;
  await readMessages(response, (m) => {
    const result = isRecord(m) ? m.result : undefined;
    const versions = isRecord(result) ? result.supportedVersions : undefined;
    if (Array.isArray(versions) && versions.includes("2026-07-28")) offered = true;
  }).catch(() => undefined);
  if (!offered && response.status === 404) throw new ConnectError(notFound(peer.url));
  return offered ? "2026-07-28" : "session";
}

/**
 * What a 404 at first contact likely means: a Portico tenant that is not there, most often because
 * the Portico ran on the embedded store and restarted (docs/connect.md), else a misspelt URL.
 */
function notFound(url: URL): string {
  const tenant = /\/mcp\/([^/]+)/.exec(url.pathname)?.[1];
  const what = tenant === undefined ? "no MCP endpoint at this path" : `no tenant ${tenant} here`;
  return (
    `${url.href} answered HTTP 404: ${what}. It may have been lost when a Portico on the embedded ` +
    "store restarted (create it again), or the URL is misspelt"
  );
}
