// Bounded by default (docs/security.md): rate limits and session caps are on without any setting,
// 0 turns each off, refusals speak JSON-RPC with Retry-After, replicas on one Redis agree, and a
// client address comes from X-Forwarded-For only through a trusted proxy.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import type { CallRun, RoundMeta } from "../../src/mcp/stateless/call-run.js";
import { Mrtr } from "../../src/mcp/stateless/mrtr.js";
import type { RoundCall } from "../../src/mcp/stateless/mrtr-types.js";
import { RequestStates } from "../../src/mcp/stateless/request-state.js";
import { UserStore } from "../../src/oauth/users.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { ADMIN_TOKEN } from "../support/admin.js";
import { TestOAuthClient } from "../support/oauth.js";
import {
  startIssuer,
  startPortico,
  staticTenant,
  TEST_SECRET,
  type RunningPortico,
} from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { awayFromMinuteEdge, MCP_HEADERS, postRpc, postRpcWithToken } from "../support/rpc.js";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {} },
};

async function app(env: Record<string, string> = {}): Promise<Portico> {
  const config = loadConfig({ PORTICO_LOG_LEVEL: "silent", PORTICO_SECRET_KEY: TEST_SECRET, ...env });
  return buildApp(config, { tenants: [staticTenant("acme")], logger: false });
}

