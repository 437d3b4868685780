// Portico's tasks (2025-11-25 basic/utilities/tasks; docs/upstream-mcp.md#tasks): a task-augmented
// tools/call becomes a task whose record lives in the store, so any replica answers tasks/get,
// tasks/result, tasks/cancel and tasks/list. A tool whose upstream runs tasks itself (Provider.tasks)
// passes through to the upstream's; any other is run by Portico in the background on the replica
// that got the call ("gateway-made"), and taken over by a survivor if that replica dies.
import type { FastifyBaseLogger } from "fastify";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { randomId } from "../crypto/secrets.js";
import type { RateLimiter } from "../limits/rate-limiter.js";
import { RpcCode } from "../protocol/codes.js";
import { isStatelessVersion } from "../protocol/era.js";
import { excerpt, fail } from "../protocol/errors.js";
import { toErrorResponse } from "../protocol/jsonrpc.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import type { CallContext, Provider, TaskState } from "../providers/types.js";
import type { Keys } from "../store/keys.js";
import type { ReplicaLiveness } from "../store/replicas.js";
import type { Metrics, TaskEnd } from "../metrics/metrics.js";
import type { Store, Unsubscribe } from "../store/store.js";
import {
  isTerminal,
  taskState,
  TaskStore,
  type TaskCall,
  type TaskInput,
  type TaskOutcome,
  type TaskRecord,
} from "./task-store.js";

