// Logging levels of MCP (server/utilities/logging): the RFC 5424 severities, used by both the
// inbound endpoint and the upstream side.
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";

/** RFC 5424 severities in increasing order (server/utilities/logging). */
export const LOG_LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

export function isLogLevel(value: unknown): value is LoggingLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/** True when a message at `level` passes a session's threshold. */
export function logPasses(level: LoggingLevel, threshold: LoggingLevel | undefined): boolean {
  return threshold === undefined || LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}
