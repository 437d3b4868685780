// Upstream list entries are checked against the MCP schema's rules for their kind, no stricter:
// what a revision allows is kept, what breaks it is left out on its own.
import assert from "node:assert/strict";
import { it } from "node:test";
import { validEntries } from "../../src/providers/list-entries.js";

const names = (entries: Array<{ name?: string; uri?: string }>) => entries.map((e) => e.name ?? e.uri);

it("keeps tools the schema allows and leaves out those it does not", () => {
  const tools = validEntries("tools", [
    { name: "plain", inputSchema: { type: "object" } },
    { name: "boolean_subschema", inputSchema: { type: "object", properties: { x: true } } },
    { name: "array_output", inputSchema: { type: "object" }, outputSchema: { type: "array" } },
    { name: "extra_fields", inputSchema: { type: "object" }, execution: { taskSupport: "someday" } },
    null,
    "tool",
    { inputSchema: { type: "object" } },
    { name: "", inputSchema: { type: "object" } },
    { name: "no_schema" },
    { name: "string_schema", inputSchema: { type: "string" } },
    { name: "bad_output", inputSchema: { type: "object" }, outputSchema: "object" },
    { name: "numeric_description", inputSchema: { type: "object" }, description: 123 },
  ]);
  assert.deepEqual(names(tools), ["plain", "boolean_subschema", "array_output", "extra_fields"]);
  assert.deepEqual(validEntries("tools", { tools: [] }), [], "not a list: nothing");
});

it("keeps prompts, resources and templates the schema allows", () => {
  assert.deepEqual(
    names(
      validEntries("prompts", [
        { name: "p", arguments: [{ name: "a" }] },
        { name: "q", arguments: [{}] },
        {},
      ]),
    ),
    ["p"],
  );
  const resources = validEntries("resources", [
    { uri: "r://1", name: "one", annotations: { lastModified: "2025-01-12" } },
    { uri: "r://2" },
    { uri: "r://3", name: "three", size: "big" },
  ]);
  assert.deepEqual(names(resources), ["one"]);
  assert.deepEqual(
    validEntries("resourceTemplates", [{ uriTemplate: "t://{id}", name: "t" }, { name: "no template" }])
      .length,
    1,
  );
});
