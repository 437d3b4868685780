// Compiling an OpenAPI document's operations into tools (src/providers/openapi/operations.ts):
// include/exclude patterns matched without backtracking, names made valid, unique and fitted,
// schemas copied within a bound however much a document shares or nests.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileOperations, plainSchema } from "../../src/providers/openapi/operations.js";
import { globMatch } from "../../src/records/glob.js";

const op = (operationId?: string, extra: object = {}) => ({
  ...(operationId && { operationId }),
  responses: { 200: { description: "ok" } },
  ...extra,
});
const compile = (paths: object, options: object = {}) =>
  compileOperations(
    { openapi: "3.1.0", paths },
    { baseUrl: "http://api.test", maxNameLength: 64, ...options },
  );

describe("include and exclude", () => {
  it("match a tag, an operationId or METHOD /path, `*` for any run, case-insensitively", () => {
    const paths = {
      "/pets/{id}": { get: op("getPet", { tags: ["pets"] }), delete: op("deletePet", { tags: ["admin"] }) },
      "/stores": { get: op("listStores") },
    };
    const names = (options: object) => compile(paths, options).tools.map((t) => t.tool.name);
    assert.deepEqual(names({ include: ["pets"] }), ["getPet"]);
    assert.deepEqual(names({ include: ["get /*"] }), ["getPet", "listStores"]);
    assert.deepEqual(names({ exclude: ["*Pet"] }), ["listStores"]);
    assert.deepEqual(names({ include: ["GET /pets/*", "listStores"], exclude: ["admin"] }), [
      "getPet",
      "listStores",
    ]);
  });

  it("a pattern of many stars takes no time to fail", () => {
    const started = performance.now();
    assert.equal(globMatch(`${"*a".repeat(200)}*b`, "a".repeat(10_000)), false);
    assert.ok(performance.now() - started < 2000, "no exponential backtracking");
    assert.equal(globMatch("a*b*c", "aXbYc"), true);
    assert.equal(globMatch("a*b*c", "aXbY"), false);
  });
});

describe("names", () => {
  it("come from operationId, made valid; else from method and path; repeats get _2; all fit", () => {
    const { tools, warnings } = compile(
      {
        "/a": { get: op("list pets!"), post: op("list pets!") },
        "/users/{id}/keys": { get: op() },
        "/long": { get: op("x".repeat(100)) },
      },
      { maxNameLength: 40 },
    );
    const names = tools.map((t) => t.tool.name);
    assert.deepEqual(names.slice(0, 3), ["list_pets", "list_pets_2", "get_users_id_keys"]);
    assert.equal(names[3]!.length, 40);
    assert.ok(names.every((n) => /^[A-Za-z0-9_.-]{1,40}$/.test(n)));
    assert.ok(warnings.some((w) => /GET \/users\/\{id\}\/keys: no operationId/.test(w)));
  });

  it("an operation without a server to call is left out, with a warning", () => {
    const { tools, warnings } = compileOperations(
      { openapi: "3.1.0", servers: [{ url: "/relative" }], paths: { "/a": { get: op("a") } } },
      { useDocumentServers: true, maxNameLength: 64 },
    );
    assert.equal(tools.length, 0);
    assert.match(warnings[0]!, /not an absolute http\(s\) URL/);
  });
});

describe("schemas", () => {
  it("a schema shared at every level of a deep tree is copied within the node budget", () => {
    let schema: object = { type: "string" };
    // 40 levels, each using the one below twice: 2^40 nodes if expanded in full.
    for (let i = 0; i < 40; i++) schema = { type: "object", properties: { left: schema, right: schema } };
    const copy = JSON.stringify(plainSchema(schema));
    assert.ok(copy.length < 2_000_000, `bounded: ${copy.length} characters`);
    assert.match(copy, /schema cut: too large or too deep/);
  });

  it("a cycle is cut where it recurs", () => {
    const node: Record<string, unknown> = { type: "object" };
    node.properties = { child: node };
    const copy = plainSchema(node) as { properties: { child: { description: string } } };
    assert.match(copy.properties.child.description, /recursive/);
  });
});

describe("what a hostile document cannot do", () => {
  it("a path that does not begin with / is left out (it could name another host)", () => {
    const { tools, warnings } = compile({
      "@evil.test/steal": { get: op("steal") },
      "/ok": { get: op("ok") },
    });
    assert.deepEqual(
      tools.map((t) => t.tool.name),
      ["ok"],
    );
    assert.match(warnings[0]!, /a path must begin with "\/"/);
  });

  it("a large enum shared by every operation is bounded in each and in all", () => {
    const values = Array.from({ length: 300_000 }, (_, i) => `v${i}`);
    const paths = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [
        `/p${i}`,
        {
          get: op(`p${i}`, {
            parameters: [{ name: "q", in: "query", schema: { type: "string", enum: values } }],
          }),
        },
      ]),
    );
    const { tools } = compile(paths);
    const size = tools.reduce((n, t) => n + JSON.stringify(t.tool.inputSchema).length, 0);
    assert.ok(size < 5_000_000, `all schemas together: ${size} characters`);
  });

  it("boolean schemas and `required: true` become what clients accept; properties named like extensions stay", () => {
    const schema = plainSchema({
      type: "object",
      required: ["x-request-id"],
      properties: {
        anything: true,
        nothing: false,
        "x-request-id": { type: "string", required: true },
        example: { type: "string" },
      },
    }) as { required: string[]; properties: Record<string, object> };
    assert.deepEqual(schema.properties, {
      anything: {},
      nothing: { not: {} },
      "x-request-id": { type: "string" },
      example: { type: "string" },
    });
    assert.deepEqual(schema.required, ["x-request-id"]);
  });

  it("a server URL made of braces costs no time, and a header parameter with an invalid name is left out", () => {
    const started = performance.now();
    compileOperations(
      {
        openapi: "3.1.0",
        servers: [{ url: `http://api.test/${"{".repeat(2000)}` }],
        paths: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`/p${i}`, { get: op(`p${i}`) }])),
      },
      { useDocumentServers: true, maxNameLength: 64 },
    );
    assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
    const bad = compile({
      "/h": {
        get: op("h", { parameters: [{ name: "bad name", in: "header", schema: { type: "string" } }] }),
      },
    });
    assert.deepEqual(Object.keys(bad.tools[0]!.tool.inputSchema.properties ?? {}), []);
    assert.match(bad.warnings[0]!, /not a valid header name/);
  });
});
