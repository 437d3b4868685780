// Tool search (docs/tool-search.md) with the official SDK clients of both eras over a generated
// catalog of 1,000 tools on three providers (test/fixtures/tool-catalog.ts) and an upstream MCP
// server: search mode lists three tools; search finds tools by what they do, describe gives a
// tool's whole definition, call_tool runs it (progress included), and every tool stays callable by
// name; a tool the policy hides, or a virtual server leaves out, is never found, described or
// called. The ranking's quality over the fixture's twenty paraphrased queries is measured and
// compared with a plain word match.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { QUERIES, toolCatalog } from "../fixtures/tool-catalog.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let portico: RunningPortico;
let v1: RecordingClient;
let v2: V2Client;
const echo = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () =>
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ path: req.url, got: JSON.parse(body || "{}") })),
  );
});

before(async () => {
  upstream = await startConformanceUpstream();
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  const providers = Object.entries(toolCatalog()).map(([id, tools]) => ({
    id,
    kind: "http" as const,
    prefix: id,
    tools: tools.map((t) => ({ ...t, url: `${base}/${id}/${t.name}` })),
  }));
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        toolDiscovery: "search",
        providers: [...providers, { id: "ref", kind: "mcp", url: upstream.url, prefix: "ref" }],
        policy: { default: "allow", rules: [{ effect: "deny", tools: ["fin__archive_card"] }] },
        servers: [{ id: "sales", providers: [{ provider: "crm" }] }],
      },
    ],
  });
  v1 = await connectClient(portico.mcpUrl("acme"));
  v2 = new V2Client({ name: "v2", version: "1" }, { versionNegotiation: { mode: "auto" } });
  await v2.connect(new V2Transport(new URL(portico.mcpUrl("acme"))));
});
after(async () => {
  await v1?.client.close();
  await v2?.close();
  await portico?.close();
  await upstream?.close();
  echo.close();
});

type Hit = { name: string; title?: string; description?: string; score: number };
const hitsOf = (result: unknown) =>
  (result as { structuredContent: { tools: Hit[] } }).structuredContent.tools;

