// Tracing on in this process (docs/operations.md "Tracing"): every log line of a request carries its
// request id and the active span's trace and span ids, the trace continuing the client's
// traceparent; MCP spans say the session a new one opened, and a JSON-RPC error's code; the spans
// reach an OTLP/JSON receiver.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import { startTracing, type Tracing } from "../../src/tracing/sdk.js";
import { staticTenant, TEST_SECRET } from "../support/portico.js";
import { MCP_HEADERS } from "../support/rpc.js";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { startStatelessUpstream, type StatelessUpstream } from "../fixtures/stateless-server.js";

let receiver: OtlpReceiver;
let tracing: Tracing;
let portico: Portico;
let modern: StatelessUpstream;
const raw: string[] = [];

before(async () => {
  receiver = await startOtlpReceiver();
  // The SDK reads its endpoint from the environment, as in a deployment.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  tracing = await startTracing({ serviceName: "portico-logs", serviceVersion: "0", protocol: "http/json" });
  const config = loadConfig({
    PORTICO_LOG_LEVEL: "debug",
    PORTICO_SECRET_KEY: TEST_SECRET,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  });
  assert.equal(config.tracing, true);
  modern = await startStatelessUpstream();
  portico = await buildApp(config, {
    tenants: [
      staticTenant("acme"),
      {
        id: "modern",
        auth: "none",
        // Pinned to 2026-07-28, so a session-era client is bridged.
        providers: [{ id: "next", kind: "mcp", url: modern.url, era: "stateless" }],
      },
    ],
    logStream: { write: (line: string) => void raw.push(line) },
  });
});
after(async () => {
  await portico?.app.close();
  await modern?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

it("log lines of a request carry reqId, trace_id and span_id of the request's trace", async () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const res = await portico.app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: { ...MCP_HEADERS, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    payload: {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    },
  });
  assert.equal(res.statusCode, 200);
  const lines = raw.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reqId !== undefined);
  assert.ok(lines.length > 0, "a request line");
  for (const line of lines) {
    assert.match(String(line.reqId), /\S/);
    assert.equal(line.trace_id, traceId, JSON.stringify(line));
    assert.match(String(line.span_id), /^[0-9a-f]{16}$/);
  }
  await tracing.flush();
  const spans = await receiver.waitFor((all) => all.some((s) => s.name === "initialize"));
  const ids = new Set(spans.filter((s) => s.traceId === traceId).map((s) => s.spanId));
  for (const line of lines) assert.ok(ids.has(String(line.span_id)), "the line names an exported span");
});

it("a line outside any request, an error in it, is written without trace ids", () => {
  const before = raw.length;
  portico.app.log.warn({ err: new Error("outside") }, "not in a request");
  const line = JSON.parse(raw[before]!) as Record<string, any>;
  assert.equal(line.err?.message, "outside");
  assert.equal(line.trace_id, undefined);
});

it("initialize's span names the session it opened; an error answer marks its span with the code", async () => {
  const traceId = "0af7651916cd43dd8448eb211c80319c";
  const headers = { ...MCP_HEADERS, traceparent: `00-${traceId}-b7ad6b7169203331-01` };
  const init = await portico.app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers,
    payload: {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    },
  });
  const session = init.headers["mcp-session-id"] as string;
  const missing = await portico.app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    payload: { jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "no-such-prompt" } },
  });
  const code = (JSON.parse(missing.body) as { error?: { code: number } }).error?.code;
  assert.equal(typeof code, "number", missing.body);
  await tracing.flush();
  const spans = await receiver.waitFor((all) =>
    all.some((s) => s.traceId === traceId && s.name === "prompts/get no-such-prompt"),
  );
  const opened = spans.find((s) => s.traceId === traceId && s.name === "initialize")!;
  assert.equal(opened.attributes["mcp.session.id"], session);
  assert.equal(opened.attributes["mcp.protocol.version"], "2025-11-25");
  const failed = spans.find((s) => s.traceId === traceId && s.name === "prompts/get no-such-prompt")!;
  assert.equal(failed.kind, 2);
  assert.equal(failed.attributes["gen_ai.prompt.name"], "no-such-prompt");
  assert.equal(failed.attributes["error.type"], String(code));
  assert.equal(failed.attributes["rpc.response.status_code"], String(code));
  assert.equal(failed.status?.code, 2, "the span's status is error");
});

it("the era bridge: each retry of a 2026-07-28 upstream's input_required links to the round before", async () => {
  const url = await portico.app.listen({ port: 0, host: "127.0.0.1" });
  const client = new Client({ name: "v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "ada" } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/modern`)));
  const hello = await client.callTool({ name: "test_input_required_result_elicitation" });
  assert.deepEqual(hello.content, [{ type: "text", text: "Hello, ada!" }]);
  await client.close();
  await tracing.flush();
  const name = "tools/call test_input_required_result_elicitation";
  const spans = await receiver.waitFor(
    (all) => all.filter((s) => s.name === name && s.kind === 3).length >= 2,
  );
  const rounds = spans.filter((s) => s.name === name && s.kind === 3);
  const served = spans.find((s) => s.name === name && s.kind === 2)!;
  assert.ok(served, "the client's call");
  assert.equal(rounds.length, 2);
  for (const round of rounds) assert.equal(round.parentSpanId, served.spanId, "each round is under the call");
  const [first, second] = rounds.sort((x, y) => x.links.length - y.links.length);
  assert.deepEqual(first!.links, []);
  assert.deepEqual(second!.links, [{ traceId: first!.traceId, spanId: first!.spanId }]);
});
