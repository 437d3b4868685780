// The session-era transport's answers to good and hostile requests (basic/transports,
// basic/lifecycle), through the real app with inject().
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";

let portico: RunningPortico;
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

before(async () => {
  portico = await startPortico({ tenants: [staticTenant("acme"), staticTenant("other")] });
});
after(() => portico.close());

async function post(body: unknown, headers: Record<string, string> = {}, tenant = "acme") {
  const res = await portico.app.inject({
    method: "POST",
    url: `/mcp/${tenant}`,
    headers: { ...HEADERS, ...headers },
    payload: typeof body === "string" ? body : JSON.stringify(body),
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: res.body ? (JSON.parse(res.body) as Record<string, any>) : undefined,
  };
}

async function initialize(version = "2025-11-25", tenant = "acme") {
  const res = await post(
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    },
    {},
    tenant,
  );
  assert.equal(res.status, 200);
  return { sid: res.headers["mcp-session-id"] as string, result: res.body!.result };
}

describe("initialize", () => {
  it("opens a session with a 128-bit visible-ASCII id and echoes a supported version", async () => {
    const { sid, result } = await initialize("2025-06-18");
    assert.match(sid, /^[\x21-\x7e]{22,}$/);
    assert.equal(result.protocolVersion, "2025-06-18");
    assert.deepEqual(result.capabilities.prompts, { listChanged: true });
    // Admins may add tool providers to a live tenant, so every list is declared from the start.
    assert.deepEqual(result.capabilities.tools, { listChanged: true });
    assert.equal(result.serverInfo.name, "portico");
  });

  it("answers an unknown version with its latest", async () => {
    const { result } = await initialize("1999-01-01");
    assert.equal(result.protocolVersion, "2025-11-25");
  });

  it("echoes 2024-11-05, as the official SDK servers do, without the completions capability it lacks", async () => {
    const { sid, result } = await initialize("2024-11-05");
    assert.equal(result.protocolVersion, "2024-11-05");
    assert.equal(result.capabilities.completions, undefined);
    // The method is 2024-11-05's own (utilities/completion); only the capability came later.
    const complete = await post(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "completion/complete",
        params: {
          ref: { type: "ref/prompt", name: "code-review" },
          argument: { name: "language", value: "r" },
        },
      },
      { "mcp-session-id": sid },
    );
    assert.deepEqual(complete.body!.result.completion.values, ["rust"]);
    assert.deepEqual(result.capabilities.prompts, { listChanged: true });
    assert.deepEqual((await initialize("2025-03-26")).result.capabilities.completions, {});
  });

  it("rejects initialize without capabilities with -32602", async () => {
    const res = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25" },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body!.error.code, -32602);
  });
});

describe("sessions", () => {
  it("400 without Mcp-Session-Id, 404 for an unknown one", async () => {
    const none = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    assert.equal(none.status, 400);
    assert.match(none.body!.error.message, /Mcp-Session-Id/);
    assert.equal(none.body!.id, 2);
    const unknown = await post(
      { jsonrpc: "2.0", id: 3, method: "tools/list" },
      { "mcp-session-id": "AAAAAAAAAAAAAAAAAAAAAA" },
    );
    assert.equal(unknown.status, 404);
  });

  it("a session of another tenant is 404", async () => {
    const { sid } = await initialize("2025-11-25", "other");
    const res = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sid });
    assert.equal(res.status, 404);
  });

  it("DELETE ends the session; later requests get 404", async () => {
    const { sid } = await initialize();
    const del = await portico.app.inject({
      method: "DELETE",
      url: "/mcp/acme",
      headers: { "mcp-session-id": sid },
    });
    assert.equal(del.statusCode, 204);
    const res = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sid });
    assert.equal(res.status, 404);
    const again = await portico.app.inject({
      method: "DELETE",
      url: "/mcp/acme",
      headers: { "mcp-session-id": sid },
    });
    assert.equal(again.statusCode, 404);
  });

  it("notifications are accepted with 202 and no body", async () => {
    const { sid } = await initialize();
    const res = await post(
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { "mcp-session-id": sid },
    );
    assert.equal(res.status, 202);
    assert.equal(res.body, undefined);
  });
});

