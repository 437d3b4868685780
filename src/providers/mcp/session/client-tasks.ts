// A client's own tasks as a session-era upstream sees them (2025-11-25 basic/utilities/tasks,
// "Task-Augmented Sampling Request"; docs/upstream-mcp.md "Tasks passed through"): when a
// client runs an upstream's sampling or elicitation request as a task, the upstream is given an
// id Portico makes (an upstream session is shared by several clients, whose own ids may clash),
// and its tasks/get, tasks/result and tasks/cancel are relayed to that client under the client's
// id. The ids are kept in the store, so a poll reaches the client on whichever replica the
// upstream's request arrives (its standalone stream may be held by another replica than the call's);
// bounded in time and per client session in number.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { randomId } from "../../../crypto/secrets.js";
import { RpcCode } from "../../../protocol/codes.js";
import { CLIENT_TASK_METHODS } from "../../../protocol/input-requests.js";
import { isRecord } from "../../../protocol/jsonrpc.js";
import type { Keys } from "../../../store/keys.js";
import type { Store } from "../../../store/store.js";

/** The most tasks one client session may run for a provider's upstreams in an hour. */
export const MAX_CLIENT_TASKS = 1_000;
/** How long a client task's ids are remembered at most (a task whose ttl is longer is forgotten then). */
export const CLIENT_TASK_MAX_MS = 60 * 60_000;

export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** Where a client task lives: the client session that runs it and its own id (stored as JSON). */
interface ClientTask {
  readonly sessionId: string;
  readonly clientTaskId: string;
  readonly expiresAt: number;
}

/** Where the ids are kept: the tenant's store and the provider they were given to. */
export interface ClientTaskScope {
  readonly store: Store;
  readonly keys: Keys;
  readonly tenantId: string;
  readonly providerId: string;
}

/** How a relayed request reaches the client: the call's own way, or the session's stream. */
export interface ClientRoute {
  /** The client session of the call the request arrived with; undefined outside a call. */
  readonly sessionId: string | undefined;
  /** Asks the client of the call (absent outside a call). */
  readonly ask?: (
    method: string,
    params: Record<string, unknown> | undefined,
  ) => Promise<Record<string, unknown>>;
  /** Asks a client session outside any call (its standalone stream). */
  readonly askSession: (
    sessionId: string,
    method: string,
    params: Record<string, unknown> | undefined,
  ) => Promise<Record<string, unknown>>;
}

const taskNotFound = () => new McpError(RpcCode.InvalidParams, "Failed to retrieve task: Task not found");

export class ClientTasks {
  constructor(
    private readonly scope: ClientTaskScope,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when `method` is a poll of a client task (relay() maps it). */
  static polls(method: string): boolean {
    return CLIENT_TASK_METHODS.has(method) || method === "tasks/list";
  }

  /**
   * Relays one request of the upstream to the client: a poll of a client task goes to the client
   * that runs it under its own id, and an answer that made a task gets Portico's id for it.
   */
  async relay(
    method: string,
    params: Record<string, unknown> | undefined,
    route: ClientRoute,
  ): Promise<Record<string, unknown>> {
    if (ClientTasks.polls(method)) return this.#poll(method, params, route);
    if (!route.ask) return Promise.reject(taskNotFound());
    const answer = await route.ask(method, params);
    return isRecord(params?.task) ? this.#adopt(answer, route.sessionId) : answer;
  }

  /** A CreateTaskResult from the client: its task under an id of Portico's. */
  async #adopt(
    answer: Record<string, unknown>,
    sessionId: string | undefined,
  ): Promise<Record<string, unknown>> {
    const task = answer.task;
    // Only a client session can be polled again (2026-07-28 clients run no tasks of their own).
    if (!isRecord(task) || typeof task.taskId !== "string" || sessionId === undefined) return answer;
    const { store, keys, tenantId, providerId } = this.scope;
    const made = await store.incr(keys.clientTaskCount(tenantId, providerId, sessionId), 1, 3600);
    if (made > MAX_CLIENT_TASKS)
      throw new McpError(
        RpcCode.InternalError,
        `The client ran more than ${MAX_CLIENT_TASKS} tasks for this server in the last hour`,
      );
    const ttl = Math.min(
      typeof task.ttl === "number" && task.ttl > 0 ? task.ttl : Infinity,
      CLIENT_TASK_MAX_MS,
    );
    const id = randomId();
    const kept: ClientTask = { sessionId, clientTaskId: task.taskId, expiresAt: this.now() + ttl };
    await store.set(keys.clientTask(tenantId, providerId, id), JSON.stringify(kept), {
      ttlSeconds: Math.ceil(ttl / 1000),
    });
    return { ...answer, task: { ...task, taskId: id } };
  }

  async #poll(
    method: string,
    params: Record<string, unknown> | undefined,
    route: ClientRoute,
  ): Promise<Record<string, unknown>> {
    // A listing would mix the tasks of every client sharing the upstream session.
    if (method === "tasks/list") throw new McpError(RpcCode.MethodNotFound, "Method not found");
    const id = params?.taskId;
    const task = typeof id === "string" ? await this.#read(id) : undefined;
    if (!task || task.expiresAt <= this.now()) throw taskNotFound();
    const sent = { ...params, taskId: task.clientTaskId };
    // Asked of the client that runs it, whichever call (or none) the upstream polls it from.
    let answer: Record<string, unknown>;
    if (route.ask && route.sessionId === task.sessionId) answer = await route.ask(method, sent);
    else answer = await route.askSession(task.sessionId, method, sent);
    return renamed(answer, task.clientTaskId, id as string);
  }

  async #read(id: string): Promise<ClientTask | undefined> {
    const { store, keys, tenantId, providerId } = this.scope;
    const stored = await store.get(keys.clientTask(tenantId, providerId, id));
    return stored === null ? undefined : (JSON.parse(stored) as ClientTask);
  }
}

/**
 * An answer about a client task with its id as the upstream knows it: the Task of tasks/get and
 * tasks/cancel, and the related-task `_meta` of a tasks/result.
 */
function renamed(answer: Record<string, unknown>, clientId: string, id: string): Record<string, unknown> {
  let out = answer;
  if (out.taskId === clientId) out = { ...out, taskId: id };
  const meta = out._meta;
  if (isRecord(meta) && isRecord(meta[RELATED_TASK]))
    out = { ...out, _meta: { ...meta, [RELATED_TASK]: { ...meta[RELATED_TASK], taskId: id } } };
  return out;
}
