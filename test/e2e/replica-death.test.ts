// A replica dies mid-call (docs/architecture.md §4 "Replica liveness"): two replicas as separate
// processes on one Redis behind a balancer that skips a dead backend; SDK v1 sessions with GET
// streams and a slow tool call in flight on one replica, which is SIGKILLed. Each call ends within
// 10 s with PORTICO_ERR_MCP_REQUEST_INTERRUPTED (-32003) on the stream the client resumed on the
// survivor, its upstream call is cancelled, and every session keeps working; a call of a read-only
// tool is run again there instead (PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS). A 2026-07-28 retry
// of a call held by the dead replica gets the same error, under its 2026-07-28 code (-31006).
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode, StatelessCode } from "../../src/protocol/codes.js";
import { startBalancer, type Balancer } from "../support/balancer.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";
import { startReplicaProcess, type ReplicaProcess } from "../support/replica-process.js";

const BOUND_MS = 10_000;

/**
 * A session-era upstream: `slow` runs 20 s (unless cancelled), `slow_read` (read-only) too the
 * first time and 1 s after, `ask_name` waits on an elicitation. Records how each slow call ended.
 */
async function startUpstream() {
  const running = new Set<string>();
  const ended: string[] = [];
  let reads = 0;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const slow =
    (name: string, ms: () => number) =>
    async (extra: {
      requestId: unknown;
      _meta?: { progressToken?: string | number };
      signal: AbortSignal;
      sendNotification: (n: {
        method: "notifications/progress";
        params: { progressToken: string | number; progress: number };
      }) => Promise<void>;
    }) => {
      const id = String(extra.requestId);
      running.add(id);
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined)
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress: 0 },
        });
      const outcome = await new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve("finished"), ms());
        extra.signal.addEventListener("abort", () => (clearTimeout(timer), resolve("cancelled")));
      });
      running.delete(id);
      ended.push(`${name} ${outcome}`);
      return { content: [{ type: "text" as const, text: outcome }] };
    };
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const server = new McpServer({ name: "slow", version: "1.0.0" });
    server.registerTool(
      "slow",
      { description: "Answers after 20 s" },
      slow("slow", () => 20_000),
    );
    server.registerTool(
      "slow_read",
      { description: "Reads for 20 s, then 1 s", annotations: { readOnlyHint: true } },
      slow("slow_read", () => (reads++ === 0 ? 20_000 : 1000)),
    );
    server.registerTool("echo", { description: "Answers at once" }, async () => ({
      content: [{ type: "text", text: "echo" }],
    }));
    server.registerTool("ask_name", { description: "Asks the user for a name" }, async (extra) => {
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message: "Name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } } },
          },
        },
        ElicitResultSchema,
      );
      return { content: [{ type: "text", text: `Hello, ${String(answer.content?.name)}` }] };
    });
    const transport = sessions.get(String(req.headers["mcp-session-id"]));
    if (transport) return void transport.handleRequest(req, res);
    const fresh = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, fresh),
    });
    void server.connect(fresh).then(() => fresh.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    running,
    ended,
    close: async () => {
      // Their timers (a question's timeout) would keep the test process alive.
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let upstream: Awaited<ReturnType<typeof startUpstream>>;
let balancer: Balancer;
let doomed: ReplicaProcess;
let survivor: ReplicaProcess;
const clients: RecordingClient[] = [];

before(async () => {
  upstream = await startUpstream();
  balancer = await startBalancer(0, { skipDead: true });
  const { url: redisUrl } = await getTestRedis();
  const prefix = uniquePrefix();
  const tenants = [
    { id: "acme", auth: "none" as const, providers: [{ id: "up", kind: "mcp" as const, url: upstream.url }] },
  ];
  // Held calls wait long enough for their retry to come after the kill.
  const env = { PORTICO_INPUT_TIMEOUT_SECONDS: "60", PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS: "true" };
  [doomed, survivor] = await Promise.all([
    startReplicaProcess({ redisUrl, redisPrefix: prefix, tenants, env }),
    startReplicaProcess({ redisUrl, redisPrefix: prefix, tenants, env }),
  ]);
});
after(async () => {
  await Promise.all(clients.map((c) => c.client.close().catch(() => undefined)));
  await Promise.all([doomed?.kill(), survivor?.kill()]);
  await balancer?.close();
  await upstream?.close();
});

/** A 2026-07-28 tools/call, straight to one replica. */
async function call2026(base: string, params: Record<string, unknown>) {
  const version = "2026-07-28";
  const res = await fetch(`${base}/mcp/acme`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
      "mcp-method": "tools/call",
      "mcp-name": String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        },
      },
    }),
  });
  return (await res.json()) as Record<string, any>;
}

