// The endpoint's side of tasks (2025-11-25 basic/utilities/tasks; docs/upstream-mcp.md#tasks): who
// a task belongs to, when tasks are offered, task-augmented tools/call and tool-level negotiation
// (`execution.taskSupport`), and tasks/get, tasks/result, tasks/cancel, tasks/list over src/tasks/.
// And the 2026-07-28 form, the tasks extension (`io.modelcontextprotocol/tasks`): the server
// decides which calls become tasks (`resultType: "task"`), tasks/get, tasks/update, tasks/cancel.
import type { ClientCapabilities, ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Target } from "../providers/catalog.js";
import { ipSubject, principalSubject } from "../limits/subjects.js";
import { excerpt, fail, PorticoError } from "../protocol/errors.js";
import { profileOf } from "../protocol/profile.js";
import type { TaskState } from "../providers/types.js";
import { taskState, type TaskOutcome } from "../tasks/task-store.js";
import type { TaskCaller, TaskDetail, TaskRequest, TaskResolver, Tasks } from "../tasks/tasks.js";
import type { TenantRegistry } from "../tenants/registry.js";
import type { TenantRuntime } from "../tenants/runtime.js";
import type { RequestContext } from "./context.js";
import { CALL_TOOL, isMetaTool } from "./tool-search.js";

type Params = Record<string, unknown>;

/** The first revision with tasks; a session of an older one is offered none (docs/protocol-eras.md). */
const TASKS_SINCE = "2025-11-25";

/** Whether the request's client may use tasks here: a session of 2025-11-25 on, on a replica that runs them. */
export function tasksOffered(ctx: RequestContext): boolean {
  return ctx.tasks !== undefined && ctx.sessionId !== undefined && ctx.protocolVersion >= TASKS_SINCE;
}

/**
 * The server's `tasks` capability: task-augmented tools/call and tasks/cancel always; tasks/list
 * only where callers are authenticated, since without an identity it would show one session's
 * tasks to another (2025-11-25 tasks "Security Considerations").
 */
export function tasksCapability(tenant: TenantRuntime): NonNullable<ServerCapabilities["tasks"]> {
  return {
    ...(tenant.config.auth !== "none" && { list: {} }),
    cancel: {},
    requests: { tools: { call: {} } },
  };
}

/**
 * Whom a task is bound to: the user on a tenant that authenticates callers (any of their
 * sessions may poll it), else the session that made it (docs/upstream-mcp.md#tasks).
 */
export function taskCallerOf(ctx: RequestContext): TaskCaller {
  const owner = ctx.caller ? principalSubject(ctx.caller.user) : `s:${ctx.sessionId ?? ""}`;
  // Without a user or a session every caller is `s:`: the caps and polling limit count addresses.
  const counted = owner === "s:" && ctx.clientIp !== undefined ? ipSubject(ctx.clientIp) : undefined;
  return { tenant: ctx.tenant.config.id, server: ctx.server, owner, ...(counted && { counted }) };
}

/** A tool's `execution.taskSupport` as listed. */
function taskSupportOf(tool: Tool | undefined): string | undefined {
  const execution = (tool as { execution?: { taskSupport?: unknown } } | undefined)?.execution;
  return typeof execution?.taskSupport === "string" ? execution.taskSupport : undefined;
}

/** The `task` member of a tools/call: undefined for a plain call; its ttl checked. */
function taskParamOf(p: Params): { ttlMs: number | undefined } | undefined {
  const task = p.task;
  if (task === undefined || task === null) return undefined;
  if (typeof task !== "object" || Array.isArray(task))
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", 'tools/call: "task" must be an object');
  const ttl = (task as Params).ttl;
  if (ttl !== undefined && ttl !== null && (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl < 0))
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", 'tools/call: "task.ttl" must be a number of milliseconds');
  return { ttlMs: typeof ttl === "number" ? Math.floor(ttl) : undefined };
}

/**
 * A tools/call to `target` as tool-level negotiation says (2025-11-25 tasks "Tool-Level
 * Negotiation"): a task when the client asked for one, whatever the upstream said (Portico makes
 * the task when the upstream will not), a plain call otherwise (a tool listed `required` refused
 * with -32601). Undefined: a plain call to make.
 */
