// Why Portico could not start, in one line that names the fix (docs/operations.md, "Boot
// failures"): a port in use, a bad configuration, an unreachable Redis, unreadable key material.
// Only a failure nobody foresaw (a bug) keeps its stack trace, on the lines after.
import { ConfigError } from "./config/env.js";
import { isPorticoError } from "./protocol/errors.js";

export interface ListenTarget {
  readonly port: number;
  readonly host: string;
}

/** The line main.ts prints before exiting 1, and whether the stack trace follows it. */
export function bootFailure(err: unknown, target?: ListenTarget): { line: string; stack?: string } {
  if (err instanceof ConfigError || isPorticoError(err)) return { line: `portico: ${oneLine(err.message)}` };
  const known = listenFailure(err, target);
  if (known) return { line: `portico: ${known}` };
  const line = `portico: failed to start: ${oneLine(err instanceof Error ? err.message : String(err))}`;
  return err instanceof Error && err.stack ? { line, stack: err.stack } : { line };
}

/** The errors Node's listen() gives for a port or address this process cannot have. */
function listenFailure(err: unknown, target: ListenTarget | undefined): string | undefined {
  if (!(err instanceof Error) || target === undefined) return undefined;
  const { port, host } = target;
  switch ((err as NodeJS.ErrnoException).code) {
    case "EADDRINUSE":
      return `port ${port} is in use on ${host} — set PORT to another port or stop the other process`;
    case "EACCES":
      return `not allowed to listen on port ${port} — ports below 1024 need privileges: set PORT to 1024 or above`;
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return `cannot listen on ${host}: no such address on this machine — set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface)`;
    default:
      return undefined;
  }
}

/** Messages that span lines (a quoted JSON parse error, say) are folded so the failure stays one line. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
