// Human-readable logs (PORTICO_LOG_FORMAT=pretty, or `auto` at a terminal; docs/operations.md
// "Logs"): pino writes each entry as its JSON line, already redacted (redaction.ts), to this
// stream, which rewrites it as `12:34:56.789 WARN  message  key=value …`, an error's stack indented
// below. Control characters from untrusted text are escaped, so no entry can forge another line.
import type { LogFormat } from "./levels.js";

type Paint = (text: string) => string;

const ansi =
  (code: number): Paint =>
  (text) =>
    `\x1b[${code}m${text}\x1b[0m`;
const plain: Paint = (text) => text;

const LEVELS: Readonly<Record<number, readonly [string, number]>> = {
  10: ["TRACE", 90],
  20: ["DEBUG", 36],
  30: ["INFO", 32],
  40: ["WARN", 33],
  50: ["ERROR", 31],
  60: ["FATAL", 35],
};

/** Fields every line has, shown in its own place or not at all. */
const OWN_PLACE = new Set(["level", "time", "pid", "hostname", "msg", "err"]);

/** Whether logs are pretty: asked for, or `auto` with a terminal on stdout. */
export function isPretty(format: LogFormat, stdoutIsTty: boolean): boolean {
  return format === "pretty" || (format === "auto" && stdoutIsTty);
}

/** A pino destination writing pretty lines to `out`; coloured when `out` is a terminal. */
export function prettyStream(
  out: { write(text: string): unknown },
  color: boolean,
): { write(line: string): void } {
  return { write: (line) => void out.write(prettyLine(line, color)) };
}

/** One pino JSON line as a human reads it; a line that is not JSON passes through unchanged. */
export function prettyLine(line: string, color = false): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return line;
  const e = entry as Record<string, unknown>;
  const [name, code] = LEVELS[e.level as number] ?? [escape(String(e.level)), 0];
  const dim = color ? ansi(2) : plain;
  const time = typeof e.time === "number" ? new Date(e.time).toISOString().slice(11, 23) : "";
  let text = `${dim(time)} ${(color && code ? ansi(code) : plain)(name.padEnd(5))} ${escape(typeof e.msg === "string" ? e.msg : "")}`;
  const fields = Object.entries(e)
    .filter(([key]) => !OWN_PLACE.has(key))
    .map(([key, value]) => `${escape(key)}=${fieldValue(value)}`);
  if (fields.length > 0) text += `  ${dim(fields.join(" "))}`;
  if (typeof e.err === "object" && e.err !== null) text += errorLines(e.err as Record<string, unknown>);
  return `${text}\n`;
}

/** An error's stack (or type and message) on indented lines, and its code when it has one. */
function errorLines(err: Record<string, unknown>): string {
  const head = typeof err.code === "string" ? ` (${escape(err.code)})` : "";
  const stack = typeof err.stack === "string" ? err.stack : `${String(err.type)}: ${String(err.message)}`;
  return `${head}\n${stack
    .split("\n")
    .map((l) => `    ${escape(l)}`)
    .join("\n")}`;
}

function fieldValue(value: unknown): string {
  if (typeof value === "string")
    return /^[\w.:/@+-]*$/.test(value) && value !== "" ? value : JSON.stringify(value);
  return escape(JSON.stringify(value) ?? String(value));
}

/** Control characters (newlines, terminal escapes) as visible escapes. */
function escape(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
