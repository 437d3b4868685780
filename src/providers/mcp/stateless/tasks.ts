// An upstream's own tasks on a 2026-07-28 upstream declaring the tasks extension
// (`io.modelcontextprotocol/tasks`, SEP-2663; docs/upstream-mcp.md "Tasks passed through"): the
// extension is declared upstream only for a call Portico's tasks start, and the upstream alone
// decides whether it becomes a task (`resultType: "task"`); tasks/get, tasks/update and
// tasks/cancel follow. No session: the ref is the upstream's task id, good on any replica.
import { McpError, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../../../protocol/codes.js";
import { fail } from "../../../protocol/errors.js";
import { isRecord } from "../../../protocol/jsonrpc.js";
import type { CallContext, CancelSource, StartedTask, TaskState, UpstreamTaskRef } from "../../types.js";
import {
  askClient,
  definedOf,
  nextRound,
  PROGRESS_TOKEN,
  relayNotification,
  sessionShaped,
} from "../bridge.js";
import { UpstreamProtocolError } from "../upstream-errors.js";
import { MAX_TASK_ID, taskOf } from "../task-state.js";
import type { StatelessCatalog } from "./catalog.js";
import type { StatelessRequestOptions } from "./client.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

const TERMINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);
/** How long result() waits between polls when the upstream suggests nothing (or less). */
const MIN_POLL_MS = 100;
const DEFAULT_POLL_MS = 1000;

type StatelessTaskRef = { readonly era: "stateless"; readonly taskId: string };

/** True when a server/discover's capabilities declare the tasks extension. */
export function declaresTasks(capabilities: unknown): boolean {
  const extensions = isRecord(capabilities) ? capabilities.extensions : undefined;
  return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
}

/** The client's capabilities without the tasks extension: only Portico's tasks declare it upstream. */
export function withoutTasksExtension(caps: ClientCapabilities): ClientCapabilities {
  const extensions = (caps as { extensions?: unknown }).extensions;
  if (!isRecord(extensions) || !(TASKS_EXTENSION in extensions)) return caps;
  const { [TASKS_EXTENSION]: _, ...others } = extensions;
  return { ...caps, extensions: others } as ClientCapabilities;
}

function withTasksExtension(caps: ClientCapabilities): ClientCapabilities {
  const extensions = (caps as { extensions?: unknown }).extensions;
  return {
    ...caps,
    extensions: { ...(isRecord(extensions) && extensions), [TASKS_EXTENSION]: {} },
  };
}

export class StatelessTasks {
  constructor(
    private readonly providerId: string,
    private readonly timeoutMs: number,
    private readonly catalog: () => StatelessCatalog | undefined,
    /** The catalog listing the tools of the client's profile (its own lists, else the provider's). */
    private readonly listing: (ctx: CallContext) => StatelessCatalog | undefined,
  ) {}

  /** Any tool of an upstream declaring the extension may become a task: the upstream decides. */
  support(name: string, ctx: CallContext): "required" | "optional" | undefined {
    const catalog = this.catalog();
    if (!catalog || !declaresTasks(catalog.capabilities)) return undefined;
    const tool = (this.listing(ctx) ?? catalog).tool(name);
    if (!tool) return undefined;
    return tool.execution?.taskSupport === "required" ? "required" : "optional";
  }

