// Tracing end to end (docs/operations.md "Tracing"): two replicas as processes on one Redis, exporting
// with OTLP http/json to a receiver here. A session-era client sends a traceparent; its tool call runs
// on one replica, whose upstream asks the client a question that the client answers through the
// other replica. One trace holds the client's requests, both replicas' HTTP and MCP spans, store
// spans and the upstream call, and the upstream receives the context in its headers and in `_meta`;
// no secret seeded in the providers (a bearer token, an API key in a URL's query) is in any span.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";
import { startReplicaProcess, type ReplicaProcess } from "../support/replica-process.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";

const UPSTREAM_TOKEN = `upstream-token-${randomBytes(12).toString("hex")}`;
const API_KEY = `api-key-${randomBytes(12).toString("hex")}`;
const CLIENT_TOKEN = `client-token-${randomBytes(12).toString("hex")}`;
const VERSION = "2025-11-25";

const SERVER = 2;
const CLIENT = 3;

interface Seen {
  readonly method: string;
  readonly header?: string;
  readonly meta?: string;
  readonly authorization?: string;
}

/** A session-era upstream (the official SDK) recording the trace context of every request. */
async function startUpstream() {
  const seen: Seen[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const body = text === "" ? undefined : (JSON.parse(text) as Record<string, any>);
      if (body?.method !== undefined)
        seen.push({
          method: body.method,
          header: req.headers.traceparent as string | undefined,
          meta: body.params?._meta?.traceparent,
          authorization: req.headers.authorization,
        });
      const transport = sessions.get(String(req.headers["mcp-session-id"]));
      if (transport) return void transport.handleRequest(req, res, body);
      const server = new McpServer({ name: "asker", version: "1.0.0" });
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
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, fresh),
      });
      void server.connect(fresh).then(() => fresh.handleRequest(req, res, body));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** An HTTP tool endpoint whose URL carries an API key in its query. */
async function startForecast() {
  const http = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"sky":"clear"}'));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/forecast?api_key=${API_KEY}`,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let receiver: OtlpReceiver;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
let forecast: Awaited<ReturnType<typeof startForecast>>;
let one: ReplicaProcess;
let two: ReplicaProcess;

before(async () => {
  receiver = await startOtlpReceiver();
  upstream = await startUpstream();
  forecast = await startForecast();
  const { url: redisUrl } = await getTestRedis();
  const prefix = uniquePrefix();
  const tenants = [
    {
      id: "acme",
      auth: "none" as const,
      providers: [
        {
          id: "up",
          kind: "mcp" as const,
          url: upstream.url,
          auth: { type: "bearer" as const, token: UPSTREAM_TOKEN },
        },
        { id: "wx", kind: "http" as const, prefix: "wx", tools: [{ name: "forecast", url: forecast.url }] },
      ],
    },
  ];
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_SERVICE_NAME: "portico-test",
  };
  [one, two] = await Promise.all([
    startReplicaProcess({ redisUrl, redisPrefix: prefix, tenants, env }),
    startReplicaProcess({ redisUrl, redisPrefix: prefix, tenants, env }),
  ]);
});
after(async () => {
  await Promise.all([one?.kill(), two?.kill()]);
  await upstream?.close();
  await forecast?.close();
  await receiver?.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** POSTs one message to a replica's /mcp/acme as the client, with `traceparent`. */
function post(base: string, body: object, traceparent: string, session?: string) {
  return fetch(`${base}/mcp/acme`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      traceparent,
      // Not a credential at a tenant without auth, but a secret all the same: never in a span.
      authorization: `Bearer ${CLIENT_TOKEN}`,
      ...(session && { "mcp-session-id": session, "mcp-protocol-version": VERSION }),
    },
    body: JSON.stringify(body),
  });
}

/** Reads an SSE answer, handing each JSON message to `onMessage`, until the response to `id`. */
async function readUntilResponse(
  res: Response,
  id: number,
  onMessage: (message: Record<string, any>) => Promise<void>,
): Promise<Record<string, any>> {
  if (res.headers.get("content-type")?.startsWith("application/json"))
    return (await res.json()) as Record<string, any>;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
        .join("\n");
      if (data === "") continue;
      const message = JSON.parse(data) as Record<string, any>;
      if (message.id === id && message.method === undefined) return message;
      await onMessage(message);
    }
  }
  throw new Error("the stream ended without a response");
}

const byId = (spans: ReceivedSpan[]) => new Map(spans.map((s) => [s.spanId, s]));

/** The chain of spans from `span` up to the trace's root (or a span not exported: the client's). */
function ancestry(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const index = byId(spans);
  const chain = [span];
  for (let parent = index.get(span.parentSpanId ?? ""); parent; parent = index.get(parent.parentSpanId ?? ""))
    chain.push(parent);
  return chain;
}

