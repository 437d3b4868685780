// Virtual servers (docs/architecture.md §8) end to end: two servers of one tenant over two real
// upstreams (official SDK), two replicas on one Redis, official SDK clients of both eras. Each
// server lists its selection with its renames and overrides, routes a new name to the original,
// refuses the old one like an unknown tool, keeps its sessions to itself, and hears list_changed
// only when its own view changed.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TenantConfig } from "../../src/records/tenant.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startDynamicUpstream, type DynamicUpstream } from "../fixtures/dynamic-server.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { MCP_HEADERS, openSession, postRpc } from "../support/rpc.js";

let conformance: Awaited<ReturnType<typeof startConformanceUpstream>>;
let dynamic: DynamicUpstream;
let gating: { url: string; close(): Promise<void> };
let a: RunningPortico;
let b: RunningPortico;
let admin: AdminClient;

const ENG = {
  id: "eng",
  name: "Engineering",
  providers: [
    {
      provider: "dyn",
      tools: ["echo"],
      overrides: {
        tools: {
          echo: {
            name: "say",
            title: "Say",
            description: "Says the text back",
            annotations: { readOnlyHint: true },
          },
        },
      },
    },
    {
      provider: "ref",
      tools: ["test_simple_text"],
      prompts: ["test_simple_prompt"],
      resources: ["test://static-text"],
      overrides: { prompts: { test_simple_prompt: { name: "simple", description: "Plain" } } },
    },
  ],
};
const OPS = { id: "ops", providers: [{ provider: "dyn" }] };
const GATED = {
  id: "gated",
  providers: [{ provider: "gate", overrides: { tools: { summarize: { name: "digest" } } } }],
};

/**
 * An upstream (official SDK, stateless) that lists "summarize" only to clients that declared
 * sampling, and "plain" to everyone: what Portico keeps one catalog per capability profile for.
 */
async function startGatingUpstream() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const sid = req.headers["mcp-session-id"];
      const known = typeof sid === "string" ? sessions.get(sid) : undefined;
      if (known) return known.handleRequest(req, res);
      const server = new Server({ name: "gating", version: "1" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          { name: "plain", inputSchema: { type: "object" as const } },
          ...(server.getClientCapabilities()?.sampling
            ? [{ name: "summarize", inputSchema: { type: "object" as const } }]
            : []),
        ],
      }));
      server.setRequestHandler(CallToolRequestSchema, async (req) => ({
        content: [{ type: "text", text: `called ${req.params.name}` }],
      }));
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

before(async () => {
  conformance = await startConformanceUpstream();
  dynamic = await startDynamicUpstream();
  gating = await startGatingUpstream();
  const tenants: TenantConfig[] = [
    {
      id: "acme",
      auth: "none",
      providers: [
        { id: "ref", kind: "mcp", url: conformance.url },
        { id: "dyn", kind: "mcp", url: dynamic.url, prefix: "dyn" },
        { id: "gate", kind: "mcp", url: gating.url, era: "session" },
      ],
      servers: [ENG, OPS, GATED],
    },
    { ...staticTenant("other"), servers: [{ id: "docs", providers: [{ provider: "docs" }] }] },
  ];
  const prefix = uniquePrefix();
  const env = { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN };
  a = await startPortico({ redisPrefix: prefix, tenants, env });
  b = await startPortico({ redisPrefix: prefix, tenants, env });
  admin = new AdminClient(b.url);
});
after(async () => {
  await Promise.all([a.close(), b.close()]);
  await Promise.all([conformance.close(), dynamic.close(), gating.close()]);
});

/** Every HTTP request of a client goes to the replica after the one before. */
function alternate() {
  let next = 0;
  const ports = [new URL(a.url).port, new URL(b.url).port];
  return (url: URL) => {
    const routed = new URL(url);
    routed.port = ports[next++ % 2]!;
    return routed;
  };
}

async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: number; message: string };
  }
  assert.fail("expected a JSON-RPC error");
}