  /**
   * tools/call declaring the extension: a task (resultType "task"), or the result when the upstream
   * answered at once. Input it asks before deciding (input_required) is asked of the client, as
   * for any call (bridge.ts).
   */
  async start(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<StartedTask> {
    const client = this.#catalog().client;
    const tool = (this.listing(ctx) ?? this.catalog())?.tool(name);
    const options: StatelessRequestOptions = {
      ...this.#options(ctx),
      clientCapabilities: withTasksExtension(ctx.clientCapabilities),
      progressToken: PROGRESS_TOKEN,
      tool,
      onNotification: (m, p) => relayNotification(ctx, m, p),
    };
    // A 2026-07-28 client answers the upstream's questions before the task itself (its retries
    // bring them): the extension's "resolve all MRTR exchanges synchronously" before creating it.
    let round: Record<string, unknown> = ctx.mrtr ? definedOf(ctx.mrtr) : {};
    for (let rounds = 1; ; rounds++) {
      const result = await client.request("tools/call", { name, arguments: args, ...round }, options);
      if (result.resultType === "task") {
        const task = taskOf(result, "stateless");
        if (!task) throw new UpstreamProtocolError(-1, "the upstream's task is malformed");
        const ref: StatelessTaskRef = { era: "stateless", taskId: task.taskId };
        return { task, ref };
      }
      if (result.resultType !== "input_required")
        return { result: ctx.sessionId === undefined ? result : sessionShaped(result) };
      const next = await nextRound(result, rounds, ctx, this.providerId);
      if ("relay" in next) return { result: next.relay };
      round = next.round;
    }
  }

  async get(ref: UpstreamTaskRef, ctx: CallContext): Promise<TaskState> {
    return stateOf((await this.#detailed(refOf(ref), ctx)).task);
  }

  /**
   * The task's result once it ends, polling tasks/get at the upstream's interval; its questions
   * while input_required are asked of the client (ctx.request) and answered with tasks/update.
   * A failed task throws its JSON-RPC error; a cancelled one, -32603 saying so.
   */
  async result(ref: UpstreamTaskRef, ctx: CallContext): Promise<Record<string, unknown>> {
    const r = refOf(ref);
    const signal = ctx.cancellation ?? ctx.signal;
    for (;;) {
      const { task, raw } = await this.#detailed(r, ctx);
      if (task.status === "completed") {
        if (!isRecord(raw.result))
          throw new UpstreamProtocolError(-1, "the upstream's completed task has no result");
        return raw.result;
      }
      if (task.status === "failed") {
        const error = isRecord(raw.error) ? raw.error : {};
        const code = typeof error.code === "number" ? error.code : RpcCode.InternalError;
        throw new McpError(
          code,
          typeof error.message === "string" ? error.message : "The task failed",
          error.data,
        );
      }
      if (task.status === "cancelled") throw new McpError(RpcCode.InternalError, "The task was cancelled");
      if (task.status === "input_required" && task.inputRequests) {
        const inputResponses = await askClient(task.inputRequests, ctx, this.providerId);
        await this.update(r, inputResponses, ctx);
        continue;
      }
      await pause(Math.max(task.pollInterval ?? DEFAULT_POLL_MS, MIN_POLL_MS), signal);
    }
  }

  async update(
    ref: UpstreamTaskRef,
    inputResponses: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<void> {
    const { taskId } = refOf(ref);
    await this.#catalog().client.request("tasks/update", { taskId, inputResponses }, this.#options(ctx));
  }

  /** tasks/cancel (cooperative, an empty acknowledgement), then the task as it stands. */
  async cancel(ref: UpstreamTaskRef, ctx: CallContext): Promise<TaskState> {
    const r = refOf(ref);
    await this.#catalog().client.request("tasks/cancel", { taskId: r.taskId }, this.#options(ctx));
    return this.get(r, ctx);
  }

  /**
   * Tells `onStatus` the task's notifications/tasks, on a subscriptions/listen stream naming its id
   * (one per watch, held by this replica) until the returned function runs, the task ends, or the
   * upstream ends the stream. An upstream that sends none leaves it silent: tasks are polled.
   */
  watch(ref: UpstreamTaskRef, onStatus: (task: TaskState) => void): () => void {
    const catalog = this.catalog();
    const taskId = ref.era === "stateless" && typeof ref.taskId === "string" ? ref.taskId : undefined;
    if (!catalog || taskId === undefined) return () => undefined;
    const controller = new AbortController();
    const onNotification = (method: string, params: Record<string, unknown>) => {
      const task = method === "notifications/tasks" ? taskOf(params, "stateless") : undefined;
      if (task?.taskId !== taskId) return;
      onStatus(task);
      if (TERMINAL.has(task.status)) controller.abort();
    };
    const caps = withTasksExtension({});
    void catalog.client
      .listen({ taskIds: [taskId] }, onNotification, controller.signal, caps)
      .catch(() => undefined);
    return () => controller.abort();
  }

  async #detailed(ref: StatelessTaskRef, ctx: CallContext) {
    const raw = await this.#catalog().client.request("tasks/get", { taskId: ref.taskId }, this.#options(ctx));
    return { raw, task: stateOf(raw) };
  }

  #options(ctx: CallContext): StatelessRequestOptions {
    return {
      clientCapabilities: withTasksExtension(ctx.clientCapabilities),
      signal: ctx.cancellation ?? ctx.signal,
      timeoutMs: this.timeoutMs,
    };
  }

  #catalog(): StatelessCatalog {
    const catalog = this.catalog();
    if (!catalog)
      throw fail(
        "PORTICO_ERR_PROVIDER_UNAVAILABLE",
        `Provider '${this.providerId}' is unavailable: not connected`,
      );
    return catalog;
  }
}

function refOf(ref: UpstreamTaskRef): StatelessTaskRef {
  const { era, taskId } = ref;
  if (era === "stateless" && typeof taskId === "string" && taskId.length > 0 && taskId.length <= MAX_TASK_ID)
    return { era, taskId };
  throw new McpError(RpcCode.InvalidParams, "Failed to retrieve task: Task not found");
}

function stateOf(value: unknown): TaskState {
  const task = taskOf(value, "stateless");
  if (!task) throw new UpstreamProtocolError(-1, "the upstream's answer is not a task");
  return task;
}

function pause(ms: number, signal: CancelSource): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const onAbort = {
      handleEvent: () => {
        clearTimeout(timer);
        reject(abortReason(signal));
      },
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Why `signal` aborted, as an Error. */
function abortReason(signal: CancelSource): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
}
