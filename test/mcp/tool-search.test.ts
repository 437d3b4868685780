// Tool search's parts (src/mcp/tool-search.ts): call_tool unwrapped into the call it names, and
// an index that a tool's description of any length cannot make slow.
import assert from "node:assert/strict";
import { it } from "node:test";
import { searchTools, unwrapCall } from "../../src/mcp/tool-search.js";

const searching = {
  config: { id: "t", auth: "none" as const, providers: [], toolDiscovery: "search" as const },
  server: undefined,
};
const listing = { ...searching, config: { ...searching.config, toolDiscovery: "list" as const } };
const call = (params: Record<string, unknown>) => ({
  jsonrpc: "2.0" as const,
  id: 7,
  method: "tools/call",
  params,
});

it("unwraps call_tool into the call it names, keeping _meta and the rounds' state; nothing else", () => {
  const meta = { progressToken: "p" };
  assert.deepEqual(
    unwrapCall(
      searching,
      call({
        name: "call_tool",
        arguments: { name: "crm__get", arguments: { id: 1 } },
        _meta: meta,
        requestState: "s",
      }),
    ),
    call({ name: "crm__get", arguments: { id: 1 }, _meta: meta, requestState: "s" }),
  );
  for (const params of [
    { name: "call_tool", arguments: { name: "call_tool", arguments: {} } },
    { name: "call_tool", arguments: { name: "search_tools" } },
    { name: "call_tool", arguments: "crm__get" },
    { name: "call_tool", arguments: { arguments: {} } },
  ])
    assert.deepEqual(unwrapCall(searching, call(params)), call(params), JSON.stringify(params));
  const direct = call({ name: "call_tool", arguments: { name: "crm__get" } });
  assert.equal(unwrapCall(listing, direct), direct, "not in list mode");
});

it("indexes a description of 80,000 capitals in well under a second", () => {
  const started = performance.now();
  const tools = [{ name: "a", description: "A".repeat(80_000), inputSchema: { type: "object" as const } }];
  searchTools({ tool: () => undefined } as never, tools, "alpha");
  assert.ok(performance.now() - started < 1000, `${performance.now() - started} ms`);
});

it("filters by tags: an openapi operation's (_meta.tags) or a FastMCP server's (_meta._fastmcp.tags)", () => {
  const tool = (name: string, _meta?: Record<string, unknown>) => ({
    name,
    description: "Lists the pets of the store",
    inputSchema: { type: "object" as const },
    ...(_meta && { _meta }),
  });
  const tools = [
    tool("a", { tags: ["pet"] }),
    tool("b", { _fastmcp: { tags: ["Store"] } }),
    tool("c"),
    tool("d", { tags: "pet" }),
  ];
  const names = (tags?: string[]) =>
    searchTools({ tool: () => undefined } as never, tools, "list pets", tags && { tags })
      .map((h) => h.name)
      .sort();
  assert.deepEqual(names(), ["a", "b", "c", "d"]);
  assert.deepEqual(names(["pet"]), ["a"], "a tags member that is no array is no tag");
  assert.deepEqual(names(["store", "PET"]), ["a", "b"], "any of them, case aside");
  assert.deepEqual(names([]), ["a", "b", "c", "d"], "an empty list filters nothing");
});