/** The `_meta` key tying a message to its task (2025-11-25 tasks "Related Task Metadata"). */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** A task with what its status carries (the 2026-07-28 extension's DetailedTask, before its wire shape). */
export interface TaskDetail {
  readonly state: TaskState;
  /** Once it ended: its call's result or JSON-RPC error (none when cancelled before it ended). */
  readonly outcome?: TaskOutcome;
  /** While `input_required`: the questions for the client, by key (answered with update()). */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
}

/** Who asks about tasks: a task is found only by the tenant, virtual server and caller that made it. */
export interface TaskCaller {
  readonly tenant: string;
  readonly server: string | undefined;
  /** `p:<hash>` for a user (limits/subjects.ts), `s:<session>` on a tenant without authentication. */
  readonly owner: string;
  /**
   * Whom the caps and the polling limit count, when not the owner: the client's address (`ip:…`)
   * for a 2026-07-28 request on a tenant without authentication, whose owner (`s:`) is everyone's.
   */
  readonly counted?: string;
}

/** Where a task's call goes: the provider and its own name of the tool. */
export interface TaskTarget {
  readonly provider: Provider;
  readonly name: string;
  /** The profile the call is made under (the caller's); a re-run rebuilds it from the record. */
  readonly profile?: CapabilityProfile;
}

/** Finds a task's provider again (another replica, a re-run): the catalog the caller saw. */
export type TaskResolver = (record: TaskRecord) => Promise<TaskTarget | undefined>;

/** A task-augmented tools/call as the method handler resolved it. */
export interface TaskRequest {
  readonly tool: string;
  readonly target: TaskTarget;
  readonly args: Record<string, unknown>;
  /** The tool is annotated read-only or idempotent: a survivor may run it again. */
  readonly idempotent: boolean;
  /** The client's `task.ttl`, if any (ms). */
  readonly ttlMs: number | undefined;
  /** The request's progressToken, which stays valid for the task's lifetime. */
  readonly progressToken: string | number | undefined;
}

export interface TasksOptions {
  readonly store: Store;
  readonly keys: Keys;
  readonly liveness: ReplicaLiveness;
  readonly limiter?: RateLimiter;
  readonly log: FastifyBaseLogger;
  readonly ttlDefaultMs: number;
  readonly ttlMaxMs: number;
  readonly pollIntervalMs: number;
  readonly maxResultBytes: number;
  readonly maxPerCaller: number;
  readonly maxPerTenant: number;
  readonly pollsPerMinute: number;
  /** PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS: a survivor runs an idempotent task again. */
  readonly rerunIdempotent: boolean;
  /** Sends a notification on a session's standalone stream (the session lane's outlet). */
  readonly notify: (
    tenant: string,
    sessionId: string,
    method: string,
    params: Record<string, unknown>,
  ) => Promise<void>;
  readonly resolve: TaskResolver;
  /** Told of each change of a task made here (the 2026-07-28 lane's listen streams, notifications/tasks). */
  readonly changed?: (record: TaskRecord) => void;
  /** Counts tasks started, ended and refused at a cap (docs/metrics.md). */
  readonly metrics?: Pick<Metrics, "taskStarted" | "taskEnded" | "rateLimited">;
  readonly now?: () => number;
}

/** What travels the tasks channel. */
type BusMessage =
  | { readonly k: "change"; readonly t: string; readonly id: string }
  | { readonly k: "cancel"; readonly t: string; readonly id: string }
  | {
      readonly k: "input";
      readonly t: string;
      readonly id: string;
      readonly seq: number;
      readonly answer: { result?: Record<string, unknown>; error?: { code: number; message: string } };
    };

/** How long a tasks/result waits before it reads the record again (a missed message costs no more). */
const REREAD_MS = 10_000;
/** How often progress may rewrite a task's statusMessage in the store. */
const PROGRESS_WRITE_MS = 1000;
/**
 * How many times a gateway-made task's call is run again after the client accepted the URL
 * elicitations of an upstream's -32042, before the task fails (the user never finishing the flow).
 */
export const URL_ROUNDS_MAX = 3;

/** A gateway-made task running on this replica. */
interface Running {
  readonly controller: AbortController;
  /** The request for input waiting for the client's answer, by its sequence number. */
  pending?: { seq: number; settle: (answer: BusMessage & { k: "input" }) => void };
  seq: number;
}

export class Tasks {
  readonly #store: TaskStore;
  readonly #running = new Map<string, Running>();
  /** tasks/result requests waiting on this replica, by task id. */
  readonly #waiters = new Map<string, Set<() => void>>();
  #unsubscribe: Unsubscribe | undefined;
  #closing = false;
  #releasing = false;
  /** What ends the waits of pass-through tasks/result requests here when the replica shuts down. */
  readonly #interrupts = new Set<() => void>();
  readonly #now: () => number;

  constructor(private readonly opts: TasksOptions) {
    this.#now = opts.now ?? Date.now;
    const { metrics } = opts;
    this.#store = new TaskStore(opts.store, opts.keys, opts.ttlMaxMs, this.#now, {
      ended: (r) =>
        metrics?.taskEnded(r.tenant, r.status as TaskEnd, (this.#now() - Date.parse(r.createdAt)) / 1000),
      refused: () => metrics?.rateLimited("mcp", "tasks"),
    });
  }

  /** Listens on the tasks channel (cancellations and changes from other replicas). */
  async listen(): Promise<void> {
    this.#unsubscribe = await this.opts.store.subscribe(
      this.opts.keys.tasksChannel(),
      (message) => this.#onBus(message),
      // Whatever was missed: waiters read their task again.
      () => this.#wakeAll(),
    );
  }

  /**
   * The replica is shutting down: a tasks/result waiting here answers at once (-32003, to be sent
   * again to another replica: the task goes on), so it does not hold the drain.
   */
  release(): void {
    this.#releasing = true;
    this.#wakeAll();
  }

  /** Stops: tasks running here are abandoned unwritten, for a survivor to take over or fail. */
  async close(): Promise<void> {
    this.#releasing = true;
    this.#closing = true;
    for (const running of this.#running.values()) running.controller.abort(new Error("replica closing"));
    this.#wakeAll();
    await this.#unsubscribe?.();
  }

  /** Tasks running on this replica (metrics, tests). */
  get running(): number {
    return this.#running.size;
  }

  /**
   * A task-augmented tools/call: the task, at once (2025-11-25 "Creating Tasks"). Passed to the
   * upstream's own tasks when it runs this tool as one, else run here in the background.
   */
  async start(caller: TaskCaller, request: TaskRequest, ctx: CallContext): Promise<TaskState> {
    const started = await this.#start(caller, request, ctx, false);
    if ("answer" in started) throw new Error("unreachable: an answer is kept as a task");
    return started;
  }

  /**
   * A call the server made a task of (the 2026-07-28 extension, where the server decides): the task,
   * or the upstream's own answer when it answered at once (its result, or an input_required round
   * to relay), with no task made.
   */
  begin(
    caller: TaskCaller,
    request: TaskRequest,
    ctx: CallContext,
  ): Promise<TaskState | { readonly answer: Record<string, unknown> }> {
    return this.#start(caller, request, ctx, true);
  }

  async #start(
    caller: TaskCaller,
    request: TaskRequest,
    ctx: CallContext,
    answerAtOnce: boolean,
  ): Promise<TaskState | { readonly answer: Record<string, unknown> }> {
    const ttlMs = Math.min(Math.max(request.ttlMs ?? this.opts.ttlDefaultMs, 1000), this.opts.ttlMaxMs);
    const now = this.#now();
    const { provider, name } = request.target;
    const keepArgs = this.opts.rerunIdempotent && request.idempotent;
    const call: TaskCall = {
      tool: request.tool,
      provider: provider.id,
      name,
      ...(keepArgs && { args: request.args }),
      ...(ctx.sessionId !== undefined && { sessionId: ctx.sessionId }),
      ...(ctx.user !== undefined && { user: ctx.user }),
      protocolVersion: ctx.protocolVersion,
      clientCapabilities: ctx.clientCapabilities,
    };
    const base: TaskRecord = {
      id: randomId(24),
      tenant: caller.tenant,
      ...(caller.server !== undefined && { server: caller.server }),
      owner: caller.owner,
      ...(caller.counted !== undefined && { counted: caller.counted }),
      status: "working",
      createdAt: new Date(now).toISOString(),
      lastUpdatedAt: new Date(now).toISOString(),
      ttlMs,
      pollIntervalMs: this.opts.pollIntervalMs,
      expiresAt: now + ttlMs,
      replica: this.opts.liveness.id,
      call,
    };
    const upstream = provider.tasks?.support(name, ctx) !== undefined ? provider.tasks : undefined;
    if (upstream) {
      const started = await upstream.start(name, request.args, { ttl: ttlMs }, ctx);
      if (started.result !== undefined && answerAtOnce) return { answer: started.result };
      if (started.result !== undefined) {
        // A 2026-07-28 upstream decided the call was no task and answered it: the client that
        // asked for one gets a task that has already ended with that answer.
        const outcome = this.#outcomeOf(started.result);
        await this.#store.create(base, this.#caps());
        this.opts.metrics?.taskStarted(caller.tenant, "upstream");
        const ended = await this.#store.update(base.tenant, base.id, (r) => ({
          ...r,
          ...endOf(outcome),
          outcome,
        }));
        return taskState(ended ?? base);
      }
      const record: TaskRecord = {
        ...base,
        status: started.task.status,
        ...(started.task.statusMessage !== undefined && { statusMessage: started.task.statusMessage }),
        ...(started.task.pollInterval !== undefined && { pollIntervalMs: started.task.pollInterval }),
        ref: started.ref,
      };
      try {
        await this.#store.create(record, this.#caps());
        this.opts.metrics?.taskStarted(caller.tenant, "upstream");
      } catch (err) {
        // Refused (a cap): the upstream's task is not left running for nobody.
        await upstream.cancel(started.ref, ctx).catch(() => undefined);
        throw err;
      }
      this.opts.log.debug(
        { tenant: caller.tenant, task: record.id, tool: request.tool },
        "task started upstream",
      );
      this.#watchUpstream(record, request.target, ctx);
      return taskState(record);
    }
    await this.#store.create(base, this.#caps());
    this.opts.metrics?.taskStarted(caller.tenant, "gateway");
    this.opts.log.debug({ tenant: caller.tenant, task: base.id, tool: request.tool }, "task started");
    this.#run(base, request.target, request.args, ctx, request.progressToken);
    return taskState(base);
  }

  /** tasks/get: the task's state; a dead replica's task is taken over first. */
  async get(caller: TaskCaller, taskId: unknown, ctx: CallContext): Promise<TaskState> {
    this.#admit(caller);
    let record = await this.#find(caller, taskId);
    if (record.ref && !isTerminal(record.status)) record = await this.#pollUpstream(record, ctx);
    else record = await this.#healed(record);
    return taskState(record);
  }

  /**
   * tasks/result: waits until the task ends and answers what its call answered, its JSON-RPC error
   * included (2025-11-25 "Result Retrieval"); a request for input the call makes meanwhile is sent
   * to the client on this request ("Input Required Status").
   */
  async result(caller: TaskCaller, taskId: unknown, ctx: CallContext): Promise<Record<string, unknown>> {
    this.#admit(caller);
    let record = await this.#find(caller, taskId);
    // The upstream keeps its task's result: asked for it whatever Portico's record says, but cancelled.
    if (record.ref && record.status !== "cancelled") return this.#upstreamResult(record, ctx);
    const relayed = new Set<number>();
    while (!isTerminal(record.status)) {
      record = await this.#healed(record);
      if (isTerminal(record.status)) break;
      const input = record.input;
      if (input && !relayed.has(input.seq)) {
        relayed.add(input.seq);
        await this.#relayInput(record, input, ctx);
      } else await this.#changed(record, ctx.signal);
      if (ctx.signal.aborted) throw fail("PORTICO_ERR_MCP_INVALID_REQUEST", "tasks/result was cancelled");
      if (this.#releasing) throw interrupted();
      const next = await this.#store.read(record.tenant, record.id);
      if (!next) throw notFound();
      record = next;
    }
    return answerOf(record);
  }

  /** tasks/cancel (2025-11-25 "Task Cancellation"): stops the call wherever it runs. */
  async cancel(caller: TaskCaller, taskId: unknown, ctx: CallContext): Promise<TaskState> {
    this.#admit(caller);
    const record = await this.#find(caller, taskId);
    if (isTerminal(record.status)) throw terminal(record);
    if (record.ref) {
      const target = await this.opts.resolve(record);
      if (!target?.provider.tasks) throw unavailable();
      await target.provider.tasks.cancel(record.ref, ctx);
    }
    let refused: TaskRecord | undefined;
    const cancelled = await this.#store.update(record.tenant, record.id, (r) => {
      if (isTerminal(r.status)) {
        refused = r;
        return undefined;
      }
      return {
        ...r,
        status: "cancelled",
        statusMessage: "The task was cancelled by request.",
        input: undefined,
      };
    });
    if (refused) throw terminal(refused);
    if (!cancelled) throw notFound();
    this.#abortLocal(record.id);
    await this.#publish({ k: "cancel", t: record.tenant, id: record.id });
    this.#announce(cancelled);
    return taskState(cancelled);
  }

  /**
   * The 2026-07-28 extension's tasks/get: the task with what its status carries — its outcome once
   * it ended (an upstream's, asked of the upstream), its questions while `input_required`.
   */
  async detail(caller: TaskCaller, taskId: unknown, ctx: CallContext): Promise<TaskDetail> {
    this.#admit(caller);
    let record = await this.#find(caller, taskId);
    let inputRequests: Readonly<Record<string, unknown>> | undefined;
    if (record.ref && !isTerminal(record.status)) {
      const target = await this.opts.resolve(record);
      if (!target?.provider.tasks) throw unavailable();
      const state = await target.provider.tasks.get(record.ref, ctx);
      record = (await this.#mirror(record, state)) ?? record;
      if (record.status === "input_required") inputRequests = state.inputRequests;
      // A session-era upstream asks on its tasks/result stream, which a 2026-07-28 client never
      // opens: Portico opens it and shows its requests as the task's own questions.
      if (record.status === "input_required" && !inputRequests && isStatelessVersion(ctx.protocolVersion))
        await this.#relayUpstream(record, target);
    } else record = await this.#healed(record);
    let outcome = record.outcome;
    if (record.ref && !outcome && (record.status === "completed" || record.status === "failed"))
      outcome = await this.#upstreamOutcome(record, ctx);
    return detailOf(record, outcome, inputRequests);
  }

  /**
   * A task as its record tells it, without asking an upstream (notifications/tasks on listen
   * streams): an upstream's task that ended carries no result there, which tasks/get gives.
   */
  async peek(tenant: string, taskId: string): Promise<TaskDetail | undefined> {
    const record = await this.#store.read(tenant, taskId);
    return record && detailOf(record, record.outcome, undefined);
  }

  /** Of `taskIds`, those of the caller's tasks (a listen stream may follow only its own). */
  async owned(caller: TaskCaller, taskIds: readonly string[]): Promise<string[]> {
    const found = await Promise.all(
      taskIds.map((id) =>
        this.#find(caller, id).then(
          () => id,
          () => undefined,
        ),
      ),
    );
    return found.filter((id): id is string => id !== undefined);
  }

  /**
   * The 2026-07-28 extension's tasks/update: the client's answers to the task's inputRequests. An
   * upstream's task gets them as they are; a gateway-made task's call gets the answer to the
   * question it waits on (on whichever replica runs it). Answers to anything else are ignored, as
   * the extension allows.
   */
  async update(
    caller: TaskCaller,
    taskId: unknown,
    inputResponses: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<void> {
    this.#admit(caller);
    const record = await this.#find(caller, taskId);
    if (isTerminal(record.status)) return;
    if (record.ref && !record.relay) {
      const target = await this.opts.resolve(record);
      if (!target?.provider.tasks) throw unavailable();
      if (!target.provider.tasks.update)
        throw fail(
          "PORTICO_ERR_MCP_INVALID_REQUEST",
          "This task takes no tasks/update: its upstream asks nothing that way",
        );
      await target.provider.tasks.update(record.ref, inputResponses, ctx);
      return;
    }
    const input = record.input;
    const response = input && inputResponses[inputKey(input.seq)];
    if (!input || response === undefined) return;
    const answer =
      typeof response === "object" && response !== null && !Array.isArray(response)
        ? { result: response as Record<string, unknown> }
        : { error: { code: RpcCode.InvalidParams, message: "The client's answer is not an object" } };
    const message: BusMessage = { k: "input", t: record.tenant, id: record.id, seq: input.seq, answer };
    if (!this.#deliverInput(message)) await this.#publish(message);
  }

  /**
   * Waits up to `ms` for the caller's task to end (a call that becomes a task only when it runs
   * longer, docs/upstream-mcp.md#tasks): the record as it then stands.
   */
  async settle(caller: TaskCaller, taskId: string, ms: number, signal: AbortSignal): Promise<TaskRecord> {
    const deadline = this.#now() + ms;
    let record = await this.#find(caller, taskId);
    while (!isTerminal(record.status) && !signal.aborted) {
      const left = deadline - this.#now();
      if (left <= 0) break;
      await this.#changed(record, AbortSignal.any([signal, AbortSignal.timeout(left)]));
      record = (await this.#store.read(record.tenant, record.id)) ?? record;
    }
    return record;
  }

  /** tasks/list: the caller's tasks, a page from `offset`. */
  async list(
    caller: TaskCaller,
    offset: number,
    limit: number,
  ): Promise<{ tasks: TaskState[]; more: boolean }> {
    this.#admit(caller);
    const { tasks, more } = await this.#store.list(caller.tenant, caller.server, caller.owner, offset, limit);
    return { tasks: tasks.map(taskState), more };
  }

  // ---- gateway-made tasks ----

  /** Runs the call in the background on this replica and writes how it ended. */
  #run(
    record: TaskRecord,
    target: TaskTarget,
    args: Record<string, unknown>,
    origin: Pick<CallContext, "logLevel" | "profile">,
    progressToken: string | number | undefined,
  ): void {
    // A re-run numbers its requests for input on from the last run's (TaskRecord.inputSeq).
    const running: Running = { controller: new AbortController(), seq: record.inputSeq ?? 0 };
    this.#running.set(record.id, running);
    const ctx = this.#contextOf(record, target, origin, running, progressToken);
    // A task's call lives no longer than the task: past its ttl nobody can fetch its answer, and
    // the caps no longer count it.
    const expiry = setTimeout(
      () => running.controller.abort(fail("PORTICO_ERR_PROVIDER_TIMEOUT", "The task's ttl ran out")),
      Math.max(0, record.expiresAt - this.#now()),
    );
    expiry.unref();
    void this.#callTool(record, running, target, args, ctx)
      .then(
        (result) => this.#ended(record, running, this.#outcomeOf(result)),
        (err: unknown) => this.#ended(record, running, { error: errorOf(err, this.opts.log) }),
      )
      .catch((err: unknown) => this.opts.log.warn({ err, task: record.id }, "task outcome not written"))
      .finally(() => {
        clearTimeout(expiry);
        this.#running.delete(record.id);
      });
  }

  /**
   * The task's call, run again after each -32042 (URL elicitation required, 2025-11-25
   * client/elicitation) once the client accepted its URLs, as -32042 asks of the caller: each URL
   * goes to the client as the task's request for input (input_required). Declined, the task fails
   * with the upstream's error; still -32042 after URL_ROUNDS_MAX runs again, it fails saying so.
   */
  async #callTool(
    record: TaskRecord,
    running: Running,
    target: TaskTarget,
    args: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<Record<string, unknown>> {
    for (let round = 0; ; round++) {
      let err: unknown;
      try {
        return await target.provider.callTool(target.name, args, ctx);
      } catch (caught) {
        err = caught;
      }
      const { protocolVersion, clientCapabilities } = record.call;
      const found = urlElicitationsOf(err, protocolVersion);
      if (!found) throw err;
      const { error, urls } = found;
      const words = `Provider '${target.provider.id}' needs the user to open a URL first (its error ${error.code}: ${excerpt(error.message, 200)})`;
      // The upstream's own error where -32042 means something to the client; a 2026-07-28 client,
      // whose revision has none, gets the provider's failure (relayedError's rule).
      const refused = (why: string) =>
        isStatelessVersion(protocolVersion) ? fail("PORTICO_ERR_PROVIDER_FAILED", `${words}, ${why}`) : err;
      if (urls.length === 0) throw refused("and names no URL to open");
      const elicitation = (clientCapabilities as { elicitation?: { url?: unknown } }).elicitation;
      if (typeof elicitation?.url !== "object" || elicitation.url === null)
        throw refused("and the client did not declare URL-mode elicitation (elicitation.url)");
      if (round === URL_ROUNDS_MAX)
        throw fail(
          "PORTICO_ERR_PROVIDER_FAILED",
          `${words}, and still did after ${URL_ROUNDS_MAX} runs again with every URL opened`,
        );
      for (const params of urls) {
        const answer = await this.#askClient(record, running, "elicitation/create", params);
        if (answer.action === "accept") continue;
        const action = typeof answer.action === "string" ? answer.action : "no answer";
        throw refused(`and the answer was "${action}"`);
      }
    }
  }

  /** The CallContext of a task's own call: its progress and input go to the task, not a request. */
  #contextOf(
    record: TaskRecord,
    target: TaskTarget,
    origin: Pick<CallContext, "logLevel" | "profile">,
    running: Running,
    progressToken: string | number | undefined,
  ): CallContext {
    const { call } = record;
    let lastWrite = 0;
    const profile = target.profile ?? origin.profile;
    return {
      tenantId: record.tenant,
      ...(call.user !== undefined && { user: call.user }),
      sessionId: call.sessionId,
      protocolVersion: call.protocolVersion,
      clientCapabilities: call.clientCapabilities,
      ...(profile && { profile }),
      logLevel: origin.logLevel,
      signal: running.controller.signal,
      keepsUrlElicitation: true,
      progress: (progress, total, message) => {
        if (call.sessionId !== undefined && progressToken !== undefined) {
          const params: Record<string, unknown> = { progressToken, progress };
          if (total !== undefined) params.total = total;
          if (message !== undefined) params.message = message;
          params._meta = { [RELATED_TASK]: { taskId: record.id } };
          this.#notify(record, "notifications/progress", params);
        }
        const now = this.#now();
        if (now - lastWrite < PROGRESS_WRITE_MS) return;
        lastWrite = now;
        const text = message ?? (total === undefined ? `${progress}` : `${progress} of ${total}`);
        void this.#store
          .update(record.tenant, record.id, (r) =>
            r.status === "working" ? { ...r, statusMessage: excerpt(text, 200) } : undefined,
          )
          .then((r) => r && this.#announce(r))
          .catch(() => undefined);
      },
      log: (level: LoggingLevel, data: unknown, logger?: string) => {
        const params: Record<string, unknown> = {
          level,
          data,
          _meta: { [RELATED_TASK]: { taskId: record.id } },
        };
        if (logger !== undefined) params.logger = logger;
        this.#notify(record, "notifications/message", params);
      },
      request: (method, params) => this.#askClient(record, running, method, params),
    };
  }

  /**
   * A request the call makes of the client (sampling, elicitation, roots): the task goes
   * `input_required` until a tasks/result carries the request to the client and its answer back.
   */
  async #askClient(
    record: TaskRecord,
    running: Running,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>> {
    const seq = ++running.seq;
    const meta = {
      ...(params?._meta as Record<string, unknown> | undefined),
      [RELATED_TASK]: { taskId: record.id },
    };
    const input: TaskInput = { seq, method, params: { ...params, _meta: meta } };
    let expiry: NodeJS.Timeout | undefined;
    const { signal } = running.controller;
    let onAbort: (() => void) | undefined;
    const answered = new Promise<BusMessage & { k: "input" }>((resolve, reject) => {
      running.pending = { seq, settle: resolve };
      onAbort = () => reject(new Error("task ended", { cause: signal.reason }));
      signal.addEventListener("abort", onAbort, { once: true });
      // Nobody carried the request to the client within the task's lifetime: the call gets an error.
      expiry = setTimeout(
        () => reject(fail("PORTICO_ERR_PROVIDER_TIMEOUT", "The client did not answer within the task's ttl")),
        Math.max(0, record.expiresAt - this.#now()),
      );
      expiry.unref();
    });
    // Settled on every path below, awaited only on one: a rejection nobody awaits is no crash.
    answered.catch(() => undefined);
    try {
      const waiting = await this.#store.update(record.tenant, record.id, (r) =>
        isTerminal(r.status)
          ? undefined
          : {
              ...r,
              status: "input_required",
              statusMessage: `Waiting for the client: ${method}`,
              input,
              inputSeq: seq,
            },
      );
      if (!waiting || isTerminal(waiting.status))
        throw fail("PORTICO_ERR_MCP_INVALID_REQUEST", "The task ended");
      this.#announce(waiting);
      await this.#publish({ k: "change", t: record.tenant, id: record.id });
      const { answer } = await answered;
      if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
      return answer.result ?? {};
    } finally {
      clearTimeout(expiry);
      if (onAbort) signal.removeEventListener("abort", onAbort);
      running.pending = undefined;
      const back = await this.#store.update(record.tenant, record.id, (r) =>
        r.status === "input_required" && r.input?.seq === seq
          ? { ...r, status: "working", statusMessage: undefined, input: undefined }
          : undefined,
      );
      if (back?.status === "working") this.#announce(back);
    }
  }

  /** Sends a task's request for input to the client on this tasks/result, and its answer to the call. */
  async #relayInput(record: TaskRecord, input: TaskInput, ctx: CallContext): Promise<void> {
    let answer: { result?: Record<string, unknown>; error?: { code: number; message: string } };
    try {
      answer = { result: await ctx.request(input.method, input.params) };
    } catch (err) {
      if (ctx.signal.aborted) return;
      const { code, message } = errorOf(err, this.opts.log);
      answer = { error: { code, message } };
    }
    const message: BusMessage = { k: "input", t: record.tenant, id: record.id, seq: input.seq, answer };
    if (!this.#deliverInput(message)) await this.#publish(message);
  }

  #deliverInput(message: BusMessage & { k: "input" }): boolean {
    const pending = this.#running.get(message.id)?.pending;
    if (!pending || pending.seq !== message.seq) return false;
    pending.settle(message);
    return true;
  }

  /** What the call's result makes of the task: completed, or failed when it is a tool error. */
  #outcomeOf(result: Record<string, unknown>): TaskOutcome {
    const size = Buffer.byteLength(JSON.stringify(result));
    if (size > this.opts.maxResultBytes)
      return {
        error: tooLarge(size, this.opts.maxResultBytes),
      };
    return { result };
  }

  /** Writes how the call ended, unless the task was cancelled, taken over, or this replica is closing. */
  async #ended(record: TaskRecord, running: Running, outcome: TaskOutcome): Promise<void> {
    if (this.#closing || running.controller.signal.aborted) return;
    const me = this.opts.liveness.id;
    const done = await this.#store.update(record.tenant, record.id, (r) => {
      if (isTerminal(r.status) || r.replica !== me) return undefined;
      const { status, statusMessage } = endOf(outcome);
      return { ...r, status, statusMessage, outcome, input: undefined };
    });
    if (!done || !isTerminal(done.status) || done.replica !== me) return;
    this.opts.log.debug({ tenant: record.tenant, task: record.id, status: done.status }, "task ended");
    this.#wake(record.id);
    await this.#publish({ k: "change", t: record.tenant, id: record.id });
    this.#announce(done);
  }

  /**
   * The task as it is, after taking over a dead replica's: run again when it may be (idempotent,
   * and PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS), else failed, saying why.
   */
  async #healed(record: TaskRecord): Promise<TaskRecord> {
    if (isTerminal(record.status) || record.ref) return record;
    const me = this.opts.liveness.id;
    if (record.replica === me || (await this.opts.liveness.isAlive(record.replica))) return record;
    const dead = record.replica;
    const args = record.call.args;
    const target = args && this.opts.rerunIdempotent ? await this.opts.resolve(record) : undefined;
    let acted = false;
    const taken = await this.#store.update(record.tenant, record.id, (r) => {
      acted = !isTerminal(r.status) && r.replica === dead;
      if (!acted) return undefined;
      if (target)
        return {
          ...r,
          status: "working",
          statusMessage: "Run again: the gateway replica running it stopped",
          replica: me,
          input: undefined,
        };
      const error = interruptedError();
      return {
        ...r,
        status: "failed",
        statusMessage:
          "Interrupted: the gateway replica running this task stopped before it finished; the work may or may not have completed",
        outcome: { error },
        input: undefined,
      };
    });
    if (!taken) throw notFound();
    // Another request took it over first (here or elsewhere): nothing more to do.
    if (!acted) return taken;
    this.opts.log.warn(
      { tenant: taken.tenant, task: taken.id, replica: dead, status: taken.status },
      taken.status === "failed"
        ? "task interrupted: its replica is gone"
        : "task run again: its replica is gone",
    );
    if (target && args && !isTerminal(taken.status))
      this.#run(taken, target, args, { logLevel: undefined, profile: target.profile }, undefined);
    else {
      this.#wake(taken.id);
      await this.#publish({ k: "change", t: taken.tenant, id: taken.id });
    }
    this.#announce(taken);
    return taken;
  }

  /**
   * Resolves when the task may have changed: its message on the channel, its replica's death, a
   * re-read's time, or the request's end.
   */
  #changed(record: TaskRecord, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiters = this.#waiters.get(record.id) ?? new Set();
      this.#waiters.set(record.id, waiters);
      const unwatch =
        record.replica === this.opts.liveness.id
          ? undefined
          : this.opts.liveness.watch(record.replica, () => done());
      const timer = setTimeout(() => done(), REREAD_MS);
      const done = () => {
        clearTimeout(timer);
        unwatch?.();
        signal.removeEventListener("abort", done);
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(record.id) === waiters) this.#waiters.delete(record.id);
        resolve();
      };
      waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
      if (this.#releasing) done();
    });
  }

  // ---- upstream tasks (pass-through) ----

  /** Follows the upstream's status notifications for a task started here, into the record and the session. */
  #watchUpstream(record: TaskRecord, target: TaskTarget, ctx: CallContext): void {
    const tasks = target.provider.tasks;
    if (!tasks || !record.ref) return;
    const watching: { stop?: () => void } = {};
    // Watched at most for the task's lifetime.
    const timer = setTimeout(() => watching.stop?.(), Math.max(0, record.expiresAt - this.#now()));
    timer.unref();
    watching.stop = tasks.watch(
      record.ref,
      (state) => {
        void this.#mirror(record, state)
          .then((r) => r && this.#announce(r))
          .catch((err: unknown) => this.opts.log.warn({ err, task: record.id }, "task status not written"));
        // After watch() returned, even when the status came at once.
        if (isTerminal(state.status))
          queueMicrotask(() => {
            clearTimeout(timer);
            watching.stop?.();
          });
      },
      ctx,
    );
  }

  async #pollUpstream(record: TaskRecord, ctx: CallContext): Promise<TaskRecord> {
    const target = await this.opts.resolve(record);
    if (!target?.provider.tasks || !record.ref) throw unavailable();
    const state = await target.provider.tasks.get(record.ref, ctx);
    return (await this.#mirror(record, state)) ?? record;
  }

  async #upstreamResult(record: TaskRecord, ctx: CallContext): Promise<Record<string, unknown>> {
    const target = await this.opts.resolve(record);
    if (!target?.provider.tasks || !record.ref) throw unavailable();
    // Like a gateway-made task's, a wait here ends when the replica starts shutting down.
    if (this.#releasing) throw interrupted();
    let interrupt!: () => void;
    const released = new Promise<never>((_, reject) => (interrupt = () => reject(interrupted())));
    released.catch(() => undefined);
    this.#interrupts.add(interrupt);
    try {
      const result = await Promise.race([
        target.provider.tasks.result(record.ref, relatingTo(ctx, record.id)),
        released,
      ]);
      return withRelatedTask(result, record.id);
    } finally {
      this.#interrupts.delete(interrupt);
    }
  }

  /** The ended upstream task's outcome: its result, or the JSON-RPC error it failed with. */
  async #upstreamOutcome(record: TaskRecord, ctx: CallContext): Promise<TaskOutcome> {
    const target = await this.opts.resolve(record);
    if (!target?.provider.tasks || !record.ref) throw unavailable();
    try {
      // As the upstream gave it: a result inlined in a task carries no related-task _meta.
      return { result: await target.provider.tasks.result(record.ref, ctx) };
    } catch (err) {
      return { error: errorOf(err, this.opts.log) };
    }
  }

  /**
   * Opens the upstream's tasks/result in the background on this replica, unless a live replica
   * already holds it (TaskRecord.relay): each request the upstream sends there becomes the task's
   * question (record.input, shown as inputRequests), answered by tasks/update as a gateway-made
   * task's. Its result is not kept: tasks/get asks the upstream for it once the task ended.
   */
  async #relayUpstream(record: TaskRecord, target: TaskTarget): Promise<void> {
    const tasks = target.provider.tasks;
    if (!tasks || !record.ref || this.#running.has(record.id) || this.#closing) return;
    const holder = record.relay;
    if (
      holder !== undefined &&
      holder !== this.opts.liveness.id &&
      (await this.opts.liveness.isAlive(holder))
    )
      return;
    const me = this.opts.liveness.id;
    const claimed = await this.#store.update(record.tenant, record.id, (r) =>
      isTerminal(r.status) || r.relay !== holder ? undefined : { ...r, relay: me },
    );
    if (claimed?.relay !== me || this.#running.has(record.id)) return;
    const running: Running = { controller: new AbortController(), seq: claimed.inputSeq ?? 0 };
    this.#running.set(record.id, running);
    const ctx = this.#contextOf(
      claimed,
      target,
      { logLevel: undefined, profile: target.profile },
      running,
      undefined,
    );
    const expiry = setTimeout(() => running.controller.abort(), Math.max(0, claimed.expiresAt - this.#now()));
    expiry.unref();
    this.opts.log.debug({ tenant: record.tenant, task: record.id }, "task: relaying the upstream's requests");
    void tasks
      .result(claimed.ref!, ctx)
      .catch((err: unknown) =>
        this.opts.log.debug({ err, task: record.id }, "task: the upstream's tasks/result ended"),
      )
      .then(() =>
        // Let go, so that another tasks/get may open it again if the task still waits.
        this.#store.update(record.tenant, record.id, (r) =>
          r.relay === me ? { ...r, relay: undefined, input: undefined } : undefined,
        ),
      )
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(expiry);
        this.#running.delete(record.id);
      });
  }

  /** Writes the upstream's status into Portico's record (a cancelled task stays cancelled). */
  #mirror(record: TaskRecord, state: TaskState): Promise<TaskRecord | undefined> {
    return this.#store.update(record.tenant, record.id, (r) =>
      isTerminal(r.status) || (r.status === state.status && r.statusMessage === state.statusMessage)
        ? undefined
        : { ...r, status: state.status, statusMessage: state.statusMessage },
    );
  }

  // ---- shared ----

  /** The caller's task, or the spec's -32602 for an id that is unknown, expired or someone else's. */
  async #find(caller: TaskCaller, taskId: unknown): Promise<TaskRecord> {
    if (typeof taskId !== "string" || taskId === "" || taskId.length > 64)
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", 'tasks/*: "taskId" must be a task id string');
    const record = await this.#store.read(caller.tenant, taskId);
    if (!record || record.owner !== caller.owner || record.server !== caller.server) throw notFound();
    return record;
  }

  /** Polling is rate-limited per caller (2025-11-25 tasks "Security Considerations"). */
  #admit(caller: TaskCaller): void {
    const { limiter, pollsPerMinute, keys } = this.opts;
    if (!limiter || pollsPerMinute <= 0) return;
    const refusal = limiter.take("mcp", [
      {
        scope: "client",
        perMinute: pollsPerMinute,
        key: (w) => keys.taskPolls(caller.tenant, caller.counted ?? caller.owner, w),
      },
    ]);
    if (refusal)
      throw fail(
        "PORTICO_ERR_MCP_RATE_LIMITED",
        `Too Many Requests: this caller's limit of ${refusal.perMinute} task requests per minute is reached; retry after ${refusal.retryAfterSeconds} s`,
        { retryAfterSeconds: refusal.retryAfterSeconds },
      );
  }

  #caps() {
    return { perCaller: this.opts.maxPerCaller, perTenant: this.opts.maxPerTenant };
  }

  /** notifications/tasks/status to the session that made the task (2025-11-25 "Task Status Notification"). */
  #announce(record: TaskRecord): void {
    this.opts.changed?.(record);
    this.#notify(record, "notifications/tasks/status", { ...taskState(record) });
  }

  #notify(record: TaskRecord, method: string, params: Record<string, unknown>): void {
    const sid = record.call.sessionId;
    if (sid === undefined) return;
    this.opts.notify(record.tenant, sid, method, params).catch(() => undefined);
  }

  #publish(message: BusMessage): Promise<void> {
    return this.opts.store.publish(this.opts.keys.tasksChannel(), JSON.stringify(message));
  }

  #onBus(raw: string): void {
    let message: BusMessage;
    try {
      message = JSON.parse(raw) as BusMessage;
    } catch {
      return;
    }
    if (message.k === "cancel") this.#abortLocal(message.id);
    else if (message.k === "input") this.#deliverInput(message);
    this.#wake(message.id);
  }

  #abortLocal(id: string): void {
    this.#running.get(id)?.controller.abort(new Error("task cancelled"));
  }

  #wake(id: string): void {
    for (const done of [...(this.#waiters.get(id) ?? [])]) done();
  }

  #wakeAll(): void {
    for (const id of [...this.#waiters.keys()]) this.#wake(id);
    for (const interrupt of [...this.#interrupts]) interrupt();
  }
}

/** A task's detail: a gateway-made task's question as the extension's inputRequests. */
function detailOf(
  record: TaskRecord,
  outcome: TaskOutcome | undefined,
  inputRequests: Readonly<Record<string, unknown>> | undefined,
): TaskDetail {
  const input = record.input;
  // A gateway-made task's question, or the one an upstream asked on the tasks/result stream Portico holds.
  if (!inputRequests && record.status === "input_required" && input)
    inputRequests = { [inputKey(input.seq)]: { method: input.method, params: input.params ?? {} } };
  return {
    state: taskState(record),
    ...(outcome && { outcome }),
    ...(inputRequests && { inputRequests }),
  };
}

/**
 * The URL-mode elicitations of a -32042 (`data.elicitations`) as elicitation/create params for the
 * task's client: with their `elicitationId` for 2025-11-25, without for 2026-07-28, whose URL mode
 * has none. Undefined for any other error.
 */
function urlElicitationsOf(
  err: unknown,
  clientVersion: string,
): { error: { code: number; message: string }; urls: Record<string, unknown>[] } | undefined {
  const response = toErrorResponse(null, err, "session");
  if (!("error" in response) || response.error.code !== RpcCode.UrlElicitationRequired) return undefined;
  const { error } = response;
  const data = error.data as { elicitations?: unknown } | undefined;
  const listed = Array.isArray(data?.elicitations) ? (data.elicitations as unknown[]) : [];
  const stateless = isStatelessVersion(clientVersion);
  const urls: Record<string, unknown>[] = [];
  // A bounded number: an upstream's error sets how many times the client is asked.
  for (const e of listed.slice(0, 10)) {
    const { url, message, elicitationId } = (e ?? {}) as Record<string, unknown>;
    if (typeof url !== "string") continue;
    urls.push({
      mode: "url",
      ...(!stateless && typeof elicitationId === "string" && { elicitationId }),
      url,
      message: typeof message === "string" ? message : "",
    });
  }
  return { error, urls };
}

/** The 2026-07-28 extension's inputRequests key of a gateway-made task's question. */
function inputKey(seq: number): string {
  return `q${seq}`;
}

/** The status and message a task ends with, from its outcome (a tool error is `failed`). */
function endOf(outcome: TaskOutcome): Pick<TaskRecord, "status" | "statusMessage"> {
  if ("error" in outcome) return { status: "failed", statusMessage: excerpt(outcome.error.message, 200) };
  if (outcome.result.isError !== true) return { status: "completed", statusMessage: undefined };
  const content = outcome.result.content;
  const first = Array.isArray(content) ? (content[0] as { text?: unknown } | undefined) : undefined;
  const text = typeof first?.text === "string" ? first.text : "the tool reported an error";
  return { status: "failed", statusMessage: `Tool execution failed: ${excerpt(text, 200)}` };
}

/** What tasks/result answers for an ended task: the call's result (with its task), or its error. */
function answerOf(record: TaskRecord): Record<string, unknown> {
  const outcome = record.outcome;
  if (!outcome) {
    // Cancelled before the call ended: there is no result to give.
    throw fail("PORTICO_ERR_MCP_INVALID_REQUEST", "The task was cancelled before its call ended", {
      [RELATED_TASK]: { taskId: record.id },
    });
  }
  if ("error" in outcome) {
    const { code, message, data } = outcome.error;
    throw Object.assign(new Error(message), { code, data });
  }
  return withRelatedTask(outcome.result, record.id);
}

/** tasks/result's answer carries its task in `_meta` (2025-11-25 "Related Task Metadata"). */
function withRelatedTask(result: Record<string, unknown>, taskId: string): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  return { ...result, _meta: { ...meta, [RELATED_TASK]: { taskId } } };
}

/** tasks/result on a replica shutting down: to be sent again, to another replica. */
function interrupted(): Error {
  return fail(
    "PORTICO_ERR_MCP_REQUEST_INTERRUPTED",
    "tasks/result interrupted: this gateway replica is shutting down; send tasks/result again (the task goes on)",
    { interrupted: true, completed: "unknown" },
  );
}

/**
 * ctx, its requests to the client stamped with the task they belong to (2025-11-25 "Associating
 * Task-Related Messages"): the upstream's own stamp names its id, which the provider strips.
 */
function relatingTo(ctx: CallContext, taskId: string): CallContext {
  const request: CallContext["request"] = (method, params) =>
    ctx.request(method, withRelatedTask(params ?? {}, taskId));
  return new Proxy(ctx, {
    get(target, key) {
      if (key === "request") return request;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A thrown error as the JSON-RPC error the call would have answered. */
function errorOf(err: unknown, log: FastifyBaseLogger): { code: number; message: string; data?: unknown } {
  const response = toErrorResponse(null, err, "session");
  if (!("error" in response)) return { code: RpcCode.InternalError, message: "Internal error" };
  if (response.error.message === "Internal error") log.error({ err }, "task call failed");
  return response.error;
}

function interruptedError(): { code: number; message: string; data: unknown } {
  const err = fail(
    "PORTICO_ERR_MCP_REQUEST_INTERRUPTED",
    "Task interrupted: the gateway replica running it stopped before it finished; the work may or may not have completed, so check before starting it again",
    { interrupted: true, completed: "unknown" },
  );
  return { code: err.rpc, message: err.message, data: err.data };
}

function tooLarge(size: number, max: number): { code: number; message: string; data: unknown } {
  const err = fail(
    "PORTICO_ERR_MCP_TASK_RESULT_TOO_LARGE",
    `Task result too large: the tool answered ${size} bytes, more than the ${max} a task keeps (PORTICO_TASK_MAX_RESULT_BYTES)`,
    { size, max },
  );
  return { code: err.rpc, message: err.message, data: err.data };
}

function notFound() {
  return fail("PORTICO_ERR_MCP_TASK_NOT_FOUND", "Failed to retrieve task: Task not found");
}

function terminal(record: TaskRecord) {
  return fail(
    "PORTICO_ERR_MCP_TASK_TERMINAL",
    `Cannot cancel task: already in terminal status '${record.status}'`,
  );
}

function unavailable() {
  return fail("PORTICO_ERR_PROVIDER_UNAVAILABLE", "The provider running this task is no longer available");
}