/** POST /mcp/acme by inject, from a peer address, with extra headers. */
function post(p: Portico, body: unknown, from: string, headers: Record<string, string> = {}) {
  return p.app.inject({
    method: "POST",
    url: "/mcp/acme",
    remoteAddress: from,
    headers: { ...MCP_HEADERS, host: "localhost", ...headers },
    payload: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("limits are on by default", () => {
  it("every default is a sane, non-zero value", () => {
    const config = loadConfig({});
    assert.equal(config.tenantRequestsPerMinute, 60_000);
    assert.equal(config.clientRequestsPerMinute, 3_000);
    assert.equal(config.maxSessionsPerPrincipal, 100);
    assert.equal(config.maxSessionsPerAddress, 1_000);
    assert.equal(config.oauthRequestsPerMinute, 60);
  });

  it("0 turns each off", () => {
    const config = loadConfig({
      PORTICO_RATE_LIMIT_REQUESTS_PER_MINUTE: "0",
      PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "0",
      PORTICO_MAX_SESSIONS_PER_PRINCIPAL: "0",
      PORTICO_MAX_SESSIONS_PER_ADDRESS: "0",
    });
    assert.equal(config.tenantRequestsPerMinute, 0);
    assert.equal(config.clientRequestsPerMinute, 0);
    assert.equal(config.maxSessionsPerPrincipal, 0);
    assert.equal(config.maxSessionsPerAddress, 0);
  });
});

describe("per-client request limit", () => {
  let p: Portico;
  before(async () => (p = await app({ PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "4" })));
  after(() => p.app.close());

  it("refuses one address past its budget with 429, Retry-After and a JSON-RPC error; another address is served", async () => {
    // Keep the burst inside one fixed minute.
    await awayFromMinuteEdge(5_000);
    const ping = (id: number, from: string) => post(p, { jsonrpc: "2.0", id, method: "ping" }, from);
    const sid = (await post(p, INIT, "192.0.2.10")).headers["mcp-session-id"] as string;
    const withSid = (id: number, from: string) =>
      post(p, { jsonrpc: "2.0", id, method: "ping" }, from, { "mcp-session-id": sid });
    for (let i = 2; i <= 4; i++) assert.equal((await withSid(i, "192.0.2.10")).statusCode, 200);
    const refused = await withSid(5, "192.0.2.10");
    assert.equal(refused.statusCode, 429);
    assert.match(refused.headers["content-type"] as string, /^application\/json/);
    const retryAfter = Number(refused.headers["retry-after"]);
    assert.ok(retryAfter >= 1 && retryAfter <= 60);
    assert.deepEqual(refused.json(), {
      jsonrpc: "2.0",
      id: 5,
      error: {
        code: -32000,
        message: `Too Many Requests: this client's limit of 4 requests per minute is reached; retry after ${retryAfter} s`,
        data: { retryAfterSeconds: retryAfter },
      },
    });
    // The same session from another address (another client behind another NAT) is not refused.
    assert.equal((await withSid(6, "192.0.2.11")).statusCode, 200);
    assert.equal(
      (await ping(7, "192.0.2.11")).statusCode,
      400,
      "no session: refused for that, not the limit",
    );
  });
});

describe("limits set to 0", () => {
  it("serve a burst far past the defaults' per-batch share without a refusal", async () => {
    const p = await app({
      PORTICO_RATE_LIMIT_REQUESTS_PER_MINUTE: "0",
      PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "0",
      PORTICO_MAX_SESSIONS_PER_ADDRESS: "0",
    });
    try {
      const statuses = await Promise.all(
        Array.from({ length: 60 }, async () => (await post(p, INIT, "192.0.2.20")).statusCode),
      );
      assert.deepEqual(new Set(statuses), new Set([200]));
    } finally {
      await p.app.close();
    }
  });
});

describe("sessions per client address (tenant without authentication)", () => {
  let p: Portico;
  before(async () => (p = await app({ PORTICO_MAX_SESSIONS_PER_ADDRESS: "2" })));
  after(() => p.app.close());

  it("refuses an address's session past the cap; another address, and a DELETE, make room", async () => {
    const first = await post(p, INIT, "198.51.100.1");
    assert.equal((await post(p, INIT, "198.51.100.1")).statusCode, 200);
    const refused = await post(p, INIT, "198.51.100.1");
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers["mcp-session-id"], undefined, "no session was created");
    assert.equal(refused.headers["retry-after"], "60");
    assert.deepEqual(refused.json(), {
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32000,
        message:
          "Too Many Requests: this address already holds 2 sessions on this tenant; end one (DELETE) or wait for one to expire",
        data: { retryAfterSeconds: 60 },
      },
    });
    assert.equal((await post(p, INIT, "198.51.100.2")).statusCode, 200, "another address has its own cap");
    assert.match(
      await p.metrics.scrape(),
      /^portico_rate_limited_total\{surface="mcp",scope="sessions"\} 1$/m,
      "the refusal is counted",
    );

    const deleted = await p.app.inject({
      method: "DELETE",
      url: "/mcp/acme",
      remoteAddress: "198.51.100.1",
      headers: { host: "localhost", "mcp-session-id": first.headers["mcp-session-id"] as string },
    });
    assert.equal(deleted.statusCode, 204);
    assert.equal((await post(p, INIT, "198.51.100.1")).statusCode, 200, "DELETE freed a place");
    assert.equal((await post(p, INIT, "198.51.100.1")).statusCode, 429);
  });

  it("sessions kept alive past the idle TTL still count (the owner's set outlives its first TTL)", async () => {
    const q = await app({ PORTICO_MAX_SESSIONS_PER_ADDRESS: "2", PORTICO_SESSION_IDLE_TTL_SECONDS: "5" });
    try {
      const sids: string[] = [];
      for (let i = 0; i < 2; i++)
        sids.push(String((await post(q, INIT, "198.51.100.9")).headers["mcp-session-id"]));
      for (let t = 0; t < 8; t++) {
        await new Promise((r) => setTimeout(r, 1000));
        for (const sid of sids)
          assert.equal(
            (
              await post(q, { jsonrpc: "2.0", id: t, method: "ping" }, "198.51.100.9", {
                "mcp-session-id": sid,
              })
            ).statusCode,
            200,
          );
      }
      assert.equal(
        (await post(q, INIT, "198.51.100.9")).statusCode,
        429,
        "both sessions are alive after 8 s",
      );
    } finally {
      await q.app.close();
    }
  });

  it("IPv6 addresses of one /64 share a cap", async () => {
    assert.equal((await post(p, INIT, "2001:db8:1:2::1")).statusCode, 200);
    assert.equal((await post(p, INIT, "2001:db8:1:2::2")).statusCode, 200);
    assert.equal((await post(p, INIT, "2001:db8:1:2:ffff::3")).statusCode, 429);
  });
});

describe("a tenant's own session cap", () => {
  it("overrides the server default, and 0 turns it off for that tenant", async () => {
    const config = loadConfig({ PORTICO_LOG_LEVEL: "silent", PORTICO_SECRET_KEY: TEST_SECRET });
    const p = await buildApp(config, {
      tenants: [
        { ...staticTenant("acme"), limits: { sessionsPerAddress: 1 } },
        { ...staticTenant("open"), limits: { sessionsPerAddress: 0 } },
      ],
      logger: false,
    });
    try {
      assert.equal((await post(p, INIT, "192.0.2.30")).statusCode, 200);
      const refused = await post(p, INIT, "192.0.2.30");
      assert.equal(refused.statusCode, 429);
      assert.match(refused.json<{ error: { message: string } }>().error.message, /already holds 1 sessions/);
      for (let i = 0; i < 3; i++) {
        const res = await p.app.inject({
          method: "POST",
          url: "/mcp/open",
          remoteAddress: "192.0.2.30",
          headers: { ...MCP_HEADERS, host: "localhost" },
          payload: JSON.stringify(INIT),
        });
        assert.equal(res.statusCode, 200);
      }
    } finally {
      await p.app.close();
    }
  });
});

describe("client addresses and X-Forwarded-For", () => {
  let p: Portico;
  before(
    async () =>
      (p = await app({ PORTICO_MAX_SESSIONS_PER_ADDRESS: "1", PORTICO_TRUSTED_PROXIES: "10.0.0.0/8" })),
  );
  after(() => p.app.close());

  it("from an untrusted peer, X-Forwarded-For is ignored: spoofed addresses share the peer's cap", async () => {
    const spoof = (xff: string) => post(p, INIT, "203.0.113.9", { "x-forwarded-for": xff });
    assert.equal((await spoof("198.18.0.1")).statusCode, 200);
    assert.equal((await spoof("198.18.0.2")).statusCode, 429);
    assert.equal((await spoof("10.0.0.1, 198.18.0.3")).statusCode, 429);
  });

  it("from a trusted proxy, X-Forwarded-For names the client", async () => {
    const via = (xff: string) => post(p, INIT, "10.1.2.3", { "x-forwarded-for": xff });
    assert.equal((await via("198.18.1.1")).statusCode, 200);
    assert.equal((await via("198.18.1.2")).statusCode, 200, "another client behind the same proxy");
    assert.equal((await via("198.18.1.1")).statusCode, 429, "the first client is at its cap");
    // A client prepending addresses does not escape: the last untrusted hop is the client.
    assert.equal((await via("192.0.2.99, 198.18.1.1")).statusCode, 429);
  });
});

describe("two replicas on one Redis", () => {
  let a: RunningPortico;
  let b: RunningPortico;
  before(async () => {
    const opts = {
      redisPrefix: uniquePrefix(),
      tenants: [staticTenant("acme")],
      env: { PORTICO_MAX_SESSIONS_PER_ADDRESS: "3" },
    };
    a = await startPortico(opts);
    b = await startPortico(opts);
  });
  after(() => Promise.all([a.close(), b.close()]));

  it("agree on a session cap, and on the place a DELETE frees", async () => {
    const open = async (r: RunningPortico) => {
      const res = await postRpc(r.mcpUrl("acme"), INIT);
      await res.body?.cancel();
      return { status: res.status, sid: res.headers.get("mcp-session-id") };
    };
    const first = await open(a);
    assert.equal((await open(b)).status, 200);
    assert.equal((await open(a)).status, 200);
    assert.equal((await open(b)).status, 429, "replica b knows of a's sessions");
    assert.equal((await open(a)).status, 429);
    const del = await fetch(b.mcpUrl("acme"), {
      method: "DELETE",
      headers: { "mcp-session-id": first.sid! },
    });
    assert.equal(del.status, 204);
    assert.equal((await open(a)).status, 200, "a DELETE on b frees a place a sees");
    const racing = await Promise.all([open(a), open(b), open(a), open(b)]);
    assert.ok(
      racing.every((r) => r.status === 429),
      "at the cap, concurrent initializes on both replicas are all refused",
    );
  });
});

describe("oversized headers get the surface's own error", () => {
  let p: RunningPortico;
  before(async () => (p = await startPortico({ tenants: [staticTenant("acme")] })));
  after(() => p.close());
  const big = { "x-padding": "a".repeat(64 * 1024) };

  it("on /mcp: 431 with a JSON-RPC error", async () => {
    const res = await fetch(p.mcpUrl("acme"), {
      method: "POST",
      headers: { ...MCP_HEADERS, ...big },
      body: JSON.stringify(INIT),
    });
    assert.equal(res.status, 431);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.deepEqual(await res.json(), {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "Request Header Fields Too Large: the request's headers exceed the server's limit (16 KiB)",
      },
    });
  });

  it("on /admin: 431 with problem+json", async () => {
    const res = await fetch(`${p.url}/admin/v1/tenants`, { headers: big });
    assert.equal(res.status, 431);
    assert.equal(res.headers.get("content-type"), "application/problem+json");
    const problem = (await res.json()) as Record<string, unknown>;
    assert.equal(problem.status, 431);
    assert.equal(problem.code, "PORTICO_ERR_ADMIN_HEADERS_TOO_LARGE");
    assert.equal(problem.title, "Request Header Fields Too Large");
  });

  it("on /oauth: 431 with an RFC 6749 error; a 1 MB header does not stall the server", async () => {
    const res = await fetch(`${p.url}/oauth/token`, {
      method: "POST",
      headers: { "x-padding": "a".repeat(1024 * 1024) },
    });
    assert.equal(res.status, 431);
    assert.equal(((await res.json()) as { error: string }).error, "invalid_request");
    const health = await fetch(`${p.url}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  });
});

describe("slow clients cannot hold a socket (request timeout)", () => {
  let p: RunningPortico;
  before(
    async () =>
      (p = await startPortico({
        tenants: [staticTenant("acme")],
        env: { PORTICO_REQUEST_TIMEOUT_MS: "1000", PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
      })),
  );
  after(() => p.close());

  /** Opens a raw connection, writes `head`, then (if any) trickles a byte every 200 ms; resolves with what came back and when. */
  function trickle(head: string, limitMs = 8_000): Promise<{ answer: string; ms: number }> {
    const { port } = new URL(p.url);
    const socket = connect(Number(port), "127.0.0.1");
    const started = Date.now();
    let answer = "";
    socket.on("data", (d: Buffer) => (answer += d.toString("latin1")));
    socket.on("error", () => undefined);
    socket.write(head);
    const drip = setInterval(() => head && socket.writable && socket.write(" "), 200);
    return new Promise((resolve) => {
      const done = () => {
        clearInterval(drip);
        clearTimeout(cap);
        socket.destroy();
        resolve({ answer, ms: Date.now() - started });
      };
      const cap = setTimeout(done, limitMs);
      socket.on("close", done);
    });
  }

  it("a body trickled to /mcp is cut with a 408 JSON-RPC error", async () => {
    const { answer, ms } = await trickle(
      "POST /mcp/acme HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
        "Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{",
    );
    assert.ok(ms < 5_000, `connection held ${ms} ms`);
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /"jsonrpc":"2\.0","id":null,"error":\{"code":-32600/);
  });

  it("a body trickled to /admin is cut with a 408 problem+json", async () => {
    const { answer, ms } = await trickle(
      "POST /admin/v1/tenants HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
        `Authorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: 5000\r\n\r\n{`,
    );
    assert.ok(ms < 5_000, `connection held ${ms} ms`);
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /Content-Type: application\/problem\+json/);
  });

  it("a body trickled after the request was refused gets no second answer, and is cut", async () => {
    const { answer, ms } = await trickle(
      "POST /admin/v1/tenants HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{",
    );
    assert.ok(ms < 5_000, `connection held ${ms} ms`);
    assert.match(answer, /^HTTP\/1\.1 401 /);
    assert.equal(answer.match(/HTTP\/1\.1 /g)?.length, 1);
  });

  it("headers trickled a byte at a time are cut with a 408", async () => {
    const { answer, ms } = await trickle("GET /oauth/authorize HTTP/1.1\r\nHost: localhost\r\nX-Slow: a");
    assert.ok(ms < 5_000, `connection held ${ms} ms`);
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it("a connection that never sends anything is closed too", async () => {
    const { ms } = await trickle("", 8_000);
    assert.ok(ms < 5_000, `connection held ${ms} ms`);
  });

  it("a GET stream outlives the request timeout: only receiving the request is bounded", async () => {
    const init = await postRpc(p.mcpUrl("acme"), INIT);
    const sid = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    await (
      await postRpc(p.mcpUrl("acme"), { jsonrpc: "2.0", method: "notifications/initialized" }, sid)
    ).body?.cancel();
    const stream = await fetch(p.mcpUrl("acme"), {
      headers: { accept: "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    });
    assert.equal(stream.status, 200);
    await new Promise((r) => setTimeout(r, 2_500));
    // Still open: a request on the session is answered, and the stream has not ended.
    const ping = await postRpc(p.mcpUrl("acme"), { jsonrpc: "2.0", id: 9, method: "ping" }, sid);
    assert.equal(ping.status, 200);
    await ping.body?.cancel();
    const reader = stream.body!.getReader();
    const next = await Promise.race([
      reader.read().then((r) => (r.done ? "ended" : "data")),
      new Promise((r) => setTimeout(() => r("open"), 300)),
    ]);
    assert.notEqual(next, "ended");
    await reader.cancel();
  });

  it("defaults to 60 s; 0 turns it off", () => {
    assert.equal(loadConfig({}).requestTimeoutMs, 60_000);
    assert.equal(loadConfig({ PORTICO_REQUEST_TIMEOUT_MS: "0" }).requestTimeoutMs, 0);
  });
});

describe("URLs that cannot be routed get the surface's own error", () => {
  let p: RunningPortico;
  before(async () => (p = await startPortico({ tenants: [staticTenant("acme")] })));
  after(() => p.close());

  it("bad percent-encoding or an overlong segment: RFC 6749 on /oauth and /.well-known, JSON-RPC on /mcp", async () => {
    for (const path of [
      "/oauth/%E0%A4%A",
      "/.well-known/oauth-protected-resource/mcp/%zz",
      `/.well-known/oauth-protected-resource/mcp/${"a".repeat(300)}`,
    ]) {
      const res = await fetch(`${p.url}${path}`);
      assert.equal(res.status, 400, path);
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(body.error, "invalid_request", path);
      assert.equal(body.jsonrpc, undefined, path);
    }
    const mcp = await fetch(`${p.url}/mcp/%zz`);
    assert.equal(mcp.status, 400);
    assert.equal(((await mcp.json()) as { error: { code: number } }).error.code, -32600);
    const other = await fetch(`${p.url}/metrics/%zz`);
    assert.equal(other.status, 400);
    assert.equal(((await other.json()) as Record<string, unknown>).jsonrpc, undefined);
  });
});

describe("error messages quote a short excerpt of client input", () => {
  let p: RunningPortico;
  let sid: string;
  before(async () => {
    p = await startPortico({ tenants: [staticTenant("acme")] });
    const res = await postRpc(p.mcpUrl("acme"), INIT);
    sid = res.headers.get("mcp-session-id")!;
    await res.body?.cancel();
  });
  after(() => p.close());
  const huge = "m".repeat(1024 * 1024);

  /** The whole answer is small, and quotes at most the excerpt of `huge`. */
  async function small(res: Response): Promise<{ status: number; message: string }> {
    const text = await res.text();
    assert.ok(text.length < 2000, `answer of ${text.length} characters`);
    assert.ok(!text.includes("m".repeat(81)), "no more than 80 characters of the input");
    const body = JSON.parse(text) as { error: { message: string } };
    return { status: res.status, message: body.error.message };
  }

  it("an unknown route's 404 quotes an excerpt of the path and none of the query, in the surface's format", async () => {
    const long = "m".repeat(5_000);
    for (const [path, format] of [
      [`/oauth/${long}x?q=${long}`, "oauth"],
      [`/nowhere/${long}x?q=${long}`, "other"],
      [`/mcp/acme/eng/${long}x/more?q=${long}`, "mcp"],
    ] as const) {
      const res = await fetch(`${p.url}${path}`);
      assert.equal(res.status, 404, path.slice(0, 20));
      const text = await res.text();
      assert.ok(text.length < 400, `answer of ${text.length} characters`);
      assert.ok(!text.includes("m".repeat(81)), "no more than 80 characters of the input");
      const body = JSON.parse(text) as Record<string, unknown>;
      if (format === "oauth") assert.equal(body.error, "invalid_request");
      if (format === "mcp") assert.equal((body.error as { code: number }).code, -32600);
      if (format === "other") assert.equal(body.error, "Not Found");
      assert.match(text, /Not Found: no route GET \/[\w/]+m+… \(\d+ characters\)/);
    }
  });

  it("a 1 MB method name", async () => {
    const res = await postRpc(p.mcpUrl("acme"), { jsonrpc: "2.0", id: 2, method: huge }, sid);
    const { message } = await small(res);
    assert.equal(message, `Method not found: ${"m".repeat(80)}… (1048576 characters)`);
  });

  it("an unknown route on any surface: the 404 quotes an excerpt of the path, never the query", async () => {
    const long = "q".repeat(7000);
    for (const path of [
      `/mcp/acme/eng/${long}`,
      `/oauth/${long}`,
      `/.well-known/oauth-authorization-server/${long}`,
      `/${long}`,
    ]) {
      const res = await fetch(`${p.url}${path}?code=secret-code-in-query`);
      assert.equal(res.status, 404, path.slice(0, 40));
      const text = await res.text();
      assert.ok(text.length < 1000, `answer of ${text.length} characters`);
      assert.ok(!text.includes("q".repeat(81)) && !text.includes("secret-code-in-query"), text);
    }
  });

  it("a 1 MB tool name, prompt name and resource URI", async () => {
    for (const [method, params] of [
      ["tools/call", { name: huge, arguments: {} }],
      ["prompts/get", { name: huge }],
      ["resources/read", { uri: huge }],
    ] as const) {
      const res = await postRpc(p.mcpUrl("acme"), { jsonrpc: "2.0", id: 3, method, params }, sid);
      const { message } = await small(res);
      assert.match(message, /… \(1048576 characters\)/, method);
    }
  });

  it("a 1 MB method name without a session (2026-07-28)", async () => {
    const res = await fetch(p.mcpUrl("acme"), {
      method: "POST",
      headers: { ...MCP_HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "x" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 4,
        method: huge,
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    const { message } = await small(res);
    assert.match(message, /… \(1048576 characters\)/);
  });

  it("long Host, Origin and MCP-Protocol-Version headers", async () => {
    const long = "h".repeat(8000);
    const origin = await fetch(p.mcpUrl("acme"), {
      method: "POST",
      headers: { ...MCP_HEADERS, origin: `https://${long}.example` },
      body: JSON.stringify(INIT),
    });
    assert.equal(origin.status, 403);
    assert.ok((await origin.text()).length < 1000);
    const version = await fetch(p.mcpUrl("acme"), {
      method: "POST",
      headers: { ...MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": long },
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
    });
    assert.equal(version.status, 400);
    assert.ok((await version.text()).length < 1000);
  });
});

/** Opens a GET stream; resolves with the response (its body left open) once headers arrive. */
function getStream(url: string, sid: string, abort: AbortController, lastEventId?: string) {
  return fetch(url, {
    signal: abort.signal,
    headers: {
      accept: "text/event-stream",
      "mcp-session-id": sid,
      ...(lastEventId ? { "last-event-id": lastEventId } : {}),
    },
  });
}

describe("GET streams per session, across replicas", () => {
  let a: RunningPortico;
  let b: RunningPortico;
  const abort = new AbortController();
  before(async () => {
    const opts = {
      redisPrefix: uniquePrefix(),
      tenants: [staticTenant("acme")],
      env: { PORTICO_MAX_STREAMS_PER_SESSION: "2" },
    };
    a = await startPortico(opts);
    b = await startPortico(opts);
  });
  after(async () => {
    abort.abort();
    await Promise.all([a.close(), b.close()]);
  });

  it("refuses a third concurrent GET stream on either replica with a JSON-RPC 429; a reconnect keeps its place, a close frees one", async () => {
    const init = await postRpc(a.mcpUrl("acme"), INIT);
    const sid = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    // Two request streams with events in their logs, as streamed requests leave them.
    const logOf = async (streamId: string) => {
      const data = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: {} });
      const entry = await a.store.streamAppend(a.keys.eventLog("acme", sid, streamId), data, {
        maxLen: 10,
        ttlSeconds: 60,
      });
      return `${streamId}.${entry}`;
    };
    const [r1, r2] = [await logOf("r1"), await logOf("r2")];

    assert.equal((await getStream(a.mcpUrl("acme"), sid, abort)).status, 200);
    const closing = new AbortController();
    assert.equal((await getStream(b.mcpUrl("acme"), sid, closing, r1)).status, 200);
    const third = await getStream(a.mcpUrl("acme"), sid, abort, r2);
    assert.equal(third.status, 429);
    assert.match(third.headers.get("content-type")!, /^application\/json/);
    assert.deepEqual(await third.json(), {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32000,
        message: "Too Many Requests: this session already has 2 GET streams open; close one first",
        data: { retryAfterSeconds: 1 },
      },
    });
    const reconnect = await getStream(b.mcpUrl("acme"), sid, abort);
    assert.equal(reconnect.status, 200, "the standalone stream again (a reconnect) keeps its place");
    assert.equal((await getStream(b.mcpUrl("acme"), sid, abort, r2)).status, 429, "still two");

    closing.abort();
    let again: Response | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      await again?.body?.cancel();
      await new Promise((r) => setTimeout(r, 20));
      again = await getStream(a.mcpUrl("acme"), sid, abort, r2);
    }
    assert.equal(again?.status, 200, "the closed stream's place is free");
  });
});

