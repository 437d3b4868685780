// An upstream's own tasks, passed through (2025-11-25 basic/utilities/tasks; docs/upstream-mcp.md
// "Tasks passed through"): task-augmented tools/call, tasks/get, tasks/result, tasks/cancel and
// notifications/tasks/status on a session-era upstream. An upstream keeps its tasks per session,
// so they live on a task session of their own per provider, capability profile and replica, which
// any replica reaches again from the task's ref (its upstream session id).
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { randomInt } from "node:crypto";
import { RpcCode } from "../../../protocol/codes.js";
import { fail } from "../../../protocol/errors.js";
import { isRecord } from "../../../protocol/jsonrpc.js";
import type { CapabilityProfile } from "../../../protocol/profile.js";
import { Deadline } from "../../deadline.js";
import type { CallContext, TaskState, UpstreamTaskRef } from "../../types.js";
import type { UpstreamHttp } from "../exchange.js";
import { MAX_PROFILES, profileFor } from "../profiles.js";
import { UpstreamProtocolError } from "../upstream-errors.js";
import { taskOf } from "../task-state.js";
import { NotRouted, SessionUpstream, type CallHooks, type SessionHandlers } from "./client.js";
import { RELATED_TASK } from "./client-tasks.js";
import { isSessionGone, MAX_UPSTREAM_SESSION_ID } from "./session-ids.js";

/** A session-era upstream task as its ref names it: the upstream's id and the session it lives in. */
type SessionTaskRef = {
  readonly era: "session";
  readonly taskId: string;
  readonly sessionId: string;
  readonly protocolVersion: string;
};

/** Upstream sessions resumed from refs that this replica keeps (their request ids keep counting). */
const MAX_RESUMED = 256;

/** What the task part needs of the session-era part around it. */
export interface SessionTasksDeps {
  readonly providerId: string;
  readonly timeoutMs: number;
  /** Relays a request the upstream makes during a task call to the call's client (ClientTasks). */
  relay(
    ctx: CallContext | undefined,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>>;
}

export class SessionTasks {
  /** The task session of each profile on this replica, oldest first. */
  readonly #sessions = new Map<string, Promise<SessionUpstream>>();
  /** Upstream sessions by id: the task sessions opened here, and those resumed from refs. */
  readonly #known = new Map<string, SessionUpstream>();
  /** Who watches a task's status here, by "<upstream session id> <upstream task id>". */
  readonly #watchers = new Map<string, Set<(task: TaskState) => void>>();

  constructor(
    private readonly http: UpstreamHttp,
    private readonly base: Record<string, string>,
    private readonly deps: SessionTasksDeps,
  ) {}

  /** Calls the tool as a task on the profile's task session (a new one once, if the upstream forgot it). */
  async start(
    name: string,
    args: Record<string, unknown>,
    task: { readonly ttl?: number },
    ctx: CallContext,
  ): Promise<{ task: TaskState; ref: UpstreamTaskRef }> {
    const profile = profileFor(ctx);
    const params = { name, arguments: args, task: task.ttl === undefined ? {} : { ttl: task.ttl } };
    for (let attempt = 0; ; attempt++) {
      const session = await this.#session(profile);
      const deadline = new Deadline(this.deps.timeoutMs, ctx.cancellation ?? ctx.signal);
      let started = false;
      const hooks: CallHooks = {
        request: (m, p) => {
          started = true;
          return deadline.pausedDuring(this.deps.relay(ctx, m, p));
        },
      };
      try {
        const result = await session.request("tools/call", params, deadline, hooks);
        const created = taskOf(result.task, "session");
        if (!created)
          throw new UpstreamProtocolError(-1, "the upstream answered a task-augmented call without a task");
        const record = session.record ?? { sessionId: "", protocolVersion: SESSION_VERSION_UNKNOWN };
        const ref: SessionTaskRef = {
          era: "session",
          taskId: created.taskId,
          sessionId: record.sessionId,
          protocolVersion: record.protocolVersion,
        };
        return { task: created, ref };
      } catch (err) {
        if (deadline.timedOut)
          throw fail("PORTICO_ERR_PROVIDER_TIMEOUT", deadline.message(this.deps.providerId));
        if (attempt === 0 && !started && isSessionGone(err)) {
          await this.#forget(profile, session);
          continue;
        }
        throw err;
      } finally {
        deadline.dispose();
      }
    }
  }

