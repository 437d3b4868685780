// Tasks passed through to a 2026-07-28 upstream declaring the tasks extension
// (`io.modelcontextprotocol/tasks`; docs/upstream-mcp.md "Tasks passed through"), against a
// hand-written upstream (node:http) that follows the extension's schema: the extension is declared
// upstream only by tasks.start, the upstream alone decides whether a call becomes a task, input it
// needs is asked through tasks/get's inputRequests and answered with tasks/update, and a second
// provider (another replica) polls what the first started.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { after, before, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext, TaskState, UpstreamTaskRef } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { freePort } from "../support/redis.js";

const EXT = "io.modelcontextprotocol/tasks";

interface FixtureTask {
  taskId: string;
  status: string;
  createdAt: string;
  lastUpdatedAt: string;
  ask: boolean;
  answer?: unknown;
  polls: number;
}

/**
 * The upstream: `slow` becomes a task for a client declaring the extension (else it answers at
 * once); `quick` never does. A task is working for two polls, then (with `ask`) input_required
 * until tasks/update answers, then completed with a result naming the answer.
 */
async function startTasksUpstream() {
  const tasks = new Map<string, FixtureTask>();
  /** Open subscriptions/listen streams, by the task id they named. */
  const listeners = new Map<string, Set<ServerResponse>>();
  const announce = (t: FixtureTask) => {
    const notification = { jsonrpc: "2.0", method: "notifications/tasks", params: detailed(t) };
    for (const res of listeners.get(t.taskId) ?? []) res.write(`data: ${JSON.stringify(notification)}\n\n`);
  };
  const seen: Array<{ method: string; declared: boolean }> = [];
  let next = 0;
  const now = () => new Date().toISOString();
  const detailed = (t: FixtureTask) => {
    const base = {
      taskId: t.taskId,
      status: t.status,
      createdAt: t.createdAt,
      lastUpdatedAt: t.lastUpdatedAt,
      ttlMs: 60_000,
      pollIntervalMs: 20,
    };
    if (t.status === "input_required")
      return {
        ...base,
        inputRequests: {
          q1: {
            method: "elicitation/create",
            params: { mode: "form", message: "Which?", requestedSchema: { type: "object", properties: {} } },
          },
        },
      };
    if (t.status === "completed")
      return {
        ...base,
        result: { content: [{ type: "text", text: `done with ${JSON.stringify(t.answer ?? null)}` }] },
      };
    return base;
  };
  const reply = (res: ServerResponse, id: unknown, result: object) =>
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", id, result }));
  const error = (res: ServerResponse, id: unknown, code: number, message: string) =>
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const msg = JSON.parse(body) as { id: unknown; method: string; params: Record<string, any> };
    const declared =
      msg.params?._meta?.["io.modelcontextprotocol/clientCapabilities"]?.extensions?.[EXT] !== undefined;
    seen.push({ method: msg.method, declared });
    const p = msg.params ?? {};
    switch (msg.method) {
      case "subscriptions/listen": {
        const ids: string[] = p.notifications?.taskIds ?? [];
        res.writeHead(200, { "content-type": "text/event-stream" });
        const ack = {
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { notifications: { taskIds: ids } },
        };
        res.write(`data: ${JSON.stringify(ack)}\n\n`);
        for (const id of ids) {
          if (!listeners.has(id)) listeners.set(id, new Set());
          listeners.get(id)!.add(res);
        }
        res.on("close", () => ids.forEach((id) => listeners.get(id)?.delete(res)));
        return;
      }
      case "initialize":
        return error(res, msg.id, -32601, "Method not found");
      case "server/discover":
        return reply(res, msg.id, {
          resultType: "complete",
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {}, extensions: { [EXT]: {} } },
          serverInfo: { name: "tasks-upstream", version: "1.0.0" },
        });
      case "tools/list":
        return reply(res, msg.id, {
          resultType: "complete",
          tools: [
            { name: "slow", inputSchema: { type: "object" } },
            { name: "quick", inputSchema: { type: "object" } },
          ],
        });
      case "tools/call": {
        // A hostile upstream: a task id of kilobytes, or a task of no known status.
        if (p.name === "liar")
          return reply(res, msg.id, {
            resultType: "task",
            taskId: p.arguments?.status ? "t" : "x".repeat(2000),
            status: p.arguments?.status ?? "working",
            createdAt: now(),
            lastUpdatedAt: now(),
            ttlMs: null,
          });
        if (p.name !== "slow" || !declared)
          return reply(res, msg.id, { resultType: "complete", content: [{ type: "text", text: "at once" }] });
        const t: FixtureTask = {
          taskId: `up-${++next}`,
          status: "working",
          createdAt: now(),
          lastUpdatedAt: now(),
          ask: p.arguments?.ask === true,
          polls: 0,
        };
        tasks.set(t.taskId, t);
        const { inputRequests: _, ...created } = detailed(t) as Record<string, unknown>;
        return reply(res, msg.id, { ...created, resultType: "task" });
      }
      case "tasks/get": {
        const t = tasks.get(p.taskId);
        if (!t) return error(res, msg.id, -32602, "Failed to retrieve task: Task not found");
        if (t.status === "working" && ++t.polls > 2) {
          t.status = t.ask && t.answer === undefined ? "input_required" : "completed";
          t.lastUpdatedAt = now();
          announce(t);
        }
        return reply(res, msg.id, { ...detailed(t), resultType: "complete" });
      }
      case "tasks/update": {
        const t = tasks.get(p.taskId);
        if (!t) return error(res, msg.id, -32602, "Failed to retrieve task: Task not found");
        if (t.status === "input_required" && p.inputResponses?.q1) {
          t.answer = p.inputResponses.q1;
          t.status = "working";
          t.polls = 0;
          announce(t);
        }
        return reply(res, msg.id, { resultType: "complete" });
      }
      case "tasks/cancel": {
        const t = tasks.get(p.taskId);
        if (!t) return error(res, msg.id, -32602, "Failed to retrieve task: Task not found");
        if (t.status === "working" || t.status === "input_required") t.status = "cancelled";
        announce(t);
        return reply(res, msg.id, { resultType: "complete" });
      }
      default:
        return error(res, msg.id, -32601, "Method not found");
    }
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => handle(req, res, body));
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    listening: (taskId: string) => listeners.get(taskId)?.size ?? 0,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let upstream: Awaited<ReturnType<typeof startTasksUpstream>>;
const store = new MemoryStore();
let a: McpProvider;
let b: McpProvider;

