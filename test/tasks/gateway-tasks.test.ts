// Gateway-made tasks (2025-11-25 basic/utilities/tasks; docs/upstream-mcp.md#tasks): an `http` tool,
// whose upstream knows nothing of tasks, called as a task by the official SDK v1 client and by raw
// HTTP, polled and cancelled from another replica (two buildApp on one Redis), bound to the session
// that made it (a tenant without authentication), capped, rate-limited, and taken over when the
// replica running it is killed: run again if the tool is idempotent, else failed.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/sdk/types.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { startReplicaProcess } from "../support/replica-process.js";
import { MCP_HEADERS } from "../support/rpc.js";

/** An HTTP service whose POST /work answers `{done: tag}` after `ms`, recording how each call ended. */
async function startJobs() {
  const ended: string[] = [];
  const started: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const { ms = 0, tag = "?" } = JSON.parse(body || "{}") as { ms?: number; tag?: string };
      if (req.url === "/big")
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ blob: "x".repeat(4000) }));
      started.push(tag);
      const timer = setTimeout(() => {
        ended.push(`${tag} finished`);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ done: tag }));
      }, ms);
      res.on("close", () => {
        if (res.writableFinished) return;
        clearTimeout(timer);
        ended.push(`${tag} aborted`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    started,
    ended,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An SDK v1 upstream over Streamable HTTP, a server per session, its tools registered by `register`. */
async function startSdkUpstream(
  register: (server: McpServer) => void,
  options: ConstructorParameters<typeof McpServer>[1] = {},
) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const known = transports.get(String(req.headers["mcp-session-id"]));
    if (known) return void known.handleRequest(req, res);
    const server = new McpServer({ name: "upstream", version: "1.0.0" }, options);
    register(server);
    const fresh = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => void transports.set(sid, fresh),
    });
    void server.connect(fresh).then(() => fresh.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.allSettled([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** An upstream with tasks and one tool that runs only as a task (`execution.taskSupport: "required"`). */
const startTaskUpstream = () =>
  startSdkUpstream(
    (server) =>
      server.experimental.tasks.registerToolTask(
        "must_task",
        { description: "Runs only as a task", inputSchema: {}, execution: { taskSupport: "required" } },
        {
          createTask: async (_args, extra) => ({ task: await extra.taskStore.createTask({ ttl: 60_000 }) }),
          getTask: async (_args, extra) => ({ ...(await extra.taskStore.getTask(extra.taskId)) }),
          getTaskResult: async (_args, extra) =>
            (await extra.taskStore.getTaskResult(extra.taskId)) as { content: [] },
        },
      ),
    { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() },
  );

/** What the URL tools of the asking upstream saw: set `opened` when the user "visited" the URL. */
const urlFlow = { opened: false, calls: { needs_url: 0, always_url: 0 } };

/** -32042 for the URL the user must open (2025-11-25 client/elicitation, URL mode). */
const urlRequired = (id: string) =>
  new UrlElicitationRequiredError([
    { mode: "url", elicitationId: id, url: "https://auth.example/connect", message: "Connect your account" },
  ]);

/**
 * An upstream without tasks: one tool asks the user mid-call (elicitation), one reports progress,
 * one answers -32042 until the URL was opened, one answers -32042 always.
 */
const startAskingUpstream = () =>
  startSdkUpstream((server) => {
    server.registerTool("needs_url", { description: "Needs an account connected" }, async () => {
      urlFlow.calls.needs_url++;
      if (!urlFlow.opened) throw urlRequired("e-needs");
      return { content: [{ type: "text", text: "connected" }] };
    });
    server.registerTool("always_url", { description: "Never satisfied" }, async () => {
      urlFlow.calls.always_url++;
      throw urlRequired(`e-always-${urlFlow.calls.always_url}`);
    });
    server.registerTool("steps", { description: "Three steps, reported" }, async (extra) => {
      const token = extra._meta?.progressToken;
      for (let step = 1; step <= 3; step++) {
        if (token !== undefined)
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: step, total: 3, message: `step ${step} of 3` },
          });
        await new Promise((r) => setTimeout(r, 400));
      }
      return { content: [{ type: "text", text: "three steps done" }] };
    });
    server.registerTool("ask_name", { description: "Asks the user for their name" }, async (extra) => {
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message: "Your name?",
            requestedSchema: { type: "object", properties: { username: { type: "string" } } },
          },
        },
        ElicitResultSchema,
      );
      return { content: [{ type: "text", text: `Hello, ${String(answer.content?.username)}` }] };
    });
  });