describe("search mode", () => {
  it("lists search_tools, describe_tool and call_tool, in both eras", async () => {
    for (const list of [await v1.client.listTools(), await v2.listTools()])
      assert.deepEqual(
        list.tools.map((t) => t.name),
        ["search_tools", "describe_tool", "call_tool"],
      );
    assert.equal(v2.getProtocolEra(), "modern");
  });

  it("finds tools by what they do, describes one and calls it through call_tool or by name", async () => {
    const found = hitsOf(
      await v1.client.callTool({ name: "search_tools", arguments: { query: "refund a payment", limit: 5 } }),
    );
    assert.equal(found[0]!.name, "fin__issue_refund");
    assert.equal(found[0]!.title, "Issue refund");
    assert.ok(found.length <= 5 && found.every((h) => typeof h.score === "number"));
    const described = await v2.callTool({ name: "describe_tool", arguments: { name: "fin__issue_refund" } });
    const tool = (
      described.structuredContent as { tool: { name: string; inputSchema: { properties: object } } }
    ).tool;
    assert.deepEqual(Object.keys(tool.inputSchema.properties), ["payment_id", "amount"]);
    const args = { payment_id: "p-1", amount: "5" };
    for (const client of [v1.client, v2]) {
      const through = await client.callTool({
        name: "call_tool",
        arguments: { name: "fin__issue_refund", arguments: args },
      });
      assert.deepEqual(through.structuredContent, { path: "/fin/issue_refund", got: args });
      const direct = await client.callTool({ name: "fin__issue_refund", arguments: args });
      assert.deepEqual(direct.structuredContent, through.structuredContent, "as if called directly");
    }
  });

  it("a call through call_tool carries progress from an upstream MCP server, both eras", async () => {
    const seen: number[] = [];
    await v1.client.callTool(
      { name: "call_tool", arguments: { name: "ref__test_tool_with_progress", arguments: {} } },
      undefined,
      { onprogress: (p) => seen.push(p.progress) },
    );
    assert.deepEqual(seen, [0, 50, 100]);
    const modern: number[] = [];
    await v2.callTool(
      { name: "call_tool", arguments: { name: "ref__test_tool_with_progress", arguments: {} } },
      { onprogress: (p: { progress: number }) => modern.push(p.progress) },
    );
    assert.deepEqual(modern, [0, 50, 100]);
  });

  it("never finds, describes or calls a tool the policy hides", async () => {
    const found = hitsOf(
      await v1.client.callTool({ name: "search_tools", arguments: { query: "archive card", limit: 50 } }),
    );
    assert.ok(
      found.some((h) => h.name.includes("__archive_")),
      "other archive tools are found",
    );
    assert.ok(!found.some((h) => h.name === "fin__archive_card"), JSON.stringify(found.slice(0, 3)));
    const described = await v1.client.callTool({
      name: "describe_tool",
      arguments: { name: "fin__archive_card" },
    });
    assert.equal(described.isError, true);
    await assert.rejects(
      v1.client.callTool({
        name: "call_tool",
        arguments: { name: "fin__archive_card", arguments: { card_id: "c" } },
      }),
      /Unknown tool: fin__archive_card/,
    );
  });

  it("searches a virtual server's selection only", async () => {
    const sales = await connectClient(portico.mcpUrl("acme/sales"));
    try {
      const found = hitsOf(
        await sales.client.callTool({
          name: "search_tools",
          arguments: { query: "export contacts and invoices" },
        }),
      );
      assert.ok(
        found.length > 0 && found.every((h) => h.name.startsWith("crm__")),
        JSON.stringify(found.slice(0, 3)),
      );
    } finally {
      await sales.client.close();
    }
  });

  it("answers a search without a query, and an unknown tool, as tool errors the model can read", async () => {
    const empty = await v1.client.callTool({ name: "search_tools", arguments: {} });
    assert.equal(empty.isError, true);
    const bad = await v1.client.callTool({ name: "call_tool", arguments: { arguments: {} } });
    assert.equal(bad.isError, true);
    assert.match((bad.content as Array<{ text: string }>)[0]!.text, /call_tool needs "name"/);
  });
});

describe("ranking", () => {
  it("finds more of the twenty paraphrased queries' tools in its top 5 than a plain word match", async () => {
    const { tools } = {
      tools: Object.entries(toolCatalog()).flatMap(([p, ts]) =>
        ts.map((t) => ({ ...t, name: `${p}__${t.name}` })),
      ),
    };
    let searched = 0;
    let matched = 0;
    const misses: string[] = [];
    for (const [provider, name, query] of QUERIES) {
      const wanted = `${provider}__${name}`;
      const top = hitsOf(
        await v1.client.callTool({ name: "search_tools", arguments: { query, limit: 5 } }),
      ).map((h) => h.name);
      if (top.includes(wanted)) searched++;
      else misses.push(`${query} → ${top.join(", ")}`);
      // The plain match: tools ranked by how many of the query's words their text contains.
      const words = query
        .toLowerCase()
        .split(/\W+/)
        .filter((w) => w.length >= 3);
      const byWords = tools
        .map((t) => ({
          name: t.name,
          n: words.filter((w) => `${t.name} ${t.title} ${t.description}`.toLowerCase().includes(w)).length,
        }))
        .sort((a, b) => b.n - a.n)
        .slice(0, 5)
        .map((t) => t.name);
      if (byWords.includes(wanted)) matched++;
    }
    console.log(
      `tool search: ${searched} of ${QUERIES.length} in the top 5 (a plain word match: ${matched}); missed: ${misses.join(" | ")}`,
    );
    // The bar: 18 of 20 in the top 5, and more than the word match.
    assert.ok(
      searched >= 18 && searched > matched,
      `${searched} of ${QUERIES.length} found; missed: ${misses.join(" | ")}`,
    );
  });
});
