// 2026-07-28 cancellation (basic/transports/streamable-http §Cancellation): a
// client that closes its response stream cancels the request, and Portico stops the upstream's
// work: a session-era upstream hears notifications/cancelled, a 2026-07-28 upstream sees its own
// request stream close. Both upstreams are official SDK servers that record how each call ended.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createMcpHandler, McpServer as V2Server } from "@modelcontextprotocol/server";
import { McpServer as V1Server } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod/v4";
import { serveFetch } from "../fixtures/stateless/node-fetch.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

const VERSION = "2026-07-28";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What both upstreams record: "started <label>", then "cancelled <label>" or "finished <label>". */
type Log = string[];

/** `slow` reports progress every 50 ms for 5 s unless its request is cancelled. */
async function runSlow(label: string, signal: AbortSignal, log: Log, progress: (n: number) => Promise<void>) {
  log.push(`started ${label}`);
  for (let step = 1; step <= 100; step++) {
    if (signal.aborted) {
      log.push(`cancelled ${label}`);
      return { content: [{ type: "text" as const, text: "cancelled" }] };
    }
    await progress(step);
    await sleep(50);
  }
  log.push(`finished ${label}`);
  return { content: [{ type: "text" as const, text: "done" }] };
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close() {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A stateful session-era upstream (SDK v1). */
async function startSessionUpstream(log: Log) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return listen((req, res) => {
    const known = sessions.get(String(req.headers["mcp-session-id"]));
    if (known) return void known.handleRequest(req, res);
    const server = new V1Server({ name: "slow-session", version: "1.0.0" });
    server.registerTool("slow", { inputSchema: { label: z.string() } }, ({ label }, extra) =>
      runSlow(label, extra.signal, log, async (progress) => {
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined)
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress },
          });
      }),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
}

/** A 2026-07-28 upstream (SDK v2). */
async function startModernUpstream(log: Log) {
  const handler = createMcpHandler(() => {
    const server = new V2Server({ name: "slow-modern", version: "1.0.0" }, { capabilities: {} });
    server.registerTool("slow", { inputSchema: z.object({ label: z.string() }) }, ({ label }, ctx) =>
      runSlow(label, ctx.mcpReq.signal, log, async (progress) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        if (progressToken !== undefined)
          await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress } });
      }),
    );
    return server;
  });
  const http = await listen((req, res) => void serveFetch(req, res, (request) => handler.fetch(request)));
  return {
    ...http,
    async close() {
      await handler.close();
      await http.close();
    },
  };
}

const sessionLog: Log = [];
const modernLog: Log = [];
let upstreams: Array<{ close(): Promise<void> }> = [];
let portico: RunningPortico;

before(async () => {
  const [session, modern] = await Promise.all([
    startSessionUpstream(sessionLog),
    startModernUpstream(modernLog),
  ]);
  upstreams = [session, modern];
  portico = await startPortico({
    tenants: [
      { id: "old", auth: "none", providers: [{ id: "up", kind: "mcp", url: session.url }] },
      { id: "new", auth: "none", providers: [{ id: "up", kind: "mcp", url: modern.url }] },
    ],
  });
});
after(async () => {
  await portico.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

/** Calls `slow` as a 2026-07-28 client; resolves with the open response once its headers arrived. */
async function callSlow(tenant: string, label: string, withProgress: boolean, signal: AbortSignal) {
  const meta: Record<string, unknown> = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  if (withProgress) meta.progressToken = label;
  return fetch(portico.mcpUrl(tenant), {
    method: "POST",
    signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": "slow",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "slow", arguments: { label }, _meta: meta },
    }),
  });
}

/** Waits until `log` holds `entry`, at most 3 s (the tool itself would run 5 s). */
async function until(log: Log, entry: string): Promise<boolean> {
  const deadline = Date.now() + 3000;
  while (!log.includes(entry) && Date.now() < deadline) await sleep(20);
  return log.includes(entry);
}

for (const [tenant, log, era] of [
  ["old", sessionLog, "session-era"],
  ["new", modernLog, "2026-07-28"],
] as const) {
  describe(`a 2026-07-28 client closing its response stream, ${era} upstream`, () => {
    it("after progress began streaming: the upstream call is cancelled", async () => {
      const label = `${tenant}-streaming`;
      const aborter = new AbortController();
      const res = await callSlow(tenant, label, true, aborter.signal);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /notifications\/progress/);
      aborter.abort();
      assert.ok(await until(log, `cancelled ${label}`), `upstream log: ${log.join(", ")}`);
      assert.ok(!log.includes(`finished ${label}`));
    });

    it("before anything was sent (a JSON answer pending): the upstream call is cancelled too", async () => {
      const label = `${tenant}-pending`;
      const aborter = new AbortController();
      const pending = callSlow(tenant, label, false, aborter.signal).catch((err: unknown) => err);
      assert.ok(await until(log, `started ${label}`), "the call reached the upstream");
      aborter.abort();
      assert.ok((await pending) instanceof Error, "the client's fetch was aborted");
      assert.ok(await until(log, `cancelled ${label}`), `upstream log: ${log.join(", ")}`);
    });

    it("a stream left open runs to its result (the control case)", async () => {
      const label = `${tenant}-control`;
      const res = await callSlow(tenant, label, false, new AbortController().signal);
      const body = (await res.json()) as { result?: { content: { text: string }[]; resultType: string } };
      assert.equal(body.result?.content[0]?.text, "done");
      assert.equal(body.result?.resultType, "complete");
      assert.ok(log.includes(`finished ${label}`));
    });
  });
}