it("one trace runs from the client through both replicas to the upstream and back", async () => {
  const traceId = hex(16);
  const clientSpan = () => `00-${traceId}-${hex(8)}-01`;
  const initialize = await post(
    one.url,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: VERSION,
        capabilities: { elicitation: {} },
        clientInfo: { name: "tracing-test", version: "1" },
      },
    },
    clientSpan(),
  );
  assert.equal(initialize.status, 200);
  const session = initialize.headers.get("mcp-session-id")!;
  await initialize.text();
  await (
    await post(one.url, { jsonrpc: "2.0", method: "notifications/initialized" }, clientSpan(), session)
  ).text();

  // The call runs on replica two; the upstream's question is answered through replica one.
  const callParent = clientSpan();
  const call = await post(
    two.url,
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "ask_name", arguments: {} } },
    callParent,
    session,
  );
  let answeredVia: number | undefined;
  const response = await readUntilResponse(call, 2, async (message) => {
    if (message.method !== "elicitation/create") return;
    const answer = await post(
      one.url,
      { jsonrpc: "2.0", id: message.id, result: { action: "accept", content: { name: "Ada" } } },
      clientSpan(),
      session,
    );
    answeredVia = answer.status;
    await answer.text();
  });
  assert.equal(answeredVia, 202);
  assert.equal(response.result?.content?.[0]?.text, "Hello, Ada", JSON.stringify(response));

  // An HTTP tool whose URL holds an API key, in the same trace.
  const weather = await post(
    one.url,
    {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "wx__forecast", arguments: { city: "Oslo" } },
    },
    clientSpan(),
    session,
  );
  const weatherAnswer = (await weather.json()) as Record<string, any>;
  assert.ok(weatherAnswer.result, JSON.stringify(weatherAnswer));

  const spans = await receiver.waitFor((all) => {
    const mine = all.filter((s) => s.traceId === traceId);
    const names = mine.map((s) => s.name);
    // Each span is exported when it ends, in batches: the HTTP span of the call may come after its
    // MCP span, so its arrival is waited for too.
    const served = mine.find((s) => s.name === "tools/call ask_name" && s.kind === SERVER);
    return (
      ["tools/call ask_name", "tools/call wx__forecast", "initialize"].every(
        (n) => names.filter((m) => m === n).length >= (n === "tools/call ask_name" ? 2 : 1),
      ) &&
      served !== undefined &&
      ancestry(served, mine).length >= 2
    );
  });
  const trace = spans.filter((s) => s.traceId === traceId);

  // The MCP server span of the call, on replica two, under its HTTP span, under the client's span.
  const served = trace.find((s) => s.name === "tools/call ask_name" && s.kind === SERVER)!;
  assert.ok(served, "the call's MCP server span");
  assert.equal(served.attributes["mcp.method.name"], "tools/call");
  assert.equal(served.attributes["gen_ai.tool.name"], "ask_name");
  assert.equal(served.attributes["gen_ai.operation.name"], "execute_tool");
  assert.equal(served.attributes["jsonrpc.request.id"], "2");
  assert.equal(
    served.attributes["mcp.session.id"],
    session,
    "mcp.session.id is kept (a convention attribute)",
  );
  assert.equal(served.attributes["mcp.protocol.version"], VERSION);
  const [, http] = ancestry(served, trace);
  assert.equal(http?.kind, SERVER, "the HTTP server span is the MCP span's parent");
  assert.equal(http?.attributes["http.request.method"], "POST");
  assert.equal(
    http?.parentSpanId,
    callParent.split("-")[2],
    "the HTTP span continues the client's traceparent",
  );

  // Store spans of the request: children in its trace, naming the operation only.
  const store = trace.filter((s) => s.attributes["db.system.name"] === "redis");
  assert.ok(store.length > 0, "store spans");
  for (const s of store) {
    assert.deepEqual(Object.keys(s.attributes).sort(), ["db.operation.name", "db.system.name"]);
    assert.ok(s.parentSpanId, `${s.name} has a parent`);
  }

  // The upstream call: an MCP CLIENT span under the server span, and the upstream got its context.
  const outbound = trace.find((s) => s.name === "tools/call ask_name" && s.kind === CLIENT)!;
  assert.ok(outbound, "the upstream call's span");
  assert.equal(outbound.parentSpanId, served.spanId);
  assert.equal(outbound.attributes["portico.provider"], "up");
  assert.equal(outbound.attributes["server.address"], "127.0.0.1");
  const received = upstream.seen.find((s) => s.method === "tools/call")!;
  assert.ok(received.meta, "_meta.traceparent reached the upstream");
  assert.equal(received.meta, `00-${traceId}-${outbound.spanId}-01`, "_meta names Portico's client span");
  assert.ok(received.header, "the traceparent header reached the upstream");
  const [, headerTrace, headerSpan] = received.header.split("-");
  assert.equal(headerTrace, traceId);
  const httpClient = trace.find((s) => s.spanId === headerSpan);
  assert.equal(
    httpClient?.parentSpanId,
    outbound.spanId,
    "the header names the HTTP request under the MCP span",
  );
  assert.equal(received.authorization, `Bearer ${UPSTREAM_TOKEN}`, "the upstream got its token");

  // Both replicas are in the trace: the answer to the upstream's question came through replica one.
  const pids = new Set(trace.map((s) => s.resource["process.pid"]));
  assert.deepEqual(pids, new Set([one.pid, two.pid]));
  const answerSpan = trace.find(
    (s) =>
      s.kind === SERVER &&
      s.resource["process.pid"] === one.pid &&
      s.attributes["http.request.method"] === "POST" &&
      s.parentSpanId !== undefined &&
      !trace.some((c) => c.parentSpanId === s.spanId && c.attributes["mcp.method.name"] !== undefined),
  );
  assert.ok(answerSpan, "replica one's HTTP span of the client's answer");
  assert.equal(trace.find((s) => s.name === "initialize")?.resource["service.name"], "portico-test");

  // The HTTP tool's request: its URL's API key never exported.
  const forecastSpan = trace.find(
    (s) =>
      s.kind === CLIENT &&
      typeof s.attributes["url.full"] === "string" &&
      s.attributes["url.full"].includes("/forecast"),
  );
  assert.ok(forecastSpan, "undici's span of the HTTP tool's request");
  assert.match(String(forecastSpan.attributes["url.full"]), /api_key=\[redacted\]/);
});

