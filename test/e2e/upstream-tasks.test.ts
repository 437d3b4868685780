// An upstream's own tasks through Portico, end to end (2025-11-25 basic/utilities/tasks;
// docs/upstream-mcp.md "Tasks passed through"): the official SDK v1 client, declaring tasks and
// task-augmented sampling and elicitation, runs server-everything's simulate-research-query as a
// task with the SDK's callToolStream — through one Portico replica, and through two its requests
// alternate between — and sees the statuses and the result it sees talking to server-everything
// directly, including the ambiguous query's input_required and elicitation. The task ids it gets
// are Portico's, any replica serves them, and tasks/cancel through Portico cancels the upstream's.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { RequestTaskStore } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  McpError,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { TaskRecord } from "../../src/tasks/task-store.js";
import { everythingTenant, startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { MCP_HEADERS } from "../support/rpc.js";

const RESEARCH = "simulate-research-query";
const RELATED = "io.modelcontextprotocol/related-task";
const CAPS: ClientCapabilities = {
  elicitation: { form: {} },
  sampling: {},
  tasks: { cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
};
const CLARIFIED = { action: "accept", content: { interpretation: "historical" } };
const SAMPLED = { role: "assistant", content: { type: "text", text: "sampled later" }, model: "m-1" };

let everything: EverythingServer;
let a: RunningPortico;
let b: RunningPortico;
let prefix: string;
let tenants: ReturnType<typeof everythingTenant>[];

before(async () => {
  everything = await startEverything();
  prefix = uniquePrefix();
  tenants = [everythingTenant(everything.url)];
  a = await startPortico({ redisPrefix: prefix, tenants });
  b = await startPortico({ redisPrefix: prefix, tenants });
});
after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await everything?.stop();
});

type Route = "a" | "b" | "alternate";

/**
 * The SDK v1 client declaring task capabilities, directly on server-everything (`via` undefined)
 * or through Portico, each HTTP request sent where `via.to` says at that moment. It answers
 * elicitation with CLARIFIED and sampling with SAMPLED, recording what it was asked; asked for a
 * task (server-everything's async triggers), it makes one in its task store that ends 300 ms later.
 */
async function sdkClient(via?: { to: Route }) {
  const taskStore = new InMemoryTaskStore();
  const client = new Client({ name: "tasks-e2e", version: "1.0.0" }, { capabilities: CAPS, taskStore });
  const elicited: Array<Record<string, unknown>> = [];
  const made: string[] = [];
  const answer =
    (result: Record<string, unknown>) =>
    async (request: { params: Record<string, unknown> }, extra: { taskStore?: RequestTaskStore }) => {
      elicited.push(request.params);
      if (!request.params.task || !extra.taskStore) return result as never;
      const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 100 });
      made.push(task.taskId);
      setTimeout(() => void extra.taskStore!.storeTaskResult(task.taskId, "completed", result as never), 300);
      return { task } as never;
    };
  client.setRequestHandler(ElicitRequestSchema, answer(CLARIFIED));
  client.setRequestHandler(CreateMessageRequestSchema, answer(SAMPLED));
  let next = 0;
  const routed = (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const to = via!.to === "alternate" ? (next++ % 2 ? "b" : "a") : via!.to;
    url.port = new URL((to === "a" ? a : b).url).port;
    return fetch(url, init);
  };
  const transport = via
    ? new StreamableHTTPClientTransport(new URL(a.mcpUrl("acme")), { fetch: routed })
    : new StreamableHTTPClientTransport(new URL(everything.url));
  await client.connect(transport);
  // The task store's expiry timers would hold the test process for the tasks' ttl.
  const close = () => client.close().finally(() => taskStore.cleanup());
  return { client, elicited, made, close };
}

interface Run {
  readonly taskId: string;
  /** Each status the stream showed, once per change, in order. */
  readonly statuses: string[];
  readonly result?: Record<string, unknown>;
  readonly error?: McpError;
}