export async function taskCall(
  name: string,
  target: Target,
  args: Record<string, unknown>,
  p: Params,
  ctx: RequestContext,
): Promise<Record<string, unknown> | undefined> {
  if (!tasksOffered(ctx)) return undefined;
  const support = taskSupportOf(target.tool);
  const task = taskParamOf(p);
  if (!task) {
    if (support === "required")
      throw fail(
        "PORTICO_ERR_MCP_TASK_REQUIRED",
        `Task augmentation required for tools/call requests: the tool ${excerpt(name)} runs only as a task (send "task": {})`,
      );
    return undefined;
  }
  const annotations = target.tool?.annotations;
  const meta = p._meta as Params | undefined;
  const token = meta?.progressToken;
  const task$ = await ctx.tasks!.start(
    taskCallerOf(ctx),
    {
      tool: name,
      target: { provider: target.provider, name: target.name, ...(ctx.profile && { profile: ctx.profile }) },
      args,
      idempotent: annotations?.readOnlyHint === true || annotations?.idempotentHint === true,
      ttlMs: task.ttlMs,
      progressToken: typeof token === "string" || typeof token === "number" ? token : undefined,
    },
    ctx,
  );
  return { task: task$ };
}

const OPTIONAL = { taskSupport: "optional" } as const;
const listedForTasks = new WeakMap<readonly Tool[], readonly Tool[]>();

/**
 * The tools a client that may use tasks is listed: Portico runs any tool as a task itself, so a
 * tool is listed `execution.taskSupport: "optional"` unless it is `"required"` — one that says
 * nothing of tasks, or `"forbidden"` (what the SDK v1 lists for every tool it does not run as a
 * task, tasks or not: its upstream then gets a plain call, which Portico runs as the task;
 * docs/upstream-mcp.md#tasks). Worked out once per list.
 */
export function toolsForTasks(tools: readonly Tool[], ctx: RequestContext): readonly Tool[] {
  if (!tasksOffered(ctx) || !("tasks" in ctx.clientCapabilities)) return tools;
  let listed = listedForTasks.get(tools);
  if (!listed) {
    listed = tools.map((t) => {
      const support = taskSupportOf(t);
      // Of tool search's own tools, only call_tool calls a tool (docs/tool-search.md).
      return support === "required" || support === "optional" || (isMetaTool(t.name) && t.name !== CALL_TOOL)
        ? t
        : { ...t, execution: { ...t.execution, ...OPTIONAL } };
    });
    listedForTasks.set(tools, listed);
  }
  return listed;
}

function offered(ctx: RequestContext, method: string): void {
  const listing = method === "tasks/list";
  if (!tasksOffered(ctx) || (listing && ctx.tenant.config.auth === "none"))
    throw fail(
      "PORTICO_ERR_MCP_METHOD_NOT_FOUND",
      listing && tasksOffered(ctx)
        ? "Method not found: tasks/list is not offered on a tenant without authentication (its callers cannot be told apart)"
        : `Method not found: ${method}`,
    );
}

/** tasks/get */
export async function getTask(p: Params, ctx: RequestContext): Promise<Record<string, unknown>> {
  offered(ctx, "tasks/get");
  return { ...(await ctx.tasks!.get(taskCallerOf(ctx), p.taskId, ctx)) };
}

/** tasks/result */
export function taskResult(p: Params, ctx: RequestContext): Promise<Record<string, unknown>> {
  offered(ctx, "tasks/result");
  return ctx.tasks!.result(taskCallerOf(ctx), p.taskId, ctx);
}

/** tasks/cancel */
export async function cancelTask(p: Params, ctx: RequestContext): Promise<Record<string, unknown>> {
  offered(ctx, "tasks/cancel");
  return { ...(await ctx.tasks!.cancel(taskCallerOf(ctx), p.taskId, ctx)) };
}

/** tasks/list, paginated with the endpoint's cursors. */
export async function listTasks(p: Params, ctx: RequestContext): Promise<Record<string, unknown>> {
  offered(ctx, "tasks/list");
  const caller = taskCallerOf(ctx);
  const scope = `${caller.tenant}|${caller.server ?? ""}|${caller.owner}`;
  const offset = ctx.cursors.decode(scope, "tasks", p.cursor);
  const { tasks, more } = await ctx.tasks!.list(caller, offset, ctx.pageSize);
  const result: Record<string, unknown> = { tasks };
  if (more) result.nextCursor = ctx.cursors.encode(scope, "tasks", offset + ctx.pageSize);
  return result;
}