/** Opens a 2026-07-28 listen stream; resolves with the response. */
function listen(
  url: string,
  abort: AbortController,
  resourceSubscriptions?: string[],
  from?: string,
  token?: string,
) {
  return fetch(url, {
    method: "POST",
    signal: abort.signal,
    headers: {
      ...MCP_HEADERS,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
      ...(from && { "x-forwarded-for": from }),
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "subscriptions/listen",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
        notifications: { toolsListChanged: true, ...(resourceSubscriptions && { resourceSubscriptions }) },
      },
    }),
  });
}

describe("listen streams and watched URIs per tenant", () => {
  let p: RunningPortico;
  const abort = new AbortController();
  before(
    async () =>
      (p = await startPortico({
        tenants: [staticTenant("acme")],
        env: { PORTICO_MAX_LISTEN_STREAMS_PER_TENANT: "2", PORTICO_MAX_WATCHED_URIS_PER_TENANT: "3" },
      })),
  );
  after(async () => {
    abort.abort();
    await p.close();
  });

  it("refuses a listen past the tenant's streams, and one that would watch too many URIs", async () => {
    const one = await listen(p.mcpUrl("acme"), abort, ["perf://a", "perf://b"]);
    assert.equal(one.status, 200);
    const tooMany = await listen(p.mcpUrl("acme"), abort, ["perf://c", "perf://d"]);
    assert.equal(tooMany.status, 429);
    assert.match(
      ((await tooMany.json()) as { error: { message: string } }).error.message,
      /already watch 2 resource URIs on this server, at most 3/,
    );
    const closing = new AbortController();
    const two = await listen(p.mcpUrl("acme"), closing, ["perf://a", "perf://c"]);
    assert.equal(two.status, 200, "a URI already watched costs nothing more");
    const three = await listen(p.mcpUrl("acme"), abort);
    assert.equal(three.status, 429);
    assert.deepEqual(await three.json(), {
      jsonrpc: "2.0",
      id: 9,
      error: {
        code: -31005,
        message:
          "Too Many Requests: this tenant already has 2 listen streams open on this server; retry later",
        data: { retryAfterSeconds: 5, error: "PORTICO_ERR_MCP_TOO_MANY_STREAMS" },
      },
    });
    closing.abort();
    let again: Response | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      await again?.body?.cancel();
      await new Promise((r) => setTimeout(r, 20));
      again = await listen(p.mcpUrl("acme"), abort);
    }
    assert.equal(again?.status, 200, "a closed listen stream frees its place");
  });
});

