// The metrics of docs/metrics.md, scraped from a running Portico: every family is in the catalog
// with its type and labels, and each moves when its event happens through the real app (MCP
// clients, upstreams, the admin API, an OAuth client). The exposition passes `promtool check
// metrics`; the endpoint itself and a real Prometheus scraping it are in http.test.ts.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import * as oauth from "oauth4webapi";
import { Metrics } from "../../src/metrics/metrics.js";
import { UserStore } from "../../src/oauth/users.js";
import { startMinimalUpstream, type MinimalUpstream } from "../fixtures/minimal-server.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient } from "../support/clients.js";
import { insecure, TestOAuthClient } from "../support/oauth.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort, startOwnRedis } from "../support/redis.js";
import { MCP_HEADERS, openSession, postRpc } from "../support/rpc.js";
import { findBinary, parseExposition, sumOf, type Sample } from "../support/prometheus.js";

const ADA = { username: "ada", password: "correct horse battery" };

let portico: RunningPortico;
let upstream: MinimalUpstream;
let tools: Server;
let toolsUrl: string;
/** Resolves when the /hang tool endpoint received its request. */
let hangReached: () => void = () => {};

/** A tool endpoint: /ok answers, /fail is a 500, /slow and /hang never answer. */
async function startToolServer(): Promise<void> {
  tools = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/ok") res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      else if (req.url === "/fail") res.writeHead(500, { "content-type": "text/plain" }).end("trouble");
      else if (req.url === "/hang") hangReached();
    });
  });
  await new Promise<void>((resolve) => tools.listen(0, "127.0.0.1", resolve));
  toolsUrl = `http://127.0.0.1:${(tools.address() as AddressInfo).port}`;
}

before(async () => {
  upstream = await startMinimalUpstream();
  await startToolServer();
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  portico = await startPortico({
    redis: true,
    metrics: new Metrics({ sessionsCacheMs: 0 }),
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    tenants: [
      {
        ...staticTenant("open"),
        providers: [
          ...staticTenant("open").providers,
          {
            id: "web",
            kind: "http",
            tools: [
              { name: "ok", url: `${toolsUrl}/ok` },
              { name: "fail", url: `${toolsUrl}/fail` },
              { name: "slow", url: `${toolsUrl}/slow`, timeoutMs: 200 },
              { name: "hang", url: `${toolsUrl}/hang` },
            ],
          },
          { id: "min", kind: "mcp", url: upstream.url, prefix: "min" },
          { id: "dead", kind: "mcp", url: `http://127.0.0.1:${await freePort()}/mcp`, prefix: "dead" },
        ],
      },
      { ...staticTenant("secure"), auth: "oauth" },
      { ...staticTenant("limited"), limits: { requestsPerMinute: 1 } },
    ],
  });
  await new UserStore(portico.store, portico.keys).create("secure", ADA);
});
after(async () => {
  await portico.close();
  await upstream.close();
  tools.closeAllConnections();
  await new Promise((resolve) => tools.close(resolve));
});