describe("what a server lists and routes", () => {
  it("lists its selection with renames and overrides; the tenant URL lists everything", async () => {
    const { client } = await connectClient(`${a.url}/mcp/acme/eng`, { route: alternate() });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["say", "test_simple_text"],
    );
    const say = tools.find((t) => t.name === "say")!;
    assert.equal(say.title, "Say");
    assert.equal(say.description, "Says the text back");
    assert.equal(say.annotations?.readOnlyHint, true);
    assert.deepEqual(Object.keys(say.inputSchema.properties ?? {}), ["text"]);
    const { prompts } = await client.listPrompts();
    assert.deepEqual(
      prompts.map((p) => [p.name, p.description]),
      [["simple", "Plain"]],
    );
    const { resources } = await client.listResources();
    assert.deepEqual(
      resources.map((r) => r.uri),
      ["test://static-text"],
    );
    assert.match(client.getServerVersion()?.title ?? "", /acme · Engineering$/);
    const whole = await connectClient(a.mcpUrl("acme"));
    const all = (await whole.client.listTools()).tools.map((t) => t.name);
    assert.ok(all.includes("dyn__echo") && all.includes("dyn__slow") && all.includes("test_sampling"));
    assert.ok(!all.includes("say"));
    await whole.client.close();
    await client.close();
  });

  it("a new name reaches the original; the old and exposed names are unknown there", async () => {
    const { client } = await connectClient(`${a.url}/mcp/acme/eng`, { route: alternate() });
    const said = await client.callTool({ name: "say", arguments: { text: "hello" } });
    assert.deepEqual(said.content, [{ type: "text", text: "hello" }]);
    const prompt = await client.getPrompt({ name: "simple" });
    assert.match(JSON.stringify(prompt.messages), /simple prompt for testing/);
    const read = await client.readResource({ uri: "test://static-text" });
    assert.ok(read.contents.length > 0);
    for (const name of ["echo", "dyn__echo", "dyn__slow", "test_sampling"]) {
      const err = await rpcError(client.callTool({ name, arguments: { text: "x" } }));
      assert.equal(err.code, -32602, name);
      assert.match(err.message, /Unknown tool/, name);
    }
    assert.equal((await rpcError(client.getPrompt({ name: "test_simple_prompt" }))).code, -32602);
    const hidden = await rpcError(client.readResource({ uri: "test://static-binary" }));
    assert.match(hidden.message, /Resource not found/);
    await client.close();
  });

  it("a whole provider keeps its exposed names", async () => {
    const { client } = await connectClient(`${a.url}/mcp/acme/ops`);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names.slice(0, 2), ["dyn__echo", "dyn__slow"]);
    const echoed = await client.callTool({ name: "dyn__echo", arguments: { text: "ops" } });
    assert.deepEqual(echoed.content, [{ type: "text", text: "ops" }]);
    await client.close();
  });
});

describe("capability profiles", () => {
  it("a server's lists follow the client's capabilities, as the tenant's do", async () => {
    const sampling = await connectClient(`${a.url}/mcp/acme/gated`);
    assert.deepEqual(
      (await sampling.client.listTools()).tools.map((t) => t.name),
      ["plain", "digest"],
    );
    const called = await sampling.client.callTool({ name: "digest" });
    assert.deepEqual(called.content, [{ type: "text", text: "called summarize" }]);
    await sampling.client.close();
    const bare = await connectClient(`${b.url}/mcp/acme/gated`, { capabilities: false });
    assert.deepEqual(
      (await bare.client.listTools()).tools.map((t) => t.name),
      ["plain"],
    );
    assert.equal((await rpcError(bare.client.callTool({ name: "digest" }))).code, -32602);
    await bare.client.close();
  });
});

describe("where a server is, and whose sessions it serves", () => {
  it("a server of another tenant, or none, is 404", async () => {
    for (const path of ["/mcp/acme/docs", "/mcp/other/eng", "/mcp/acme/nope", "/mcp/nobody/eng"]) {
      const res = await postRpc(`${a.url}${path}`, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      assert.equal(res.status, 404, path);
      const body = (await res.json()) as { error: { message: string } };
      assert.match(body.error.message, /^Unknown (server|tenant)/, path);
    }
  });

  it("a session opened on one URL of the tenant is 404 on its others", async () => {
    const sid = await openSession(`${a.url}/mcp/acme/eng`);
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const own = await postRpc(`${b.url}/mcp/acme/eng`, list, sid);
    assert.equal(own.status, 200);
    for (const url of [`${b.url}/mcp/acme/ops`, `${b.url}/mcp/acme`]) {
      const res = await postRpc(url, list, sid);
      assert.equal(res.status, 404, url);
    }
    assert.equal((await admin.get(`/tenants/acme/sessions/${sid}`)).body.server, "eng");
    const root = await openSession(`${a.url}/mcp/acme`);
    assert.equal((await admin.get(`/tenants/acme/sessions/${root}`)).body.server, undefined);
    assert.equal((await postRpc(`${a.url}/mcp/acme/eng`, list, root)).status, 404);
  });

  it("the legacy HTTP+SSE transport of a server names its own endpoint; other URLs do not know its session", async () => {
    const abort = new AbortController();
    const stream = await fetch(`${a.url}/mcp/acme/eng/sse`, {
      headers: { accept: "text/event-stream" },
      signal: abort.signal,
    });
    assert.equal(stream.status, 200);
    // Read without letting go of the stream: on this transport the stream is the session.
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n\n")) text += (await reader.read()).value ?? "";
    const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)?.[1] ?? "";
    assert.match(endpoint, /^\/mcp\/acme\/eng\/messages\?sessionId=[A-Za-z0-9_-]+$/);
    const sid = new URL(endpoint, a.url).searchParams.get("sessionId")!;
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    for (const path of ["/mcp/acme/messages", "/mcp/acme/ops/messages"]) {
      const res = await postRpc(`${b.url}${path}?sessionId=${sid}`, init);
      assert.equal(res.status, 404, path);
    }
    const right = await postRpc(`${b.url}/mcp/acme/eng/messages?sessionId=${sid}`, init);
    assert.equal(right.status, 202, await right.text());
    abort.abort();
  });

  it("the legacy HTTP+SSE transport of a server lists its selection to the SDK client", async () => {
    const client = new Client({ name: "legacy", version: "1" });
    await client.connect(new SSEClientTransport(new URL(`${a.url}/mcp/acme/eng/sse`)));
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ["say", "test_simple_text"]);
    const said = await client.callTool({ name: "say", arguments: { text: "legacy" } });
    assert.deepEqual(said.content, [{ type: "text", text: "legacy" }]);
    await client.close();
  });
});

