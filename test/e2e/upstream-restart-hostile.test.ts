// Healing's limits (docs/upstream-mcp.md): Portico re-initializes and retries once, and only when
// the upstream rejected its session. An upstream that forgets every session at once gets one retry,
// not a loop; a 400 that names no session (an invalid request the upstream refused) is the call's
// answer, with no new upstream session. The upstream is hand-written (node:http) to misbehave so.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

type Mode = "serve" | "forget-every-session" | "refuse-calls";

interface Upstream {
  url: string;
  mode: Mode;
  /** The JSON-RPC methods received, in order. */
  readonly received: string[];
  close(): Promise<void>;
}

const NO_SESSION = { code: -32000, message: "Bad Request: No valid session ID provided" };

async function startUpstream(): Promise<Upstream> {
  const sessions = new Set<string>();
  const state: Upstream = { url: "", mode: "serve", received: [], close: async () => undefined };
  const json = (res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) =>
    void res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const message = JSON.parse(text) as { id?: unknown; method: string; params?: Record<string, unknown> };
    state.received.push(message.method);
    const sid = req.headers["mcp-session-id"] as string | undefined;
    if (message.method === "initialize") {
      const id = randomUUID();
      sessions.add(id);
      const result = {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "1.0.0" },
      };
      return json(res, 200, { jsonrpc: "2.0", id: message.id, result }, { "mcp-session-id": id });
    }
    if (!sid || !sessions.has(sid) || state.mode === "forget-every-session")
      return json(res, 400, { jsonrpc: "2.0", error: NO_SESSION });
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method === "tools/call" && state.mode === "refuse-calls") {
      const error = { code: -32602, message: "Invalid arguments: 'text' must be a string" };
      return json(res, 400, { jsonrpc: "2.0", id: message.id, error });
    }
    const results: Record<string, object> = {
      ping: {},
      "tools/list": { tools: [{ name: "echo", inputSchema: { type: "object" } }] },
      "tools/call": { content: [{ type: "text", text: "echoed" }] },
    };
    const result = results[message.method];
    if (!result)
      return json(res, 200, {
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32601, message: "Method not found" },
      });
    json(res, 200, { jsonrpc: "2.0", id: message.id, result });
  };

  const http = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  state.close = () => {
    http.closeAllConnections();
    return new Promise<void>((resolve) => http.close(() => resolve()));
  };
  return state;
}

let upstream: Upstream;
let portico: RunningPortico;

before(async () => {
  upstream = await startUpstream();
  portico = await startPortico({
    redis: true,
    tenants: [{ id: "acme", auth: "none", providers: [{ id: "up", kind: "mcp", url: upstream.url }] }],
  });
});
after(async () => {
  await portico.close();
  await upstream.close();
});

/** How many times each method was received from `from` on. */
function counted(from: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const method of upstream.received.slice(from)) counts[method] = (counts[method] ?? 0) + 1;
  return counts;
}

it("an upstream that rejects every session gets one re-initialization and one retry per call, not a loop", async () => {
  const { client } = await connectClient(portico.mcpUrl("acme"), { capabilities: false });
  assert.deepEqual((await client.callTool({ name: "echo", arguments: {} })).content, [
    { type: "text", text: "echoed" },
  ]);
  upstream.mode = "forget-every-session";
  try {
    const from = upstream.received.length;
    const failed = await client.callTool({ name: "echo", arguments: {} });
    assert.equal(failed.isError, true, "the call fails, as a tool error");
    const counts = counted(from);
    assert.ok((counts["tools/call"] ?? 0) <= 2, `tools/call sent ${counts["tools/call"]} times`);
    assert.ok((counts.initialize ?? 0) <= 1, `initialize sent ${counts.initialize} times`);
  } finally {
    upstream.mode = "serve";
    await client.close();
  }
});

it("a 400 that names no session is the call's answer: no new upstream session, no retry", async () => {
  const { client } = await connectClient(portico.mcpUrl("acme"), { capabilities: false });
  await client.callTool({ name: "echo", arguments: {} });
  upstream.mode = "refuse-calls";
  try {
    const from = upstream.received.length;
    const refused = await client.callTool({ name: "echo", arguments: {} }).then(
      (result) => JSON.stringify(result),
      (err: unknown) => (err instanceof McpError ? `${err.code} ${err.message}` : String(err)),
    );
    assert.doesNotMatch(refused, /echoed/);
    // What the call caused: one tools/call, no new session. The provider's periodic health probe
    // (a server/discover) may reach the upstream meanwhile; it is not the call's (CI saw one).
    const { "tools/call": calls, initialize } = counted(from);
    assert.deepEqual({ calls, initialize }, { calls: 1, initialize: undefined }, "one call, no new session");
  } finally {
    upstream.mode = "serve";
    await client.close();
  }
});
