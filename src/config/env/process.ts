// Environment variables of the process around the gateway (docs/operations.md): trusted proxies,
// graceful shutdown, the log level and format.
import type { VarSpec } from "./types.js";

export const PROCESS_VARS: readonly VarSpec[] = [
  {
    name: "PORTICO_TRUSTED_PROXIES",
    key: "trustedProxyCidrs",
    type: "cidrs",
    default: "",
    description:
      "Comma-separated CIDRs of the reverse proxies and load balancers in front of Portico: only from a peer in them is `X-Forwarded-For` believed, and the client address is the last one not in them (per-address limits, logs). Empty: the peer address is the client, and behind a load balancer every user shares its address. `docker-compose.yml` and `deploy/` set it ([docs/operations.md](operations.md#client-addresses)).",
  },
  {
    name: "PORTICO_SHUTDOWN_DELAY_SECONDS",
    key: "shutdownDelaySeconds",
    type: "int",
    default: "5",
    min: 0,
    max: 300,
    description:
      "On SIGTERM, how long the replica keeps serving everything normally while `/readyz` already answers 503 (and every answer closes its connection), so load balancers stop sending it work before it closes; `/healthz` stays 200. A second SIGTERM or SIGINT skips the rest of it. 0: close at once.",
  },
  {
    name: "PORTICO_SHUTDOWN_TIMEOUT_MS",
    key: "shutdownTimeoutMs",
    type: "int",
    default: "10000",
    min: 0,
    max: 600000,
    description:
      "On SIGTERM, after `PORTICO_SHUTDOWN_DELAY_SECONDS`, how long in-flight requests may take to finish (after SSE streams are ended with a `retry` hint and new connections refused), calls whose streams clients resumed on other replicas and 2026-07-28 calls held for the client's input included, before the rest are cut and the process exits.",
  },
  {
    name: "PORTICO_LOG_LEVEL",
    key: "logLevel",
    type: "enum",
    default: "info",
    values: ["fatal", "error", "warn", "info", "debug", "trace", "silent"],
    description: "Level of the logs on stdout; `debug` adds one `request completed` line per request.",
  },
  {
    name: "PORTICO_LOG_FORMAT",
    key: "logFormat",
    type: "enum",
    default: "auto",
    values: ["auto", "json", "pretty"],
    description:
      "`json`: one JSON object per line (for log collectors). `pretty`: one human-readable line per entry (time, level, message, fields), redacted as the JSON is. `auto`: `pretty` when stdout is a terminal, `json` otherwise.",
  },
];