let jobs: Awaited<ReturnType<typeof startJobs>>;
let tasky: Awaited<ReturnType<typeof startTaskUpstream>>;
let asking: Awaited<ReturnType<typeof startAskingUpstream>>;
let a: RunningPortico;
let b: RunningPortico;
let prefix: string;
let tenants: TenantConfig[];

const ENV = {
  PORTICO_TASK_POLL_INTERVAL_MS: "200",
  PORTICO_MAX_TASKS_PER_CALLER: "4",
  PORTICO_TASK_POLLS_PER_MINUTE: "300",
  PORTICO_TASK_MAX_RESULT_BYTES: "2048",
  PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS: "true",
};

before(async () => {
  jobs = await startJobs();
  tasky = await startTaskUpstream();
  asking = await startAskingUpstream();
  prefix = uniquePrefix();
  tenants = [
    {
      id: "tk",
      auth: "none",
      providers: [
        {
          id: "jobs",
          kind: "http",
          tools: [
            { name: "slow", description: "Works for a while", url: `${jobs.url}/work` },
            {
              name: "slow_read",
              description: "Reads for a while",
              url: `${jobs.url}/work`,
              annotations: { readOnlyHint: true },
            },
            { name: "big", description: "Answers 4 KB", url: `${jobs.url}/big` },
          ],
        },
        { id: "tasky", kind: "mcp", url: tasky.url },
        { id: "asking", kind: "mcp", url: asking.url },
      ],
    },
    {
      id: "tks",
      auth: "none",
      toolDiscovery: "search",
      providers: [
        {
          id: "jobs",
          kind: "http",
          prefix: "jobs",
          tools: [{ name: "slow", description: "Works", url: `${jobs.url}/work` }],
        },
      ],
    },
  ];
  a = await startPortico({ tenants, redisPrefix: prefix, env: ENV });
  b = await startPortico({ tenants, redisPrefix: prefix, env: ENV });
});

after(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await jobs?.close();
  await tasky?.close();
  await asking?.close();
});

type Rpc = { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };

/** One request on a session at a replica; the response from JSON or the SSE stream. */
async function rpc(
  base: RunningPortico,
  sid: string,
  method: string,
  params: object = {},
  tenant = "tk",
): Promise<Rpc> {
  const res = await fetch(base.mcpUrl(tenant), {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: Math.floor(Math.random() * 1e9), method, params }),
  });
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text) as Rpc;
  const messages = text
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)) as Rpc & { method?: string });
  return messages.find((m) => m.method === undefined)!;
}

