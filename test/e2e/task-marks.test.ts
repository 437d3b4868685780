// Task marks through Portico (docs/upstream-mcp.md "Task marks"), as clients see them: an `http`
// provider's and an `mcp` upstream's (server-everything) tools listed with the admin's mark as
// `execution.taskSupport` to the official SDK client (2025-11-25) and to 2026-07-28 clients; an
// upstream's own `execution` unchanged where nothing is marked; a mark set through the admin API
// winning over the upstream's; clients of 2025-06-18 shown no mark Portico added.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient } from "../support/clients.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { openSession, postRpc } from "../support/rpc.js";
import { readEvents } from "../support/sse.js";

const RESEARCH = "ev__simulate-research-query";
const LONG = "ev__trigger-long-running-operation";
const ECHO = "ev__echo";

let everything: EverythingServer;
let portico: RunningPortico;
let admin: AdminClient;
const service = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
});

before(async () => {
  await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  everything = await startEverything();
  portico = await startPortico({
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [
          {
            id: "wx",
            kind: "http",
            tools: [
              { name: "export_report", url: `${base}/export` },
              { name: "get_weather", url: `${base}/weather` },
            ],
            tasks: { tools: { "export_*": "required" }, afterSeconds: 20 },
          },
          { id: "ev", kind: "mcp", prefix: "ev", url: everything.url },
        ],
      },
    ],
  });
  admin = new AdminClient(portico.url);
});
after(async () => {
  await portico?.close();
  await everything?.stop();
  service.close();
});

const supportOf = (tools: readonly Tool[], name: string) =>
  tools.find((t) => t.name === name)?.execution?.taskSupport;

/** tools/list as the official SDK client (2025-11-25) sees it, on a new session. */
function sdkTools(): Promise<Tool[]> {
  return listed(portico.mcpUrl("acme"));
}

/** tools/list of the official SDK client at `url`. */
async function listed(url: string): Promise<Tool[]> {
  const { client } = await connectClient(url);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

/** tools/list on a raw session of `protocolVersion`. */
async function rawTools(protocolVersion: string): Promise<Tool[]> {
  const url = portico.mcpUrl("acme");
  const sid = await openSession(url, protocolVersion);
  await postRpc(url, { jsonrpc: "2.0", method: "notifications/initialized" }, sid);
  const res = await postRpc(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, sid, {
    headers: { "mcp-protocol-version": protocolVersion },
  });
  return (await bodyOf(res)).result.tools;
}

/** tools/list of a 2026-07-28 client (no session). */
async function statelessTools(): Promise<Tool[]> {
  const res = await fetch(portico.mcpUrl("acme"), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
        },
      },
    }),
  });
  return (await bodyOf(res)).result.tools;
}

/** A JSON-RPC answer, as JSON or as the last event of an SSE stream. */
async function bodyOf(res: Response): Promise<any> {
  assert.equal(res.status, 200);
  if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return res.json();
  const events = await readEvents(res);
  return JSON.parse(events.at(-1)!.data);
}

describe("task marks as clients list them", () => {
  it("an http provider's marked tools carry the mark; the others none", async () => {
    const tools = await sdkTools();
    assert.equal(supportOf(tools, "export_report"), "required");
    assert.equal(tools.find((t) => t.name === "get_weather")?.execution, undefined);
  });

  it("without a mark, an mcp upstream's own execution passes through unchanged", async () => {
    const direct = await listed(everything.url);
    const tools = await sdkTools();
    // server-everything declares its research tool task-required (SEP-1686), the others forbidden.
    assert.equal(supportOf(direct, "simulate-research-query"), "required");
    for (const tool of direct)
      assert.deepEqual(
        tools.find((t) => t.name === `ev__${tool.name}`)?.execution,
        tool.execution,
        tool.name,
      );
  });

  it("a mark saved through the admin API wins over the upstream's, for every client that knows tasks", async () => {
    const saved = await admin.patch("/tenants/acme/providers/ev", {
      tasks: { tools: { "simulate-research-query": "optional", "trigger-long-*": "required" } },
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual((await admin.get("/tenants/acme/providers/ev")).body.tasks, {
      tools: { "simulate-research-query": "optional", "trigger-long-*": "required" },
    });
    for (const [who, list] of [
      ["the SDK client (2025-11-25)", sdkTools],
      ["a 2026-07-28 client", statelessTools],
    ] as const) {
      const tools = await eventually(list, (t) => supportOf(t, RESEARCH) === "optional");
      assert.equal(supportOf(tools, RESEARCH), "optional", who);
      assert.equal(supportOf(tools, LONG), "required", who);
      assert.equal(supportOf(tools, ECHO), "forbidden", who);
      assert.equal(supportOf(tools, "export_report"), "required", who);
    }
  });

  it("a client of 2025-06-18 sees no mark Portico added, and the upstream's own", async () => {
    const tools = await rawTools("2025-06-18");
    assert.equal(tools.find((t) => t.name === "export_report")?.execution, undefined);
    assert.equal(supportOf(tools, LONG), "forbidden", "the upstream's own, not the admin's required");
    assert.equal(supportOf(tools, RESEARCH), "required", "the upstream's own, not the admin's optional");
    // The same session lists the marks once it speaks a revision that knows tasks.
    assert.equal(supportOf(await rawTools("2025-11-25"), "export_report"), "required");
  });

  it("a save that marks a static provider is refused, and the marks stay as they were", async () => {
    const refused = await admin.post("/tenants/acme/providers", {
      id: "docs",
      kind: "static",
      tasks: { tools: { "*": "required" } },
    });
    assert.equal(refused.status, 422);
    assert.equal(refused.body.pointer, "/tasks");
    assert.match(refused.body.detail, /static providers have no tools to mark/);
    assert.equal(supportOf(await sdkTools(), "export_report"), "required");
  });
});

/** Lists until `done` holds (a provider saved a moment ago is rebuilt in the background). */
async function eventually(list: () => Promise<Tool[]>, done: (tools: Tool[]) => boolean): Promise<Tool[]> {
  const until = Date.now() + 5000;
  for (;;) {
    const tools = await list();
    if (done(tools) || Date.now() > until) return tools;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