  async get(ref: UpstreamTaskRef, ctx: CallContext): Promise<TaskState> {
    const r = refOf(ref);
    const signal = new Deadline(this.deps.timeoutMs, ctx.cancellation ?? ctx.signal);
    try {
      return stateOf(await this.#on(r).request("tasks/get", { taskId: r.taskId }, signal));
    } catch (err) {
      throw gone(err);
    } finally {
      signal.dispose();
    }
  }

  /**
   * Waits for the task's result (tasks/result blocks until the task ends: only the client's
   * cancellation ends it early), relaying what the upstream asks meanwhile (its input_required
   * requests) to the client. The upstream's related-task `_meta` is left out of both: its id is the
   * upstream's, and the caller stamps its own (basic/utilities/tasks "Associating Task-Related Messages").
   */
  async result(ref: UpstreamTaskRef, ctx: CallContext): Promise<Record<string, unknown>> {
    const r = refOf(ref);
    const hooks: CallHooks = { request: (m, p) => this.deps.relay(ctx, m, withoutRelatedTask(p)) };
    try {
      const result = await this.#on(r).request("tasks/result", { taskId: r.taskId }, ctx.signal, hooks);
      return withoutRelatedTask(result)!;
    } catch (err) {
      throw gone(err);
    }
  }

  async cancel(ref: UpstreamTaskRef, ctx: CallContext): Promise<TaskState> {
    const r = refOf(ref);
    const signal = new Deadline(this.deps.timeoutMs, ctx.cancellation ?? ctx.signal);
    try {
      return stateOf(await this.#on(r).request("tasks/cancel", { taskId: r.taskId }, signal));
    } catch (err) {
      throw gone(err);
    } finally {
      signal.dispose();
    }
  }

  /**
   * Tells `onStatus` the statuses the upstream announces for the task: heard on the GET stream of
   * its task session, which the replica that opened the session holds (an upstream allows one).
   */
  watch(ref: UpstreamTaskRef, onStatus: (task: TaskState) => void): () => void {
    const r = refOf(ref);
    const key = `${r.sessionId} ${r.taskId}`;
    let set = this.#watchers.get(key);
    if (!set) this.#watchers.set(key, (set = new Set()));
    const listener = (task: TaskState) => onStatus(task);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#watchers.get(key) === set) this.#watchers.delete(key);
    };
  }

  /** Lets go of the task sessions' GET streams here (the upstream sessions and their tasks stay). */
  async close(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(all.map(async (s) => (await s).close()));
  }

  /** The task session of `profile` here, opened on first use (initialized with its capabilities). */
  #session(profile: CapabilityProfile): Promise<SessionUpstream> {
    let pending = this.#sessions.get(profile.key);
    if (pending) return pending;
    pending = this.#open(profile);
    this.#sessions.set(profile.key, pending);
    pending.catch(() => this.#sessions.get(profile.key) === pending && this.#sessions.delete(profile.key));
    // Bounded as catalogs are: the oldest profile's session is let go (not ended: its tasks stay).
    if (this.#sessions.size > MAX_PROFILES) {
      const [key, oldest] = this.#sessions.entries().next().value!;
      this.#sessions.delete(key);
      void oldest.then((s) => s.close()).catch(() => undefined);
    }
    return pending;
  }

  async #open(profile: CapabilityProfile): Promise<SessionUpstream> {
    let sessionId = "";
    const handlers = this.#handlers(() => sessionId);
    const signal = AbortSignal.timeout(Math.min(this.deps.timeoutMs, 10_000));
    const session = await SessionUpstream.initialize(
      this.http,
      this.base,
      profile.capabilities,
      handlers,
      signal,
    );
    sessionId = session.record?.sessionId ?? "";
    this.#known.set(sessionId, session);
    // Status notifications and requests about the client's own tasks come on the GET stream.
    session.openStream();
    return session;
  }