describe("listen streams per client: one client cannot take the tenant's", () => {
  let p: RunningPortico;
  const abort = new AbortController();
  before(
    async () =>
      (p = await startPortico({
        tenants: [staticTenant("acme")],
        env: {
          PORTICO_MAX_LISTEN_STREAMS_PER_TENANT: "10",
          PORTICO_MAX_LISTEN_STREAMS_PER_ADDRESS: "2",
          PORTICO_TRUSTED_PROXIES: "127.0.0.1/32,::1/128",
        },
      })),
  );
  after(async () => {
    abort.abort();
    await p.close();
  });

  it("refuses an address's listen past its own cap with a JSON-RPC 429; other addresses still listen; a close frees one", async () => {
    const url = p.mcpUrl("acme");
    assert.equal((await listen(url, abort, undefined, "198.51.100.7")).status, 200);
    const closing = new AbortController();
    assert.equal((await listen(url, closing, undefined, "198.51.100.7")).status, 200);
    const refused = await listen(url, abort, undefined, "198.51.100.7");
    assert.equal(refused.status, 429);
    assert.deepEqual(await refused.json(), {
      jsonrpc: "2.0",
      id: 9,
      error: {
        code: -31005,
        message:
          "Too Many Requests: this address already has 2 listen streams open on this tenant; close one first",
        data: { retryAfterSeconds: 5, error: "PORTICO_ERR_MCP_TOO_MANY_STREAMS" },
      },
    });
    // The same /64 is one client; another address is not.
    assert.equal((await listen(url, abort, undefined, "198.51.100.8")).status, 200);
    assert.equal((await listen(url, abort, undefined, "2001:db8:1:2::1")).status, 200);
    assert.equal((await listen(url, abort, undefined, "2001:db8:1:2::2")).status, 200);
    const sameSlash64 = await listen(url, abort, undefined, "2001:db8:1:2::3");
    assert.equal(sameSlash64.status, 429);
    await sameSlash64.body?.cancel();
    closing.abort();
    let again: Response | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      await again?.body?.cancel();
      await new Promise((r) => setTimeout(r, 20));
      again = await listen(url, abort, undefined, "198.51.100.7");
    }
    assert.equal(again?.status, 200, "a closed listen stream frees the client's place");
  });

  it("refuses an address's listen that would subscribe it to more URIs than its share", async () => {
    const url = p.mcpUrl("acme");
    const tooMany = await listen(url, abort, ["perf://a", "perf://b", "perf://c"], "198.51.100.9");
    assert.equal(tooMany.status, 429);
    assert.match(
      ((await tooMany.json()) as { error: { message: string } }).error.message,
      /this address's listen streams already subscribe to 0 resource URIs on this tenant, at most 2/,
    );
    assert.equal((await listen(url, abort, ["perf://a", "perf://b"], "198.51.100.9")).status, 200);
    const more = await listen(url, abort, ["perf://c"], "198.51.100.9");
    assert.equal(more.status, 429, "two streams' URIs count together");
    await more.body?.cancel();
    assert.equal((await listen(url, abort, ["perf://c"], "198.51.100.10")).status, 200, "another address");
  });

  it("defaults: 100 per user, 500 per address (an office behind one NAT), 0 turns each off", () => {
    const config = loadConfig({});
    assert.equal(config.maxListenStreamsPerPrincipal, 100);
    assert.equal(config.maxListenStreamsPerAddress, 500);
    const off = loadConfig({
      PORTICO_MAX_LISTEN_STREAMS_PER_PRINCIPAL: "0",
      PORTICO_MAX_LISTEN_STREAMS_PER_ADDRESS: "0",
    });
    assert.equal(off.maxListenStreamsPerPrincipal + off.maxListenStreamsPerAddress, 0);
  });
});

