// MCP Apps through Portico (SEP-1865, `io.modelcontextprotocol/ui`; docs/architecture.md §3): with
// the official SDK v1 client declaring the extension, one apps upstream looks the same through
// Portico as directly (tools' `_meta.ui`, `ui://` views with their CSP `_meta`, HTML contents);
// the same upstream registered twice has the second's views namespaced under its prefix, its
// tools pointing at them, and reading them reads its own. Both eras.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { APP_MIME, startAppsUpstream, VIEW_META, type AppsUpstream } from "../fixtures/apps-server.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

const UI = "io.modelcontextprotocol/ui";

/** An SDK v1 client declaring MCP Apps; `replicas` sends each request to the next origin in turn. */
async function connect(url: string, replicas?: readonly string[]): Promise<Client> {
  const client = new Client(
    { name: "apps-host", version: "1.0.0" },
    { capabilities: { extensions: { [UI]: { mimeTypes: [APP_MIME] } } } },
  );
  let turn = 0;
  const fetchVia = (input: string | URL | Request, init?: RequestInit) => {
    const target = new URL(input instanceof Request ? input.url : input);
    const origin = replicas![turn++ % replicas!.length]!;
    return fetch(new URL(target.pathname + target.search, origin), init);
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), replicas ? { fetch: fetchVia } : {}));
  return client;
}

let one: AppsUpstream;
let two: AppsUpstream;
let portico: RunningPortico;

before(async () => {
  one = await startAppsUpstream("first");
  two = await startAppsUpstream("second");
  portico = await startPortico({
    tenants: [
      { id: "solo", auth: "none", providers: [{ id: "apps", kind: "mcp", url: one.url }] },
      {
        id: "duo",
        auth: "none",
        providers: [
          { id: "apps", kind: "mcp", url: one.url },
          { id: "again", kind: "mcp", url: two.url, prefix: "beta" },
        ],
      },
    ],
  });
});
after(async () => {
  await portico.close();
  await Promise.all([one.close(), two.close()]);
});

