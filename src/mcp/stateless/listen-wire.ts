// What a subscriptions/listen stream reads and writes on the wire (basic/patterns/subscriptions,
// 2026-07-28): the filter it asks with and the part honoured, its tagged notifications, its end.
import { fail } from "../../protocol/errors.js";
import { META } from "../../protocol/era.js";
import type { RequestId } from "../../protocol/jsonrpc.js";
import type { ListChangeKind } from "../../providers/types.js";

/** What a listen stream opted in to (SubscriptionFilter). */
export interface SubscriptionFilter {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
  /** The tasks extension: notifications/tasks for these of the caller's tasks (docs/upstream-mcp.md#tasks). */
  readonly taskIds?: readonly string[];
}

/** The filter flag asking for each kind of list change. */
export const FLAG: Readonly<
  Record<ListChangeKind, "toolsListChanged" | "promptsListChanged" | "resourcesListChanged">
> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
};

/** Bounds on resourceSubscriptions: hostile filters get -32602, not a pile of watches. */
export const MAX_RESOURCE_SUBSCRIPTIONS = 100;
export const MAX_SUBSCRIBED_URI_LENGTH = 2048;

/** A notification on a listen stream, tagged with its subscription id. */
export function notification(method: string, id: RequestId, params: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method,
    params: { ...params, _meta: { [META.subscriptionId]: id } },
  });
}

/** The response that ends a listen stream gracefully. */
export function listenResult(id: RequestId) {
  return { jsonrpc: "2.0", id, result: { resultType: "complete", _meta: { [META.subscriptionId]: id } } };
}

/**
 * The part of a filter Portico honours, acknowledged as such: the list changes asked for, and
 * resourceSubscriptions (deduplicated). Unknown fields are left out; malformed ones are -32602.
 */
export function honoured(asked: unknown): SubscriptionFilter {
  if (typeof asked !== "object" || asked === null || Array.isArray(asked))
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", 'subscriptions/listen needs "notifications" (an object)');
  const fields = asked as Record<string, unknown>;
  const out: { -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K] } = {};
  for (const flag of Object.values(FLAG)) {
    const value = fields[flag];
    if (value !== undefined && typeof value !== "boolean")
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `"${flag}" must be true or false`);
    if (value) out[flag] = true;
  }
  if (fields.resourceSubscriptions !== undefined)
    out.resourceSubscriptions = resourceSubscriptions(fields.resourceSubscriptions);
  if (fields.taskIds !== undefined) out.taskIds = taskIds(fields.taskIds);
  return out;
}

/** Bounds on taskIds, as on resourceSubscriptions. */
export const MAX_LISTENED_TASKS = 100;

function taskIds(value: unknown): string[] {
  if (
    !Array.isArray(value) ||
    value.length > MAX_LISTENED_TASKS ||
    !value.every((id) => typeof id === "string" && id.length > 0 && id.length <= 64)
  )
    throw fail(
      "PORTICO_ERR_MCP_INVALID_PARAMS",
      `"taskIds" must be an array of at most ${MAX_LISTENED_TASKS} task ids`,
    );
  return [...new Set(value as string[])];
}

function resourceSubscriptions(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_RESOURCE_SUBSCRIPTIONS)
    throw fail(
      "PORTICO_ERR_MCP_INVALID_PARAMS",
      `"resourceSubscriptions" must be an array of at most ${MAX_RESOURCE_SUBSCRIPTIONS} resource URIs`,
    );
  for (const uri of value as unknown[])
    if (typeof uri !== "string" || uri.length === 0 || uri.length > MAX_SUBSCRIBED_URI_LENGTH)
      throw fail(
        "PORTICO_ERR_MCP_INVALID_PARAMS",
        `"resourceSubscriptions" must hold resource URIs: non-empty strings of at most ${MAX_SUBSCRIBED_URI_LENGTH} characters`,
      );
  return [...new Set(value as string[])];
}
