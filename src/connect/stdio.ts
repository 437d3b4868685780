// The local side of the bridge (MCP basic/transports §stdio): JSON-RPC messages, one per line, on
// stdin and stdout. Nothing else is ever written to stdout; diagnostics go to stderr.
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { RpcCode } from "../protocol/codes.js";
import { errorResponse } from "../protocol/jsonrpc.js";
import type { LocalSink } from "./session-relay.js";

/** Writes messages to `out`, one JSON text per line. */
export function lineSink(out: Writable): LocalSink {
  // A local client that went away closes stdin too: the bridge ends there, not on EPIPE.
  out.on("error", () => undefined);
  return { send: (message) => void out.write(`${JSON.stringify(message)}\n`) };
}

/**
 * Reads messages from `input` until it ends, handing each to `onMessage` without waiting (a long
 * call must not hold up the next message); a line that is not JSON is answered with a parse
 * error. Once the input is closed, handlers still running get `graceMs` to finish (a client that
 * wrote its last request and closed stdin still reads the answer), then it resolves.
 */
export async function readLines(
  input: Readable,
  sink: LocalSink,
  onMessage: (message: unknown) => Promise<void>,
  graceMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const pending = new Set<Promise<void>>();
  const lines = createInterface({ input, crlfDelay: Infinity, ...(signal && { signal }) });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      sink.send(errorResponse(null, RpcCode.ParseError, "Parse error: a line is not valid JSON"));
      continue;
    }
    const run = onMessage(message).catch(() => undefined);
    pending.add(run);
    void run.finally(() => pending.delete(run));
  }
  if (pending.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  await Promise.race([Promise.all(pending), grace]);
  clearTimeout(timer);
}