/** Settles with how long after `since` a call ended, and how. */
async function timed<T>(work: Promise<T>, since: () => number) {
  try {
    const value = await work;
    return { ms: Date.now() - since(), value, error: undefined };
  } catch (error) {
    return { ms: Date.now() - since(), value: undefined, error };
  }
}

it("calls in flight on a killed replica end within 10 s with -32003 (a read-only one is run again), and every session keeps working", async () => {
  balancer.use([doomed.url, survivor.url]);
  for (let i = 0; i < 5; i++)
    clients.push(await connectClient(`${balancer.url}/mcp/acme`, { capabilities: false }));
  // A 2026-07-28 call held on the doomed replica for its retry.
  const first = await call2026(doomed.url, { name: "ask_name", arguments: {} });
  assert.equal(first.result?.resultType, "input_required", JSON.stringify(first));
  // The slow calls all start on the doomed replica; the first four become SSE streams (a progress
  // first), the last is answered as plain JSON (no progress token).
  balancer.use([doomed.url]);
  let killedAt = Number.POSITIVE_INFINITY;
  const calls = clients.map((c, i) =>
    timed(
      c.client.callTool({ name: i === 3 ? "slow_read" : "slow", arguments: {} }, undefined, {
        ...(i < 4 && { onprogress: () => undefined }),
        timeout: 60_000,
      }),
      () => killedAt,
    ),
  );
  for (let i = 0; i < 100 && upstream.running.size < 5; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(upstream.running.size, 5, "the five calls run upstream");
  // Past a second (looked at every second), the calls are recorded in the store (`:upcalls`), where
  // a survivor finds them.
  await new Promise((r) => setTimeout(r, 2500));
  balancer.use([doomed.url, survivor.url]);

  await doomed.kill();
  killedAt = Date.now();
  const retry = timed(
    call2026(survivor.url, {
      name: "ask_name",
      arguments: {},
      inputResponses: Object.fromEntries(
        Object.keys(first.result.inputRequests).map((k) => [
          k,
          { action: "accept", content: { name: "ada" } },
        ]),
      ),
      requestState: first.result.requestState,
    }),
    () => killedAt,
  );

  const outcomes = await Promise.all(calls);
  for (const outcome of outcomes.slice(0, 3)) {
    assert.ok(outcome.ms < BOUND_MS, `ended ${outcome.ms} ms after the kill`);
    assert.ok(
      outcome.error instanceof McpError,
      `an error, not ${JSON.stringify(outcome.value ?? outcome.error)}`,
    );
    assert.equal(outcome.error.code, RpcCode.RequestInterrupted);
    assert.match(outcome.error.message, /may or may not have completed/);
    assert.deepEqual(outcome.error.data, { interrupted: true, completed: "unknown" });
  }
  // The read-only one ran again on the survivor (1 s): its result, not an error.
  const reread = outcomes[3]!;
  assert.ok(reread.ms < BOUND_MS + 1000, `answered ${reread.ms} ms after the kill`);
  assert.deepEqual(reread.value?.content, [{ type: "text", text: "finished" }], String(reread.error));
  // A plain JSON answer has no stream to resume: the client sees its connection drop, at once.
  const plain = outcomes[4]!;
  assert.ok(plain.ms < BOUND_MS && plain.error !== undefined, `ended ${plain.ms} ms after the kill`);
  assert.ok(!(plain.error instanceof McpError), (plain.error as Error).message);
  const held = await retry;
  assert.ok(held.ms < BOUND_MS, `the held call's retry ended ${held.ms} ms after the kill`);
  // A 2026-07-28 client gets Portico's code outside JSON-RPC's reserved range, its name in data.
  assert.equal(held.value?.error?.code, StatelessCode.RequestInterrupted, JSON.stringify(held.value));
  assert.equal(held.value?.error?.data?.error, "PORTICO_ERR_MCP_REQUEST_INTERRUPTED");
  assert.equal(held.value?.error?.data?.completed, "unknown");
  // Asked again once the replica is known dead: answered at once.
  const again = Date.now();
  const late = await call2026(survivor.url, {
    name: "ask_name",
    arguments: {},
    inputResponses: {},
    requestState: first.result.requestState,
  });
  assert.equal(late.error?.code, StatelessCode.RequestInterrupted);
  assert.ok(Date.now() - again < 1000);

  // The survivor cancelled the dead replica's calls upstream.
  const expected = [
    "slow cancelled",
    "slow cancelled",
    "slow cancelled",
    "slow cancelled",
    "slow_read cancelled",
    "slow_read finished",
  ];
  for (let i = 0; i < 50 && upstream.ended.length < expected.length; i++)
    await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual([...upstream.ended].sort(), expected);
  // Every session goes on, on the survivor.
  for (const c of clients) {
    const echo = await c.client.callTool({ name: "echo", arguments: {} });
    assert.deepEqual(echo.content, [{ type: "text", text: "echo" }]);
  }
});