async function session(base: RunningPortico, capabilities: object = { tasks: {} }, tenant = "tk") {
  const res = await fetch(base.mcpUrl(tenant), {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  const body = (await res.json()) as Rpc;
  return { sid: res.headers.get("mcp-session-id")!, capabilities: body.result!.capabilities };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("gateway-made tasks", () => {
  it("the SDK v1 client runs a 10 s http tool as a task, its polls alternating between two replicas", async () => {
    let turn = 0;
    const other = new URL(b.url);
    const recording = await connectClient(a.mcpUrl("tk"), {
      clientCapabilities: { tasks: { requests: {} } },
      // Every other request goes to replica b: one session, two replicas.
      route: (url) => {
        if (turn++ % 2 === 1) url.port = other.port;
        return url;
      },
    });
    const { client } = recording;
    assert.deepEqual(client.getServerCapabilities()?.tasks, {
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    assert.equal(tools.find((t) => t.name === "slow")?.execution?.taskSupport, "optional");
    assert.equal(tools.find((t) => t.name === "must_task")?.execution?.taskSupport, "required");

    const started = Date.now();
    const seen: string[] = [];
    let result: Record<string, any> | undefined;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "slow", arguments: { ms: 10_000, tag: "sdk" } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      if (message.type === "taskCreated") seen.push(`created ${message.task.status}`);
      else if (message.type === "taskStatus") seen.push(message.task.status);
      else if (message.type === "result") result = message.result;
      else if (message.type === "error") throw message.error;
    }
    assert.ok(Date.now() - started >= 10_000);
    assert.equal(seen[0], "created working");
    assert.ok(seen.includes("working"));
    assert.deepEqual(result?.structuredContent, { done: "sdk" });
    assert.ok(jobs.ended.includes("sdk finished"));
    await client.close();
  });

  it("a call that asks the client mid-task goes input_required; tasks/result on the other replica carries the question", async () => {
    let turn = 0;
    const other = new URL(b.url);
    const { client } = await connectClient(a.mcpUrl("tk"), {
      clientCapabilities: { elicitation: {}, tasks: { requests: {} } },
      route: (url) => {
        if (turn++ % 2 === 1) url.port = other.port;
        return url;
      },
    });
    const seen: string[] = [];
    let result: Record<string, any> | undefined;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "ask_name", arguments: {} },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === "taskCreated" || message.type === "taskStatus") seen.push(message.task.status);
      else if (message.type === "result") result = message.result;
      else if (message.type === "error") throw message.error;
    }
    assert.ok(seen.includes("input_required"), seen.join(", "));
    assert.deepEqual(result?.content, [{ type: "text", text: "Hello, ada" }]);
    await client.close();
  });

  it("a call answering -32042 goes input_required: tasks/result carries the URL, and the call runs again once accepted", async () => {
    urlFlow.opened = false;
    urlFlow.calls.needs_url = 0;
    let turn = 0;
    const other = new URL(b.url);
    const { client } = await connectClient(a.mcpUrl("tk"), {
      clientCapabilities: { elicitation: { url: {} }, tasks: { requests: {} } },
      route: (url) => {
        if (turn++ % 2 === 1) url.port = other.port;
        return url;
      },
    });
    const asked: Record<string, any>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      urlFlow.opened = true; // the user completes the URL flow, then accepts
      return { action: "accept" };
    });
    const seen: string[] = [];
    let result: Record<string, any> | undefined;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "needs_url", arguments: {} },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === "taskCreated" || message.type === "taskStatus") seen.push(message.task.status);
      else if (message.type === "result") result = message.result;
      else if (message.type === "error") throw message.error;
    }
    assert.ok(seen.includes("input_required"), seen.join(", "));
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.mode, "url");
    assert.equal(asked[0]!.elicitationId, "e-needs");
    assert.equal(asked[0]!.url, "https://auth.example/connect");
    assert.deepEqual(result?.content, [{ type: "text", text: "connected" }]);
    assert.equal(urlFlow.calls.needs_url, 2, "called, then run again once");
    await client.close();
  });

  it("a -32042 declined fails the task with the upstream's error; one that never ends fails after the bound", async () => {
    const { client } = await connectClient(a.mcpUrl("tk"), {
      clientCapabilities: { elicitation: { url: {} }, tasks: { requests: {} } },
    });
    let action: "decline" | "accept" = "decline";
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action }));
    const run = async () => {
      let error: any;
      for await (const message of client.experimental.tasks.callToolStream(
        { name: "always_url", arguments: {} },
        CallToolResultSchema,
        { task: {} },
      ))
        if (message.type === "error") error = message.error;
        else if (message.type === "result") assert.fail("expected an error");
      return error;
    };
    urlFlow.calls.always_url = 0;
    const declined = await run();
    assert.equal(declined.code, -32042);
    assert.equal(declined.data.elicitations[0].elicitationId, "e-always-1");
    assert.equal(urlFlow.calls.always_url, 1, "not run again");

    action = "accept";
    urlFlow.calls.always_url = 0;
    const endless = await run();
    assert.equal(endless.code, -32603);
    assert.match(
      endless.message,
      /Provider 'asking' needs the user to open a URL first \(its error -32042: .*\), and still did after 3 runs again with every URL opened$/,
    );
    assert.equal(urlFlow.calls.always_url, 4, "called, then run again three times");
    await client.close();
  });

  it("progress the call reports becomes the task's statusMessage, seen from the other replica", async () => {
    const { sid } = await session(a);
    const created = await rpc(a, sid, "tools/call", {
      name: "steps",
      task: {},
      _meta: { progressToken: "p1" },
    });
    const { taskId } = created.result!.task;
    const messages = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const got = (await rpc(b, sid, "tasks/get", { taskId })).result!;
      if (got.statusMessage) messages.add(got.statusMessage as string);
      if (got.status !== "working") break;
      await sleep(100);
    }
    assert.ok(messages.has("step 1 of 3"), [...messages].join(", "));
    const result = await rpc(b, sid, "tasks/result", { taskId });
    assert.deepEqual(result.result!.content, [{ type: "text", text: "three steps done" }]);
  });

  it("raw HTTP: created on one replica, polled and its result taken on the other; another session's id is unknown", async () => {
    const { sid, capabilities } = await session(a);
    assert.deepEqual(capabilities.tasks, { cancel: {}, requests: { tools: { call: {} } } });
    const created = await rpc(a, sid, "tools/call", {
      name: "slow",
      arguments: { ms: 1500, tag: "raw" },
      task: { ttl: 999_999_999 },
    });
    const task = created.result!.task;
    assert.equal(task.status, "working");
    assert.equal(task.ttl, 86_400_000, "ttl bounded by PORTICO_TASK_TTL_MAX_MS");
    assert.equal(task.pollInterval, 200);
    assert.ok(task.taskId.length >= 22, "at least 128 random bits");

    const polled = await rpc(b, sid, "tasks/get", { taskId: task.taskId });
    assert.equal(polled.result!.status, "working");
    assert.equal(polled.result!.createdAt, task.createdAt);

    // Another session of the same tenant (no authentication: tasks are bound to their session).
    const stranger = await session(b);
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const refused = await rpc(b, stranger.sid, method, { taskId: task.taskId });
      assert.equal(refused.error?.code, -32602, method);
      assert.match(refused.error.message, /Task not found/);
    }
    const unlisted = await rpc(b, sid, "tasks/list");
    assert.equal(unlisted.error?.code, -32601, "tasks/list is not offered without authentication");

    const result = await rpc(b, sid, "tasks/result", { taskId: task.taskId });
    assert.deepEqual(result.result!.structuredContent, { done: "raw" });
    assert.deepEqual(result.result!._meta, {
      "io.modelcontextprotocol/related-task": { taskId: task.taskId },
    });
    const done = await rpc(a, sid, "tasks/get", { taskId: task.taskId });
    assert.equal(done.result!.status, "completed");
    const again = await rpc(a, sid, "tasks/cancel", { taskId: task.taskId });
    assert.equal(again.error?.code, -32602);
    assert.equal(again.error?.message, "Cannot cancel task: already in terminal status 'completed'");
  });

  it("tasks/cancel on the other replica stops the upstream call; the task stays cancelled", async () => {
    const { sid } = await session(a);
    const created = await rpc(a, sid, "tools/call", {
      name: "slow",
      arguments: { ms: 8000, tag: "cxl" },
      task: {},
    });
    const { taskId } = created.result!.task;
    // tasks/result waits on replica a while the cancel comes to b.
    const waiting = rpc(a, sid, "tasks/result", { taskId });
    await sleep(300);
    const cancelled = await rpc(b, sid, "tasks/cancel", { taskId });
    assert.equal(cancelled.result!.status, "cancelled");
    const ended = await waiting;
    assert.equal(ended.error?.code, -32600);
    for (let i = 0; i < 50 && !jobs.ended.includes("cxl aborted"); i++) await sleep(50);
    assert.ok(jobs.ended.includes("cxl aborted"), "the upstream call was cancelled");
    assert.equal((await rpc(b, sid, "tasks/get", { taskId })).result!.status, "cancelled");
  });

  it("a task's call is stopped when its ttl runs out (no call outlives its task or the caps)", async () => {
    const { sid } = await session(a);
    const created = await rpc(a, sid, "tools/call", {
      name: "slow",
      arguments: { ms: 8000, tag: "ttl" },
      task: { ttl: 1000 },
    });
    assert.equal(created.result!.task.ttl, 1000);
    for (let i = 0; i < 60 && !jobs.ended.includes("ttl aborted"); i++) await sleep(50);
    assert.ok(jobs.ended.includes("ttl aborted"), "the upstream call was stopped at the task's ttl");
  });

  it("a replica shutting down answers the tasks/result waiting on it at once; the task goes on", async () => {
    const c = await startPortico({ tenants, redisPrefix: prefix, env: ENV });
    const { sid } = await session(a);
    const { taskId } = (
      await rpc(a, sid, "tools/call", { name: "slow", arguments: { ms: 2000, tag: "drain" }, task: {} })
    ).result!.task;
    const waiting = rpc(c, sid, "tasks/result", { taskId });
    await sleep(300);
    const started = Date.now();
    const closed = c.close();
    const answer = await waiting;
    assert.ok(Date.now() - started < 1500, "not held until the task ends");
    assert.equal(answer.error?.code, -32003);
    assert.match(answer.error.message, /shutting down; send tasks\/result again/);
    await closed;
    const result = await rpc(b, sid, "tasks/result", { taskId });
    assert.deepEqual(result.result!.structuredContent, { done: "drain" });
  });

  it("a result larger than PORTICO_TASK_MAX_RESULT_BYTES fails the task, saying so", async () => {
    const { sid } = await session(b);
    const { taskId } = (await rpc(b, sid, "tools/call", { name: "big", task: {} })).result!.task;
    const result = await rpc(a, sid, "tasks/result", { taskId });
    assert.equal(result.error?.code, -32603);
    assert.match(
      result.error.message,
      /Task result too large: the tool answered \d+ bytes, more than the 2048/,
    );
    const got = await rpc(a, sid, "tasks/get", { taskId });
    assert.equal(got.result!.status, "failed");
    assert.match(got.result!.statusMessage, /Task result too large/);
  });

  it("live tasks are capped per caller, and polling is rate-limited", async () => {
    const { sid } = await session(a);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await rpc(a, sid, "tools/call", {
        name: "slow",
        arguments: { ms: 3000, tag: `cap${i}` },
        task: {},
      });
      ids.push(created.result!.task.taskId);
    }
    const refused = await rpc(b, sid, "tools/call", {
      name: "slow",
      arguments: { ms: 10, tag: "cap4" },
      task: {},
    });
    assert.equal(refused.error?.code, -32000);
    assert.match(refused.error.message, /Too many tasks: this caller has 4 live tasks/);
    // Ending one frees a place.
    await rpc(a, sid, "tasks/cancel", { taskId: ids[0] });
    const fifth = await rpc(b, sid, "tools/call", {
      name: "slow",
      arguments: { ms: 10, tag: "cap5" },
      task: {},
    });
    assert.equal(fifth.result?.task.status, "working");

    let limited: Rpc | undefined;
    for (let i = 0; i < 400 && !limited; i++) {
      const got = await rpc(a, sid, "tasks/get", { taskId: ids[1] });
      if (got.error) limited = got;
    }
    assert.equal(limited?.error?.code, -32000);
    assert.match(limited.error.message, /limit of 300 task requests per minute is reached/);
    for (const id of ids.slice(1)) await rpc(b, sid, "tasks/cancel", { taskId: id });
  });

  it("with tool search on, a task started through call_tool is the named tool's", async () => {
    const { sid } = await session(a, { tasks: {} }, "tks");
    const listed = await rpc(a, sid, "tools/list", {}, "tks");
    const execution = (name: string) =>
      listed.result!.tools.find((t: { name: string }) => t.name === name)?.execution;
    assert.deepEqual(execution("call_tool"), { taskSupport: "optional" });
    assert.equal(execution("search_tools"), undefined);
    const call = {
      name: "call_tool",
      arguments: { name: "jobs__slow", arguments: { ms: 10, tag: "search" } },
      task: {},
    };
    const created = await rpc(a, sid, "tools/call", call, "tks");
    const result = await rpc(b, sid, "tasks/result", { taskId: created.result!.task.taskId }, "tks");
    assert.deepEqual(result.result!.structuredContent, { done: "search" });
  });

  it("a task-required tool called without a task is -32601", async () => {
    const { sid } = await session(a);
    const plain = await rpc(a, sid, "tools/call", { name: "must_task", arguments: {} });
    assert.equal(plain.error?.code, -32601);
    assert.match(plain.error.message, /Task augmentation required for tools\/call requests/);
    // A session that did not declare tasks gets the same: the tool cannot be held as a plain call.
    const older = await session(a, {});
    assert.equal((await rpc(a, older.sid, "tools/call", { name: "must_task" })).error?.code, -32601);
  });
});

