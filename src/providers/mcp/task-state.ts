// An upstream's Task object read in Portico's terms (docs/upstream-mcp.md "Tasks passed through"):
// the 2025-11-25 form says `ttl` and `pollInterval`, the 2026-07-28 extension `ttlMs` and
// `pollIntervalMs` and carries `inputRequests` while the task waits on input.
import { isRecord } from "../../protocol/jsonrpc.js";
import type { TaskState, TaskStatus } from "../types.js";

const STATUSES: ReadonlySet<string> = new Set([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);
/** The longest upstream task id Portico keeps (it is stored in the task's record). */
export const MAX_TASK_ID = 1024;

const FIELDS = {
  session: { ttl: "ttl", poll: "pollInterval" },
  stateless: { ttl: "ttlMs", poll: "pollIntervalMs" },
} as const;

/** A task of the upstream's era in Portico's terms; undefined when `value` is not one. */
export function taskOf(value: unknown, era: "session" | "stateless"): TaskState | undefined {
  if (!isRecord(value)) return undefined;
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, inputRequests } = value;
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > MAX_TASK_ID) return undefined;
  if (typeof status !== "string" || !STATUSES.has(status) || typeof createdAt !== "string") return undefined;
  const ttl = value[FIELDS[era].ttl];
  const pollInterval = value[FIELDS[era].poll];
  return {
    taskId,
    status: status as TaskStatus,
    ...(typeof statusMessage === "string" && { statusMessage }),
    createdAt,
    lastUpdatedAt: typeof lastUpdatedAt === "string" ? lastUpdatedAt : createdAt,
    ttl: typeof ttl === "number" ? ttl : null,
    ...(typeof pollInterval === "number" && { pollInterval }),
    ...(era === "stateless" && status === "input_required" && isRecord(inputRequests) && { inputRequests }),
  };
}