describe("admin errors quote a short excerpt too", () => {
  it("a 1 MB unknown field name, a long query value and a long path id", async () => {
    const p = await app({ PORTICO_ADMIN_TOKEN: ADMIN_TOKEN });
    try {
      const admin = (method: "GET" | "POST", url: string, payload?: unknown) =>
        p.app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
          ...(payload !== undefined && { payload: JSON.stringify(payload) }),
        });
      const field = await admin("POST", "/admin/v1/tenants", { id: "beta", ["f".repeat(1024 * 1024)]: 1 });
      assert.equal(field.statusCode, 422);
      assert.ok(field.body.length < 2000, `answer of ${field.body.length} characters`);
      assert.match(field.json<{ detail: string }>().detail, /unknown field "f{80}… \(1048576 characters\)"/);
      const query = await admin("GET", `/admin/v1/tenants?limit=${"9".repeat(4000)}`);
      assert.equal(query.statusCode, 400);
      assert.ok(query.body.length < 1000, `answer of ${query.body.length} characters`);
      const id = await admin("GET", `/admin/v1/tenants/${"a".repeat(200)}`);
      assert.ok(id.body.length < 1000, `answer of ${id.body.length} characters`);
      // An unknown route is answered before any key is checked: its path is not sent back whole.
      for (const url of [`/admin/v1/${"x".repeat(8000)}`, `/admin/v1/tenants/a/${"x".repeat(8000)}`]) {
        const unknown = await p.app.inject({ method: "GET", url });
        assert.equal(unknown.statusCode, 404);
        assert.ok(unknown.body.length < 1000, `answer of ${unknown.body.length} characters`);
      }
      // A long If-Match (8 KB, within the header limit) is not sent back whole in the 412.
      assert.equal((await admin("POST", "/admin/v1/tenants", { id: "gamma", auth: "none" })).statusCode, 201);
      const tag = `"${"t".repeat(8 * 1024)}"`;
      const stale = await p.app.inject({
        method: "PATCH",
        url: "/admin/v1/tenants/gamma",
        headers: {
          authorization: `Bearer ${ADMIN_TOKEN}`,
          "content-type": "application/merge-patch+json",
          "if-match": tag,
        },
        payload: JSON.stringify({ name: "Gamma" }),
      });
      assert.equal(stale.statusCode, 412);
      assert.ok(stale.body.length < 1000, `answer of ${stale.body.length} characters`);
      assert.ok(!stale.body.includes("t".repeat(81)), "no more than 80 characters of the header");
    } finally {
      await p.app.close();
    }
  });
});