/** Runs simulate-research-query as a task with the SDK's callToolStream, to its last message. */
async function research(client: Client, args: Record<string, unknown>): Promise<Run> {
  const stream = client.experimental.tasks.callToolStream(
    { name: RESEARCH, arguments: args },
    CallToolResultSchema,
    { task: { ttl: 60_000 } },
  );
  let taskId = "";
  const statuses: string[] = [];
  for await (const message of stream) {
    if (message.type === "taskCreated" || message.type === "taskStatus") {
      if (message.type === "taskCreated") taskId = message.task.taskId;
      if (statuses.at(-1) !== message.task.status) statuses.push(message.task.status);
    }
    if (message.type === "result") return { taskId, statuses, result: message.result };
    if (message.type === "error") return { taskId, statuses, error: message.error };
  }
  throw new Error("the stream ended without a result or an error");
}

/** A result without its _meta (its related-task names a task id, which differs by path). */
function content(result: Record<string, unknown> | undefined) {
  assert.ok(result, "a result");
  const { _meta, ...rest } = result;
  void _meta;
  return rest;
}

/** Portico's record of a task, as the store holds it. */
async function record(taskId: string): Promise<TaskRecord> {
  const raw = await a.store.get(a.keys.task("acme", taskId));
  assert.ok(raw, `Portico keeps task ${taskId}`);
  return JSON.parse(raw) as TaskRecord;
}

/** The upstream's own task, asked of server-everything on the upstream session it lives in. */
async function upstreamTask(taskId: string): Promise<Record<string, unknown>> {
  const ref = (await record(taskId)).ref as { taskId: string; sessionId: string };
  const res = await fetch(everything.url, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": ref.sessionId, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: `e2e-${crypto.randomUUID()}`,
      method: "tasks/get",
      params: { taskId: ref.taskId },
    }),
  });
  const text = await res.text();
  // JSON, or an SSE stream whose first event may be an empty priming one.
  const json = text.startsWith("{") ? text : /^data: (\{.*)$/m.exec(text)?.[1];
  const answer = JSON.parse(json ?? "{}") as { result?: Record<string, unknown> };
  assert.ok(answer.result, `the upstream answered tasks/get: ${text}`);
  return answer.result;
}