describe("a 2026-07-28 client", () => {
  it("discovers, lists and calls through a server, each request on the other replica", async () => {
    const client = new V2Client(
      { name: "v2", version: "1.0.0" },
      { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const ports = [new URL(a.url).port, new URL(b.url).port];
    let next = 0;
    const fetchAlternating: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.port = ports[next++ % 2]!;
      return fetch(url, init);
    };
    await client.connect(new V2Transport(new URL(`${a.url}/mcp/acme/eng`), { fetch: fetchAlternating }));
    assert.equal(client.getProtocolEra(), "modern");
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["say", "test_simple_text"],
    );
    const said = await client.callTool({ name: "say", arguments: { text: "modern" } });
    assert.deepEqual(said.content, [{ type: "text", text: "modern" }]);
    await assert.rejects(client.callTool({ name: "dyn__echo", arguments: { text: "x" } }), /Unknown tool/);
    await client.close();
  });

  it("a retry's requestState opens at the server that issued it, on either replica, and nowhere else", async () => {
    const caps = { sampling: {}, elicitation: {}, roots: {} };
    const call = async (url: string, id: number, params: Record<string, unknown>) => {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          ...MCP_HEADERS,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": String(params.name),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: {
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": caps,
              "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
            },
          },
        }),
      });
      return (await res.json()) as Record<string, any>;
    };
    const asks = { id: "asks", providers: [{ provider: "ref", tools: ["test_elicitation"] }] };
    assert.equal((await admin.post("/tenants/acme/servers", asks)).status, 201);
    const params = { name: "test_elicitation", arguments: { message: "who?" } };
    const first = await call(`${a.url}/mcp/acme/asks`, 1, params);
    assert.equal(first.result.resultType, "input_required");
    const { requestState, inputRequests } = first.result;
    const key = Object.keys(inputRequests)[0]!;
    const answer = { [key]: { action: "accept", content: { username: "ada", email: "ada@example.com" } } };
    // The tenant's URL lists the same tool, but the state is the server's.
    const elsewhere = await call(`${b.url}/mcp/acme`, 2, { ...params, inputResponses: answer, requestState });
    assert.equal(elsewhere.error?.code, -32602, JSON.stringify(elsewhere));
    const done = await call(`${b.url}/mcp/acme/asks`, 3, { ...params, inputResponses: answer, requestState });
    assert.equal(done.result?.resultType, "complete", JSON.stringify(done));
    assert.match(JSON.stringify(done.result.content), /ada@example\.com/);
    assert.equal((await admin.delete("/tenants/acme/servers/asks")).status, 204);
  });

  it("a listen stream on a server hears that server's list changes only", async () => {
    const listen = (path: string) =>
      fetch(`${a.url}${path}`, {
        method: "POST",
        headers: {
          ...MCP_HEADERS,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "subscriptions/listen",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "l",
          method: "subscriptions/listen",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
              "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
            },
            notifications: { toolsListChanged: true },
          },
        }),
      });
    const streams = { ops: await listen("/mcp/acme/ops"), eng: await listen("/mcp/acme/eng") };
    const heard = { ops: "", eng: "" };
    for (const [name, res] of Object.entries(streams)) {
      assert.equal(res.status, 200);
      void (async () => {
        for await (const chunk of res.body!.pipeThrough(new TextDecoderStream()))
          heard[name as keyof typeof heard] += chunk;
      })().catch(() => undefined);
    }
    // Acknowledged: the streams are subscribed, so the change below is not missed.
    const acked = () =>
      Object.values(heard).every((h) => h.includes("notifications/subscriptions/acknowledged"));
    for (let i = 0; i < 250 && !acked(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(acked(), JSON.stringify(heard));
    dynamic.addTool("modern_fresh");
    const deadline = Date.now() + 5000;
    while (!heard.ops.includes("tools/list_changed") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(heard.ops, /notifications\/tools\/list_changed/);
    await new Promise((r) => setTimeout(r, 600));
    assert.doesNotMatch(heard.eng, /list_changed/, "eng shows only dyn's echo, which did not change");
    for (const res of Object.values(streams)) await res.body?.cancel().catch(() => undefined);
  });
});

