// Tasks on a tenant that authenticates its callers (2025-11-25 tasks "Security Considerations";
// docs/upstream-mcp.md#tasks): a task belongs to its user, so another session of the same user polls
// it from another replica and tasks/list (offered here) pages through the user's tasks only; another
// user's tasks/get, tasks/result, tasks/cancel of the id is an unknown task, and their list is empty.
// Callers are named with the process's internal passes (src/mcp/internal-callers.ts), one a request.
// Without authentication a 2026-07-28 request has neither user nor session: its tasks are the
// tenant's (the id is the bearer), and the caps and the polling limit count client addresses.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { tryCaller } from "../../src/admin/try-it.js";
import { INTERNAL_CALLER_HEADER } from "../../src/mcp/internal-callers.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort, uniquePrefix } from "../support/redis.js";
import { MCP_HEADERS } from "../support/rpc.js";

let a: RunningPortico;
let b: RunningPortico;
let jobs: ReturnType<typeof createServer>;

before(async () => {
  // Answers after `ms`.
  jobs = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const { ms = 0 } = JSON.parse(body || "{}") as { ms?: number };
      setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'), ms);
    });
  });
  await new Promise<void>((resolve) => jobs.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(jobs.address() as AddressInfo).port}/`;
  const tenants = [
    {
      id: "acme",
      auth: "oauth",
      providers: [{ id: "jobs", kind: "http", tools: [{ name: "work", description: "Works", url }] }],
    } as TenantConfig,
  ];
  const prefix = uniquePrefix();
  const start = async () => {
    const port = await freePort();
    return startPortico({
      tenants,
      redisPrefix: prefix,
      env: { PORT: String(port), PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`, PORTICO_PAGE_SIZE: "2" },
    });
  };
  a = await start();
  b = await start();
});

after(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  jobs?.closeAllConnections();
  await new Promise<void>((resolve) => jobs?.close(() => resolve()));
});

type Rpc = { result?: Record<string, any>; error?: { code: number; message: string } };