describe("hostile and malformed requests", () => {
  let sid: string;
  before(async () => ({ sid } = await initialize()));

  it("403 for a foreign Origin, allowed for a loopback one", async () => {
    const bad = await post(
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-session-id": sid, origin: "https://evil.example" },
    );
    assert.equal(bad.status, 403);
    assert.match(bad.body!.error.message, /Origin 'https:\/\/evil.example' is not allowed/);
    const good = await post(
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-session-id": sid, origin: "http://localhost:6274" },
    );
    assert.equal(good.status, 200);
    assert.equal(good.headers["access-control-allow-origin"], "http://localhost:6274");
  });

  it("403 for an opaque Origin; CORS preflight answered for allowed origins only", async () => {
    const opaque = await post(
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-session-id": sid, origin: "null" },
    );
    assert.equal(opaque.status, 403);
    const preflight = await portico.app.inject({
      method: "OPTIONS",
      url: "/mcp/acme",
      headers: { origin: "http://localhost:6274", "access-control-request-method": "POST" },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers["access-control-allow-origin"], "http://localhost:6274");
    assert.match(String(preflight.headers["access-control-allow-headers"]), /mcp-session-id/);
    assert.match(String(preflight.headers["access-control-expose-headers"]), /mcp-session-id/);
    // A browser calling a tool with x-mcp-header parameters asks for its Mcp-Param-* headers.
    const params = await portico.app.inject({
      method: "OPTIONS",
      url: "/mcp/acme",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, Mcp-Param-Region, mcp-method, x-other, mcp-param-",
      },
    });
    const allowed = String(params.headers["access-control-allow-headers"]).split(", ");
    assert.ok(allowed.includes("mcp-param-region") && allowed.includes("mcp-method"), allowed.join());
    assert.ok(!allowed.includes("x-other") && !allowed.includes("mcp-param-"), allowed.join());
    const foreign = await portico.app.inject({
      method: "OPTIONS",
      url: "/mcp/acme",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.headers["access-control-allow-origin"], undefined);
  });

  it("403 for a foreign Host (DNS rebinding)", async () => {
    const res = await post(
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-session-id": sid, host: "evil.example:8080" },
    );
    assert.equal(res.status, 403);
  });

  it("judges a Host the same every time, however many others came between (verdicts are remembered, bounded)", async () => {
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    // More distinct foreign hosts than the verdicts kept: the memory is cleared on the way.
    for (let i = 0; i < 70; i++) {
      const res = await post(ping, { "mcp-session-id": sid, host: `evil${i}.example:8080` });
      assert.equal(res.status, 403, `evil${i}.example:8080`);
    }
    for (const host of ["evil.example:8080", "EVIL.example:8080", "evil.example:8080"])
      assert.equal((await post(ping, { "mcp-session-id": sid, host })).status, 403, host);
    for (const host of ["127.0.0.1:3000", "LOCALHOST:3000", "127.0.0.1:3000"])
      assert.equal((await post(ping, { "mcp-session-id": sid, host })).status, 200, host);
  });

  it("413 for a body over the limit", async () => {
    const res = await post(
      { jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(5 * 1024 * 1024) } },
      { "mcp-session-id": sid },
    );
    assert.equal(res.status, 413);
    assert.equal(res.body!.error.code, -32600);
  });

  it("415 for a body that is not JSON", async () => {
    const res = await post("ping", { "mcp-session-id": sid, "content-type": "text/plain" });
    assert.equal(res.status, 415);
    assert.match(res.body!.error.message, /application\/json/);
  });

  it("406 when the client accepts neither JSON nor SSE", async () => {
    const res = await post(
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-session-id": sid, accept: "text/html" },
    );
    assert.equal(res.status, 406);
  });

  it("-32700 for invalid JSON", async () => {
    const res = await post("{not json", { "mcp-session-id": sid });
    assert.equal(res.status, 400);
    assert.equal(res.body!.error.code, -32700);
  });

  it("-32600 for a body that nests deeper than 512 levels; strings do not count", async () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}}`;
    const res = await post(deep, { "mcp-session-id": sid });
    assert.equal(res.status, 400);
    assert.equal(res.body!.error.code, -32600);
    assert.match(res.body!.error.message, /nests deeper than 512 levels/);
    // Brackets inside strings are text, not nesting; 500 levels is fine.
    const text = "[".repeat(5000) + '\\"{';
    const fine = await post(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "ping",
        params: { _meta: { note: text, deep: JSON.parse("[".repeat(500) + "]".repeat(500)) } },
      },
      { "mcp-session-id": sid },
    );
    assert.equal(fine.status, 200, JSON.stringify(fine.body));
  });

  it("-32600 for a message that is not JSON-RPC 2.0", async () => {
    const res = await post({ id: 1, method: "ping" }, { "mcp-session-id": sid });
    assert.equal(res.status, 400);
    assert.equal(res.body!.error.code, -32600);
    assert.match(res.body!.error.message, /"jsonrpc"/);
    const nullId = await post({ jsonrpc: "2.0", id: null, method: "ping" }, { "mcp-session-id": sid });
    assert.equal(nullId.body!.error.code, -32600);
  });

  it("-32601 for an unknown method", async () => {
    const res = await post({ jsonrpc: "2.0", id: 7, method: "tools/explode" }, { "mcp-session-id": sid });
    assert.equal(res.body!.error.code, -32601);
    assert.equal(res.body!.id, 7);
    assert.match(res.body!.error.message, /tools\/explode/);
  });

  it("-32602 for invalid params and for a forged cursor", async () => {
    const noName = await post(
      { jsonrpc: "2.0", id: 1, method: "prompts/get", params: {} },
      { "mcp-session-id": sid },
    );
    assert.equal(noName.body!.error.code, -32602);
    const missingArg = await post(
      { jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "code-review" } },
      { "mcp-session-id": sid },
    );
    assert.match(missingArg.body!.error.message, /language/);
    const forged = await post(
      { jsonrpc: "2.0", id: 1, method: "prompts/list", params: { cursor: "1.AAAAAAAAAAAAAAAAAAAAAA" } },
      { "mcp-session-id": sid },
    );
    assert.equal(forged.body!.error.code, -32602);
    assert.match(forged.body!.error.message, /cursor/);
  });

  it("400 for an unsupported MCP-Protocol-Version", async () => {
    const res = await post(
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { "mcp-session-id": sid, "mcp-protocol-version": "2031-01-01" },
    );
    assert.equal(res.status, 400);
    assert.match(res.body!.error.message, /2031-01-01/);
  });

  it("batches only on 2025-03-26 sessions", async () => {
    const rejected = await post([{ jsonrpc: "2.0", id: 1, method: "ping" }], { "mcp-session-id": sid });
    assert.equal(rejected.status, 400);
    assert.match(rejected.body!.error.message, /batches are not allowed in protocol version 2025-11-25/);
    const old = await initialize("2025-03-26");
    const ok = await post(
      [
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "nope" },
      ],
      { "mcp-session-id": old.sid },
    );
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, [
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found: nope" } },
    ]);
  });

  it("404 for an unknown tenant, 405 for PUT, PATCH, HEAD and TRACE, whatever their body", async () => {
    const res = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, {}, "nobody");
    assert.equal(res.status, 404);
    assert.match(res.body!.error.message, /Unknown tenant 'nobody'/);
    for (const method of ["PUT", "PATCH", "HEAD", "TRACE"] as const) {
      const res = await portico.app.inject({ method, url: "/mcp/acme" });
      assert.equal(res.statusCode, 405, method);
      assert.equal(res.headers.allow, "GET, POST, DELETE, OPTIONS");
    }
    for (const method of ["PUT", "PATCH"] as const) {
      const res = await portico.app.inject({ method, url: "/mcp/acme", payload: "not json at all" });
      assert.equal(res.statusCode, 405, `${method} with a body`);
      assert.equal(JSON.parse(res.body).error.code, -32000);
    }
  });

  it("a GET stream needs Accept: text/event-stream", async () => {
    const res = await portico.app.inject({
      method: "GET",
      url: "/mcp/acme",
      headers: { "mcp-session-id": sid, accept: "application/json" },
    });
    assert.equal(res.statusCode, 406);
  });
});

describe("pagination", () => {
  it("pages with opaque cursors that round-trip", async () => {
    const small = await startPortico({
      tenants: [
        {
          id: "many",
          auth: "none",
          providers: [
            {
              id: "s",
              kind: "static",
              resources: Array.from({ length: 5 }, (_, i) => ({ uri: `r://${i}`, name: `r${i}`, text: "x" })),
            },
          ],
        },
      ],
      env: { PORTICO_PAGE_SIZE: "2" },
    });
    try {
      const init = await small.app.inject({
        method: "POST",
        url: "/mcp/many",
        headers: HEADERS,
        payload: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {} },
        }),
      });
      const sid = init.headers["mcp-session-id"] as string;
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 5; i++) {
        const res = await small.app.inject({
          method: "POST",
          url: "/mcp/many",
          headers: { ...HEADERS, "mcp-session-id": sid },
          payload: JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "resources/list",
            params: cursor ? { cursor } : {},
          }),
        });
        const result = JSON.parse(res.body).result;
        seen.push(...result.resources.map((r: { uri: string }) => r.uri));
        cursor = result.nextCursor;
        if (!cursor) break;
      }
      assert.deepEqual(seen, ["r://0", "r://1", "r://2", "r://3", "r://4"]);
    } finally {
      await small.close();
    }
  });
});

