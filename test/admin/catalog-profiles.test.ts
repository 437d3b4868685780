// The admin catalog per capability profile (docs/admin-api.md, docs/architecture.md §3): every
// capability by default, `?profile=` in capability names or `none`, anything else a 400 problem;
// provider health lists run-time conflicts, which two replicas record once in the audit log.
// Checked against the OpenAPI document on every call.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startAppsUpstream, type AppsUpstream } from "../fixtures/apps-server.js";
import { startDynamicUpstream } from "../fixtures/dynamic-server.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

let portico: RunningPortico;
let admin: AdminClient;
let apps: AppsUpstream;

before(async () => {
  apps = await startAppsUpstream("apps");
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [
          {
            id: "docs",
            kind: "static",
            resources: [{ uri: "ui://weather/view", name: "static view", text: "<p>static</p>" }],
          },
          { id: "apps", kind: "mcp", url: apps.url, prefix: "wx" },
        ],
      },
    ],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  admin = new AdminClient(portico.url);
});
after(async () => {
  await portico.close();
  await apps.close();
});

describe("GET /tenants/{tenant}/catalog?profile=", () => {
  it("shows a client declaring every capability by default, and says so", async () => {
    const res = await admin.get("/tenants/acme/catalog");
    assert.equal(res.status, 200);
    assert.equal(
      res.body.profile,
      "sampling.context,sampling.tools,elicitation.form,elicitation.url,roots.listChanged,tasks.list,tasks.cancel,tasks.sampling,tasks.elicitation,ui",
    );
    // The static provider came first: the upstream's views are namespaced under its prefix.
    const uris = res.body.resources.map((r: { provider: string; entry: { uri: string } }) => [
      r.provider,
      r.entry.uri,
    ]);
    assert.deepEqual(uris, [
      ["docs", "ui://weather/view"],
      ["apps", "ui://wx/weather/view"],
      ["apps", "ui://wx/weather/legacy"],
    ]);
    const weather = res.body.tools.find((t: { entry: { name: string } }) => t.entry.name === "wx__weather");
    assert.equal(weather.entry._meta.ui.resourceUri, "ui://wx/weather/view");
  });

  it("takes capability names or none", async () => {
    for (const [label, expected] of [
      ["none", "none"],
      ["sampling,roots", "sampling,roots"],
      ["roots,sampling.tools,sampling", "sampling.tools,roots"],
      ["ui", "ui"],
      ["elicitation.url,tasks", "elicitation.url,tasks"],
    ] as const) {
      const res = await admin.get(`/tenants/acme/catalog?profile=${encodeURIComponent(label)}`);
      assert.equal(res.status, 200, label);
      assert.equal(res.body.profile, expected, label);
      assert.ok(res.body.tools.length > 0);
    }
  });

  it("refuses what is not a profile with a 400 problem naming the parameter", async () => {
    for (const bad of [
      "",
      "bogus",
      "sampling,",
      "none,roots",
      "SAMPLING",
      "sampling.x",
      "a".repeat(300),
      "ui%00",
    ]) {
      const res = await admin.get(`/tenants/acme/catalog?profile=${bad}`);
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.match(res.body.detail, /profile/, bad);
    }
    const twice = await admin.get("/tenants/acme/catalog?profile=none&profile=ui");
    assert.equal(twice.status, 400);
  });
});

describe("MCP Apps views saved through the admin API", () => {
  it("an upstream serving ui:// URIs another provider serves is saved, its views namespaced", async () => {
    const created = await admin.post("/tenants/acme/providers", { id: "apps2", kind: "mcp", url: apps.url });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const res = await admin.get("/tenants/acme/catalog?profile=ui");
    const mine = res.body.resources
      .filter((r: { provider: string }) => r.provider === "apps2")
      .map((r: { entry: { uri: string } }) => r.entry.uri);
    assert.deepEqual(mine, ["ui://apps2/weather/view", "ui://apps2/weather/legacy"]);
    assert.equal((await admin.delete("/tenants/acme/providers/apps2")).status, 204);
  });
});

describe("provider health", () => {
  it("lists run-time conflicts (none here: a ui:// clash is namespaced, not hidden)", async () => {
    const res = await admin.get("/tenants/acme/providers/apps/health");
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.conflicts, []);
  });
});

describe("a collision that appears at run time (two replicas)", () => {
  it("hides the later entry, shows it in health on each replica, and is audited once", async () => {
    const dynamic = await startDynamicUpstream();
    const prefix = uniquePrefix();
    const tenant = {
      id: "late",
      auth: "none" as const,
      providers: [
        { id: "first", kind: "http" as const, tools: [{ name: "report", url: "http://127.0.0.1:9/report" }] },
        { id: "dyn", kind: "mcp" as const, url: dynamic.url },
      ],
    };
    const env = { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN };
    const replicas = [
      await startPortico({ tenants: [tenant], redisPrefix: prefix, env }),
      await startPortico({ tenants: [], redisPrefix: prefix, env }),
    ];
    try {
      const admins = replicas.map((r) => new AdminClient(r.url));
      const conflictsOn = async (a: AdminClient) =>
        (await a.get("/tenants/late/providers/dyn/health")).body.conflicts as unknown[];
      for (const a of admins) assert.deepEqual(await conflictsOn(a), []);
      // The upstream now lists a tool whose name the http provider serves (saved before, no 409).
      dynamic.addTool("report");
      const expected = { kind: "tool", name: "report", heldBy: "first", profile: "none" };
      for (const a of admins) {
        for (let i = 0; i < 100 && (await conflictsOn(a)).length === 0; i++)
          await new Promise((resolve) => setTimeout(resolve, 50));
        assert.deepEqual(await conflictsOn(a), [expected]);
      }
      const catalog = await admins[1]!.get("/tenants/late/catalog?profile=none");
      const report = catalog.body.tools.filter((t: { entry: { name: string } }) => t.entry.name === "report");
      assert.deepEqual(
        report.map((t: { provider: string }) => t.provider),
        ["first"],
      );
      const audit = await admins[0]!.get("/tenants/late/audit?limit=50");
      const noted = audit.body.items.filter((e: { action: string }) => e.action === "provider.conflict");
      assert.equal(noted.length, 1, JSON.stringify(noted));
      assert.equal(noted[0].actor, "portico");
      assert.equal(noted[0].target, "dyn");
      assert.deepEqual(noted[0].after, expected);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await dynamic.close();
    }
  });
});
