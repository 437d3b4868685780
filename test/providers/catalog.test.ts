// The merged catalog's MCP Apps rules (SEP-1865, docs/architecture.md §3): `ui://` resources, their
// tools' `_meta.ui` and resource `_meta` pass unchanged; a second provider serving the same `ui://`
// URI has its own namespaced under its prefix (or id), its tools' resourceUri rewritten (nested and
// legacy flat key), and each namespaced URI routed to the provider's own URI.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { Catalog } from "../../src/providers/catalog.js";
import { EMPTY_ENTRIES, type Provider } from "../../src/providers/types.js";

const CSP = { ui: { csp: { connectDomains: ["https://api.example.com"] }, prefersBorder: true } };

function provider(
  id: string,
  prefix: string,
  lists: { tools?: Tool[]; resources?: Resource[]; resourceTemplates?: ResourceTemplate[] },
): Provider {
  return {
    id,
    kind: "mcp",
    prefix,
    healthy: true,
    entries: () => ({ ...EMPTY_ENTRIES, ...lists }),
  } as unknown as Provider;
}

/** An MCP Apps server: a tool pointing at its view, the view listed with its CSP, a template. */
function appServer(id: string, prefix = "", opts: { listed?: boolean } = {}): Provider {
  return provider(id, prefix, {
    tools: [
      {
        name: `${id}-weather`,
        inputSchema: { type: "object" },
        _meta: { ui: { resourceUri: "ui://weather/view", visibility: ["model", "app"] }, other: 1 },
      },
      {
        name: `${id}-legacy`,
        inputSchema: { type: "object" },
        _meta: { "ui/resourceUri": "ui://weather/old" },
      },
      {
        name: `${id}-hidden`,
        inputSchema: { type: "object" },
        _meta: { ui: { resourceUri: "ui://weather/unlisted" } },
      },
    ],
    resources:
      opts.listed === false
        ? []
        : [
            { uri: "ui://weather/view", name: "view", mimeType: "text/html;profile=mcp-app", _meta: CSP },
            { uri: "ui://weather/old", name: "old", mimeType: "text/html;profile=mcp-app" },
            { uri: "file:///readme", name: "readme" },
          ],
    resourceTemplates: [{ uriTemplate: "ui://weather/city/{name}", name: "city" }],
  });
}