describe("MCP Apps passthrough (session era, SDK v1 client)", () => {
  it("one apps upstream: lists, views and their _meta exactly as directly", async () => {
    const direct = await connect(one.url);
    const through = await connect(portico.mcpUrl("solo"));
    assert.deepEqual((await through.listTools()).tools, (await direct.listTools()).tools);
    assert.deepEqual((await through.listResources()).resources, (await direct.listResources()).resources);
    assert.deepEqual(
      (await through.listResourceTemplates()).resourceTemplates,
      (await direct.listResourceTemplates()).resourceTemplates,
    );
    for (const uri of ["ui://weather/view", "ui://weather/unlisted", "ui://weather/city/paris"])
      assert.deepEqual(await through.readResource({ uri }), await direct.readResource({ uri }), uri);
    const view = await through.readResource({ uri: "ui://weather/view" });
    assert.deepEqual(view.contents[0], {
      uri: "ui://weather/view",
      mimeType: APP_MIME,
      text: "<!doctype html><title>first ui://weather/view</title>",
      _meta: VIEW_META,
    });
    assert.deepEqual(
      through.getServerCapabilities()?.extensions,
      { [UI]: {} },
      "Portico declares the extension",
    );
    await Promise.all([direct.close(), through.close()]);
  });

  it("the same view URIs twice: the later provider's are namespaced, rewritten and readable", async () => {
    const client = await connect(portico.mcpUrl("duo"));
    const tools = (await client.listTools()).tools;
    const meta = (name: string) => tools.find((t) => t.name === name)?._meta;
    assert.deepEqual(meta("weather"), {
      ui: { resourceUri: "ui://weather/view", visibility: ["model", "app"] },
    });
    assert.deepEqual(meta("beta__weather"), {
      ui: { resourceUri: "ui://beta/weather/view", visibility: ["model", "app"] },
    });
    assert.deepEqual(meta("beta__legacy"), { "ui/resourceUri": "ui://beta/weather/legacy" });
    assert.deepEqual(meta("beta__refresh"), {
      ui: { resourceUri: "ui://beta/weather/unlisted", visibility: ["app"] },
    });
    const resources = (await client.listResources()).resources;
    assert.deepEqual(
      resources.map((r) => r.uri),
      ["ui://weather/view", "ui://weather/legacy", "ui://beta/weather/view", "ui://beta/weather/legacy"],
    );
    assert.deepEqual(resources[2]?._meta, VIEW_META, "resource _meta unchanged");
    assert.deepEqual(
      (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
      ["ui://weather/city/{city}", "ui://beta/weather/city/{city}"],
    );
    const read = async (uri: string) =>
      (await client.readResource({ uri })).contents[0] as Record<string, unknown>;
    assert.deepEqual(await read("ui://beta/weather/view"), {
      uri: "ui://beta/weather/view",
      mimeType: APP_MIME,
      text: "<!doctype html><title>second ui://weather/view</title>",
      _meta: VIEW_META,
    });
    assert.equal(
      (await read("ui://weather/view")).text,
      "<!doctype html><title>first ui://weather/view</title>",
    );
    assert.equal(
      (await read("ui://beta/weather/unlisted")).text,
      "<!doctype html><title>second ui://weather/unlisted</title>",
    );
    assert.equal(
      (await read("ui://beta/weather/city/rome")).text,
      "<!doctype html><title>second ui://weather/city/rome</title>",
    );
    await assert.rejects(client.readResource({ uri: "ui://gamma/weather/view" }), /Resource not found/);
    const called = await client.callTool({ name: "beta__weather", arguments: { city: "Oslo" } });
    assert.deepEqual(called.structuredContent, { server: "second", conditions: "sunny" });
    await client.close();
  });
});

describe("MCP Apps passthrough (2026-07-28)", () => {
  const META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [UI]: { mimeTypes: [APP_MIME] } } },
  };
  async function call(method: string, params: Record<string, unknown>) {
    const name = (params.name ?? params.uri) as string | undefined;
    const res = await portico.app.inject({
      method: "POST",
      url: "/mcp/duo",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(name ? { "mcp-name": name } : {}),
      },
      payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: META } }),
    });
    assert.equal(res.statusCode, 200, res.body);
    return (JSON.parse(res.body) as { result: Record<string, any> }).result;
  }

  it("lists the namespaced views and reads them from the later provider", async () => {
    const tools = (await call("tools/list", {})).tools as Array<{ name: string; _meta?: unknown }>;
    assert.deepEqual(tools.find((t) => t.name === "beta__weather")?._meta, {
      ui: { resourceUri: "ui://beta/weather/view", visibility: ["model", "app"] },
    });
    const read = await call("resources/read", { uri: "ui://beta/weather/view" });
    assert.deepEqual(read.contents, [
      {
        uri: "ui://beta/weather/view",
        mimeType: APP_MIME,
        text: "<!doctype html><title>second ui://weather/view</title>",
        _meta: VIEW_META,
      },
    ]);
    const discover = await call("server/discover", {});
    // Beside Portico's tasks extension (docs/upstream-mcp.md#tasks).
    assert.deepEqual(discover.capabilities.extensions, { [UI]: {}, "io.modelcontextprotocol/tasks": {} });
  });
});

describe("MCP Apps across replicas", () => {
  it("a namespaced view listed on one replica is read on another", async () => {
    const prefix = uniquePrefix();
    const tenants = [
      {
        id: "duo",
        auth: "none" as const,
        providers: [
          { id: "apps", kind: "mcp" as const, url: one.url },
          { id: "again", kind: "mcp" as const, url: two.url, prefix: "beta" },
        ],
      },
    ];
    const a = await startPortico({ tenants, redisPrefix: prefix });
    const b = await startPortico({ tenants: [], redisPrefix: prefix });
    try {
      const client = await connect(a.mcpUrl("duo"), [a.url, b.url]);
      for (let i = 0; i < 2; i++) {
        const tools = (await client.listTools()).tools;
        const weather = tools.find((t) => t.name === "beta__weather");
        assert.deepEqual(weather?._meta, {
          ui: { resourceUri: "ui://beta/weather/view", visibility: ["model", "app"] },
        });
        const read = await client.readResource({ uri: "ui://beta/weather/view" });
        assert.equal(
          (read.contents[0] as { text: string }).text,
          "<!doctype html><title>second ui://weather/view</title>",
        );
      }
      await client.close();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