async function scrape(url = portico.url, init: RequestInit = {}): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`, init);
  assert.equal(res.status, 200);
  return parseExposition(await res.text());
}

/** How much `name{labels…}` (summed over other labels) changed while `action` ran. */
async function moved(name: string, labels: Record<string, string>, action: () => Promise<unknown>) {
  const before = sumOf(await scrape(), name, labels);
  await action();
  return sumOf(await scrape(), name, labels) - before;
}

async function value(name: string, labels: Record<string, string> = {}) {
  return sumOf(await scrape(), name, labels);
}

const rpc = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

describe("the catalog", () => {
  it("serves Prometheus text 0.0.4 with every metric of docs/metrics.md, its type and labels", async () => {
    const res = await fetch(`${portico.url}/metrics`);
    assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    const doc = await readFile(new URL("../../docs/metrics.md", import.meta.url), "utf8");
    const rows = [...doc.matchAll(/^\| `(portico_\w+)` \| (counter|gauge|histogram) \| (.*?) \|/gm)];
    assert.ok(rows.length >= 15, "the doc's table was read");
    const samples = parseExposition(text);
    for (const [, name, type, labelCell] of rows) {
      assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, "m"), `${name} is a ${type}`);
      // Label names are the backticked words outside parentheses (those list values).
      const labels = [...labelCell!.replace(/\([^)]*\)/g, "").matchAll(/`(\w+)`/g)].map((m) => m[1]!).sort();
      for (const s of samples.filter((s) => s.name === name || s.name.startsWith(`${name}_`)))
        assert.deepEqual(
          Object.keys(s.labels)
            .filter((l) => l !== "le")
            .sort(),
          labels,
          `${s.name} labels`,
        );
    }
    const documented = new Set(rows.map((r) => r[1]));
    const families = [...text.matchAll(/^# TYPE (portico_\w+) /gm)].map((m) => m[1]);
    assert.deepEqual(
      families.filter((f) => !documented.has(f)),
      [],
      "every portico_* metric is documented",
    );
    assert.match(text, /^process_cpu_seconds_total /m);
    assert.match(text, /^nodejs_heap_size_used_bytes /m);
  });

  it("passes promtool check metrics", async () => {
    const promtool = findBinary("promtool");
    const text = await (await fetch(`${portico.url}/metrics`)).text();
    const check = spawnSync(promtool, ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(check.status, 0, `promtool check metrics:\n${check.stdout}${check.stderr}`);
  });

  it("counts requests refused with 429 by surface and scope; every series known beforehand", async () => {
    const samples = await scrape();
    for (const surface of ["mcp", "oauth", "admin"])
      for (const scope of ["tenant", "client"])
        assert.ok(
          samples.some(
            (s) =>
              s.name === "portico_rate_limited_total" &&
              s.labels.surface === surface &&
              s.labels.scope === scope,
          ),
          `${surface}/${scope}`,
        );
    const refused = await moved(
      "portico_rate_limited_total",
      { surface: "mcp", scope: "tenant" },
      async () => {
        // One request a minute: the second is refused (the third, when a minute began in between).
        let status = 0;
        for (let i = 0; i < 3 && status !== 429; i++) {
          const res = await postRpc(
            portico.mcpUrl("limited"),
            rpc(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {} }),
          );
          status = res.status;
          await res.body?.cancel();
        }
        assert.equal(status, 429);
      },
    );
    assert.equal(refused, 1);
  });
});

describe("HTTP", () => {
  it("counts responses by route pattern, method and status; unmatched paths as one route", async () => {
    assert.equal(
      await moved("portico_http_requests_total", { route: "/healthz", method: "GET", status: "200" }, () =>
        fetch(`${portico.url}/healthz`),
      ),
      1,
    );
    assert.equal(
      await moved("portico_http_requests_total", { route: "unmatched", method: "GET", status: "404" }, () =>
        fetch(`${portico.url}/no/such/page/${Math.random()}`),
      ),
      1,
    );
    assert.equal(
      await moved(
        "portico_http_request_duration_seconds_count",
        { route: "/mcp/:tenant", method: "POST" },
        () => openSession(portico.mcpUrl("open")),
      ),
      1,
    );
  });
});

describe("MCP", () => {
  it("counts JSON-RPC requests by method, era and outcome; unknown methods as other", async () => {
    const url = portico.mcpUrl("open");
    const sid = await openSession(url);
    const ok = { method: "tools/list", era: "session", outcome: "ok" };
    assert.equal(
      await moved("portico_mcp_requests_total", ok, () => postRpc(url, rpc(1, "tools/list"), sid)),
      1,
    );
    const other = { method: "other", era: "session", outcome: "error" };
    const unknown = await moved("portico_mcp_requests_total", other, async () => {
      const res = await postRpc(url, rpc(2, "no/such/method"), sid);
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32601);
    });
    assert.equal(unknown, 1);
    assert.equal(
      await moved("portico_mcp_request_duration_seconds_count", { method: "initialize" }, () =>
        openSession(url),
      ),
      1,
    );
  });

  it("counts a request the client cancelled as cancelled, and not as an upstream call", async () => {
    const url = portico.mcpUrl("open");
    const sid = await openSession(url);
    const cancelled = { method: "tools/call", outcome: "cancelled" };
    const upstreamCalls = { tenant: "open", provider: "web" };
    const before = await scrape();
    const reached = new Promise<void>((resolve) => (hangReached = resolve));
    const answer = postRpc(url, rpc(7, "tools/call", { name: "hang", arguments: {} }), sid);
    await reached;
    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } };
    assert.equal((await postRpc(url, cancel, sid)).status, 202);
    assert.equal(((await (await answer).json()) as { error: { code: number } }).error.code, -32800);
    const after = await scrape();
    const diff = (name: string, labels: Record<string, string>) =>
      sumOf(after, name, labels) - sumOf(before, name, labels);
    assert.equal(diff("portico_mcp_requests_total", cancelled), 1);
    assert.equal(diff("portico_upstream_requests_total", upstreamCalls), 0);
  });

  it("reports the sessions in the store", async () => {
    const url = portico.mcpUrl("open");
    const start = await value("portico_sessions_open");
    const a = await openSession(url);
    await openSession(url);
    assert.equal(await value("portico_sessions_open"), start + 2);
    const deleted = await fetch(url, { method: "DELETE", headers: { "mcp-session-id": a } });
    assert.equal(deleted.status, 204);
    assert.equal(await value("portico_sessions_open"), start + 1);
  });

  it("reports the SSE streams this replica holds open", async () => {
    const url = portico.mcpUrl("open");
    const sid = await openSession(url);
    const before = await scrape();
    const start = sumOf(before, "portico_sse_streams_open");
    const abort = new AbortController();
    const stream = await fetch(url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sid },
      signal: abort.signal,
    });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    await reader.read(); // the priming event: the stream is attached
    const open = await scrape();
    assert.equal(sumOf(open, "portico_sse_streams_open"), start + 1);
    // The stream's HTTP request is counted once its head is written, long before it ends.
    const get = { route: "/mcp/:tenant", method: "GET", status: "200" };
    const counted = (samples: Sample[]) => sumOf(samples, "portico_http_requests_total", get);
    assert.equal(counted(open) - counted(before), 1);
    abort.abort();
    await reader.closed.catch(() => undefined);
    for (let i = 0; i < 100 && (await value("portico_sse_streams_open")) !== start; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await value("portico_sse_streams_open"), start);
  });
});

describe("providers", () => {
  it("counts upstream calls by tenant, provider and outcome (ok, error, timeout)", async () => {
    const { client } = await connectClient(portico.mcpUrl("open"), { capabilities: false });
    try {
      const web = (outcome: string) => ({ tenant: "open", provider: "web", outcome });
      assert.equal(
        await moved("portico_upstream_requests_total", web("ok"), () => client.callTool({ name: "ok" })),
        1,
      );
      assert.equal(
        await moved("portico_upstream_requests_total", web("error"), () => client.callTool({ name: "fail" })),
        1,
      );
      assert.equal(
        await moved("portico_upstream_requests_total", web("timeout"), () =>
          client.callTool({ name: "slow" }),
        ),
        1,
      );
      const min = { tenant: "open", provider: "min", outcome: "ok" };
      const sum = await moved("portico_upstream_requests_total", min, async () => {
        const result = await client.callTool({ name: "min__add", arguments: { a: 2, b: 3 } });
        assert.deepEqual(result.structuredContent, { sum: 5 });
      });
      assert.equal(sum, 1);
      const durations = await value("portico_upstream_request_duration_seconds_count", { provider: "web" });
      assert.ok(durations >= 3);
    } finally {
      await client.close();
    }
  });

  it("reports each provider's health as this replica sees it", async () => {
    const samples = await scrape();
    const up = (provider: string) => sumOf(samples, "portico_provider_up", { tenant: "open", provider });
    assert.deepEqual(["docs", "web", "min", "dead"].map(up), [1, 1, 1, 0]);
  });
});

describe("admin API and store", () => {
  it("counts admin writes by action, one per audit entry", async () => {
    const admin = new AdminClient(portico.url);
    const created = await moved("portico_admin_writes_total", { action: "tenant.create" }, async () => {
      assert.equal((await admin.post("/tenants", { id: "beta", auth: "none" })).status, 201);
    });
    assert.equal(created, 1);
  });

  it("times store commands and reports the store up", async () => {
    const commands = await moved("portico_store_command_duration_seconds_count", {}, () =>
      openSession(portico.mcpUrl("open")),
    );
    assert.ok(commands >= 2, `${commands} commands`);
    const samples = await scrape();
    assert.equal(sumOf(samples, "portico_store_up"), 1);
    assert.equal(sumOf(samples, "portico_store_errors_total"), 0);
  });
});

describe("the store going away", () => {
  let redis: Awaited<ReturnType<typeof startOwnRedis>>;
  let own: RunningPortico;
  before(async () => {
    redis = await startOwnRedis();
    own = await startPortico({
      tenants: [staticTenant("acme")],
      env: { PORTICO_REDIS_URL: redis.url },
      metrics: new Metrics({ sessionsCacheMs: 0 }),
    });
  });
  after(async () => {
    await own.close();
    await redis.stop();
  });

  it("reports the store down and counts failed commands, then up again once it is back", async () => {
    const sid = await openSession(own.mcpUrl("acme"));
    assert.equal(sumOf(await scrape(own.url), "portico_store_up"), 1);
    await redis.stop();
    const down = await postRpc(own.mcpUrl("acme"), rpc(2, "ping"), sid);
    assert.equal(down.status, 503);
    const samples = await scrape(own.url);
    assert.equal(sumOf(samples, "portico_store_up"), 0);
    assert.ok(sumOf(samples, "portico_store_errors_total") >= 1);
    redis = await startOwnRedis(redis.port);
    let up = 0;
    // The client's reconnect backs off; a busy machine stretches it: 15 s at most.
    for (let i = 0; i < 150 && up !== 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      up = sumOf(await scrape(own.url), "portico_store_up");
    }
    assert.equal(up, 1);
  });
});

describe("OAuth", () => {
  it("counts registrations, authorizations, issued and refreshed tokens, revocations", async () => {
    const events = (event: string, reason = "none") => ({ event, reason });
    const before = await scrape();
    const client = await TestOAuthClient.register(portico.url);
    const tokens = await client.tokens("secure", ADA);
    const refreshed = await oauth.processRefreshTokenResponse(
      client.as,
      client.client,
      await oauth.refreshTokenGrantRequest(
        client.as,
        client.client,
        oauth.None(),
        tokens.refresh_token!,
        insecure,
      ),
    );
    const revoked = await oauth.revocationRequest(
      client.as,
      client.client,
      oauth.None(),
      refreshed.refresh_token!,
      insecure,
    );
    await oauth.processRevocationResponse(revoked);
    const after = await scrape();
    const diff = (labels: Record<string, string>) =>
      sumOf(after, "portico_oauth_events_total", labels) -
      sumOf(before, "portico_oauth_events_total", labels);
    assert.deepEqual(
      ["registration", "authorization", "token_issued", "token_refreshed", "revocation"].map((e) =>
        diff(events(e)),
      ),
      [1, 1, 1, 1, 1],
    );
  });

  it("counts failures by their error code, at the token endpoint and the resource server", async () => {
    const failure = (reason: string) => ({ event: "failure", reason });
    const client = await TestOAuthClient.register(portico.url);
    const grant = await moved("portico_oauth_events_total", failure("invalid_grant"), async () => {
      const res = await fetch(`${portico.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: "not-a-refresh-token",
          client_id: client.client.client_id,
        }),
      });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { error: string }).error, "invalid_grant");
    });
    assert.equal(grant, 1);
    const token = await moved("portico_oauth_events_total", failure("invalid_token"), async () => {
      const res = await fetch(portico.mcpUrl("secure"), {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: "Bearer not.a.token" },
        body: JSON.stringify(rpc(1, "ping")),
      });
      assert.equal(res.status, 401);
      await res.body?.cancel();
    });
    assert.equal(token, 1);
    const readOnly = await client.tokens("secure", ADA, "mcp:read");
    const scope = await moved("portico_oauth_events_total", failure("insufficient_scope"), async () => {
      const url = portico.mcpUrl("secure");
      const headers = { ...MCP_HEADERS, authorization: `Bearer ${readOnly.access_token}` };
      const post = (message: unknown, sid?: string) =>
        fetch(url, {
          method: "POST",
          headers: { ...headers, ...(sid && { "mcp-session-id": sid }) },
          body: JSON.stringify(message),
        });
      const init = await post(rpc(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {} }));
      assert.equal(init.status, 200);
      await init.body?.cancel();
      const call = await post(
        rpc(1, "tools/call", { name: "anything" }),
        init.headers.get("mcp-session-id")!,
      );
      assert.equal(call.status, 403);
      await call.body?.cancel();
    });
    assert.equal(scope, 1);
  });
});
