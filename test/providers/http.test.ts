// The http provider against a real node:http server on loopback: what is POSTed (arguments, headers),
// how JSON, text, images, errors, redirects, oversize replies, timeouts and cancellation come back.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { isPorticoError } from "../../src/protocol/errors.js";
import type { HttpProviderConfig } from "../../src/records/tenant.js";
import { egressFetch } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { HttpProvider } from "../../src/providers/http.js";
import type { CallContext } from "../../src/providers/types.js";
import { validateProvider } from "../../src/records/validate.js";

function context(signal = new AbortController().signal): CallContext {
  return {
    tenantId: "t",
    sessionId: undefined,
    protocolVersion: "2025-06-18",
    clientCapabilities: {},
    logLevel: undefined,
    signal,
    progress: () => {},
    log: () => {},
    request: () => Promise.reject(new Error("no client requests in this test")),
  };
}

let seen: { method?: string; headers: IncomingMessage["headers"]; body: string } | undefined;

const routes: Record<string, (send: (status: number, type: string, body: string | Buffer) => void) => void> =
  {
    "/echo": (send) =>
      send(200, "application/json; charset=utf-8", JSON.stringify({ got: JSON.parse(seen?.body ?? "") })),
    "/number": (send) => send(200, "application/json", "42"),
    "/problem": (send) => send(200, "application/problem+json", '["a",1]'),
    "/text": (send) => send(200, "text/plain", "sunny, 21 °C"),
    "/image": (send) => send(200, "image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47])),
    "/badjson": (send) => send(200, "application/json", "{nope"),
    "/fail": (send) =>
      send(500, "text/html", `<html>\n  <body>${"Internal trouble. ".repeat(30)}</body></html>`),
    "/echo-fail": (send) => send(400, "text/plain", `bad key: ${String(seen?.headers["x-api-key"])}`),
    "/empty-fail": (send) => send(503, "text/plain", ""),
    "/redirect": (send) => send(302, "text/plain", ""),
    "/big": (send) => send(200, "text/plain", "x".repeat(2048)),
    "/slow": () => {}, // never answers
  };

let server: Server;
let base: string;

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen = { method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() };
      const route = routes[req.url ?? ""];
      if (req.url === "/redirect") res.setHeader("location", "/echo");
      route?.((status, type, body) => res.writeHead(status, { "content-type": type }).end(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function provider(tools: Record<string, unknown>[], maxResponseBytes?: number): HttpProvider {
  const config = validateProvider({ id: "api", kind: "http", tools }) as HttpProviderConfig;
  return new HttpProvider(config, { maxResponseBytes, fetch: egressFetch(new EgressPolicy()) });
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  url: `${base}/${name}`,
  ...extra,
});

async function call(name: string, extra: Record<string, unknown> = {}, ctx = context()) {
  return provider([tool(name, extra)], 1024).callTool(name, { city: "Roma", days: 2 }, ctx);
}

describe("HttpProvider: listing", () => {
  it("lists tools with a default object input schema and without urls or headers", () => {
    const p = provider([
      tool("echo", {
        title: "Echo",
        headers: { "x-api-key": "s3cret" },
        annotations: { readOnlyHint: true },
      }),
      tool("text", { inputSchema: { type: "object", properties: { q: { type: "string" } } } }),
    ]);
    assert.deepEqual(p.entries().tools, [
      { name: "echo", title: "Echo", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
      { name: "text", inputSchema: { type: "object", properties: { q: { type: "string" } } } },
    ]);
    assert.doesNotMatch(JSON.stringify(p.entries()), /s3cret/);
  });
});

describe("HttpProvider: calls", () => {
  it("POSTs the arguments as JSON with the configured headers", async () => {
    await call("echo", { headers: { "x-api-key": "s3cret", Accept: "application/json" } });
    assert.equal(seen?.method, "POST");
    assert.equal(seen?.headers["content-type"], "application/json");
    assert.equal(seen?.headers["x-api-key"], "s3cret");
    assert.equal(seen?.headers.accept, "application/json");
    assert.deepEqual(JSON.parse(seen?.body ?? ""), { city: "Roma", days: 2 });
  });

  it("sends the default accept header", async () => {
    await call("text");
    assert.equal(seen?.headers.accept, "application/json, text/plain;q=0.9, */*;q=0.1");
  });

  it("turns a JSON object reply into structuredContent and its text", async () => {
    const got = { got: { city: "Roma", days: 2 } };
    assert.deepEqual(await call("echo"), {
      content: [{ type: "text", text: JSON.stringify(got) }],
      structuredContent: got,
    });
  });

  it("wraps a JSON value that is not an object, for +json types too", async () => {
    assert.deepEqual(await call("number"), {
      content: [{ type: "text", text: '{"result":42}' }],
      structuredContent: { result: 42 },
    });
    assert.deepEqual((await call("problem")).structuredContent, { result: ["a", 1] });
  });

  it("returns a text reply as text and an image as an image", async () => {
    assert.deepEqual(await call("text"), { content: [{ type: "text", text: "sunny, 21 °C" }] });
    assert.deepEqual(await call("image"), {
      content: [{ type: "image", data: "iVBORw==", mimeType: "image/png" }],
    });
  });

  it("reports invalid JSON as a tool error", async () => {
    const result = await call("badjson");
    assert.equal(result.isError, true);
    assert.match((result.content[0] as { text: string }).text, /^api\/badjson: upstream sent invalid JSON: /);
  });
});

describe("HttpProvider: upstream failures are tool errors", () => {
  const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

  it("names the status and quotes at most 200 characters of the reply", async () => {
    const result = await call("fail");
    assert.equal(result.isError, true);
    assert.match(
      text(result),
      /^api\/fail: upstream answered HTTP 500: <html> <body>Internal trouble\. Internal/,
    );
    assert.equal(text(result).length, "api/fail: upstream answered HTTP 500: ".length + 200);
    assert.equal(text(await call("empty-fail")), "api/empty-fail: upstream answered HTTP 503");
  });

  it("redacts configured header values an error page echoes", async () => {
    const result = await call("echo-fail", { headers: { "x-api-key": "s3cret" } });
    assert.equal(text(result), "api/echo-fail: upstream answered HTTP 400: bad key: [redacted]");
  });

  it("does not follow redirects (they would carry the configured headers elsewhere)", async () => {
    const result = await call("redirect", { headers: { "x-api-key": "s3cret" } });
    assert.deepEqual(result, {
      isError: true,
      content: [
        { type: "text", text: "api/redirect: upstream answered HTTP 302 (redirects are not followed)" },
      ],
    });
  });

  it("refuses a reply larger than the limit", async () => {
    assert.deepEqual(await call("big"), {
      isError: true,
      content: [{ type: "text", text: "api/big: upstream reply exceeds 1024 bytes" }],
    });
  });

  it("times out after the tool's timeoutMs", async () => {
    const started = Date.now();
    assert.deepEqual(await call("slow", { timeoutMs: 100 }), {
      isError: true,
      content: [{ type: "text", text: "api/slow: upstream timed out after 100 ms" }],
    });
    assert.ok(Date.now() - started < 2000);
  });

  it("stops when the client cancels", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const result = await call("slow", {}, context(controller.signal));
    assert.equal(text(result), "api/slow: cancelled by the client");
  });

  it("names the cause of a network error, without the headers", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const p = provider([
      { name: "gone", url: `http://127.0.0.1:${port}/`, headers: { "x-api-key": "s3cret" } },
    ]);
    const result = await p.callTool("gone", {}, context());
    assert.equal(result.isError, true);
    assert.equal(text(result), `api/gone: could not reach upstream: connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});

describe("HttpProvider: what it does not serve", () => {
  it("answers -32602 for an unknown tool, and not-found for resources", async () => {
    const p = provider([tool("text")]);
    await assert.rejects(p.callTool("nope", {}, context()), (err) => {
      assert.ok(isPorticoError(err));
      assert.equal(err.rpc, -32602);
      assert.equal(err.message, "Unknown tool 'nope'");
      return true;
    });
    await assert.rejects(p.readResource("x://y", context()), { code: "PORTICO_ERR_MCP_RESOURCE_NOT_FOUND" });
    await assert.rejects(p.getPrompt("p", {}, context()), { message: "Unknown prompt 'p'" });
  });
});
