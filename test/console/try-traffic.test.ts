// Try it and the traffic overview (docs/admin-api.md "Try it", docs/metrics.md "Traffic overview")
// against a real upstream (server-everything): a tenant admin signed in to the console lists and
// calls its tools through the tenant's endpoint, policy seeing them (a rule for their role) and the
// audit log naming them; a platform key is another subject to policy; only the listed methods; then
// the call in the traffic overview, from the replica's own samples and from a real Prometheus
// scraping Portico. A tenant admin sees only their tenant.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { UserStore } from "../../src/oauth/users.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { ConsoleApi, Jar, localSignIn } from "../support/console.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { runPrometheus, type RunningPrometheus } from "../support/prometheus.js";
import { freePort } from "../support/redis.js";

let everything: EverythingServer;
let portico: RunningPortico;
let admin: AdminClient;
let console_: ConsoleApi;

/** Tools for tenant admins only: the default denies, so a caller policy does not see gets nothing. */
const POLICY = {
  default: "deny",
  rules: [{ effect: "allow", subjects: { roles: ["tenant-admin"] }, tools: ["*"] }],
};

function tenants(url: string): TenantConfig[] {
  return [
    { id: "acme", auth: "oauth", policy: POLICY, providers: [{ id: "everything", kind: "mcp", url }] },
    { ...staticTenant("other"), auth: "oauth" },
  ] as TenantConfig[];
}

before(async () => {
  everything = await startEverything();
  const port = await freePort();
  portico = await startPortico({
    tenants: tenants(everything.url),
    redis: true,
    env: {
      PORT: String(port),
      PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
      PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
    },
    trafficSampleMs: 200,
  });
  admin = new AdminClient(portico.url);
  await new UserStore(portico.store, portico.keys).create("acme", {
    username: "ada",
    password: "ada correct horse",
    roles: ["tenant-admin"],
    groups: ["ops"],
  });
  const jar = new Jar();
  assert.equal((await localSignIn(portico.url, jar, "acme", "ada", "ada correct horse")).status, 303);
  console_ = new ConsoleApi(portico.url, jar);
});

after(async () => {
  await portico?.close();
  await everything?.stop();
});

describe("try it", () => {
  it("lists and calls server-everything's tools as the signed-in tenant admin", async () => {
    const listed = await console_.write("POST", "/tenants/acme/try", { method: "tools/list" });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const names = (listed.body.result.tools as Array<{ name: string }>).map((t) => t.name);
    assert.ok(names.includes("echo"), names.join(", "));

    const called = await console_.write("POST", "/tenants/acme/try", {
      method: "tools/call",
      params: { name: "echo", arguments: { message: "from the console" } },
    });
    assert.equal(called.status, 200);
    assert.deepEqual(called.body.result.content, [{ type: "text", text: "Echo: from the console" }]);
  });

  it("the audit log names the admin, the method and the tool", async () => {
    const audit = await console_.call("GET", "/tenants/acme/audit?limit=10");
    const entry = audit.body.items.find(
      (e: { action: string; target: string }) => e.action === "console.try" && e.target === "tools/call echo",
    );
    assert.ok(entry, JSON.stringify(audit.body.items));
    assert.equal(entry.actor, "console:user ada (tenant acme)");
    assert.equal(entry.user.username, "ada");
    assert.equal(entry.client, "portico-admin");
  });

  it("policy sees who asks: the platform key is not a tenant admin, so the tools are hidden from it", async () => {
    const listed = await admin.post("/tenants/acme/try", { method: "tools/list" });
    assert.deepEqual(listed.body.result.tools, []);
    const called = await admin.post("/tenants/acme/try", {
      method: "tools/call",
      params: { name: "echo", arguments: { message: "x" } },
    });
    assert.equal(called.body.error.code, -32602, "a hidden tool is an unknown one");
    const audit = await admin.get("/tenants/acme/audit?limit=5");
    const denied = audit.body.items.find((e: { action: string }) => e.action === "console.try");
    assert.equal(denied.actor, "platform token");
    assert.equal(denied.user.sub, "admin:platform-token");
  });

  it("a JSON-RPC error is the answer, not an HTTP error", async () => {
    const res = await console_.write("POST", "/tenants/acme/try", {
      method: "prompts/get",
      params: { name: "no-such-prompt" },
    });
    assert.equal(res.status, 200);
    assert.equal(typeof res.body.error.code, "number");
    assert.match(res.body.error.message, /no-such-prompt|not found|Unknown/i);
  });

  it("only the listed methods, and a tenant admin only on their own tenant", async () => {
    const init = await console_.write("POST", "/tenants/acme/try", { method: "initialize" });
    assert.equal(init.status, 422);
    const foreign = await console_.write("POST", "/tenants/other/try", { method: "tools/list" });
    assert.equal(foreign.status, 404);
    const server = await console_.write("POST", "/tenants/acme/try", {
      method: "tools/list",
      server: "nope",
    });
    assert.equal(server.status, 404);
    assert.match(server.body.detail, /no virtual server "nope"/);
  });

  it("no token is handed out: the answer holds only the MCP result", async () => {
    const res = await console_.write("POST", "/tenants/acme/try", { method: "tools/list" });
    assert.deepEqual(Object.keys(res.body), ["result"]);
    assert.doesNotMatch(JSON.stringify(res.body), /eyJ[A-Za-z0-9_-]{10,}\./, "no JWT anywhere");
  });
});

