// Task marks in the catalog (docs/upstream-mcp.md "Task marks"): a marked tool is listed with the
// mark as its `execution.taskSupport`, over what its upstream says; an unmarked one exactly as its
// upstream lists it; clients before 2025-11-25 get the lists without Portico's marks; a virtual
// server's renamed tool keeps its mark; Portico's own connect tool is never marked.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { Catalog } from "../../src/providers/catalog.js";
import { ServerProvider } from "../../src/providers/server-view.js";
import { TaskMarkedProvider } from "../../src/providers/task-marked.js";
import { EMPTY_ENTRIES, type Provider } from "../../src/providers/types.js";
import { TaskMarks } from "../../src/records/task-marks.js";
import { definitionOf, PinBook } from "../../src/providers/pin-book.js";
import { PinnedProvider } from "../../src/providers/pinned.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

const object = { type: "object" } as const;

/** An upstream's tools: one of each `execution` an upstream may declare, and one without. */
const UPSTREAM: Tool[] = [
  { name: "research", inputSchema: object, execution: { taskSupport: "required" } },
  { name: "export", inputSchema: object, execution: { taskSupport: "forbidden" } },
  { name: "maybe", inputSchema: object, execution: { taskSupport: "optional" } },
  { name: "echo", inputSchema: object },
];

function upstream(extra: Partial<Provider> = {}, tools = UPSTREAM, hiddenTools?: Tool[]): Provider {
  return {
    id: "up",
    kind: "mcp",
    prefix: "",
    healthy: true,
    entries: () => ({ ...EMPTY_ENTRIES, tools, ...(hiddenTools && { hiddenTools }) }),
    start: async () => undefined,
    close: async () => undefined,
    ...extra,
  } as unknown as Provider;
}

const marked = (tools: Record<string, "required" | "optional">, inner = upstream()) =>
  new TaskMarkedProvider(inner, new TaskMarks({ tools }));

const supportOf = (tools: readonly Tool[]) =>
  Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));

describe("task marks in the catalog", () => {
  it("lists each mark as the tool's execution.taskSupport, winning over the upstream's", () => {
    const catalog = new Catalog([marked({ export: "required", research: "optional", "ech*": "optional" })]);
    const expected = { research: "optional", export: "required", maybe: "optional", echo: "optional" };
    assert.deepEqual(supportOf(catalog.tools), expected);
    assert.deepEqual(supportOf(catalog.sessionTools), expected);
    assert.equal(catalog.tool("export")?.tool?.execution?.taskSupport, "required", "the call's target too");
  });

  it("lists an unmarked tool as its upstream does, the same object", () => {
    const inner = upstream();
    const catalog = new Catalog([marked({ echo: "required" }, inner)]);
    for (const own of UPSTREAM.filter((t) => t.name !== "echo"))
      assert.equal(
        catalog.tools.find((t) => t.name === own.name),
        own,
        `${own.name}: unchanged`,
      );
    // Without any mark the upstream's own stays, "required" included.
    assert.deepEqual(supportOf(new Catalog([inner]).tools), supportOf(UPSTREAM));
  });

  it("lists the tools without Portico's marks to clients before 2025-11-25, keeping the upstream's own", () => {
    const catalog = new Catalog([marked({ research: "optional", echo: "required" })]);
    assert.deepEqual(supportOf(catalog.olderSessionTools), supportOf(UPSTREAM));
    assert.deepEqual(
      catalog.olderSessionTools.map((t) => t.name),
      catalog.sessionTools.map((t) => t.name),
    );
  });

  it("builds the older list only when a mark changed a tool", () => {
    const unmarked = new Catalog([upstream()]);
    assert.equal(unmarked.olderSessionTools, unmarked.sessionTools);
    // A mark equal to the upstream's own changes nothing.
    const same = new Catalog([marked({ research: "required", maybe: "optional" })]);
    assert.equal(same.olderSessionTools, same.sessionTools);
    assert.equal(same.tools[0], UPSTREAM[0]);
  });

  it("applies the provider's prefix to a marked tool like any other", () => {
    const inner = upstream({ prefix: "ev" });
    const catalog = new Catalog([marked({ echo: "required" }, inner)]);
    assert.equal(catalog.tool("ev__echo")?.tool?.execution?.taskSupport, "required");
    assert.equal(catalog.tool("ev__echo")?.name, "echo", "called by its own name");
    assert.equal(catalog.olderSessionTools.find((t) => t.name === "ev__echo")?.execution, undefined);
  });

  it("keeps a mark through a virtual server's rename, matched by the tool's own name", () => {
    const view = new ServerProvider(marked({ echo: "required" }), {
      provider: "up",
      tools: ["echo", "export"],
      overrides: { tools: { echo: { name: "say" } } },
    });
    const catalog = new Catalog([view]);
    assert.deepEqual(supportOf(catalog.tools), { say: "required", export: "forbidden" });
  });

  it("marks a hidden tool's call target too, but never Portico's connect tool", () => {
    const connect: Tool = { name: "connect_up", inputSchema: object };
    const hidden: Tool = { name: "old_export", inputSchema: object };
    const inner = upstream({ connectTool: "connect_up" }, [connect, ...UPSTREAM], [hidden]);
    const catalog = new Catalog([marked({ "*": "required" }, inner)]);
    assert.equal(catalog.tool("connect_up")?.tool?.execution, undefined);
    assert.equal(catalog.tool("old_export")?.tool?.execution?.taskSupport, "required");
    assert.equal(catalog.tool("echo")?.tool?.execution?.taskSupport, "required");
  });

  it("keeps marks through pinning, whose approved definitions stay the upstream's", async () => {
    const book = new PinBook("block", "acme", "up", new MemoryStore(), createKeys("t"), () => undefined);
    const pinned = new PinnedProvider(marked({ "*": "optional" }), book);
    assert.deepEqual(await pinned.adopt("admin"), UPSTREAM.map(definitionOf));
    const catalog = new Catalog([pinned]);
    assert.deepEqual(supportOf(catalog.tools), {
      research: "optional",
      export: "optional",
      maybe: "optional",
      echo: "optional",
    });
    // A definition the pins hold back is not listed, marked or not.
    const rug = upstream({}, [
      ...UPSTREAM.slice(1),
      { ...UPSTREAM[0]!, inputSchema: { type: "object", properties: { path: {} } } },
    ]);
    const held = new PinnedProvider(marked({ "*": "optional" }, rug), book);
    await book.load();
    assert.deepEqual(
      new Catalog([held]).tools.map((t) => t.name),
      ["export", "maybe", "echo"],
    );
    book.close();
  });

  it("gives a user's own provider the same marks, one view per user's provider", async () => {
    const own = upstream();
    const inner = upstream({ forUser: async () => own });
    const provider = marked({ echo: "optional" }, inner);
    const mine = await provider.forUser!("u_1");
    assert.equal(mine.taskMark?.("echo"), "optional");
    assert.equal(await provider.forUser!("u_1"), mine);
  });
});