/**
 * Finds a task's provider on any replica: the tool the caller called, in the catalog of the
 * caller's capability profile and user, still served by the provider that started it.
 */
export function taskResolver(registry: TenantRegistry): TaskResolver {
  return async (record) => {
    const tenant =
      record.server === undefined
        ? registry.get(record.tenant)
        : registry.server(record.tenant, record.server);
    if (!tenant) return undefined;
    const profile = profileOf(record.call.clientCapabilities);
    const catalog = await tenant.catalogFor(profile, record.call.user);
    const target = catalog.tool(record.call.tool);
    if (!target || target.provider.id !== record.call.provider || target.name !== record.call.name)
      return undefined;
    return { provider: target.provider, name: target.name, profile };
  };
}

// ---- the 2026-07-28 tasks extension ----

/** The tasks extension's identifier, in `capabilities.extensions` both ways. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The tasks extension in server/discover's capabilities, where Portico runs tasks. */
export function tasksExtension(): Record<string, object> {
  return { [TASKS_EXTENSION]: {} };
}

/** Whether this request's client declared the extension (negotiated per request). */
function declaresExtension(ctx: RequestContext): boolean {
  return declared(ctx.clientCapabilities);
}

function declared(capabilities: ClientCapabilities): boolean {
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  if (typeof extensions !== "object" || extensions === null) return false;
  const declared = (extensions as Record<string, unknown>)[TASKS_EXTENSION];
  return typeof declared === "object" && declared !== null;
}