/** A POST as `user` at replica `at` (a pass that replica issued), on session `sid` when given. */
async function post(at: RunningPortico, user: string, body: object, sid?: string): Promise<Response> {
  return fetch(at.mcpUrl("acme"), {
    method: "POST",
    headers: {
      ...MCP_HEADERS,
      "mcp-protocol-version": "2025-11-25",
      [INTERNAL_CALLER_HEADER]: at.internalCallers.issue(tryCaller({ sub: user }), { tenant: "acme" }),
      ...(sid && { "mcp-session-id": sid }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
  });
}

async function open(at: RunningPortico, user: string) {
  const res = await post(at, user, {
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: { tasks: {} },
      clientInfo: { name: "t", version: "1" },
    },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as Rpc;
  return { sid: res.headers.get("mcp-session-id")!, capabilities: body.result!.capabilities };
}

async function rpc(at: RunningPortico, user: string, sid: string, method: string, params: object = {}) {
  return (await (await post(at, user, { method, params }, sid)).json()) as Rpc;
}

describe("tasks of authenticated callers", () => {
  it("belong to the user: another session polls and lists them, another user sees nothing", async () => {
    const alice1 = await open(a, "alice");
    assert.deepEqual(alice1.capabilities.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await rpc(a, "alice", alice1.sid, "tools/call", {
        name: "work",
        arguments: { ms: i === 0 ? 2000 : 0 },
        task: {},
      });
      ids.push(created.result!.task.taskId);
    }

    // Another session of alice's, on the other replica.
    const alice2 = await open(b, "alice");
    assert.equal(
      (await rpc(b, "alice", alice2.sid, "tasks/get", { taskId: ids[0] })).result!.status,
      "working",
    );
    const first = await rpc(b, "alice", alice2.sid, "tasks/list");
    assert.equal(first.result!.tasks.length, 2);
    assert.ok(first.result!.nextCursor);
    const second = await rpc(a, "alice", alice1.sid, "tasks/list", { cursor: first.result!.nextCursor });
    assert.equal(second.result!.tasks.length, 1);
    assert.equal(second.result!.nextCursor, undefined);
    assert.deepEqual(
      [...first.result!.tasks, ...second.result!.tasks].map((t: { taskId: string }) => t.taskId).sort(),
      [...ids].sort(),
    );
    const forged = await rpc(a, "alice", alice1.sid, "tasks/list", { cursor: "zz.forged" });
    assert.equal(forged.error?.code, -32602);

    // Bob, on either replica, finds none of them.
    const bob = await open(a, "bob");
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const refused = await rpc(b, "bob", bob.sid, method, { taskId: ids[0] });
      assert.equal(refused.error?.code, -32602, method);
      assert.equal(refused.error?.message, "Failed to retrieve task: Task not found");
    }
    assert.deepEqual((await rpc(b, "bob", bob.sid, "tasks/list")).result!.tasks, []);

    const result = await rpc(b, "alice", alice2.sid, "tasks/result", { taskId: ids[0] });
    assert.deepEqual(result.result!.structuredContent, { ok: true });
    assert.equal(
      (await rpc(a, "alice", alice1.sid, "tasks/get", { taskId: ids[0] })).result!.status,
      "completed",
    );
  });
});

describe("tasks of anonymous 2026-07-28 callers", () => {
  it("are counted per client address: one address at its caps leaves another's tasks and polls alone", async () => {
    const url = `http://127.0.0.1:${(jobs.address() as AddressInfo).port}/`;
    const port = await freePort();
    const open = await startPortico({
      tenants: [
        {
          id: "open",
          auth: "none",
          providers: [
            {
              id: "jobs",
              kind: "http",
              tools: [{ name: "work", description: "Works", url }],
              tasks: { tools: { work: "required" } },
            },
          ],
        },
      ],
      redisPrefix: uniquePrefix(),
      env: {
        PORT: String(port),
        PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
        PORTICO_MAX_TASKS_PER_CALLER: "2",
        PORTICO_TASK_POLLS_PER_MINUTE: "4",
        PORTICO_TRUSTED_PROXIES: "127.0.0.1/32",
      },
    });
    // Two clients, as the proxy in front of Portico names them.
    const from = ["198.51.100.1", "198.51.100.2"];
    const call = async (client: number, method: string, params: Record<string, unknown>) => {
      const res = await fetch(open.mcpUrl("open"), {
        method: "POST",
        headers: {
          ...MCP_HEADERS,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
          "mcp-name": String(params.name ?? params.taskId),
          "x-forwarded-for": from[client]!,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method,
          params: {
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {
                extensions: { "io.modelcontextprotocol/tasks": {} },
              },
              "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
            },
          },
        }),
      });
      return (await res.json()) as Rpc;
    };
    try {
      const work = { name: "work", arguments: { ms: 3000 } };
      const mine = [await call(0, "tools/call", work), await call(0, "tools/call", work)];
      for (const made of mine) assert.equal(made.result?.resultType, "task", JSON.stringify(made));
      const third = await call(0, "tools/call", work);
      assert.equal(third.error?.code, -31004, JSON.stringify(third));
      assert.match(third.error.message, /this caller has 2 live tasks/);
      // Another address has caps of its own (everyone without a user would be one caller else).
      const theirs = await call(1, "tools/call", work);
      assert.equal(theirs.result?.resultType, "task", JSON.stringify(theirs));

      // The id is what binds: the other address may poll it; polls count per address too.
      const id = theirs.result.taskId as string;
      for (let i = 0; i < 4; i++) assert.ok((await call(0, "tasks/get", { taskId: id })).result, `poll ${i}`);
      const limited = await call(0, "tasks/get", { taskId: id });
      assert.equal(limited.error?.code, -31004, JSON.stringify(limited));
      assert.equal((await call(1, "tasks/get", { taskId: id })).result?.taskId, id);

      // The metrics: three started by Portico, one refused at a cap, one cancelled, two completed.
      assert.ok((await call(1, "tasks/cancel", { taskId: id })).result);
      const count = async (series: string) => {
        const line = (await open.metrics.scrape()).split("\n").find((l) => l.startsWith(`${series} `));
        return Number(line?.split(" ")[1] ?? 0);
      };
      assert.equal(await count('portico_tasks_started_total{tenant="open",origin="gateway"}'), 3);
      assert.equal(await count('portico_rate_limited_total{surface="mcp",scope="tasks"}'), 1);
      assert.equal(await count('portico_tasks_ended_total{tenant="open",status="cancelled"}'), 1);
      const deadline = Date.now() + 8000;
      while ((await count('portico_tasks_ended_total{tenant="open",status="completed"}')) < 2) {
        assert.ok(Date.now() < deadline, "the two other tasks complete");
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(await count('portico_task_duration_seconds_count{tenant="open"}'), 3);
      assert.ok(
        (await count('portico_task_duration_seconds_bucket{tenant="open",le="1"}')) >= 1,
        "the cancelled one",
      );
      assert.equal(await count('portico_task_duration_seconds_bucket{tenant="open",le="5"}'), 3);
    } finally {
      await open.close();
    }
  });
});