describe("the replica running a task dies", () => {
  it("an idempotent task is run again by the replica polled; any other fails, saying why", async () => {
    const doomed = await startReplicaProcess({ tenants, redisPrefix: prefix, env: ENV });
    try {
      const res = await fetch(`${doomed.url}/mcp/tk`, {
        method: "POST",
        headers: MCP_HEADERS,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: { tasks: {} },
            clientInfo: { name: "raw", version: "1" },
          },
        }),
      });
      const sid = res.headers.get("mcp-session-id")!;
      await res.text();
      const via = { mcpUrl: () => `${doomed.url}/mcp/tk` } as unknown as RunningPortico;
      const plain = (
        await rpc(via, sid, "tools/call", { name: "slow", arguments: { ms: 30_000, tag: "dies" }, task: {} })
      ).result!.task;
      let reads = 0;
      const read = (
        await rpc(via, sid, "tools/call", {
          name: "slow_read",
          arguments: { ms: 30_000, tag: `read` },
          task: {},
        })
      ).result!.task;
      reads++;
      for (let i = 0; i < 40 && jobs.started.filter((t) => t === "read" || t === "dies").length < 2; i++)
        await sleep(50);
      await doomed.kill();

      // Within the heartbeat's TTL (6 s), a poll on a survivor finds the replica gone.
      let failed: Rpc | undefined;
      for (let i = 0; i < 40; i++) {
        failed = await rpc(a, sid, "tasks/get", { taskId: plain.taskId });
        if (failed.result?.status !== "working") break;
        await sleep(500);
      }
      assert.equal(failed?.result?.status, "failed");
      assert.match(
        failed.result.statusMessage,
        /^Interrupted: the gateway replica running this task stopped/,
      );
      const error = await rpc(b, sid, "tasks/result", { taskId: plain.taskId });
      assert.equal(error.error?.code, -32003);
      assert.deepEqual(error.error?.data, { interrupted: true, completed: "unknown" });

      const rerun = await rpc(b, sid, "tasks/get", { taskId: read.taskId });
      assert.equal(rerun.result!.status, "working");
      assert.equal(rerun.result!.statusMessage, "Run again: the gateway replica running it stopped");
      for (let i = 0; i < 40 && jobs.started.filter((t) => t === "read").length < 1 + reads; i++)
        await sleep(50);
      assert.equal(jobs.started.filter((t) => t === "read").length, 2, "run again once");
      const ended = await rpc(a, sid, "tasks/cancel", { taskId: read.taskId });
      assert.equal(ended.result!.status, "cancelled");
    } finally {
      await doomed.kill().catch(() => undefined);
    }
  });
});