describe("authenticated users: sessions per principal, requests per user of a client", () => {
  let portico: RunningPortico;
  let issuer: string;
  const ada = { username: "ada", password: "correct horse battery" };
  const bob = { username: "bob", password: "staple battery horse" };

  before(async () => {
    ({ portico, issuer } = await startIssuer({
      tenant: "guarded",
      users: [ada, bob],
      env: {
        PORTICO_MAX_SESSIONS_PER_PRINCIPAL: "2",
        PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "6",
      },
    }));
  });
  after(() => portico.close());

  const call = (token: string, message: object, sid?: string) =>
    postRpcWithToken(`${issuer}/mcp/guarded`, token, message, sid);

  it("caps one user's sessions whatever the client, and counts users of one client apart", async () => {
    await awayFromMinuteEdge(15_000);
    const app = await TestOAuthClient.register(issuer, "shared app");
    const other = await TestOAuthClient.register(issuer, "other app");
    const [adaApp, adaOther, bobApp] = [
      (await app.tokens("guarded", ada)).access_token,
      (await other.tokens("guarded", ada)).access_token,
      (await app.tokens("guarded", bob)).access_token,
    ];
    const open = async (token: string) => {
      const res = await call(token, { id: 0, method: "initialize", params: INIT.params });
      return { status: res.status, sid: res.headers.get("mcp-session-id"), body: await res.text() };
    };
    const first = await open(adaApp);
    assert.equal(first.status, 200);
    assert.equal((await open(adaOther)).status, 200);
    const third = await open(adaApp);
    assert.equal(third.status, 429);
    assert.match(third.body, /this user already holds 2 sessions on this tenant/);
    assert.equal((await open(adaOther)).status, 429, "the cap is the user's, not the client's");
    const bobs = await open(bobApp);
    assert.equal(bobs.status, 200, "another user of the same client");

    // Requests: ada has used 4 of her 6 with the shared app (two initializes refused count too
    // as requests that reached the limiter); bob's budget with the same app is his own.
    let adaRefused = 0;
    for (let i = 1; i <= 6; i++)
      if ((await call(adaApp, { id: i, method: "ping" }, first.sid!)).status === 429) adaRefused++;
    assert.ok(adaRefused >= 1, "ada's budget with the shared app runs out");
    assert.equal((await call(bobApp, { id: 1, method: "ping" }, bobs.sid!)).status, 200);
  });

  it("counts a user's requests together whatever the client: registering clients buys no budget", async () => {
    await awayFromMinuteEdge(15_000);
    const cyd = { username: "cyd", password: "battery staple horse" };
    await new UserStore(portico.store, portico.keys).create("guarded", cyd);
    // Two clients (two sessions: within the session cap), each registered by anyone; 2 × 6
    // requests would pass if each client had its own budget.
    const statuses: number[] = [];
    for (let c = 0; c < 2; c++) {
      const app = await TestOAuthClient.register(issuer, `cyd's app ${c}`);
      const token = (await app.tokens("guarded", cyd)).access_token;
      const init = await call(token, { id: 0, method: "initialize", params: INIT.params });
      statuses.push(init.status);
      const sid = init.headers.get("mcp-session-id") ?? undefined;
      for (let i = 1; i < 6; i++) statuses.push((await call(token, { id: i, method: "ping" }, sid)).status);
    }
    const admitted = statuses.filter((s) => s !== 429).length;
    assert.ok(
      admitted <= 6,
      `${admitted} requests admitted past one user's limit of 6: ${statuses.join(" ")}`,
    );
  });
});