describe("list_changed per server", () => {
  let eng: RecordingClient;
  let ops: RecordingClient;
  let root: RecordingClient;

  before(async () => {
    eng = await connectClient(`${a.url}/mcp/acme/eng`);
    ops = await connectClient(`${a.url}/mcp/acme/ops`);
    root = await connectClient(a.mcpUrl("acme"));
    for (const c of [eng, ops, root]) await c.client.listTools();
    // The SDK opens its standalone GET stream right after initialization: list_changed needs it.
    for (const c of [eng, ops, root]) await c.streamOpen();
  });
  after(async () => {
    for (const c of [eng, ops, root]) await c.client.close();
  });

  const heard = (c: RecordingClient, from: number) =>
    c.notifications.slice(from).filter((n) => n.method === "notifications/tools/list_changed").length;

  it("an upstream's new tool reaches the servers that show it, not the others", async () => {
    const from = [eng, ops, root].map((c) => c.notifications.length);
    dynamic.addTool("fresh");
    await ops.waitFor("notifications/tools/list_changed", 5000);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(heard(eng, from[0]!), 0, "eng selects only echo of dyn");
    assert.ok((await ops.client.listTools()).tools.some((t) => t.name === "dyn__fresh"));
    assert.ok(heard(root, from[2]!) > 0);
  });

  it("a server's definition changed on the other replica reaches its clients only", async () => {
    const from = [eng, ops, root].map((c) => c.notifications.length);
    const current = await admin.get("/tenants/acme/servers/eng");
    const changed = {
      ...current.body,
      providers: [...current.body.providers, { provider: "dyn", tools: ["slow"] }].slice(1),
    };
    // dyn selected once: echo dropped, slow added (its exposed name).
    const saved = await admin.put("/tenants/acme/servers/eng", changed, {
      headers: { "if-match": current.headers.get("etag")! },
    });
    assert.equal(saved.status, 200);
    const started = performance.now();
    while (heard(eng, from[0]!) === 0 && performance.now() - started < 3000)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(heard(eng, from[0]!) > 0, "eng heard list_changed");
    const names = (await eng.client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ["test_simple_text", "dyn__slow"]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(heard(ops, from[1]!), 0);
    assert.equal(heard(root, from[2]!), 0);
    const err = await rpcError(eng.client.callTool({ name: "say", arguments: { text: "x" } }));
    assert.equal(err.code, -32602);
  });
});

describe("the admin API", () => {
  it("a dry run returns the server's lists and saves nothing", async () => {
    const res = await admin.post("/tenants/acme/servers?dryRun=true", {
      id: "trial",
      providers: [
        { provider: "dyn", tools: ["echo", "nope"], overrides: { tools: { echo: { name: "e" } } } },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.catalog.tools.map((t: { entry: { name: string } }) => t.entry.name),
      ["e"],
    );
    assert.deepEqual(res.body.missing, ["tool 'nope' of provider 'dyn'"]);
    assert.equal((await admin.get("/tenants/acme/servers/trial")).status, 404);
  });

  it("refuses collisions, reserved ids, unknown providers, and deleting a selected provider", async () => {
    const clash = await admin.post("/tenants/acme/servers", {
      id: "clash",
      providers: [
        { provider: "dyn", tools: ["echo"], overrides: { tools: { echo: { name: "test_simple_text" } } } },
        { provider: "ref", tools: ["test_simple_text"] },
      ],
    });
    assert.equal(clash.status, 409);
    assert.match(clash.body.detail, /test_simple_text/);
    const shadow = await admin.post("/tenants/acme/servers", {
      id: "shadow",
      providers: [{ provider: "dyn", overrides: { tools: { echo: { name: "dyn__slow" } } } }],
    });
    assert.equal(shadow.status, 409);
    for (const id of ["sse", "messages"]) {
      const res = await admin.post("/tenants/acme/servers", { id, providers: [{ provider: "dyn" }] });
      assert.equal(res.status, 422, id);
    }
    const unknown = await admin.post("/tenants/acme/servers", {
      id: "x",
      providers: [{ provider: "ghost" }],
    });
    assert.equal(unknown.status, 422);
    assert.equal(unknown.body.pointer, "/providers/0/provider");
    const del = await admin.delete("/tenants/acme/providers/dyn");
    assert.equal(del.status, 409);
    assert.match(del.body.detail, /server "(eng|ops)"/);
  });

  it("creates, lists and deletes a server, each audited; its URL serves at once on every replica", async () => {
    const created = await admin.post("/tenants/acme/servers", {
      id: "tmp",
      providers: [{ provider: "ref", tools: ["test_simple_text"], prompts: [], resources: [] }],
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("location"), "/admin/v1/tenants/acme/servers/tmp");
    const { client } = await connectClient(`${a.url}/mcp/acme/tmp`);
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      ["test_simple_text"],
    );
    assert.deepEqual((await client.listPrompts()).prompts, []);
    await client.close();
    const listed = await admin.get("/tenants/acme/servers");
    assert.deepEqual(
      listed.body.items.map((s: { id: string }) => s.id),
      ["eng", "ops", "gated", "tmp"],
    );
    const patched = await admin.patch(
      "/tenants/acme/servers/tmp",
      { name: "Temporary" },
      {
        headers: { "content-type": "application/merge-patch+json", "if-match": created.headers.get("etag")! },
      },
    );
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, "Temporary");
    assert.deepEqual(patched.body.providers, created.body.providers);
    const moved = await admin.patch("/tenants/acme/servers/tmp", { id: "elsewhere" });
    assert.equal(moved.status, 422);
    assert.equal(moved.body.pointer, "/id");
    const stale = await admin.patch(
      "/tenants/acme/servers/tmp",
      { name: "x" },
      {
        headers: { "if-match": created.headers.get("etag")! },
      },
    );
    assert.equal(stale.status, 412);
    const renamed = await connectClient(`${b.url}/mcp/acme/tmp`);
    assert.match(renamed.client.getServerVersion()?.title ?? "", /· Temporary$/);
    await renamed.client.close();
    assert.equal((await admin.delete("/tenants/acme/servers/tmp")).status, 204);
    const sid = await openSession(`${b.url}/mcp/acme/eng`).catch(() => "");
    assert.ok(sid);
    const gone = await postRpc(`${a.url}/mcp/acme/tmp`, { jsonrpc: "2.0", id: 1, method: "ping" });
    assert.equal(gone.status, 404);
    const audit = await admin.get("/tenants/acme/audit");
    const actions = audit.body.items.map(
      (e: { action: string; target: string }) => `${e.action} ${e.target}`,
    );
    for (const a of ["server.create tmp", "server.delete tmp", "server.update eng"])
      assert.ok(actions.includes(a), a);
  });

  it("a collision that appears at run time hides the later entry, and is audited once with its server", async () => {
    const mix = {
      id: "mix",
      providers: [
        { provider: "dyn", tools: "*" },
        {
          provider: "ref",
          tools: ["test_simple_text"],
          overrides: { tools: { test_simple_text: { name: "dyn__late" } } },
        },
      ],
    };
    assert.equal((await admin.post("/tenants/acme/servers", mix)).status, 201);
    const { client } = await connectClient(`${a.url}/mcp/acme/mix`);
    const before = await client.callTool({ name: "dyn__late" });
    assert.match(JSON.stringify(before.content), /This is a simple text response/);
    dynamic.addTool("late");
    const deadline = Date.now() + 5000;
    let conflict: { target: string; after: Record<string, string> } | undefined;
    while (!conflict && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      const audit = await admin.get("/tenants/acme/audit");
      conflict = audit.body.items.find((e: { action: string }) => e.action === "provider.conflict");
    }
    assert.ok(conflict, "the conflict is audited");
    assert.equal(conflict.target, "ref");
    assert.equal(conflict.after.server, "mix");
    assert.equal(conflict.after.heldBy, "dyn");
    assert.equal(conflict.after.name, "dyn__late");
    const after = await client.callTool({ name: "dyn__late" });
    assert.deepEqual(after.content, [{ type: "text", text: "late" }], "the earlier provider's entry wins");
    await client.close();
  });
});
