// Tasks (docs/upstream-mcp.md#tasks): how long Portico keeps a task, how often clients are asked to
// poll, how large a result it keeps, and how many live tasks a caller and a tenant may have.
import type { VarSpec } from "./types.js";

export const TASK_VARS: readonly VarSpec[] = [
  {
    name: "PORTICO_TASK_TTL_DEFAULT_MS",
    key: "taskTtlDefaultMs",
    type: "int",
    default: "3600000",
    min: 1000,
    max: 604800000,
    description:
      "A task's lifetime (ms from its creation) when the client asks none: after it, the task and its result are deleted whatever its status (2025-11-25 basic/utilities/tasks `ttl`).",
  },
  {
    name: "PORTICO_TASK_TTL_MAX_MS",
    key: "taskTtlMaxMs",
    type: "int",
    default: "86400000",
    min: 1000,
    max: 604800000,
    description:
      "The longest lifetime a client may ask for a task (`task.ttl`); a longer one is cut to this, and the task says the `ttl` it got.",
  },
  {
    name: "PORTICO_TASK_POLL_INTERVAL_MS",
    key: "taskPollIntervalMs",
    type: "int",
    default: "1000",
    min: 100,
    max: 600000,
    description: "The `pollInterval` Portico suggests to clients polling a task it runs itself.",
  },
  {
    name: "PORTICO_TASK_MAX_RESULT_BYTES",
    key: "taskMaxResultBytes",
    type: "int",
    default: "1048576",
    min: 1024,
    max: 67108864,
    description:
      "The largest tool result (its JSON, in bytes) a task Portico runs keeps for `tasks/result`; a larger one ends the task `failed`, saying so, and `tasks/result` answers `PORTICO_ERR_MCP_TASK_RESULT_TOO_LARGE`.",
  },
  {
    name: "PORTICO_MAX_TASKS_PER_CALLER",
    key: "maxTasksPerCaller",
    type: "int",
    default: "100",
    min: 1,
    max: 1000000,
    description:
      "Live (not yet `completed`, `failed` or `cancelled`) tasks one caller may have on a tenant: a user, whatever the client, or on a tenant without authentication one session (2025-11-25) or one client address (2026-07-28, IPv6 by /64). Past it, a call that would become a task answers `PORTICO_ERR_MCP_TOO_MANY_TASKS`.",
  },
  {
    name: "PORTICO_MAX_TASKS_PER_TENANT",
    key: "maxTasksPerTenant",
    type: "int",
    default: "1000",
    min: 1,
    max: 10000000,
    description:
      "Live tasks one tenant may have, all callers and replicas together; past it, a task-augmented `tools/call` answers `PORTICO_ERR_MCP_TOO_MANY_TASKS`.",
  },
  {
    name: "PORTICO_TASK_POLLS_PER_MINUTE",
    key: "taskPollsPerMinute",
    type: "int",
    default: "600",
    min: 0,
    max: 1000000,
    description:
      "`tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list` requests one caller (as for `PORTICO_MAX_TASKS_PER_CALLER`) may send a tenant per minute, on top of the request limits; past it they answer `PORTICO_ERR_MCP_RATE_LIMITED` with `retryAfterSeconds`. `0`: no limit.",
  },
];