/** A tool result's text. */
function report(result: unknown): string {
  return (result as { content: Array<{ text: string }> }).content.map((c) => c.text).join("\n");
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const route of ["a", "alternate"] as const)
  describe(route === "a" ? "one replica" : "two replicas, requests alternating", () => {
    it("simulate-research-query: the same statuses and the same result as directly, under Portico's task id", async () => {
      const direct = await sdkClient();
      const through = await sdkClient({ to: route });
      try {
        const [want, got] = await Promise.all([
          research(direct.client, { topic: "tides" }),
          research(through.client, { topic: "tides" }),
        ]);
        assert.equal(want.error, undefined);
        assert.equal(got.error, undefined, `through Portico: ${got.error?.message}`);
        assert.deepEqual(want.statuses, ["working", "completed"]);
        assert.deepEqual(got.statuses, want.statuses);
        assert.deepEqual(content(got.result), content(want.result));
        assert.match(JSON.stringify(got.result), /Research Report: tides/);
        // The id is Portico's (192 random bits, base64url), not the upstream's, which stays in the record.
        assert.match(got.taskId, /^[A-Za-z0-9_-]{32}$/);
        const stored = await record(got.taskId);
        const ref = stored.ref as { era: string; taskId: string };
        assert.equal(ref.era, "session");
        assert.notEqual(ref.taskId, got.taskId);
        assert.ok(
          !JSON.stringify(got.result).includes(ref.taskId),
          "the upstream's id never reaches the client",
        );
        assert.equal(
          ((got.result!._meta as Record<string, unknown> | undefined)?.[RELATED] as { taskId?: string })
            ?.taskId,
          got.taskId,
          "the result's related-task names Portico's task",
        );
      } finally {
        await Promise.all([direct.close(), through.close()]);
      }
    });

    it("an ambiguous query: input_required, the elicitation reaches the client through tasks/result, the same result", async () => {
      const direct = await sdkClient();
      const through = await sdkClient({ to: route });
      try {
        const [want, got] = await Promise.all([
          research(direct.client, { topic: "rome", ambiguous: true }),
          research(through.client, { topic: "rome", ambiguous: true }),
        ]);
        assert.equal(want.error, undefined);
        assert.equal(got.error, undefined, `through Portico: ${got.error?.message}`);
        assert.deepEqual(want.statuses, ["working", "input_required"]);
        assert.deepEqual(got.statuses, want.statuses);
        assert.deepEqual(content(got.result), content(want.result));
        assert.match(JSON.stringify(got.result), /Clarification\*\*: historical/);

        assert.equal(direct.elicited.length, 1);
        assert.equal(through.elicited.length, 1);
        const { _meta: wantMeta, ...wantAsked } = direct.elicited[0]!;
        const { _meta: gotMeta, ...gotAsked } = through.elicited[0]!;
        assert.deepEqual(gotAsked, wantAsked, "the same question");
        // Each names the task its client knows: the upstream's directly, Portico's through Portico.
        assert.equal((wantMeta as Record<string, { taskId: string }>)[RELATED]?.taskId, want.taskId);
        assert.equal((gotMeta as Record<string, { taskId: string }>)[RELATED]?.taskId, got.taskId);
        const status = await through.client.experimental.tasks.getTask(got.taskId);
        assert.equal(status.status, "completed");
      } finally {
        await Promise.all([direct.close(), through.close()]);
      }
    });

    it("simulate-research-query called without a task: -32601, as the spec asks (directly, the SDK makes it a tool error)", async () => {
      const direct = await sdkClient();
      const through = await sdkClient({ to: route });
      try {
        const plain = (client: Client) =>
          client.request(
            { method: "tools/call", params: { name: RESEARCH, arguments: { topic: "x" } } },
            CallToolResultSchema,
          );
        // basic/utilities/tasks "Tool-Level Negotiation": a "required" tool called without a task
        // MUST be answered -32601. The SDK v1 server turns that error into an isError tool result.
        const want = await plain(direct.client);
        assert.equal(want.isError, true);
        assert.match(report(want), /-32601: Tool simulate-research-query requires task augmentation/);
        await assert.rejects(plain(through.client), (err: unknown) => {
          assert.equal((err as McpError).code, -32601);
          assert.match((err as Error).message, /runs only as a task/);
          return true;
        });
      } finally {
        await Promise.all([direct.close(), through.close()]);
      }
    });

    for (const [tool, args] of [
      ["trigger-sampling-request-async", { prompt: "hi", maxTokens: 10 }],
      ["trigger-elicitation-request-async", {}],
    ] as const)
      it(`${tool}: the client runs the request as a task, polled by the upstream; the same report as directly`, async () => {
        const direct = await sdkClient();
        const through = await sdkClient({ to: route });
        try {
          const [want, got] = await Promise.all([
            direct.client.callTool({ name: tool, arguments: args }),
            through.client.callTool({ name: tool, arguments: args }),
          ]);
          // The report names the task id the upstream was given: the client's own directly, one
          // of Portico's through it (the client's id never reaches the upstream).
          assert.equal(direct.made.length, 1);
          assert.equal(through.made.length, 1);
          const gotText = report(got);
          const upstreamId = /Task created: (\S+)/.exec(gotText)?.[1] ?? "";
          assert.equal(
            report(want).replaceAll(direct.made[0]!, "<task>"),
            gotText.replaceAll(upstreamId, "<task>"),
          );
          assert.match(gotText, /\[COMPLETED\]/);
          assert.notEqual(upstreamId, through.made[0]);
          assert.ok(!gotText.includes(through.made[0]!));
        } finally {
          await Promise.all([direct.close(), through.close()]);
        }
      });
  });