describe("listen streams per user, whatever the client", () => {
  let portico: RunningPortico;
  let issuer: string;
  const abort = new AbortController();
  const ada = { username: "ada", password: "correct horse battery" };
  const bob = { username: "bob", password: "staple battery horse" };

  before(async () => {
    ({ portico, issuer } = await startIssuer({
      tenant: "guarded",
      users: [ada, bob],
      env: { PORTICO_MAX_LISTEN_STREAMS_PER_PRINCIPAL: "1" },
    }));
  });
  after(async () => {
    abort.abort();
    await portico.close();
  });

  it("refuses a user's second listen through another client; another user of the same client listens", async () => {
    const app = await TestOAuthClient.register(issuer, "listen app");
    const other = await TestOAuthClient.register(issuer, "other listen app");
    const url = `${issuer}/mcp/guarded`;
    const first = await listen(
      url,
      abort,
      undefined,
      undefined,
      (await app.tokens("guarded", ada)).access_token,
    );
    assert.equal(first.status, 200);
    const adaOther = (await other.tokens("guarded", ada)).access_token;
    const refused = await listen(url, abort, undefined, undefined, adaOther);
    assert.equal(refused.status, 429);
    assert.match(
      ((await refused.json()) as { error: { message: string } }).error.message,
      /this user already has 1 listen streams open on this tenant/,
    );
    const bobs = await listen(
      url,
      abort,
      undefined,
      undefined,
      (await app.tokens("guarded", bob)).access_token,
    );
    assert.equal(bobs.status, 200);
  });
});

