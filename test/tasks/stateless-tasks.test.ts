// Portico's tasks in the 2026-07-28 form, the tasks extension (`io.modelcontextprotocol/tasks`;
// docs/upstream-mcp.md#tasks): Portico alone decides what becomes a task — an `http` tool an admin
// marked task-required, a call still running after its provider's `afterSeconds`, a tool whose
// 2026-07-28 upstream runs it as a task (test/fixtures/tasks-server.ts) — and any replica answers
// tasks/get, tasks/update and tasks/cancel (two buildApp on one Redis). A client without the
// extension gets -32021; Mcp-Name must be the task id; another user's id is an unknown task.
// A 10 s task whose replica is killed: an idempotent one runs again on a survivor, another fails.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { tryCaller } from "../../src/admin/try-it.js";
import { INTERNAL_CALLER_HEADER } from "../../src/mcp/internal-callers.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { startTasksUpstream, type TasksUpstream } from "../fixtures/tasks-server.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort, uniquePrefix } from "../support/redis.js";
import { startReplicaProcess } from "../support/replica-process.js";
import { readEvents } from "../support/sse.js";

const VERSION = "2026-07-28";
const EXTENSION = "io.modelcontextprotocol/tasks";

/** POST /work answers `{done: tag}` after `ms`, recording how each call ended. */
async function startJobs() {
  const ended: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const { ms = 0, tag = "?" } = JSON.parse(body || "{}") as { ms?: number; tag?: string };
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/work`,
    ended,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the asking upstream's URL tools saw: `opened` once the user "visited" the URL. */
const urlFlow = { opened: false, calls: 0 };

/**
 * An SDK v1 upstream without tasks: one tool asks the user's name mid-call (elicitation), one
 * answers -32042 until the URL was opened, one answers -32042 always.
 */
async function startAsking() {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const known = transports.get(String(req.headers["mcp-session-id"]));
    if (known) return void known.handleRequest(req, res);
    const server = new McpServer({ name: "asking", version: "1.0.0" });
    const required = () =>
      new UrlElicitationRequiredError([
        { mode: "url", elicitationId: "e1", url: "https://auth.example/connect", message: "Connect" },
      ]);
    // Read-only: a survivor may run it again after the replica running its task died.
    server.registerTool(
      "ask_twice",
      { description: "Asks twice", annotations: { readOnlyHint: true } },
      async (extra) => {
        for (let i = 0; i < 2; i++)
          await extra.sendRequest(
            {
              method: "elicitation/create",
              params: { message: `Question ${i + 1}?`, requestedSchema: { type: "object", properties: {} } },
            },
            ElicitResultSchema,
          );
        return { content: [{ type: "text", text: "asked twice" }] };
      },
    );
    server.registerTool("needs_url", { description: "Needs an account connected" }, async () => {
      urlFlow.calls++;
      if (!urlFlow.opened) throw required();
      return { content: [{ type: "text", text: "connected" }] };
    });
    server.registerTool("always_url", { description: "Never satisfied" }, async () => {
      urlFlow.calls++;
      throw required();
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

let asking: Awaited<ReturnType<typeof startAsking>>;
let jobs: Awaited<ReturnType<typeof startJobs>>;
let upstream: TasksUpstream;
let everything: EverythingServer;
let a: RunningPortico;
let b: RunningPortico;
let tenants: TenantConfig[];
let prefix: string;
const ENV = { PORTICO_TASK_POLL_INTERVAL_MS: "200", PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS: "true" };

before(async () => {
  jobs = await startJobs();
  upstream = await startTasksUpstream({ pollIntervalMs: 100 });
  everything = await startEverything();
  asking = await startAsking();
  const jobsProvider = (id: string, tasks: object) => ({
    id,
    kind: "http" as const,
    tools: [{ name: "work", description: "Works for a while", url: jobs.url }],
    tasks,
  });
  tenants = [
    {
      id: "tl",
      auth: "none",
      providers: [
        { ...jobsProvider("marked", { tools: { work: "required" } }), prefix: "marked" },
        {
          id: "reads",
          kind: "http",
          prefix: "reads",
          tools: [
            // Read-only: a survivor may run it again after the replica running its task died.
            {
              name: "read",
              description: "Reads for a while",
              url: jobs.url,
              annotations: { readOnlyHint: true },
            },
          ],
          tasks: { tools: { read: "required" } },
        },
        { ...jobsProvider("later", { afterSeconds: 1 }), prefix: "later" },
        { ...jobsProvider("plain", {}), prefix: "plain" },
        { id: "up", kind: "mcp", url: upstream.url },
        { id: "ev", kind: "mcp", url: everything.url, prefix: "ev" },
        {
          id: "ask",
          kind: "mcp",
          url: asking.url,
          prefix: "ask",
          tasks: {
            tools: {
              ask_name: "required",
              needs_url: "required",
              always_url: "required",
              ask_twice: "required",
            },
          },
        },
      ],
    },
    {
      id: "ta",
      auth: "oauth",
      providers: [jobsProvider("marked", { tools: { work: "required" } })],
    },
  ] as TenantConfig[];
  prefix = uniquePrefix();
  const start = async () => {
    const port = await freePort();
    return startPortico({
      tenants,
      redisPrefix: prefix,
      env: {
        PORT: String(port),
        PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
        ...ENV,
      },
    });
  };
  a = await start();
  b = await start();
});

after(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await jobs?.close();
  await upstream?.close();
  await everything?.stop();
  await asking?.close();
});

type Answer = { status: number; body: Record<string, any> };

interface Options {
  /** Declares the tasks extension (default true). */
  readonly extension?: boolean;
  readonly capabilities?: Record<string, unknown>;
  /** On the tenant with authentication: who asks. */
  readonly user?: string;
  /** Overrides Mcp-Name. */
  readonly name?: string;
}

/** A 2026-07-28 request to `tenant` at replica `at`, with the headers a conforming client sends. */
async function rpc(
  at: RunningPortico,
  tenant: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: Options = {},
): Promise<Answer> {
  const res = await send(at, tenant, method, params, opts);
  const text = await res.text();
  // An SSE answer: its last event is the response.
  const json = res.headers.get("content-type")?.startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5))
        .at(-1)!
    : text;
  return { status: res.status, body: JSON.parse(json) as Record<string, any> };
}

function send(
  at: RunningPortico,
  tenant: string,
  method: string,
  params: Record<string, unknown>,
  opts: Options,
): Promise<Response> {
  const named = params.name ?? params.taskId;
  const capabilities = {
    ...opts.capabilities,
    ...(opts.extension !== false && { extensions: { [EXTENSION]: {} } }),
  };
  return fetch(at.mcpUrl(tenant), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...((opts.name ?? named) !== undefined && { "mcp-name": String(opts.name ?? named) }),
      ...(opts.user !== undefined && {
        [INTERNAL_CALLER_HEADER]: at.internalCallers.issue(tryCaller({ sub: opts.user }), { tenant }),
      }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": capabilities,
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
        },
      },
    }),
  });
}

/** tasks/get at `at` until the task leaves `working` (or `deadlineMs` passes). */
async function settled(
  at: RunningPortico,
  tenant: string,
  taskId: string,
  opts: Options = {},
  deadlineMs = 8000,
) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const { body } = await rpc(at, tenant, "tasks/get", { taskId }, opts);
    assert.ok(body.result, JSON.stringify(body));
    if (body.result.status !== "working" || Date.now() > until) return body.result as Record<string, any>;
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe("the tasks extension through Portico (2026-07-28)", () => {
  it("is offered in server/discover", async () => {
    const { body } = await rpc(a, "tl", "server/discover");
    assert.deepEqual(body.result.capabilities.extensions[EXTENSION], {});
  });

  it("makes a task of an http tool marked task-required, polled on the other replica", async () => {
    const created = await rpc(a, "tl", "tools/call", {
      name: "marked__work",
      arguments: { ms: 600, tag: "m1" },
    });
    assert.equal(created.status, 200);
    const task = created.body.result;
    assert.equal(task.resultType, "task");
    assert.equal(task.status, "working");
    assert.equal(typeof task.ttlMs, "number", "the lane keeps a task's ttlMs");
    assert.equal(task.pollIntervalMs, 200);
    assert.equal(task.cacheScope, undefined);
    assert.match(task.taskId, /^[A-Za-z0-9_-]{32,}$/);

    const done = await settled(b, "tl", task.taskId);
    assert.equal(done.status, "completed");
    assert.equal(done.resultType, "complete");
    assert.deepEqual(JSON.parse(done.result.content[0].text), { done: "m1" });
    assert.equal(done.result._meta?.["io.modelcontextprotocol/related-task"], undefined);
  });

  it("refuses a task-required tool and tasks/* to a client without the extension: -32021", async () => {
    const call = await rpc(
      a,
      "tl",
      "tools/call",
      { name: "marked__work", arguments: {} },
      { extension: false },
    );
    assert.equal(call.status, 400);
    assert.equal(call.body.error.code, -32021);
    assert.deepEqual(call.body.error.data.requiredCapabilities, { extensions: { [EXTENSION]: {} } });

    const created = await rpc(a, "tl", "tools/call", { name: "marked__work", arguments: { tag: "m2" } });
    const taskId = created.body.result.taskId as string;
    for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
      const refused = await rpc(b, "tl", method, { taskId, inputResponses: {} }, { extension: false });
      assert.equal(refused.body.error?.code, -32021, method);
    }
  });

  it("checks Mcp-Name against the task id, and has no tasks/result or tasks/list", async () => {
    const created = await rpc(a, "tl", "tools/call", { name: "marked__work", arguments: { tag: "m3" } });
    const taskId = created.body.result.taskId as string;
    const wrong = await rpc(a, "tl", "tasks/get", { taskId }, { name: "another" });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.code, -32020);
    for (const method of ["tasks/result", "tasks/list"]) {
      const missing = await rpc(a, "tl", method, { taskId });
      assert.equal(missing.status, 404, method);
      assert.equal(missing.body.error.code, -32601, method);
    }
    const unknown = await rpc(b, "tl", "tasks/get", { taskId: "x".repeat(32) });
    assert.equal(unknown.body.error.code, -32602);
  });

  it("answers a call within afterSeconds plainly, and makes a task of one still running", async () => {
    const quick = await rpc(a, "tl", "tools/call", { name: "later__work", arguments: { ms: 0, tag: "q" } });
    assert.equal(quick.body.result.resultType, "complete");
    assert.equal(quick.body.result.taskId, undefined);
    assert.deepEqual(JSON.parse(quick.body.result.content[0].text), { done: "q" });

    const started = Date.now();
    const slow = await rpc(a, "tl", "tools/call", {
      name: "later__work",
      arguments: { ms: 10_000, tag: "s1" },
    });
    const elapsed = Date.now() - started;
    assert.equal(slow.body.result.resultType, "task");
    assert.ok(elapsed >= 900 && elapsed < 5000, `became a task after ~1 s (${elapsed} ms)`);

    // Cancelled from the other replica: acknowledged, the upstream request closed.
    const taskId = slow.body.result.taskId as string;
    const ack = await rpc(b, "tl", "tasks/cancel", { taskId });
    assert.deepEqual({ ...ack.body.result, _meta: undefined }, { resultType: "complete", _meta: undefined });
    assert.equal((await settled(a, "tl", taskId)).status, "cancelled");
    for (let i = 0; i < 40 && !jobs.ended.includes("s1 aborted"); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.ok(jobs.ended.includes("s1 aborted"), jobs.ended.join(", "));
    // A task that ended is still acknowledged (cancellation is cooperative).
    assert.deepEqual((await rpc(a, "tl", "tasks/cancel", { taskId })).body.result.resultType, "complete");
  });

  it("asks a gateway-made task's question in inputRequests and answers it with tasks/update", async () => {
    const opts = { capabilities: { elicitation: {} } };
    const created = await rpc(a, "tl", "tools/call", { name: "ask__ask_name", arguments: {} }, opts);
    assert.equal(created.body.result?.resultType, "task", JSON.stringify(created.body));
    const taskId = created.body.result.taskId as string;
    const waiting = await settled(b, "tl", taskId, opts);
    assert.equal(waiting.status, "input_required", JSON.stringify(waiting));
    const [key, question] = Object.entries(waiting.inputRequests as Record<string, any>)[0]!;
    assert.equal(question.method, "elicitation/create");
    assert.equal(question.params.message, "Your name?");
    // An answer under another key is ignored; the task still waits.
    await rpc(b, "tl", "tasks/update", { taskId, inputResponses: { nope: { action: "decline" } } }, opts);
    assert.equal((await settled(a, "tl", taskId, opts)).status, "input_required");
    const ack = await rpc(
      b,
      "tl",
      "tasks/update",
      {
        taskId,
        inputResponses: { [key]: { action: "accept", content: { username: "Ada" } } },
      },
      opts,
    );
    assert.equal(ack.body.result.resultType, "complete");
    let done = await settled(a, "tl", taskId, opts);
    for (let i = 0; i < 30 && done.status === "input_required"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = await settled(a, "tl", taskId, opts);
    }
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(done.result.content[0].text, "Hello, Ada");
  });

  it("makes a -32042 the task's URL-mode inputRequests; tasks/update accepting them runs the call again", async () => {
    urlFlow.opened = false;
    urlFlow.calls = 0;
    const opts = { capabilities: { elicitation: { url: {} } } };
    const created = await rpc(a, "tl", "tools/call", { name: "ask__needs_url", arguments: {} }, opts);
    const taskId = created.body.result.taskId as string;
    const waiting = await settled(b, "tl", taskId, opts);
    assert.equal(waiting.status, "input_required", JSON.stringify(waiting));
    const [key, question] = Object.entries(waiting.inputRequests as Record<string, any>)[0]!;
    assert.equal(question.method, "elicitation/create");
    // 2026-07-28's URL mode has no elicitationId.
    assert.deepEqual(
      { ...question.params, _meta: undefined },
      { mode: "url", url: "https://auth.example/connect", message: "Connect", _meta: undefined },
    );
    urlFlow.opened = true;
    await rpc(b, "tl", "tasks/update", { taskId, inputResponses: { [key]: { action: "accept" } } }, opts);
    let done = await settled(a, "tl", taskId, opts);
    for (let i = 0; i < 30 && done.status === "input_required"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = await settled(a, "tl", taskId, opts);
    }
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(done.result.content[0].text, "connected");
    assert.equal(urlFlow.calls, 2);
  });

  it("fails a -32042 task the client declines, and one still -32042 after the bound; keys never repeat", async () => {
    const opts = { capabilities: { elicitation: { url: {} } } };
    /** Answers each question of the task with `action` until it ends; the keys it was asked under. */
    const answerAll = async (taskId: string, action: string) => {
      const keys: string[] = [];
      for (let i = 0; i < 100; i++) {
        const state = await settled(i % 2 ? a : b, "tl", taskId, opts);
        if (state.status !== "input_required") return { state, keys };
        const key = Object.keys(state.inputRequests as object)[0]!;
        if (keys.at(-1) !== key) keys.push(key);
        await rpc(a, "tl", "tasks/update", { taskId, inputResponses: { [key]: { action } } }, opts);
      }
      assert.fail("the task never ended");
    };
    urlFlow.calls = 0;
    const declined = await rpc(a, "tl", "tools/call", { name: "ask__always_url", arguments: {} }, opts);
    const first = await answerAll(declined.body.result.taskId as string, "decline");
    assert.equal(first.state.status, "failed");
    // No -32042 for a 2026-07-28 client: the provider's failure, saying what was answered.
    assert.equal(first.state.error.code, -32603);
    assert.match(first.state.error.message, /needs the user to open a URL first .*the answer was "decline"/);
    assert.equal(urlFlow.calls, 1);

    urlFlow.calls = 0;
    const endless = await rpc(a, "tl", "tools/call", { name: "ask__always_url", arguments: {} }, opts);
    const second = await answerAll(endless.body.result.taskId as string, "accept");
    assert.equal(second.state.status, "failed");
    assert.match(second.state.error.message, /still did after 3 runs again with every URL opened$/);
    assert.equal(urlFlow.calls, 4);
    assert.deepEqual(second.keys, ["q1", "q2", "q3"]);

    // A client that cannot open URLs is not asked to: failed at once, saying why.
    const blind = await rpc(
      a,
      "tl",
      "tools/call",
      { name: "ask__always_url", arguments: {} },
      {
        capabilities: { elicitation: {} },
      },
    );
    const refused = await settled(b, "tl", blind.body.result.taskId as string);
    assert.equal(refused.status, "failed", JSON.stringify(refused));
    assert.equal(refused.error.code, -32603);
    assert.match(refused.error.message, /did not declare URL-mode elicitation \(elicitation\.url\)$/);
  });

  it("leaves an unmarked tool a plain call", async () => {
    const plain = await rpc(a, "tl", "tools/call", { name: "plain__work", arguments: { ms: 0, tag: "p" } });
    assert.equal(plain.body.result.resultType, "complete");
  });
});

describe("the tasks extension passed through to a 2026-07-28 upstream", () => {
  it("is the upstream's task under Portico's id, on any replica", async () => {
    const created = await rpc(a, "tl", "tools/call", { name: "slow_compute", arguments: { seconds: 1 } });
    const task = created.body.result;
    assert.equal(task.resultType, "task");
    // The upstream knows its own id, not Portico's.
    const direct = await fetch(upstream.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tasks/get",
        "mcp-name": task.taskId,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tasks/get",
        params: {
          taskId: task.taskId,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": { extensions: { [EXTENSION]: {} } },
          },
        },
      }),
    });
    assert.equal(((await direct.json()) as { error?: { code: number } }).error?.code, -32602);
    const done = await settled(b, "tl", task.taskId);
    assert.equal(done.status, "completed");
    assert.equal(done.result.content[0].text, "Computed job in 1 s");
  });

  it("answers at once when the upstream does, and inlines tool errors and JSON-RPC errors", async () => {
    const greet = await rpc(a, "tl", "tools/call", { name: "greet", arguments: { name: "Ada" } });
    assert.equal(greet.body.result.resultType, "complete");
    assert.equal(greet.body.result.content[0].text, "Hello, Ada!");

    const failing = await rpc(a, "tl", "tools/call", { name: "failing_job", arguments: {} });
    const toolError = await settled(b, "tl", failing.body.result.taskId);
    assert.equal(
      toolError.status,
      "completed",
      "a tool error is a completed task (the extension's Task Status)",
    );
    assert.equal(toolError.result.isError, true);

    const crashing = await rpc(a, "tl", "tools/call", { name: "protocol_error_job", arguments: {} });
    const failed = await settled(b, "tl", crashing.body.result.taskId);
    assert.equal(failed.status, "failed");
    assert.equal(failed.error.code, -32603);
    assert.match(failed.error.message, /worker crashed/);
  });

  it("carries the upstream's inputRequests and the client's tasks/update", async () => {
    const opts = { capabilities: { elicitation: {} } };
    const created = await rpc(
      a,
      "tl",
      "tools/call",
      { name: "confirm_delete", arguments: { filename: "a.txt" } },
      opts,
    );
    const taskId = created.body.result.taskId as string;
    const asking = await settled(b, "tl", taskId, opts);
    assert.equal(asking.status, "input_required");
    const [key, request] = Object.entries(asking.inputRequests as Record<string, any>)[0]!;
    assert.equal(request.method, "elicitation/create");
    const ack = await rpc(
      a,
      "tl",
      "tasks/update",
      {
        taskId,
        inputResponses: { [key]: { action: "accept", content: { confirm: true } } },
      },
      opts,
    );
    assert.equal(ack.body.result.resultType, "complete");
    let done = await settled(b, "tl", taskId, opts);
    for (let i = 0; i < 20 && done.status === "input_required"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = await settled(b, "tl", taskId, opts);
    }
    assert.equal(done.status, "completed");
    assert.equal(done.result.content[0].text, "Deleted a.txt");
  });
});

describe("a session-era upstream's task to a 2026-07-28 client (the eras bridged)", () => {
  it("runs server-everything's simulate-research-query as the upstream's task, polled on the other replica", async () => {
    const created = await rpc(a, "tl", "tools/call", {
      name: "ev__simulate-research-query",
      arguments: { topic: "tides" },
    });
    assert.equal(created.body.result?.resultType, "task", JSON.stringify(created.body));
    const done = await settled(b, "tl", created.body.result.taskId, {}, 20_000);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result.content), /tides/);
    assert.equal(done.result._meta?.["io.modelcontextprotocol/related-task"], undefined);
  });

  it("shows the question it asks on its tasks/result stream as inputRequests, answered by tasks/update", async () => {
    const opts = { capabilities: { elicitation: {} } };
    const created = await rpc(
      a,
      "tl",
      "tools/call",
      { name: "ev__simulate-research-query", arguments: { topic: "tides", ambiguous: true } },
      opts,
    );
    const taskId = created.body.result.taskId as string;
    // The first tasks/get finding it input_required opens the upstream's tasks/result; a later one shows its question.
    // (Until then it is input_required with no questions: `inputRequests: {}`.)
    const asked = (state: Record<string, any>) => Object.keys(state.inputRequests ?? {}).length > 0;
    let waiting: Record<string, any> = {};
    for (let i = 0; i < 80 && !asked(waiting); i++) {
      waiting = await settled(b, "tl", taskId, opts, 20_000);
      assert.ok(["working", "input_required"].includes(waiting.status), JSON.stringify(waiting));
      if (!asked(waiting)) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(asked(waiting), `no question shown: ${JSON.stringify(waiting)}`);
    const [key, question] = Object.entries(waiting.inputRequests as Record<string, any>)[0]!;
    assert.equal(question.method, "elicitation/create");
    assert.match(question.params.message, /tides/);
    assert.equal(question.params._meta["io.modelcontextprotocol/related-task"].taskId, taskId);
    const choice = question.params.requestedSchema.properties.interpretation.oneOf[0].const as string;
    // An answer under another key is ignored.
    await rpc(a, "tl", "tasks/update", { taskId, inputResponses: { nope: { action: "decline" } } }, opts);
    const ack = await rpc(
      a,
      "tl",
      "tasks/update",
      { taskId, inputResponses: { [key]: { action: "accept", content: { interpretation: choice } } } },
      opts,
    );
    assert.equal(ack.body.result?.resultType, "complete", JSON.stringify(ack.body));
    let done = await settled(a, "tl", taskId, opts, 20_000);
    for (let i = 0; i < 80 && done.status !== "completed" && done.status !== "failed"; i++) {
      await new Promise((r) => setTimeout(r, 250));
      done = await settled(a, "tl", taskId, opts, 20_000);
    }
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.ok(JSON.stringify(done.result.content).includes(choice), JSON.stringify(done.result.content));
  });
});

describe("the tasks extension on a tenant with authentication", () => {
  it("binds a task to its user: another user's id is an unknown task", async () => {
    const created = await rpc(
      a,
      "ta",
      "tools/call",
      { name: "work", arguments: { ms: 1500, tag: "u" } },
      { user: "alice" },
    );
    const taskId = created.body.result.taskId as string;
    assert.equal(
      (await rpc(b, "ta", "tasks/get", { taskId }, { user: "alice" })).body.result.status,
      "working",
    );
    for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
      const theirs = await rpc(b, "ta", method, { taskId, inputResponses: {} }, { user: "bob" });
      assert.equal(theirs.body.error?.code, -32602, method);
      assert.match(theirs.body.error.message, /Task not found/);
    }
    assert.equal((await settled(a, "ta", taskId, { user: "alice" })).status, "completed");
  });

  it("sends notifications/tasks on a listen stream naming the caller's own tasks only", async () => {
    const mine = await rpc(
      a,
      "ta",
      "tools/call",
      { name: "work", arguments: { ms: 800, tag: "l1" } },
      { user: "alice" },
    );
    const theirs = await rpc(
      a,
      "ta",
      "tools/call",
      { name: "work", arguments: { ms: 0, tag: "l2" } },
      { user: "bob" },
    );
    const mineId = mine.body.result.taskId as string;
    const theirsId = theirs.body.result.taskId as string;

    const refused = await rpc(
      b,
      "ta",
      "subscriptions/listen",
      { notifications: { taskIds: [mineId] } },
      {
        user: "alice",
        extension: false,
      },
    );
    assert.equal(refused.body.error?.code, -32021);

    const res = await send(
      b,
      "ta",
      "subscriptions/listen",
      { notifications: { taskIds: [mineId, theirsId] } },
      {
        user: "alice",
      },
    );
    assert.equal(res.status, 200);
    const events = await readEvents(res, (e) =>
      e.some((x) => (JSON.parse(x.data) as { params?: { status?: string } }).params?.status === "completed"),
    );
    const messages = events.map((e) => JSON.parse(e.data) as { method: string; params: Record<string, any> });
    assert.equal(messages[0]!.method, "notifications/subscriptions/acknowledged");
    assert.deepEqual(messages[0]!.params.notifications.taskIds, [mineId], "bob's task is not followed");
    const last = messages.at(-1)!;
    assert.equal(last.method, "notifications/tasks");
    assert.equal(last.params.taskId, mineId);
    assert.deepEqual(JSON.parse(last.params.result.content[0].text), { done: "l1" });
    assert.ok(messages.every((m) => m.params.taskId !== theirsId));
  });
});

/** A third replica in its own process, to be killed, and `rpc`'s way to it. */
async function doomedReplica() {
  const port = await freePort();
  const doomed = await startReplicaProcess({
    tenants,
    redisPrefix: prefix,
    port,
    env: { ...ENV, PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
  const via = { mcpUrl: (t: string) => `${doomed.url}/mcp/${t}` } as unknown as RunningPortico;
  return { doomed, via };
}

describe("the replica running a 10 s gateway-made task is killed", () => {
  it("an idempotent task is run again by a survivor and completes; any other fails, saying why", async () => {
    const { doomed, via } = await doomedReplica();
    try {
      const plain = await rpc(via, "tl", "tools/call", {
        name: "marked__work",
        arguments: { ms: 10_000, tag: "k-plain" },
      });
      const read = await rpc(via, "tl", "tools/call", {
        name: "reads__read",
        arguments: { ms: 10_000, tag: "k-read" },
      });
      for (const made of [plain, read])
        assert.equal(made.body.result?.resultType, "task", JSON.stringify(made.body));
      // Polled from the other replicas while it runs.
      assert.equal(
        (await rpc(a, "tl", "tasks/get", { taskId: plain.body.result.taskId })).body.result.status,
        "working",
      );
      await new Promise((r) => setTimeout(r, 500));
      await doomed.kill();

      // Within the heartbeat's TTL, a poll on a survivor finds the replica gone.
      let failed: Record<string, any> = {};
      for (let i = 0; i < 40; i++) {
        failed = (await rpc(b, "tl", "tasks/get", { taskId: plain.body.result.taskId })).body.result;
        if (failed.status !== "working") break;
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.equal(failed.status, "failed", JSON.stringify(failed));
      assert.match(failed.statusMessage, /^Interrupted: the gateway replica running this task stopped/);
      assert.equal(failed.error?.code, -32003, JSON.stringify(failed));

      const rerun = (await rpc(a, "tl", "tasks/get", { taskId: read.body.result.taskId })).body.result;
      assert.equal(rerun.status, "working", JSON.stringify(rerun));
      assert.equal(rerun.statusMessage, "Run again: the gateway replica running it stopped");
      const done = await settled(b, "tl", read.body.result.taskId, {}, 15_000);
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.deepEqual(JSON.parse(done.result.content[0].text), { done: "k-read" });
      assert.equal(
        jobs.ended.filter((e) => e === "k-read finished").length,
        1,
        "the survivor's run finished",
      );
    } finally {
      await doomed.kill().catch(() => undefined);
    }
  });
});

describe("a gateway-made task run again after its replica died", () => {
  it("numbers its inputRequests on from the first run's: a key is never given twice", async () => {
    const { doomed, via } = await doomedReplica();
    try {
      const opts = { capabilities: { elicitation: {} } };
      const created = await rpc(via, "tl", "tools/call", { name: "ask__ask_twice", arguments: {} }, opts);
      const taskId = created.body.result.taskId as string;
      const first = await settled(via, "tl", taskId, opts);
      assert.equal(first.status, "input_required", JSON.stringify(first));
      assert.deepEqual(Object.keys(first.inputRequests as object), ["q1"]);
      await doomed.kill();

      // A survivor takes it over (within the heartbeat's TTL) and runs it again: its first
      // question again, under a new key.
      let again: Record<string, any> = first;
      for (let i = 0; i < 60 && Object.keys(again.inputRequests ?? {})[0] !== "q2"; i++) {
        await new Promise((r) => setTimeout(r, 250));
        again = await settled(a, "tl", taskId, opts);
      }
      assert.equal(again.status, "input_required", JSON.stringify(again));
      const [key, question] = Object.entries(again.inputRequests as Record<string, any>)[0]!;
      assert.equal(key, "q2");
      assert.equal(question.params.message, "Question 1?");
      // The first run's key answers nothing.
      await rpc(
        b,
        "tl",
        "tasks/update",
        { taskId, inputResponses: { q1: { action: "accept", content: {} } } },
        opts,
      );
      assert.deepEqual(Object.keys((await settled(b, "tl", taskId, opts)).inputRequests as object), ["q2"]);
      await rpc(
        b,
        "tl",
        "tasks/update",
        { taskId, inputResponses: { q2: { action: "accept", content: {} } } },
        opts,
      );
      let next = await settled(b, "tl", taskId, opts);
      for (let i = 0; i < 30 && Object.keys(next.inputRequests ?? {})[0] === "q2"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        next = await settled(b, "tl", taskId, opts);
      }
      assert.deepEqual(Object.keys(next.inputRequests as object), ["q3"]);
      await rpc(b, "tl", "tasks/cancel", { taskId }, opts);
    } finally {
      await doomed.kill().catch(() => undefined);
    }
  });
});