/** -32021 naming the extension (the extension's "Capability Negotiation" and "Protocol Errors"). */
function missingExtension(what: string): PorticoError {
  return fail(
    "PORTICO_ERR_MCP_MISSING_CAPABILITY",
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension; declare it in _meta's client capabilities`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/**
 * A 2026-07-28 tools/call that Portico makes a task of, the server being the sole decider
 * (docs/upstream-mcp.md#tasks): a tool whose upstream runs it as a task, a tool listed
 * `"required"` (by its upstream or an admin's mark), or a call still running after its provider's
 * `afterSeconds`. The CreateTaskResult, or the call's own answer when it ended first (an upstream
 * that answered at once, a call within `afterSeconds`). Undefined: a plain call to make. A
 * task-required tool called by a client without the extension is -32021.
 */
export async function statelessTaskCall(
  name: string,
  target: Target,
  args: Record<string, unknown>,
  ctx: RequestContext,
): Promise<Record<string, unknown> | undefined> {
  if (!ctx.tasks || ctx.sessionId !== undefined) return undefined;
  const required = taskSupportOf(target.tool) === "required";
  if (!declaresExtension(ctx)) {
    if (required) throw missingExtension(`the tool ${excerpt(name)}, which runs only as a task,`);
    return undefined;
  }
  const upstream = target.provider.tasks?.support(target.name, ctx) !== undefined;
  const afterSeconds = target.provider.taskAfterSeconds;
  if (!upstream && !required && afterSeconds === undefined) return undefined;
  const annotations = target.tool?.annotations;
  const request: TaskRequest = {
    tool: name,
    target: { provider: target.provider, name: target.name, profile: ctx.profile },
    args,
    idempotent: annotations?.readOnlyHint === true || annotations?.idempotentHint === true,
    ttlMs: undefined,
    progressToken: undefined,
  };
  const caller = taskCallerOf(ctx);
  const started = await ctx.tasks.begin(caller, request, ctx);
  if ("answer" in started) return started.answer;
  // Only a call that would otherwise be plain waits: an upstream's task or a required one is a task now.
  const waitMs = upstream || required ? 0 : (afterSeconds ?? 0) * 1000;
  const record = await ctx.tasks.settle(caller, started.taskId, waitMs, ctx.signal);
  if (record.outcome && record.status !== "cancelled") return plainAnswer(record.outcome);
  if (ctx.signal.aborted) {
    // The client left before the call became its task: nobody will ever ask for it.
    await ctx.tasks.cancel(caller, started.taskId, ctx).catch(() => undefined);
    return undefined;
  }
  return { resultType: "task", ...wireTask(taskState(record)) };
}

/** The call's answer, as a plain tools/call would have given it. */
function plainAnswer(outcome: TaskOutcome): Record<string, unknown> {
  if ("result" in outcome) return outcome.result;
  const { code, message, data } = outcome.error;
  throw Object.assign(new Error(message), { code, data });
}

/** The extension's `Task` (its `ttlMs` and `pollIntervalMs`). */
function wireTask(state: TaskState): Record<string, unknown> {
  return {
    taskId: state.taskId,
    status: state.status,
    ...(state.statusMessage !== undefined && { statusMessage: state.statusMessage }),
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
    ttlMs: state.ttl,
    ...(state.pollInterval !== undefined && { pollIntervalMs: state.pollInterval }),
  };
}

/**
 * The extension's DetailedTask: a tool result, `isError` or not, is `completed` with its `result`
 * (the extension's "Task Status"; 2025-11-25 calls an `isError` result `failed`), a JSON-RPC
 * error `failed` with its `error`, and `input_required` carries its `inputRequests`.
 */
export function detailedTask(detail: TaskDetail): Record<string, unknown> {
  const { state, outcome, inputRequests } = detail;
  const task = wireTask(state);
  if (outcome && state.status !== "cancelled") {
    if ("result" in outcome) return { ...task, status: "completed", result: outcome.result };
    const { code, message, data } = outcome.error;
    return { ...task, status: "failed", error: { code, message, ...(data !== undefined && { data }) } };
  }
  if (state.status === "input_required") return { ...task, inputRequests: inputRequests ?? {} };
  return task;
}

/**
 * The `taskIds` a subscriptions/listen asks for, kept to the caller's own tasks (another's id is
 * dropped from the acknowledgement, as an unknown one is): -32021 from a client that did not
 * declare the extension (the extension's "Task Status Notifications").
 */
export async function listenedTasks(
  notifications: unknown,
  tasks: Tasks | undefined,
  tenant: TenantRuntime,
  capabilities: ClientCapabilities,
  user: string | undefined,
): Promise<unknown> {
  if (typeof notifications !== "object" || notifications === null) return notifications;
  const asked = (notifications as Params).taskIds;
  if (asked === undefined) return notifications;
  if (!tasks) throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", '"taskIds": this server runs no tasks');
  if (!declared(capabilities)) throw missingExtension("subscriptions/listen with taskIds");
  if (!Array.isArray(asked)) return notifications; // refused by the listen's own checks
  const caller: TaskCaller = {
    tenant: tenant.config.id,
    server: tenant.server?.id,
    owner: user !== undefined ? principalSubject(user) : "s:",
  };
  const ids = asked.filter((id): id is string => typeof id === "string" && id !== "" && id.length <= 64);
  return { ...notifications, taskIds: await tasks.owned(caller, ids.slice(0, 100)) };
}

/** tasks/* of the extension: only from a request that declared it (-32021 otherwise). */
function extensionOffered(ctx: RequestContext, method: string): void {
  if (!ctx.tasks) throw fail("PORTICO_ERR_MCP_METHOD_NOT_FOUND", `Method not found: ${method}`);
  if (!declaresExtension(ctx)) throw missingExtension(method);
}

/** tasks/get of the extension. */
export async function getStatelessTask(p: Params, ctx: RequestContext): Promise<Record<string, unknown>> {
  extensionOffered(ctx, "tasks/get");
  return detailedTask(await ctx.tasks!.detail(taskCallerOf(ctx), p.taskId, ctx));
}

/** tasks/update of the extension: an empty acknowledgement. */
export async function updateStatelessTask(p: Params, ctx: RequestContext): Promise<Record<string, unknown>> {
  extensionOffered(ctx, "tasks/update");
  const responses = p.inputResponses;
  if (typeof responses !== "object" || responses === null || Array.isArray(responses))
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", 'tasks/update: "inputResponses" must be an object');
  await ctx.tasks!.update(taskCallerOf(ctx), p.taskId, responses as Record<string, unknown>, ctx);
  return {};
}

/**
 * tasks/cancel of the extension: an empty acknowledgement, also for a task that ended meanwhile
 * (cancellation is cooperative and "eventually consistent"); an unknown task is -32602.
 */
export async function cancelStatelessTask(p: Params, ctx: RequestContext): Promise<Record<string, unknown>> {
  extensionOffered(ctx, "tasks/cancel");
  try {
    await ctx.tasks!.cancel(taskCallerOf(ctx), p.taskId, ctx);
  } catch (err) {
    if (!(err instanceof PorticoError && err.code === "PORTICO_ERR_MCP_TASK_TERMINAL")) throw err;
  }
  return {};
}
