#!/usr/bin/env node
// The `portico` command (docs/connect.md): `portico` or `portico serve` runs the server exactly as
// `node dist/main.js` does; `portico connect <url>` runs the stdio bridge to a tenant.
import { runConnect, type HttpEra } from "./connect/bridge.js";

const USAGE = `Usage:
  portico [serve]                 run the Portico server (configured by PORTICO_* variables,
                                  docs/configuration.md)
  portico connect <url> [options] a stdio MCP server for local clients, relaying to <url>
                                  (a tenant's MCP URL, e.g. https://portico.example.com/mcp/acme)
  portico --help                  this text

Options of connect:
  --era auto|session|2026-07-28   the protocol spoken over HTTP (default auto: 2026-07-28 when
                                  the server offers it, else the session era)
  --client-id <id>                an OAuth client registered at the server beforehand

From a checkout: node dist/cli.js connect <url>, or npm exec -- portico connect <url>.
From the image:  docker run --rm -i <image> connect <url>
Tokens are cached under PORTICO_CONNECT_CONFIG_DIR or the platform's config directory;
PORTICO_CONNECT_BROWSER names a command to open the sign-in URL with. See docs/connect.md.
`;

const ERAS: readonly HttpEra[] = ["auto", "session", "2026-07-28"];

/** Parses `connect`'s arguments; a usage error is thrown as a one-line message. */
function connectArgs(args: readonly string[]): { url: string; era: HttpEra; clientId?: string } {
  let url: string | undefined;
  let era: HttpEra = "auto";
  let clientId: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.startsWith("--") ? (arg.split(/=(.*)/s, 2) as [string, string?]) : [arg];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--era") {
      const e = value();
      if (!ERAS.includes(e as HttpEra)) throw new Error(`--era must be one of ${ERAS.join(", ")}`);
      era = e as HttpEra;
    } else if (flag === "--client-id") clientId = value();
    else if (arg.startsWith("-")) throw new Error(`unknown option ${arg}`);
    else if (url === undefined) url = arg;
    else throw new Error(`unexpected argument ${arg}`);
  }
  if (url === undefined) throw new Error("connect needs the server URL: portico connect <url>");
  return { url, era, ...(clientId !== undefined && { clientId }) };
}

async function connect(args: readonly string[]): Promise<void> {
  let parsed: ReturnType<typeof connectArgs>;
  try {
    parsed = connectArgs(args);
  } catch (err) {
    process.stderr.write(`portico connect: ${(err as Error).message} (see portico --help)\n`);
    process.exit(2);
  }
  // A signal ends the bridge at once (a sign-in still waiting is cancelled) with the shell's code
  // for it, 128 + the signal's number; a second one does not wait for the clean-up.
  const stop = new AbortController();
  let signalled: number | undefined;
  const onSignal = (code: number) => () => {
    if (signalled !== undefined) process.exit(signalled);
    signalled = code;
    stop.abort();
  };
  process.on("SIGINT", onSignal(130));
  process.on("SIGTERM", onSignal(143));
  const code = await runConnect(parsed, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: stop.signal,
  });
  process.exit(signalled ?? code);
}

const [command, ...rest] = process.argv.slice(2);
if (command === undefined || command === "serve") {
  await import("./main.js");
} else if (command === "connect") {
  await connect(rest);
} else if (command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(USAGE);
} else {
  process.stderr.write(`portico: unknown command ${command}\n\n${USAGE}`);
  process.exit(2);
}