describe("MCP Apps in the merged catalog", () => {
  it("passes one provider's ui:// entries through unchanged", () => {
    const one = appServer("a");
    const catalog = new Catalog([one]);
    assert.deepEqual(catalog.tools, one.entries().tools);
    assert.deepEqual(catalog.resources, one.entries().resources);
    assert.deepEqual(catalog.templates, one.entries().resourceTemplates);
    assert.deepEqual(catalog.resource("ui://weather/view"), { provider: one, uri: "ui://weather/view" });
    // A view only a tool points at (SEP-1865 lets servers leave it out of resources/list) is routed.
    assert.equal(catalog.resource("ui://weather/unlisted")?.provider, one);
    assert.equal(catalog.resource("ui://weather/city/paris")?.uri, "ui://weather/city/paris");
    assert.deepEqual(catalog.capabilities().extensions, { "io.modelcontextprotocol/ui": {} });
  });

  it("namespaces the later provider's ui:// URIs under its prefix and routes them back", () => {
    const first = appServer("a");
    const second = appServer("b", "beta");
    const catalog = new Catalog([first, second]);
    const tool = (name: string) => catalog.tools.find((t) => t.name === name)!;
    assert.deepEqual(tool("a-weather")._meta, first.entries().tools[0]!._meta, "the first is unchanged");
    assert.deepEqual(tool("beta__b-weather")._meta, {
      ui: { resourceUri: "ui://beta/weather/view", visibility: ["model", "app"] },
      other: 1,
    });
    assert.deepEqual(tool("beta__b-legacy")._meta, { "ui/resourceUri": "ui://beta/weather/old" });
    const uris = catalog.resources.map((r) => r.uri);
    assert.deepEqual(uris, [
      "ui://weather/view",
      "ui://weather/old",
      "file:///readme",
      "ui://beta/weather/view",
      "ui://beta/weather/old",
    ]);
    assert.deepEqual(
      catalog.resources.find((r) => r.uri === "ui://beta/weather/view")?._meta,
      CSP,
      "resource _meta (CSP) unchanged",
    );
    assert.ok(catalog.warnings.some((w) => w.provider === "b" && w.message.includes("ui://beta/")));
    assert.equal(
      catalog.warnings.find((w) => w.message.includes("file:///readme"))?.collision?.heldBy,
      "a",
      "a non-ui URI still collides",
    );
    assert.deepEqual(
      catalog.templates.map((t) => t.uriTemplate),
      ["ui://weather/city/{name}", "ui://beta/weather/city/{name}"],
    );
    const routed = (uri: string) => {
      const t = catalog.resource(uri);
      return t && [t.provider.id, t.uri];
    };
    assert.deepEqual(routed("ui://weather/view"), ["a", "ui://weather/view"]);
    assert.deepEqual(routed("ui://beta/weather/view"), ["b", "ui://weather/view"]);
    assert.deepEqual(routed("ui://beta/weather/unlisted"), ["b", "ui://weather/unlisted"]);
    assert.deepEqual(routed("ui://beta/weather/city/rome"), ["b", "ui://weather/city/rome"]);
    assert.deepEqual(routed("ui://weather/city/rome"), ["a", "ui://weather/city/rome"]);
    assert.equal(catalog.exposedUri(second, "ui://weather/view"), "ui://beta/weather/view");
    const read = catalog.resource("ui://beta/weather/view")!.namespace!.readResult({
      contents: [
        { uri: "ui://weather/view", mimeType: "text/html;profile=mcp-app", text: "<html/>", _meta: CSP },
      ],
    });
    assert.deepEqual(read.contents, [
      { uri: "ui://beta/weather/view", mimeType: "text/html;profile=mcp-app", text: "<html/>", _meta: CSP },
    ]);
  });

  it("never points a namespaced tool at another provider's view that squats the namespaced URI", () => {
    // Provider a serves ui://weather/view and also the URI b's would be namespaced to.
    const squatter = provider("a", "", {
      resources: [
        { uri: "ui://weather/view", name: "view", mimeType: "text/html;profile=mcp-app" },
        { uri: "ui://beta/weather/view", name: "phish", mimeType: "text/html;profile=mcp-app" },
      ],
    });
    const catalog = new Catalog([squatter, appServer("b", "beta")]);
    const meta = catalog.tools.find((t) => t.name === "beta__b-weather")?._meta as {
      ui: { resourceUri: string };
    };
    const target = catalog.resource(meta.ui.resourceUri);
    assert.deepEqual([target?.provider.id, target?.uri], ["b", "ui://weather/view"]);
    assert.equal(meta.ui.resourceUri, "ui://beta-2/weather/view");
    assert.equal(catalog.resource("ui://beta/weather/view")?.provider.id, "a", "a keeps its own URI");
  });

  it("uses the provider's id without a prefix, and sees a clash through tools alone", () => {
    const catalog = new Catalog([
      appServer("a", "", { listed: false }),
      appServer("b", "", { listed: false }),
    ]);
    const meta = catalog.tools.find((t) => t.name === "b-weather")?._meta as { ui: { resourceUri: string } };
    assert.equal(meta.ui.resourceUri, "ui://b/weather/view");
    assert.deepEqual(
      [catalog.resource("ui://b/weather/view")?.provider.id, catalog.resource("ui://b/weather/view")?.uri],
      ["b", "ui://weather/view"],
    );
    assert.equal(catalog.resource("ui://weather/view")?.provider.id, "a");
  });

  it("leaves a provider without a clash alone, and namespaces past a URI another provider lists", () => {
    const other = provider("c", "", { resources: [{ uri: "ui://other/x", name: "x" }] });
    const squatter = provider("d", "", { resources: [{ uri: "ui://b/weather/view", name: "squat" }] });
    const catalog = new Catalog([appServer("a"), other, squatter, appServer("b")]);
    assert.equal(catalog.resource("ui://other/x")?.uri, "ui://other/x");
    assert.equal(
      catalog.resource("ui://b/weather/view")?.provider.id,
      "d",
      "the earlier entry keeps the URI",
    );
    assert.deepEqual(
      [
        catalog.resource("ui://b-2/weather/view")?.provider.id,
        catalog.resource("ui://b-2/weather/view")?.uri,
      ],
      ["b", "ui://weather/view"],
      "b's views move to a namespace nobody names",
    );
    assert.ok(catalog.warnings.some((w) => w.provider === "b" && w.message.includes("ui://b-2/")));
    assert.equal(catalog.capabilities().extensions !== undefined, true);
    assert.equal(new Catalog([]).capabilities().extensions, undefined, "no apps, no extension");
  });
});