  /** The upstream forgot the task session: the next task opens another (its tasks are gone with it). */
  async #forget(profile: CapabilityProfile, session: SessionUpstream): Promise<void> {
    const pending = this.#sessions.get(profile.key);
    if ((await pending?.catch(() => undefined)) !== session) return;
    if (this.#sessions.get(profile.key) === pending) this.#sessions.delete(profile.key);
    this.#known.delete(session.record?.sessionId ?? "");
    session.close();
  }

  /**
   * The upstream session a ref names, as this replica reaches it: the task session opened here, or
   * resumed (no GET stream of its own) with ids from a random start, since other replicas may send
   * requests on it at the same time. Remembered, at most MAX_RESUMED, so ids keep counting up.
   */
  #on(ref: SessionTaskRef): SessionUpstream {
    const known = this.#known.get(ref.sessionId);
    if (known) return known;
    const record = { sessionId: ref.sessionId, protocolVersion: ref.protocolVersion };
    const handlers = this.#handlers(() => ref.sessionId);
    const session = SessionUpstream.resume(this.http, this.base, record, handlers, randomInt(1e6, 2 ** 31));
    this.#known.set(ref.sessionId, session);
    if (this.#known.size > MAX_RESUMED) this.#known.delete(this.#known.keys().next().value!);
    return session;
  }

  /** What a task session gets outside a call: status notifications, and polls of client tasks. */
  #handlers(sessionId: () => string): SessionHandlers {
    return {
      notification: (method, params) => {
        if (method !== "notifications/tasks/status") return;
        const task = taskOf(params, "session");
        if (!task) return;
        for (const listener of this.#watchers.get(`${sessionId()} ${task.taskId}`) ?? []) listener(task);
      },
      request: (method, params) => this.deps.relay(undefined, method, params),
    };
  }
}

/** A ref's protocol version when the upstream gave no session id (never sent: no session header then). */
const SESSION_VERSION_UNKNOWN = "2025-11-25";

/** The ref as Portico wrote it; anything else names no task (the record may come from another version). */
function refOf(ref: UpstreamTaskRef): SessionTaskRef {
  const { era, taskId, sessionId, protocolVersion } = ref;
  if (
    era === "session" &&
    typeof taskId === "string" &&
    taskId.length > 0 &&
    typeof sessionId === "string" &&
    sessionId.length <= MAX_UPSTREAM_SESSION_ID &&
    /^[\x21-\x7e]*$/.test(sessionId) &&
    typeof protocolVersion === "string"
  )
    return { era, taskId, sessionId, protocolVersion };
  throw new McpError(RpcCode.InvalidParams, "Failed to retrieve task: Task not found");
}

function stateOf(result: Record<string, unknown>): TaskState {
  const task = taskOf(result, "session");
  if (!task) throw new UpstreamProtocolError(-1, "the upstream's answer is not a task");
  return task;
}

/** A failure that says the task's upstream session is gone: the task is gone with it. */
function gone(err: unknown): unknown {
  if (err instanceof NotRouted || !isSessionGone(err)) return err;
  return new McpError(RpcCode.InvalidParams, "Failed to retrieve task: Task not found");
}

/** `params` without the related-task key of its `_meta` (and without `_meta` when that was all). */
function withoutRelatedTask(
  params: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  const meta = params?._meta;
  if (!isRecord(meta) || !(RELATED_TASK in meta)) return params;
  const { [RELATED_TASK]: _, ...rest } = meta;
  const { _meta: __, ...others } = params!;
  return Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others;
}
