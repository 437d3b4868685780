// Tasks passed through to a session-era upstream (docs/upstream-mcp.md "Tasks passed through";
// 2025-11-25 basic/utilities/tasks), against server-everything's task tools: driven through the
// `mcp` provider's `tasks` from a context that answers as a client would, compared with the
// official SDK v1 client talking to server-everything directly; a second provider of the same
// config (another replica, on the same store) polls and fetches what the first started; a
// client's own tasks (task-augmented sampling) are polled by the upstream under ids Portico makes.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext, TaskState, UpstreamTaskRef } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { startEverything, type EverythingServer } from "../support/everything.js";

const RESEARCH = "simulate-research-query";
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
/** A client that can elicit and sample, and runs both as tasks. */
const CAPS: ClientCapabilities = {
  elicitation: { form: {} },
  sampling: {},
  tasks: { cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
};

let everything: EverythingServer;
const store = new MemoryStore();
const keys = createKeys("t");
/** Two replicas: providers of the same config on one store. */
let replicaA: McpProvider;
let replicaB: McpProvider;
const outletAsked: Array<{ sid: string; method: string; params: unknown }> = [];

async function startProvider(): Promise<McpProvider> {
  const provider = new McpProvider(
    { id: "everything", kind: "mcp", url: everything.url },
    {
      tenantId: "acme",
      store,
      keys,
      log: Fastify({ logger: false }).log,
      outlet: {
        notify: async () => undefined,
        request: async (_tenant, sid, method, params) => {
          outletAsked.push({ sid, method, params });
          throw new McpError(-32601, "Method not found");
        },
      },
      timeoutMs: 10_000,
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

type Ask = (method: string, params: Record<string, unknown> | undefined) => Promise<Record<string, unknown>>;

function context(
  sessionId: string,
  ask: Ask = () => Promise.reject(new Error("nothing to ask")),
  clientCapabilities: ClientCapabilities = CAPS,
): CallContext {
  return {
    tenantId: "acme",
    sessionId,
    protocolVersion: "2025-11-25",
    clientCapabilities,
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    request: ask,
  };
}

/** The SDK v1 client on server-everything directly, declaring the same capabilities. */
async function directClient(onElicit?: (params: Record<string, unknown>) => Record<string, unknown>) {
  const client = new Client({ name: "direct", version: "1.0.0" }, { capabilities: CAPS });
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, (request) => onElicit(request.params) as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
  return client;
}

/** Starts a task that must be one (a session-era upstream always makes the task it was asked for). */
async function startTask(
  provider: McpProvider,
  ...args: Parameters<McpProvider["tasks"]["start"]>
): Promise<{ task: TaskState; ref: UpstreamTaskRef }> {
  const started = await provider.tasks.start(...args);
  assert.ok(started.task && started.ref, "a task, not a result");
  return { task: started.task, ref: started.ref };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until the task is terminal (or `stopAt`), collecting each status once in order. */
async function poll(
  get: () => Promise<{ status: string }>,
  stopAt: ReadonlySet<string> = TERMINAL,
): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 200; i++) {
    const { status } = await get();
    if (seen.at(-1) !== status) seen.push(status);
    if (stopAt.has(status)) return seen;
    await wait(100);
  }
  throw new Error(`no end after 20 s: ${seen.join(" → ")}`);
}

/** What a result says, without the _meta that names a task (its id differs by path). */
function content(result: Record<string, unknown>) {
  const { _meta, ...rest } = result;
  void _meta;
  return rest;
}

before(async () => {
  everything = await startEverything();
  replicaA = await startProvider();
  replicaB = await startProvider();
});
after(async () => {
  await replicaA.close();
  await replicaB.close();
  await everything.stop();
  await store.close();
});

describe("support", () => {
  it("follows the upstream's tasks capability and each tool's execution.taskSupport", async () => {
    const ctx = context("s-support");
    await replicaA.prepare(ctx.profile ?? (await import("../../src/protocol/profile.js")).profileOf(CAPS));
    assert.equal(replicaA.tasks.support(RESEARCH, ctx), "required");
    assert.equal(replicaA.tasks.support("echo", ctx), undefined, "a tool without execution.taskSupport");
    assert.equal(replicaA.tasks.support("no-such-tool", ctx), undefined);
  });
});

describe("through a virtual server", () => {
  it("support and start take the server's name for the tool; polls take the ref as is", async () => {
    const { ServerProvider } = await import("../../src/providers/server-view.js");
    const view = new ServerProvider(replicaA, {
      provider: "everything",
      tools: [RESEARCH],
      overrides: { tools: { [RESEARCH]: { name: "research" } } },
    });
    const ctx = context("s-view");
    assert.equal(view.tasks?.support("research", ctx), "required");
    const started = await view.tasks.start("research", { topic: "views" }, {}, ctx);
    assert.ok(started.ref);
    assert.equal((await poll(() => view.tasks!.get(started.ref, ctx))).at(-1), "completed");
    assert.match(JSON.stringify(await view.tasks.result(started.ref, ctx)), /Research Report: views/);
  });
});

describe("a task-augmented call, as directly", () => {
  it("simulate-research-query: the same statuses and the same result", async () => {
    const direct = await directClient();
    try {
      const created = await direct.request(
        {
          method: "tools/call",
          params: { name: RESEARCH, arguments: { topic: "tides" }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      const directStatuses = [
        created.task.status,
        ...(await poll(() => direct.experimental.tasks.getTask(created.task.taskId))),
      ];
      const directResult = await direct.experimental.tasks.getTaskResult(
        created.task.taskId,
        CallToolResultSchema,
      );

      const ctx = context("s-research");
      const { task, ref } = await startTask(replicaA, RESEARCH, { topic: "tides" }, { ttl: 60_000 }, ctx);
      assert.equal(task.status, "working");
      assert.equal(task.ttl, created.task.ttl, "the upstream's ttl, as it gave it directly");
      const statuses = [task.status, ...(await poll(() => replicaA.tasks.get(ref, ctx)))];
      const result = await replicaA.tasks.result(ref, ctx);

      assert.deepEqual([...new Set(statuses)], [...new Set(directStatuses)]);
      assert.deepEqual(content(result), content(directResult as Record<string, unknown>));
      assert.match(JSON.stringify(result), /Research Report: tides/);
    } finally {
      await direct.close();
    }
  });

  it("input_required: the upstream's elicitation reaches the client through tasks/result, as directly", async () => {
    const answer = { action: "accept", content: { interpretation: "historical" } };
    const direct = await directClient(() => answer);
    const asked: Array<{ method: string; params: Record<string, unknown> | undefined }> = [];
    try {
      const created = await direct.request(
        {
          method: "tools/call",
          params: { name: RESEARCH, arguments: { topic: "rome", ambiguous: true }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      const stop = new Set([...TERMINAL, "input_required"]);
      const directStatuses = await poll(() => direct.experimental.tasks.getTask(created.task.taskId), stop);
      const directResult = await direct.experimental.tasks.getTaskResult(
        created.task.taskId,
        CallToolResultSchema,
      );

      const ctx = context("s-ambiguous", async (method, params) => {
        asked.push({ method, params });
        return answer;
      });
      const { ref } = await startTask(replicaA, RESEARCH, { topic: "rome", ambiguous: true }, {}, ctx);
      const statuses = await poll(() => replicaA.tasks.get(ref, ctx), stop);
      const result = await replicaA.tasks.result(ref, ctx);

      assert.deepEqual(statuses, directStatuses);
      assert.equal(statuses.at(-1), "input_required");
      assert.deepEqual(content(result), content(directResult as Record<string, unknown>));
      assert.match(JSON.stringify(result), /Clarification\*\*: historical/);
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.method, "elicitation/create");
      // The upstream's task id stays upstream: the caller stamps its own related-task _meta.
      assert.doesNotMatch(JSON.stringify(asked[0]!.params), /related-task/);
      assert.equal(
        (result._meta as Record<string, unknown> | undefined)?.["io.modelcontextprotocol/related-task"],
        undefined,
      );
      assert.equal((await replicaA.tasks.get(ref, ctx)).status, "completed");
    } finally {
      await direct.close();
    }
  });
});

describe("another replica", () => {
  it("polls, fetches and cancels tasks the first one started, from the ref as stored", async () => {
    const ctxA = context("s-a");
    const ctxB = context("s-b");
    const { task, ref } = await startTask(replicaA, RESEARCH, { topic: "moons" }, { ttl: 30_000 }, ctxA);
    const stored = JSON.parse(JSON.stringify(ref)) as UpstreamTaskRef;
    const seen = await replicaB.tasks.get(stored, ctxB);
    assert.equal(seen.taskId, task.taskId);
    assert.equal(seen.createdAt, task.createdAt);
    assert.deepEqual((await poll(() => replicaB.tasks.get(stored, ctxB))).at(-1), "completed");
    assert.match(JSON.stringify(await replicaB.tasks.result(stored, ctxB)), /Research Report: moons/);

    const second = await startTask(replicaA, RESEARCH, { topic: "comets" }, {}, ctxA);
    const cancelled = await replicaB.tasks.cancel(
      JSON.parse(JSON.stringify(second.ref)) as UpstreamTaskRef,
      ctxB,
    );
    assert.equal(cancelled.status, "cancelled");
    assert.equal((await replicaA.tasks.get(second.ref, ctxA)).status, "cancelled");
    // basic/utilities/tasks §Task Cancellation: a terminal task's cancellation is refused (-32602), relayed.
    await assert.rejects(replicaA.tasks.cancel(second.ref, ctxA), (err: unknown) => {
      assert.equal((err as McpError).code, -32602);
      return true;
    });
  });

  it("status notifications reach a watcher on the replica that opened the task's session", async () => {
    const ctx = context("s-watch");
    const { ref } = await startTask(replicaA, RESEARCH, { topic: "stars" }, {}, ctx);
    const heard: TaskState[] = [];
    const stop = replicaA.tasks.watch(ref, (t) => heard.push(t));
    const elsewhere: TaskState[] = [];
    const stopB = replicaB.tasks.watch(ref, (t) => elsewhere.push(t));
    try {
      await poll(() => replicaA.tasks.get(ref, ctx));
      for (let i = 0; i < 50 && heard.at(-1)?.status !== "completed"; i++) await wait(50);
      assert.ok(heard.length >= 2, `heard ${heard.length} statuses`);
      assert.equal(heard.at(-1)?.status, "completed");
      assert.ok(heard.every((t) => t.taskId === (ref as { taskId: string }).taskId));
      assert.deepEqual(elsewhere, [], "replica B holds no GET stream of that session");
    } finally {
      stop();
      stopB();
    }
  });
});

describe("hostile refs and gone tasks", () => {
  it("a task id the upstream does not know is its -32602; a malformed ref names no task", async () => {
    const ctx = context("s-hostile");
    const { ref } = await startTask(replicaA, RESEARCH, { topic: "x" }, {}, ctx);
    await assert.rejects(replicaB.tasks.get({ ...ref, taskId: "not-a-task" }, ctx), (err: unknown) => {
      assert.equal((err as McpError).code, -32602);
      return true;
    });
    for (const bad of [{}, { ...ref, era: "stateless" }, { ...ref, sessionId: "a b" }, { ...ref, taskId: 7 }])
      await assert.rejects(replicaB.tasks.get(bad, ctx), (err: unknown) => {
        assert.equal((err as McpError).code, -32602);
        assert.match((err as Error).message, /Task not found/);
        return true;
      });
  });

  it("a session the upstream forgot: its tasks are gone (-32602), and the next task opens a new one", async () => {
    const ctx = context("s-restart");
    const { ref } = await startTask(replicaA, RESEARCH, { topic: "y" }, {}, ctx);
    await everything.restart();
    await assert.rejects(replicaA.tasks.get(ref, ctx), (err: unknown) => {
      assert.equal((err as McpError).code, -32602);
      assert.match((err as Error).message, /Task not found/);
      return true;
    });
    const again = await startTask(replicaA, RESEARCH, { topic: "y" }, {}, ctx);
    assert.notEqual((again.ref as { sessionId: string }).sessionId, (ref as { sessionId: string }).sessionId);
    assert.equal((await poll(() => replicaA.tasks.get(again.ref, ctx))).at(-1), "completed");
  });
});

describe("a client's own tasks, polled by the upstream", () => {
  const ASYNC_SAMPLING = "trigger-sampling-request-async";
  const SAMPLED = { role: "assistant", content: { type: "text", text: "a sampled answer" }, model: "m-1" };

  /**
   * A client session's side of a task-augmented sampling request, as the SDK's client task store
   * answers it: its task ids count from 1 in every session (so two sessions give the same id).
   */
  function taskRunningClient(sessionId: string) {
    const polls: Array<{ method: string; taskId: unknown }> = [];
    let task: Record<string, unknown> | undefined;
    const ask: Ask = async (method, params) => {
      if (method === "sampling/createMessage") {
        assert.ok(params?.task, "the upstream asked for a task");
        const now = new Date().toISOString();
        task = {
          taskId: "1",
          status: "working",
          createdAt: now,
          lastUpdatedAt: now,
          ttl: 60_000,
          pollInterval: 100,
        };
        const made = task;
        setTimeout(
          () => Object.assign(made, { status: "completed", lastUpdatedAt: new Date().toISOString() }),
          300,
        );
        return { task: made };
      }
      polls.push({ method, taskId: params?.taskId });
      if (method === "tasks/get") return { ...task! };
      if (method === "tasks/result")
        return { ...SAMPLED, _meta: { "io.modelcontextprotocol/related-task": { taskId: "1" } } };
      throw new McpError(-32601, "Method not found");
    };
    return { ctx: context(sessionId, ask), polls };
  }

  /** The tool's report with task ids replaced: they differ by path (the SDK's, Portico's). */
  function report(result: { content?: unknown }): string {
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    const created = /Task created: (\S+)/.exec(text)![1]!;
    return text.replaceAll(created, "<task>");
  }

  it("trigger-sampling-request-async: the client is polled under its own id, the upstream sees Portico's; as directly", async () => {
    const { InMemoryTaskStore } = await import("@modelcontextprotocol/sdk/experimental/tasks");
    const { CreateMessageRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const direct = new Client(
      { name: "direct", version: "1.0.0" },
      { capabilities: CAPS, taskStore: new InMemoryTaskStore() },
    );
    direct.setRequestHandler(CreateMessageRequestSchema, async (_request, extra) => {
      const task = await extra.taskStore!.createTask({ ttl: 60_000, pollInterval: 100 });
      setTimeout(() => void extra.taskStore!.storeTaskResult(task.taskId, "completed", SAMPLED), 300);
      return { task };
    });
    await direct.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    try {
      const directResult = await direct.callTool({ name: ASYNC_SAMPLING, arguments: { prompt: "hi" } });

      const one = taskRunningClient("s-sampler-1");
      await replicaA.prepare((await import("../../src/protocol/profile.js")).profileOf(CAPS));
      assert.ok(
        replicaA
          .entries((await import("../../src/protocol/profile.js")).profileOf(CAPS))
          .tools.some((t) => t.name === ASYNC_SAMPLING),
      );
      const result = await replicaA.callTool(ASYNC_SAMPLING, { prompt: "hi" }, one.ctx);
      assert.equal(result.isError, undefined);
      const text = (result.content as Array<{ text: string }>)[0]!.text;
      const upstreamId = /Task created: (\S+)/.exec(text)![1]!;
      assert.notEqual(upstreamId, "1", "the upstream is given Portico's id");
      assert.ok(upstreamId.length >= 22, "an unguessable one");
      assert.ok(one.polls.length >= 2);
      assert.ok(
        one.polls.every((p) => p.taskId === "1"),
        "the client is polled under its own id",
      );
      // tasks/result's related-task _meta names the task as the upstream knows it.
      assert.match(text, new RegExp(`"taskId": "${upstreamId}"`));
      assert.doesNotMatch(text, /"taskId": "1"/);
      // The same report as the SDK client gets directly, but for the task ids.
      assert.equal(report(result), report(directResult as { content: unknown }));
    } finally {
      await direct.close();
    }
  });

  it("two clients sharing the upstream session, each with a task '1': each is polled about its own", async () => {
    const one = taskRunningClient("s-sampler-a");
    const two = taskRunningClient("s-sampler-b");
    const [r1, r2] = await Promise.all([
      replicaA.callTool(ASYNC_SAMPLING, { prompt: "a" }, one.ctx),
      replicaA.callTool(ASYNC_SAMPLING, { prompt: "b" }, two.ctx),
    ]);
    const id = (r: { content?: unknown }) =>
      /Task created: (\S+)/.exec((r.content as Array<{ text: string }>)[0]!.text)![1];
    assert.notEqual(id(r1), id(r2), "the upstream saw two tasks");
    for (const [r, client] of [
      [r1, one],
      [r2, two],
    ] as const) {
      assert.match((r.content as Array<{ text: string }>)[0]!.text, /^\[COMPLETED\]/);
      assert.ok(client.polls.some((p) => p.method === "tasks/result"));
    }
    assert.deepEqual(outletAsked, [], "every poll went to its own call's client");
  });
});
