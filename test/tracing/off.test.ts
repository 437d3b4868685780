// Tracing off (no OTLP endpoint; docs/operations.md "Tracing"): none of the OpenTelemetry SDK, its
// exporters or instrumentations is loaded, requests are served as before, and every log line of a
// request still carries its request id, with no trace ids.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { after, it } from "node:test";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import { tracingOn } from "../../src/tracing/spans.js";
import { staticTenant, TEST_SECRET } from "../support/portico.js";
import { MCP_HEADERS } from "../support/rpc.js";

const opened: Portico[] = [];
after(() => Promise.all(opened.map((p) => p.app.close())));

/** Modules of the SDK side: what "no cost when off" promises is never loaded. */
const SDK_MODULE = /[\\/]node_modules[\\/](@opentelemetry[\\/](?!api[\\/])[^\\/]+|@fastify[\\/]otel)[\\/]/;

it("loads no SDK module, starts no span, and log lines carry reqId without trace ids", async () => {
  const config = loadConfig({ PORTICO_LOG_LEVEL: "debug", PORTICO_SECRET_KEY: TEST_SECRET });
  assert.equal(config.tracing, false);
  const raw: string[] = [];
  const portico = await buildApp(config, {
    tenants: [staticTenant("acme")],
    logStream: { write: (line: string) => void raw.push(line) },
  });
  opened.push(portico);
  const init = await portico.app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: { ...MCP_HEADERS, traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` },
    payload: {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    },
  });
  assert.equal(init.statusCode, 200);
  assert.equal(tracingOn(), false);
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => SDK_MODULE.test(path));
  assert.deepEqual(loaded, [], "no OpenTelemetry SDK module is loaded");
  const requestLines = raw
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === "request completed");
  assert.ok(requestLines.length > 0, "a request line");
  for (const line of requestLines) {
    assert.match(String(line.reqId), /\S/);
    assert.equal(line.trace_id, undefined);
    assert.equal(line.span_id, undefined);
  }
});

it("turns on with either OTLP endpoint, and stays off when the SDK is disabled", () => {
  const on = (env: Record<string, string>) => loadConfig({ PORTICO_SECRET_KEY: TEST_SECRET, ...env }).tracing;
  assert.equal(on({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }), true);
  assert.equal(on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" }), true);
  assert.equal(
    on({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }),
    false,
  );
  assert.throws(
    () =>
      on({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml" }),
    /OTEL_EXPORTER_OTLP_PROTOCOL="http\/xml" must be one of: http\/protobuf, http\/json, grpc/,
  );
});