async function startProvider(): Promise<McpProvider> {
  const provider = new McpProvider(
    { id: "tasky", kind: "mcp", url: upstream.url },
    {
      tenantId: "acme",
      store,
      keys: createKeys("t"),
      log: Fastify({ logger: false }).log,
      outlet: { notify: async () => undefined, request: async () => ({}) },
      timeoutMs: 5000,
      sessionTtlSeconds: 60,
      fetch: globalThis.fetch,
      dispatcher: new Agent(),
      clientIdleMs: 60_000,
      sweepIntervalMs: 60_000,
    },
  );
  await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
  return provider;
}

function context(
  ask: CallContext["request"] = () => Promise.reject(new Error("nothing to ask")),
  protocolVersion = "2026-07-28",
): CallContext {
  return {
    tenantId: "acme",
    sessionId: undefined,
    protocolVersion,
    clientCapabilities: {
      elicitation: { form: {} },
      extensions: { [EXT]: {} },
    },
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    request: ask,
  };
}

async function poll(get: () => Promise<TaskState>, stop: (t: TaskState) => boolean): Promise<TaskState[]> {
  const seen: TaskState[] = [];
  for (let i = 0; i < 100; i++) {
    const t = await get();
    seen.push(t);
    if (stop(t)) return seen;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("no end");
}

before(async () => {
  upstream = await startTasksUpstream();
  a = await startProvider();
  b = await startProvider();
});
after(async () => {
  await a.close();
  await b.close();
  await upstream.close();
  await store.close();
});

it("support: any tool of an upstream declaring the extension may become a task (it decides)", () => {
  assert.equal(a.tasks.support("slow", context()), "optional");
  assert.equal(a.tasks.support("quick", context()), "optional");
  assert.equal(a.tasks.support("missing", context()), undefined);
});

it("a plain call never declares the extension upstream: nobody would poll its task", async () => {
  const before = upstream.seen.length;
  const result = await a.callTool("slow", {}, context());
  assert.deepEqual(result.content, [{ type: "text", text: "at once" }]);
  assert.deepEqual(upstream.seen.slice(before), [{ method: "tools/call", declared: false }]);
});

it("start: a task when the upstream makes one, the result when it answers at once", async () => {
  const quick = await a.tasks.start("quick", {}, {}, context());
  assert.equal(quick.task, undefined);
  assert.deepEqual(quick.result?.content, [{ type: "text", text: "at once" }]);

  const slow = await a.tasks.start("slow", {}, { ttl: 1000 }, context());
  assert.ok(slow.task && slow.ref);
  assert.equal(slow.task.status, "working");
  assert.equal(slow.task.ttl, 60_000, "ttlMs, in Portico's terms");
  assert.equal(slow.task.pollInterval, 20);
  assert.deepEqual(slow.ref, { era: "stateless", taskId: slow.task.taskId });
  assert.ok(upstream.seen.filter((s) => s.method.startsWith("tasks/")).every((s) => s.declared));
});

it("another replica polls and fetches; input_required carries inputRequests, answered by update", async () => {
  const started = await a.tasks.start("slow", { ask: true }, {}, context());
  const ref = JSON.parse(JSON.stringify(started.ref)) as UpstreamTaskRef;
  const statuses = await poll(
    () => b.tasks.get(ref, context()),
    (t) => t.status !== "working",
  );
  const asking = statuses.at(-1)!;
  assert.equal(asking.status, "input_required");
  assert.deepEqual(Object.keys(asking.inputRequests ?? {}), ["q1"]);
  await b.tasks.update!(ref, { q1: { action: "accept", content: {} } }, context());
  const done = await poll(
    () => a.tasks.get(ref, context()),
    (t) => t.status !== "working",
  );
  assert.equal(done.at(-1)!.status, "completed");
  assert.deepEqual(await b.tasks.result(ref, context()), {
    content: [{ type: "text", text: 'done with {"action":"accept","content":{}}' }],
  });
});

it("result() for a session-era client asks the task's questions itself and answers them upstream", async () => {
  const asked: string[] = [];
  const ctx = context(async (method) => {
    asked.push(method);
    return { action: "accept", content: { pick: "b" } };
  }, "2025-11-25");
  const started = await a.tasks.start("slow", { ask: true }, {}, ctx);
  const result = await b.tasks.result(started.ref!, ctx);
  assert.deepEqual(asked, ["elicitation/create"]);
  assert.deepEqual(result.content, [
    { type: "text", text: 'done with {"action":"accept","content":{"pick":"b"}}' },
  ]);
});

it("cancel: the task as it stands after tasks/cancel; unknown and malformed refs are -32602", async () => {
  const started = await a.tasks.start("slow", {}, {}, context());
  const cancelled = await b.tasks.cancel(started.ref!, context());
  assert.equal(cancelled.status, "cancelled");
  await assert.rejects(a.tasks.result(started.ref!, context()), /cancelled/);
  for (const bad of [
    { era: "stateless", taskId: "up-999" },
    { era: "stateless" },
    { era: "other", taskId: "x" },
  ])
    await assert.rejects(a.tasks.get(bad, context()), (err: unknown) => {
      assert.equal((err as McpError).code, -32602);
      return true;
    });
});

it("watch: notifications/tasks on a listen stream naming the task, on any replica, closed once it ends", async () => {
  const started = await a.tasks.start("slow", { ask: true }, {}, context());
  const ref = started.ref!;
  const heard: TaskState[] = [];
  const stop = b.tasks.watch(ref, (t) => heard.push(t));
  const taskId = started.task!.taskId;
  for (let i = 0; i < 100 && upstream.listening(taskId) === 0; i++)
    await new Promise((r) => setTimeout(r, 10));
  assert.equal(upstream.listening(taskId), 1);
  await poll(
    () => a.tasks.get(ref, context()),
    (t) => t.status === "input_required",
  );
  await a.tasks.update!(ref, { q1: { action: "decline" } }, context());
  await poll(
    () => a.tasks.get(ref, context()),
    (t) => t.status === "completed",
  );
  for (let i = 0; i < 100 && heard.at(-1)?.status !== "completed"; i++)
    await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(
    heard.map((t) => t.status),
    ["input_required", "working", "completed"],
  );
  assert.deepEqual(Object.keys(heard[0]!.inputRequests ?? {}), ["q1"]);
  for (let i = 0; i < 100 && upstream.listening(taskId) > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(upstream.listening(taskId), 0, "the stream closed at the terminal status");
  stop();
});

it("a hostile upstream's task (an id of kilobytes, an unknown status) is no task: the start fails in Portico's words", async () => {
  for (const args of [{}, { status: "paused" }])
    await assert.rejects(a.tasks.start("liar", args, {}, context()), (err: unknown) => {
      assert.match((err as Error).message, /Provider 'tasky' .*the upstream's task is malformed/);
      return true;
    });
});