describe("traffic from this replica", () => {
  it("shows the console's call per tenant and provider, with latency percentiles", async () => {
    const deadline = Date.now() + 10_000;
    let body: any;
    for (;;) {
      body = (await console_.call("GET", "/traffic?minutes=5")).body;
      const series = body.requests.find((s: { provider?: string }) => s.provider === "everything");
      if (series?.points.some(([, v]: [number, number]) => v > 0)) break;
      assert.ok(Date.now() < deadline, `no traffic yet: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(body.source, "replica");
    assert.equal(typeof body.replica, "string");
    assert.equal(body.stepSeconds, 0.2);
    assert.ok(body.requests.every((s: { tenant: string }) => s.tenant === "acme"));
    const quantiles = body.latency.map((s: { quantile: string }) => s.quantile).sort();
    assert.deepEqual(quantiles, ["0.5", "0.95", "0.99"]);
  });

  it("a tenant admin asking for another tenant gets 404; the platform key sees every tenant", async () => {
    assert.equal((await console_.call("GET", "/traffic?tenant=other")).status, 404);
    const all = await admin.get("/traffic?minutes=5");
    assert.equal(all.status, 200);
    assert.equal((await admin.get("/traffic?minutes=0")).status, 400);
    // A tenant filter is a tenant's id: nothing else reaches a query (metrics/traffic.ts quotes it too).
    const injected = await admin.get(`/traffic?tenant=${encodeURIComponent('acme"} or vector(1)')}`);
    assert.equal(injected.status, 400);
  });
});

describe("traffic from Prometheus", () => {
  let scraped: RunningPortico;
  let prometheus: RunningPrometheus;

  before(async () => {
    const promPort = await freePort();
    scraped = await startPortico({
      tenants: [
        { id: "acme", auth: "none", providers: [{ id: "everything", kind: "mcp", url: everything.url }] },
      ],
      env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, PORTICO_PROMETHEUS_URL: `http://127.0.0.1:${promPort}` },
    });
    prometheus = await runPrometheus(new URL(scraped.url).host, undefined, promPort);
  });

  after(async () => {
    await prometheus?.stop();
    await scraped?.close();
  });

  it("answers every replica's series from query_range after a scrape", async () => {
    const api = new AdminClient(scraped.url);
    const call = async () => {
      const called = await api.post("/tenants/acme/try", {
        method: "tools/call",
        params: { name: "echo", arguments: { message: "scraped" } },
      });
      assert.deepEqual(called.body.result.content, [{ type: "text", text: "Echo: scraped" }]);
    };
    // A counter's first sample is where its rate starts: call, let Prometheus see the series, call again.
    await call();
    await prometheus.until("the counter scraped", async (query) => {
      const res = (await query(`/api/v1/query?query=portico_upstream_requests_total`)) as {
        data: { result: unknown[] };
      };
      return res.data.result.length > 0 ? true : undefined;
    });
    await call();
    const body = await prometheus.until("the call in Prometheus's answer", async () => {
      const res = await api.get("/traffic?minutes=5&tenant=acme");
      const series = res.body.requests.find((s: { provider?: string }) => s.provider === "everything");
      return series?.points.some(([, v]: [number, number]) => v > 0) ? res.body : undefined;
    });
    assert.equal(body.source, "prometheus");
    assert.equal(body.replica, undefined);
    assert.ok(body.latency.some((s: { points: unknown[] }) => s.points.length > 0));
  });

  it("a Prometheus that does not answer is a 502 naming the setting", async () => {
    const port = await freePort();
    const lonely = await startPortico({
      tenants: [],
      env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, PORTICO_PROMETHEUS_URL: `http://127.0.0.1:${port}` },
    });
    try {
      const res = await new AdminClient(lonely.url).get("/traffic");
      assert.equal(res.status, 502);
      assert.match(res.body.detail, /PORTICO_PROMETHEUS_URL/);
    } finally {
      await lonely.close();
    }
  });
});
