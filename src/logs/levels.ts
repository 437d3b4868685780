// The log's levels and formats, as PORTICO_LOG_LEVEL and PORTICO_LOG_FORMAT name them.

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
/** `auto`: human-readable lines when stdout is a terminal, JSON lines otherwise. */
export type LogFormat = "auto" | "json" | "pretty";