describe("another replica", () => {
  it("tasks/get and tasks/result on the replica that did not start the task", async () => {
    const via: { to: Route } = { to: "a" };
    const { client, close } = await sdkClient(via);
    try {
      const stream = client.experimental.tasks.callToolStream(
        { name: RESEARCH, arguments: { topic: "moons" } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      const first = (await stream.next()).value;
      assert.equal(first?.type, "taskCreated");
      const taskId = (first as { task: { taskId: string } }).task.taskId;
      await stream.return(undefined);

      via.to = "b";
      const seen = await client.experimental.tasks.getTask(taskId);
      assert.equal(seen.taskId, taskId);
      assert.equal(seen.status, "working");
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.match(JSON.stringify(result), /Research Report: moons/);
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "completed");
      assert.equal((await upstreamTask(taskId)).status, "completed");
    } finally {
      await close();
    }
  });

  it("tasks/cancel through the other replica cancels the upstream's task", async () => {
    const via: { to: Route } = { to: "a" };
    const { client, close } = await sdkClient(via);
    try {
      const stream = client.experimental.tasks.callToolStream(
        { name: RESEARCH, arguments: { topic: "comets" } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      const first = (await stream.next()).value as { type: string; task: { taskId: string } };
      await stream.return(undefined);
      const taskId = first.task.taskId;
      assert.equal((await upstreamTask(taskId)).status, "working");

      via.to = "b";
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      assert.equal(cancelled.status, "cancelled");
      assert.equal(cancelled.taskId, taskId);
      assert.equal((await upstreamTask(taskId)).status, "cancelled", "the upstream's task is cancelled");
      via.to = "a";
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled");
      // It stays cancelled after the upstream's work would have ended (4 stages of 1 s).
      await wait(4_500);
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled");
      // basic/utilities/tasks §Task Cancellation: a terminal task cannot be cancelled (-32602).
      await assert.rejects(client.experimental.tasks.cancelTask(taskId), (err: unknown) => {
        assert.equal((err as McpError).code, -32602);
        return true;
      });
    } finally {
      await close();
    }
  });

  it("a replica shutting down answers the tasks/result waiting on it at once; another gives the result", async () => {
    const post = async (on: RunningPortico, body: object, sid?: string) => {
      const res = await fetch(on.mcpUrl("acme"), {
        method: "POST",
        headers: {
          ...MCP_HEADERS,
          ...(sid && { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" }),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: Math.floor(Math.random() * 1e9), ...body }),
      });
      const text = await res.text();
      const data = text.split("\n").filter((l) => l.startsWith("data: ") && l.length > 6);
      const messages = (data.length ? data.map((l) => l.slice(6)) : [text]).map(
        (m) => JSON.parse(m) as Record<string, any>,
      );
      return { sid: res.headers.get("mcp-session-id") ?? sid, answer: messages.find((m) => !m.method)! };
    };
    const { sid } = await post(a, {
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: CAPS,
        clientInfo: { name: "raw", version: "1" },
      },
    });
    const created = await post(
      a,
      { method: "tools/call", params: { name: RESEARCH, arguments: { topic: "drains" }, task: {} } },
      sid,
    );
    const taskId = created.answer.result.task.taskId as string;
    const c = await startPortico({ redisPrefix: prefix, tenants });
    const waiting = post(c, { method: "tasks/result", params: { taskId } }, sid);
    await wait(300);
    const started = Date.now();
    const closed = c.close();
    const { answer } = await waiting;
    assert.ok(Date.now() - started < 1500, "not held until the upstream's task ends");
    assert.equal(answer.error?.code, -32003);
    assert.match(answer.error.message, /shutting down; send tasks\/result again/);
    await closed;
    const result = await post(b, { method: "tasks/result", params: { taskId } }, sid);
    assert.match(JSON.stringify(result.answer.result), /Research Report: drains/);
  });

  it("hostile: the upstream's own task id, and another session's task, are unknown tasks", async () => {
    const one = await sdkClient({ to: "a" });
    const other = await sdkClient({ to: "b" });
    try {
      const stream = one.client.experimental.tasks.callToolStream(
        { name: RESEARCH, arguments: { topic: "tin" } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      const first = (await stream.next()).value as { task: { taskId: string } };
      await stream.return(undefined);
      const taskId = first.task.taskId;
      const upstreamId = ((await record(taskId)).ref as { taskId: string }).taskId;
      const unknown = (err: unknown) => {
        assert.equal((err as McpError).code, -32602);
        assert.match((err as Error).message, /Task not found/);
        return true;
      };
      await assert.rejects(one.client.experimental.tasks.getTask(upstreamId), unknown);
      await assert.rejects(other.client.experimental.tasks.getTask(taskId), unknown);
      await assert.rejects(other.client.experimental.tasks.cancelTask(taskId), unknown);
      await assert.rejects(
        other.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
        unknown,
      );
      assert.equal((await one.client.experimental.tasks.getTask(taskId)).status, "working", "still running");
      await one.client.experimental.tasks.cancelTask(taskId);
    } finally {
      await Promise.all([one.close(), other.close()]);
    }
  });
});