/** A 2026-07-28 tools/call to one replica, with a traceparent header and one in `_meta`. */
async function call2026(base: string, params: Record<string, unknown>, header: string, meta: string) {
  const version = "2026-07-28";
  const res = await fetch(`${base}/mcp/acme`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
      "mcp-method": "tools/call",
      "mcp-name": String(params.name),
      traceparent: header,
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
          traceparent: meta,
        },
      },
    }),
  });
  return (await res.json()) as Record<string, any>;
}

it("2026-07-28: `_meta.traceparent` parents the MCP span (the HTTP span linked), and a retry on the other replica links to the round that asked", async () => {
  const httpTrace = hex(16);
  const mcpTrace = hex(16);
  const [firstParent, retryParent] = [hex(8), hex(8)];
  const first = await call2026(
    one.url,
    { name: "ask_name", arguments: {} },
    `00-${httpTrace}-${hex(8)}-01`,
    `00-${mcpTrace}-${firstParent}-01`,
  );
  assert.equal(first.result?.resultType, "input_required", JSON.stringify(first));
  const retry = await call2026(
    two.url,
    {
      name: "ask_name",
      arguments: {},
      inputResponses: Object.fromEntries(
        Object.keys(first.result.inputRequests).map((k) => [
          k,
          { action: "accept", content: { name: "Ada" } },
        ]),
      ),
      requestState: first.result.requestState,
    },
    `00-${httpTrace}-${hex(8)}-01`,
    `00-${mcpTrace}-${retryParent}-01`,
  );
  assert.equal(retry.result?.content?.[0]?.text, "Hello, Ada", JSON.stringify(retry));

  const spans = await receiver.waitFor(
    (all) =>
      all.filter((s) => s.traceId === mcpTrace && s.kind === SERVER && s.name === "tools/call ask_name")
        .length >= 2,
  );
  const rounds = spans.filter(
    (s) => s.traceId === mcpTrace && s.kind === SERVER && s.name === "tools/call ask_name",
  );
  const asked = rounds.find((s) => s.parentSpanId === firstParent)!;
  const retried = rounds.find((s) => s.parentSpanId === retryParent)!;
  assert.ok(asked && retried, "both rounds' spans, each under the client's `_meta` span");
  assert.equal(asked.resource["process.pid"], one.pid);
  assert.equal(retried.resource["process.pid"], two.pid);
  assert.equal(asked.attributes["mcp.protocol.version"], "2026-07-28");
  // The HTTP request's own span (the header's trace) is linked, not the parent.
  const httpSpans = spans.filter((s) => s.traceId === httpTrace && s.kind === SERVER);
  assert.ok(
    asked.links.some((l) => l.traceId === httpTrace && httpSpans.some((h) => h.spanId === l.spanId)),
    `the round links to its HTTP span: ${JSON.stringify(asked.links)}`,
  );
  assert.ok(
    retried.links.some((l) => l.traceId === mcpTrace && l.spanId === asked.spanId),
    `the retry links to the round that asked: ${JSON.stringify(retried.links)}`,
  );
});

it("no exported span holds a secret: upstream token, API key, the client's token", async () => {
  await receiver.waitFor((all) => all.length > 0);
  assert.ok(receiver.bodies.length > 0);
  for (const body of receiver.bodies) {
    for (const secret of [UPSTREAM_TOKEN, API_KEY, CLIENT_TOKEN])
      assert.ok(!body.includes(secret), `a span holds ${secret.slice(0, 12)}…`);
  }
  assert.deepEqual(receiver.otherPaths, [], "traces only: no metrics or logs exported");
});
