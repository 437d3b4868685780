// The core's side of Provider.tasks (src/providers/types.ts UpstreamTasks, docs/upstream-mcp.md#tasks):
// a tool whose provider says it runs tasks itself is started upstream, the returned ref kept in
// Portico's record, and tasks/get, tasks/result and tasks/cancel asked of any replica go to the
// upstream through that ref (the provider found again by the resolver); the tool is never called
// plainly. Two Tasks over one store stand for two replicas; the upstream is an in-memory stand-in
// until the `mcp` providers implement Provider.tasks (their tests then run against real upstreams).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import type {
  CallContext,
  Provider,
  TaskState,
  UpstreamTaskRef,
  UpstreamTasks,
} from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { Tasks, type TaskTarget } from "../../src/tasks/tasks.js";

/** An upstream that runs tasks: each stays working until `finish` or a cancel. */
class Upstream implements UpstreamTasks {
  readonly states = new Map<string, TaskState>();
  readonly asked: string[] = [];
  #next = 0;
  #waiters = new Map<string, () => void>();

  support(name: string) {
    return name === "long" ? ("optional" as const) : undefined;
  }
  async start(name: string, args: Record<string, unknown>, task: { ttl?: number }) {
    const id = `up-${++this.#next}`;
    const now = new Date().toISOString();
    const state: TaskState = {
      taskId: id,
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttl: task.ttl ?? null,
    };
    this.states.set(id, state);
    this.asked.push(`start ${name} ${JSON.stringify(args)}`);
    return { task: state, ref: { upstreamTaskId: id } };
  }
  async get(ref: UpstreamTaskRef) {
    this.asked.push(`get ${String(ref.upstreamTaskId)}`);
    return this.states.get(String(ref.upstreamTaskId))!;
  }
  async result(ref: UpstreamTaskRef) {
    const id = String(ref.upstreamTaskId);
    this.asked.push(`result ${id}`);
    if (this.states.get(id)!.status === "working") await new Promise<void>((r) => this.#waiters.set(id, r));
    return { content: [{ type: "text", text: `result of ${id}` }] };
  }
  async cancel(ref: UpstreamTaskRef) {
    const id = String(ref.upstreamTaskId);
    this.asked.push(`cancel ${id}`);
    return this.#set(id, "cancelled");
  }
  watch() {
    return () => undefined;
  }
  finish(id: string) {
    this.#set(id, "completed");
    this.#waiters.get(id)?.();
  }
  #set(id: string, status: TaskState["status"]) {
    const state = { ...this.states.get(id)!, status };
    this.states.set(id, state);
    return state;
  }
}

const upstream = new Upstream();
const provider = {
  id: "up",
  tasks: upstream,
  callTool: () => Promise.reject(new Error("a task-capable tool is never called plainly")),
} as unknown as Provider;
const target: TaskTarget = { provider, name: "long" };

const quiet = {
  debug: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as FastifyBaseLogger;
const store = new MemoryStore();
const keys = createKeys(`t${Date.now()}`);
const replica = (id: string): Tasks =>
  new Tasks({
    store,
    keys,
    liveness: {
      id,
      isAlive: async () => true,
      watch: () => () => undefined,
      onGone: () => () => undefined,
    },
    log: quiet,
    ttlDefaultMs: 60_000,
    ttlMaxMs: 600_000,
    pollIntervalMs: 500,
    maxResultBytes: 10_000,
    maxPerCaller: 10,
    maxPerTenant: 100,
    pollsPerMinute: 0,
    rerunIdempotent: false,
    notify: async () => undefined,
    resolve: async (record) => (record.call.provider === "up" ? target : undefined),
  });

const ctx = (): CallContext => ({
  tenantId: "acme",
  sessionId: "s1",
  protocolVersion: "2025-11-25",
  clientCapabilities: { tasks: {} },
  logLevel: undefined,
  signal: new AbortController().signal,
  progress: () => undefined,
  log: () => undefined,
  request: () => Promise.reject(new Error("no client here")),
});

const caller = { tenant: "acme", server: undefined, owner: "s:s1" };

describe("a tool whose upstream runs tasks", () => {
  it("is started upstream; get, result and cancel on another replica go through the kept ref", async () => {
    const [one, two] = [replica("r1"), replica("r2")];
    await Promise.all([one.listen(), two.listen()]);
    const request = {
      tool: "up__long",
      target,
      args: { n: 1 },
      idempotent: false,
      ttlMs: 5000,
      progressToken: undefined,
    };
    const task = await one.start(caller, request, ctx());
    assert.equal(task.status, "working");
    assert.notEqual(task.taskId, "up-1", "Portico's own id, not the upstream's");
    assert.deepEqual(upstream.asked, ['start long {"n":1}']);

    assert.equal((await two.get(caller, task.taskId, ctx())).status, "working");
    assert.equal(upstream.asked.at(-1), "get up-1");
    const result = two.result(caller, task.taskId, ctx());
    setTimeout(() => upstream.finish("up-1"), 50);
    assert.deepEqual(await result, {
      content: [{ type: "text", text: "result of up-1" }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } },
    });
    assert.equal((await one.get(caller, task.taskId, ctx())).status, "completed");
    // Ended, its result is still the upstream's to give, on any replica.
    const again = await one.result(caller, task.taskId, ctx());
    assert.deepEqual(again.content, [{ type: "text", text: "result of up-1" }]);

    const second = await two.start(caller, request, ctx());
    const cancelled = await one.cancel(caller, second.taskId, ctx());
    assert.equal(cancelled.status, "cancelled");
    assert.equal(upstream.asked.at(-1), "cancel up-2");
    await assert.rejects(one.cancel(caller, second.taskId, ctx()), /already in terminal status 'cancelled'/);
    await assert.rejects(two.get({ ...caller, owner: "s:other" }, second.taskId, ctx()), /Task not found/);
    await Promise.all([one.close(), two.close()]);
  });
});