describe("held calls per client: one client cannot take the tenant's", () => {
  const meta: RoundMeta = {
    progressToken: undefined,
    logLevel: undefined,
    clientCapabilities: { elicitation: {} },
  };
  const held = (opts: { perPrincipal?: number; perAddress?: number }) =>
    new Mrtr({
      states: new RequestStates(new Secrets(TEST_SECRET), 60_000),
      store: new MemoryStore(),
      keys: createKeys("t"),
      timeoutSeconds: 60,
      maxHeldPerTenant: 10,
      maxHeldPerPrincipal: opts.perPrincipal,
      maxHeldPerAddress: opts.perAddress,
    });
  const call = (
    who: { user?: string; ip?: string },
    params: Record<string, unknown> = { name: "ask" },
  ): RoundCall => ({
    tenant: "acme",
    principal: who.user ? `${who.user} via app` : "",
    user: who.user,
    ...(who.ip && { peer: { ip: who.ip } }),
    request: { jsonrpc: "2.0", id: 1, method: "tools/call", params },
    meta,
    send: () => undefined,
    onClose: () => undefined,
  });
  const ask = async (run: CallRun) => ({
    content: [
      { type: "text", text: JSON.stringify(await run.ask("elicitation/create", { message: "Name?" })) },
    ],
  });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => "held",
      (err: unknown) => (err as Error).message,
    );

  it("refuses an address's held call past its share; another address, and an answered call, make room", async () => {
    const m = held({ perAddress: 2 });
    const first = await m.serve(call({ ip: "198.51.100.7" }), ask);
    await m.serve(call({ ip: "198.51.100.7" }), ask);
    assert.equal(
      await refusal(m.serve(call({ ip: "198.51.100.7" }), ask)),
      "Too Many Requests: this address already has 2 requests waiting for input on this tenant; answer or abandon some, then retry",
    );
    assert.equal(await refusal(m.serve(call({ ip: "198.51.100.8" }), ask)), "held");
    const key = Object.keys(first.inputRequests as object)[0]!;
    const answer = { [key]: { action: "accept", content: {} } };
    await m.serve(
      call({ ip: "198.51.100.7" }, { name: "ask", inputResponses: answer, requestState: first.requestState }),
      ask,
    );
    assert.equal(await refusal(m.serve(call({ ip: "198.51.100.7" }), ask)), "held");
    m.closeAll();
  });

  it("counts a user's held calls whatever the client; another user is not affected", async () => {
    const m = held({ perPrincipal: 1 });
    assert.equal(await refusal(m.serve(call({ user: "ada", ip: "198.51.100.7" }), ask)), "held");
    assert.match(
      await refusal(m.serve(call({ user: "ada", ip: "203.0.113.9" }), ask)),
      /this user already has 1 requests waiting/,
    );
    assert.equal(await refusal(m.serve(call({ user: "bob", ip: "198.51.100.7" }), ask)), "held");
    m.closeAll();
  });

  it("defaults: 100 per user, 500 per address", () => {
    const config = loadConfig({});
    assert.equal(config.maxHeldCallsPerPrincipal, 100);
    assert.equal(config.maxHeldCallsPerAddress, 500);
  });
});
