// The 2026-07-28 lane on the same endpoint (basic/transports/streamable-http, basic/versioning,
// server/discover, server/utilities/caching, basic/patterns/subscriptions): how each request is
// classified, what every result carries, and the 400/404 answers to hostile or outdated requests.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { readEvents } from "../support/sse.js";

const VERSION = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
};
const BASE = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": VERSION,
};

let portico: RunningPortico;
let echo: Server;

before(async () => {
  echo = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/`;
  const tenant = staticTenant("acme");
  portico = await startPortico({
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    tenants: [
      {
        ...tenant,
        providers: [
          ...tenant.providers,
          {
            id: "web",
            kind: "http",
            tools: [
              {
                name: "query",
                url,
                inputSchema: {
                  type: "object",
                  properties: {
                    region: { type: "string", "x-mcp-header": "Region" },
                    limit: { type: "integer", "x-mcp-header": "Limit" },
                    query: { type: "string" },
                  },
                },
              },
            ],
          },
        ],
      },
    ],
  });
});
after(async () => {
  await portico.close();
  echo.close();
});

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: Record<string, any>;
}

/** POSTs a 2026-07-28 request with the headers a conforming client sends, plus `headers`. */
async function call(
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | undefined> = {},
): Promise<Answer> {
  const name =
    typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined;
  const all: Record<string, string> = {
    ...BASE,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  };
  for (const [k, v] of Object.entries(headers))
    if (v === undefined) delete all[k];
    else all[k] = v;
  const res = await portico.app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: all,
    payload: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { _meta: META, ...params } }),
  });
  return { status: res.statusCode, headers: res.headers, body: JSON.parse(res.body) as Record<string, any> };
}

describe("results", () => {
  it("server/discover names the versions, capabilities and server, with cache hints", async () => {
    const { status, body } = await call("server/discover");
    assert.equal(status, 200);
    // Every revision served: 2026-07-28 per request, the session era after initialize.
    assert.deepEqual(body.result.supportedVersions, [
      VERSION,
      "2025-11-25",
      "2025-06-18",
      "2025-03-26",
      "2024-11-05",
    ]);
    assert.ok(
      body.result.capabilities.tools &&
        body.result.capabilities.prompts &&
        body.result.capabilities.resources,
    );
    assert.equal(body.result.resultType, "complete");
    assert.equal(body.result._meta["io.modelcontextprotocol/serverInfo"].name, "portico");
    assert.ok(Number.isInteger(body.result.ttlMs) && body.result.ttlMs >= 0);
    assert.equal(body.result.cacheScope, "public", "an auth-free tenant's lists are the same for everyone");
  });

  it("lists and reads carry resultType, serverInfo, ttlMs and cacheScope; calls carry no cache hints", async () => {
    for (const method of ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]) {
      const { status, body } = await call(method);
      assert.equal(status, 200, method);
      assert.equal(body.result.resultType, "complete", method);
      assert.ok(body.result._meta["io.modelcontextprotocol/serverInfo"], method);
      assert.ok(body.result.ttlMs >= 0 && ["public", "private"].includes(body.result.cacheScope), method);
    }
    const read = await call("resources/read", { uri: "perf://hello" });
    assert.equal(read.body.result.contents[0].text, "hello");
    assert.equal(read.body.result.resultType, "complete");
    assert.ok(read.body.result.ttlMs >= 0);
    const got = await call("prompts/get", { name: "code-review", arguments: { language: "go" } });
    assert.equal(got.body.result.resultType, "complete");
    assert.equal(got.body.result.ttlMs, undefined);
    const tool = await call("tools/call", { name: "query", arguments: { query: "x" } });
    assert.equal(tool.body.result.resultType, "complete");
    assert.equal(tool.body.result.isError ?? false, false);
  });

  it("a client that accepts only SSE gets its result as a one-event stream; errors stay JSON", async () => {
    const sseOnly = { accept: "text/event-stream" };
    const res = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, ...sseOnly, "mcp-method": "resources/read", "mcp-name": "perf://hello" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "resources/read",
        params: { _meta: META, uri: "perf://hello" },
      }),
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /^text\/event-stream/);
    const data = res.body.split("\n").filter((line) => line.startsWith("data: "));
    assert.equal(data.length, 1, res.body);
    const message = JSON.parse(data[0]!.slice(6)) as Record<string, any>;
    assert.equal(message.id, 3);
    assert.equal(message.result.contents[0].text, "hello");
    const missing = await call("resources/read", { uri: "perf://missing" }, sseOnly);
    assert.equal(missing.body.error.code, -32602);
  });

  it("an unknown resource is -32602 with data.uri", async () => {
    const { status, body } = await call("resources/read", { uri: "perf://missing" });
    assert.equal(status, 200);
    assert.equal(body.error.code, -32602);
    assert.deepEqual(body.error.data, { uri: "perf://missing" });
  });
});

describe("hostile and outdated requests", () => {
  it("missing or malformed _meta fields are 400 + -32602", async () => {
    for (const meta of [undefined, {}, { "io.modelcontextprotocol/protocolVersion": VERSION }]) {
      const res = await portico.app.inject({
        method: "POST",
        url: "/mcp/acme",
        headers: { ...BASE, "mcp-method": "tools/list" },
        payload: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: meta ? { _meta: meta } : {},
        }),
      });
      assert.equal(res.statusCode, 400, JSON.stringify(meta));
      assert.equal(res.json().error.code, -32602);
      assert.equal(res.json().id, 1);
    }
    const level = await call("tools/list", {
      _meta: { ...META, "io.modelcontextprotocol/logLevel": "loud" },
    });
    assert.equal(level.status, 400);
    assert.equal(level.body.error.code, -32602);
  });

  it("the version header must be present and equal _meta: 400 + -32020", async () => {
    const missing = await call("tools/list", {}, { "mcp-protocol-version": undefined });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, -32020);
    const other = await call("tools/list", {}, { "mcp-protocol-version": "2026-07-29" });
    assert.equal(other.status, 400);
    assert.equal(other.body.error.code, -32020);
  });

  it("an unsupported version is 400 + -32022 naming the supported and requested ones", async () => {
    const res = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, "mcp-protocol-version": "2099-01-01", "mcp-method": "tools/list" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: "v",
        method: "tools/list",
        params: { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
      }),
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().error.data, {
      supported: [VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
      requested: "2099-01-01",
    });
    assert.equal(res.json().error.code, -32022);
    // A session-era revision per request: the answer says how to use it.
    const old = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: "o",
        method: "tools/list",
        params: { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2025-11-25" } },
      }),
    });
    assert.equal(old.statusCode, 400);
    assert.equal(old.json().error.code, -32022);
    assert.match(old.json().error.message, /without a session: send initialize first/);
  });

  it("Mcp-Method and Mcp-Name must mirror the body; values are case-sensitive, whitespace tolerated", async () => {
    const cases: Array<[string, Record<string, string | undefined>, Record<string, unknown>]> = [
      ["tools/list", { "mcp-method": undefined }, {}],
      ["tools/list", { "mcp-method": "TOOLS/LIST" }, {}],
      ["resources/read", { "mcp-name": undefined }, { uri: "perf://hello" }],
      ["resources/read", { "mcp-name": "perf://other" }, { uri: "perf://hello" }],
      ["resources/read", { "mcp-name": "=?base64?not*base64?=" }, { uri: "perf://hello" }],
      // Only Mcp-Name and Mcp-Param-* may use the sentinel: a method is compared as sent.
      ["tools/list", { "mcp-method": "=?base64?dG9vbHMvbGlzdA==?=" }, {}],
      ["resources/read", { "mcp-name": "=?base64?cGVyZjovL2hlbGxv?=" }, { uri: "perf://hello" }],
    ];
    for (const [method, headers, params] of cases.slice(0, 6)) {
      const res = await call(method, params, headers);
      assert.equal(res.status, 400, JSON.stringify(headers));
      assert.equal(res.body.error.code, -32020, JSON.stringify(headers));
    }
    const [method, headers, params] = cases[6]!;
    const decoded = await call(method, params, headers);
    assert.equal(decoded.status, 200, "a Base64-sentinel Mcp-Name is decoded before comparing");
    const padded = await call("tools/list", {}, { "mcp-method": "  tools/list " });
    assert.equal(padded.status, 200);
  });

  it("Mcp-Param headers of x-mcp-header parameters must mirror the arguments", async () => {
    const args = { region: "us-west1", limit: 42, query: "q" };
    const ok = await call(
      "tools/call",
      { name: "query", arguments: args },
      {
        "mcp-param-region": "us-west1",
        "mcp-param-limit": "42.0",
      },
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const bad = [
      { "mcp-param-limit": "42" },
      { "mcp-param-region": "eu-west1", "mcp-param-limit": "42" },
      { "mcp-param-region": "us-west1", "mcp-param-limit": "41" },
      { "mcp-param-region": "=?base64?dXMtd2VzdDE?=", "mcp-param-limit": "42" },
    ];
    for (const headers of bad) {
      const res = await call("tools/call", { name: "query", arguments: args }, headers);
      assert.equal(res.status, 400, JSON.stringify(headers));
      assert.equal(res.body.error.code, -32020);
    }
    const absent = await call(
      "tools/call",
      { name: "query", arguments: { query: "q" } },
      {
        "mcp-param-region": "us-west1",
      },
    );
    assert.equal(absent.status, 400, "a header for an argument the body lacks");
    const none = await call("tools/call", { name: "query", arguments: { query: "q" } });
    assert.equal(none.status, 200);
  });

  it("methods outside 2026-07-28 are 404 + -32601 with the request id", async () => {
    const methods = ["initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"];
    // Names of Object.prototype members are methods like any other: not found.
    for (const method of [...methods, "toString", "constructor", "__proto__", "hasOwnProperty"]) {
      const res = await call(method);
      assert.equal(res.status, 404, method);
      assert.equal(res.body.error.code, -32601, method);
      assert.equal(res.body.id, 7);
    }
  });

  it("GET and DELETE without a session under a 2026-07-28 header are 405, saying what to do instead", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const res = await portico.app.inject({
        method,
        url: "/mcp/acme",
        headers: { accept: "text/event-stream", "mcp-protocol-version": VERSION },
      });
      assert.equal(res.statusCode, 405, method);
      assert.match(String(res.headers.allow), /POST/);
      const body = res.json<{ error: { message: string } }>();
      assert.match(
        body.error.message,
        new RegExp(`there is no ${method} on this endpoint; POST each request`),
      );
    }
    // A session-era client without its session id still hears that it needs one.
    const legacy = await portico.app.inject({
      method: "GET",
      url: "/mcp/acme",
      headers: { accept: "text/event-stream", "mcp-protocol-version": "2025-11-25" },
    });
    assert.equal(legacy.statusCode, 400);
  });

  it("a session-era initialize still opens a session; a session id means the session era unless the request is plainly 2026-07-28", async () => {
    const res = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    assert.equal(res.statusCode, 200);
    assert.ok(res.headers["mcp-session-id"]);
    const sid = String(res.headers["mcp-session-id"]);
    const unknown = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, "mcp-protocol-version": "2025-11-25", "mcp-session-id": "not-a-session-id-at-all" },
      payload: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    assert.equal(unknown.statusCode, 404, "an unknown session, not a stateless request");
    // 2026-07-28 ignores a session header (transports §Earlier Streamable HTTP Revisions), known or not.
    for (const header of [sid, "not-a-session-id-at-all"]) {
      const modern = await call("tools/list", {}, { "mcp-session-id": header });
      assert.equal(modern.status, 200, JSON.stringify(modern.body));
      assert.equal(modern.body.result.resultType, "complete");
      assert.equal(modern.headers["mcp-session-id"], undefined, "no session id echoed");
    }
  });

  it("batches and responses are 400; notifications are accepted with 202", async () => {
    const batch = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, "mcp-method": "tools/list" },
      payload: JSON.stringify({ jsonrpc: "2.0", result: {}, id: 1, params: { _meta: META } }),
    });
    assert.equal(batch.statusCode, 400);
    const array = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, "mcp-method": "tools/list" },
      payload: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } }]),
    });
    assert.equal(array.statusCode, 400);
    assert.equal(array.json().error.code, -32600);
    assert.match(array.json().error.message, /no JSON-RPC batches/);
    const note = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, "mcp-method": "notifications/cancelled" },
      payload: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { _meta: META } }),
    });
    assert.equal(note.statusCode, 202);
    // An id no request may carry is refused, and not echoed.
    const fractional = await portico.app.inject({
      method: "POST",
      url: "/mcp/acme",
      headers: { ...BASE, "mcp-method": "tools/list" },
      payload: JSON.stringify({ jsonrpc: "2.0", id: 1.5, method: "tools/list", params: { _meta: META } }),
    });
    assert.equal(fractional.statusCode, 400);
    assert.equal(fractional.json().error.code, -32600);
    assert.equal(fractional.json().id, null);
  });
});

describe("subscriptions/listen", () => {
  it("acknowledges the honoured filter first, then tags each asked-for change with the subscription id", async () => {
    const res = await fetch(`${portico.url}/mcp/acme`, {
      method: "POST",
      headers: { ...BASE, "mcp-method": "subscriptions/listen" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "sub-1",
        method: "subscriptions/listen",
        params: { _meta: META, notifications: { promptsListChanged: true, bogus: true } },
      }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
    const admin = new AdminClient(portico.url);
    let changed: Promise<unknown> | undefined;
    const events = await readEvents(res, (seen) => {
      // Change the prompts only once the acknowledgement is in.
      changed ??= admin.patch("/tenants/acme/providers/docs", { prompts: [] });
      return seen.length >= 2;
    });
    assert.equal((await changed)?.constructor, Object);
    const messages = events.map((e) => JSON.parse(e.data) as Record<string, any>);
    assert.equal(messages[0]!.method, "notifications/subscriptions/acknowledged");
    assert.deepEqual(messages[0]!.params.notifications, { promptsListChanged: true });
    assert.equal(messages[0]!.params._meta["io.modelcontextprotocol/subscriptionId"], "sub-1");
    assert.equal(messages[1]!.method, "notifications/prompts/list_changed");
    assert.equal(messages[1]!.params._meta["io.modelcontextprotocol/subscriptionId"], "sub-1");
  });
});
