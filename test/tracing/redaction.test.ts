// Spans as exported (docs/operations.md "Tracing", docs/security.md): the logs' redaction applied to
// attribute values, header attributes, event attributes, span names and status messages, the span
// itself left as recorded.
import assert from "node:assert/strict";
import { it } from "node:test";
import type { tracing } from "@opentelemetry/sdk-node";
import { redactAttribute, redactSpan } from "../../src/tracing/redaction.js";

const KEY = "k3y-0123456789abcdef";

function span(fields: Partial<tracing.ReadableSpan>): tracing.ReadableSpan {
  return {
    name: "POST",
    attributes: {},
    events: [],
    links: [],
    status: { code: 0 },
    spanContext: () => ({ traceId: "a".repeat(32), spanId: "b".repeat(16), traceFlags: 1 }),
    ...fields,
  } as tracing.ReadableSpan;
}

it("redacts a key in a URL's query, credentials in URLs and written-out bearer tokens", () => {
  assert.equal(
    redactAttribute("url.full", `https://api.example.com/v1?city=Oslo&api_key=${KEY}`),
    "https://api.example.com/v1?city=Oslo&api_key=[redacted]",
  );
  assert.equal(redactAttribute("url.query", `?access_token=${KEY}`), "?access_token=[redacted]");
  assert.equal(
    redactAttribute("url.full", `https://user:${KEY}@example.com/`),
    "https://[redacted]@example.com/",
  );
  assert.equal(
    redactAttribute("exception.message", `upstream said: Authorization: Bearer ${KEY}`),
    "upstream said: Authorization: Bearer [redacted]",
  );
  assert.equal(redactAttribute("http.route", "/mcp/:tenant"), "/mcp/:tenant");
  assert.equal(redactAttribute("server.port", 443), 443);
});

it("redacts credential-bearing header attributes by name and keeps the others", () => {
  assert.equal(redactAttribute("http.request.header.authorization", [`Bearer ${KEY}`]), "[redacted]");
  assert.equal(redactAttribute("http.request.header.x-api-key", [KEY]), "[redacted]");
  assert.equal(redactAttribute("http.response.header.set-cookie", [`sid=${KEY}`]), "[redacted]");
  // The console's CSRF token and try it's pass (docs/admin-api.md).
  assert.equal(redactAttribute("http.request.header.x-portico-csrf", [KEY]), "[redacted]");
  assert.equal(redactAttribute("http.request.header.x-portico-internal-caller", [KEY]), "[redacted]");
  assert.deepEqual(redactAttribute("http.request.header.accept", ["application/json"]), ["application/json"]);
});

it("redacts a whole span: attributes, events, status message and name; the original stays as recorded", () => {
  const original = span({
    name: `GET /cb?code=${KEY}`,
    attributes: { "url.path": `/accounts/callback?code=${KEY}&state=${KEY}`, "http.request.method": "GET" },
    events: [
      {
        name: "exception",
        time: [0, 0],
        attributes: { "exception.message": `fetch https://x.example/?token=${KEY} failed` },
      },
    ],
    status: { code: 2, message: `refused client_secret=${KEY}` },
  });
  const exported = redactSpan(original);
  const json = JSON.stringify({
    name: exported.name,
    attributes: exported.attributes,
    events: exported.events,
    status: exported.status,
  });
  assert.ok(!json.includes(KEY), json);
  assert.equal(exported.attributes["http.request.method"], "GET");
  assert.equal(exported.spanContext().spanId, "b".repeat(16), "the span's own methods still answer");
  assert.ok(String(original.attributes["url.path"]).includes(KEY), "the recorded span is not changed");
  const plain = span({ name: "tools/call echo", attributes: { "mcp.method.name": "tools/call" } });
  assert.equal(redactSpan(plain), plain, "a span with nothing to hide is exported as it is");
});