describe("a URL without its tenant, or with one not served here", () => {
  const PATTERN = "http://localhost:0/mcp/{tenant}";

  it("/mcp and /mcp/ answer every method with a JSON-RPC error naming /mcp/{tenant}, body unread", async () => {
    for (const url of ["/mcp", "/mcp/"])
      for (const method of ["POST", "GET", "DELETE", "PUT", "PATCH"] as const) {
        // Not even JSON: the missing tenant is the mistake to report, not the body.
        const res = await portico.app.inject({
          method,
          url,
          headers: { "content-type": "text/plain" },
          ...(method === "GET" ? {} : { payload: "not json" }),
        });
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.match(res.headers["content-type"] as string, /^application\/json/);
        const body = JSON.parse(res.body);
        assert.equal(body.error.code, -32600);
        assert.ok(body.error.message.includes(PATTERN), body.error.message);
      }
  });

  it("an unknown tenant is said to be unknown, and no served tenant is named", async () => {
    const res = await post({ jsonrpc: "2.0", id: 7, method: "initialize", params: {} }, {}, "acm");
    assert.equal(res.status, 404);
    assert.equal(res.body!.id, 7);
    assert.match(res.body!.error.message, /^Unknown tenant 'acm': .*http:\/\/localhost:0\/mcp\/\{tenant\}/);
    assert.doesNotMatch(res.body!.error.message, /acme|other/);
  });

  it("a path below a tenant's endpoint says where the endpoints are", async () => {
    const res = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, {}, "acme/extra");
    assert.equal(res.status, 404);
    assert.ok(res.body!.error.message.includes(PATTERN), res.body!.error.message);
  });

  it("the official SDK client pointed at /mcp (as Inspector 0.15 does) shows the user that message", async () => {
    const client = new Client({ name: "t", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${portico.url}/mcp`));
    await assert.rejects(client.connect(transport), (err: Error) => {
      assert.ok(err.message.includes(PATTERN), err.message);
      return true;
    });
    await client.close();
  });
});
