// An `openapi` provider through Portico (docs/openapi.md), as an official SDK client sees it: a
// real REST service (Fastify, its document written by @fastify/swagger) becomes one tool per
// operation; calls send each argument where the document says (path, query, header, body) and
// answers come back as structured content, images, embedded resources or tool errors. Hostile
// documents are refused when saved, with the field's problem; a cyclic schema is served cut.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { startRestService, type RestService } from "../fixtures/rest-service.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let rest: RestService;
let portico: RunningPortico;
let rc: RecordingClient;
let admin: AdminClient;

before(async () => {
  rest = await startRestService();
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [
          {
            id: "pets",
            kind: "openapi",
            document: rest.document,
            baseUrl: rest.url,
            headers: { "x-api-key": "k-secret-1" },
          },
        ],
      },
    ],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, PORTICO_OPENAPI_MAX_DOCUMENT_BYTES: "200000" },
  });
  admin = new AdminClient(portico.url);
  rc = await connectClient(portico.mcpUrl("acme"));
});
after(async () => {
  await rc?.client.close();
  await portico?.close();
  await rest?.close();
});

const tool = async (name: string) => (await rc.client.listTools()).tools.find((t) => t.name === name);
const lastSeen = () => rest.seen[rest.seen.length - 1]!;

describe("the tools of a REST service's document", () => {
  it("lists one tool per operation, named by operationId, with its parameters as the input schema", async () => {
    const { tools } = await rc.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      "alwaysFails",
      "createPet",
      "deletePet",
      "getPet",
      "getPhoto",
      "getRecord",
      "listPets",
      "sendFeedback",
    ]);
    const getPet = tools.find((t) => t.name === "getPet")!;
    assert.equal(getPet.title, "Get a pet");
    assert.equal(getPet.description, "Returns one pet by its id.");
    assert.deepEqual(getPet.annotations, { readOnlyHint: true });
    assert.deepEqual(getPet.inputSchema, {
      type: "object",
      properties: {
        petId: { type: "string", description: "The pet's id" },
        fields: { type: "string" },
        "x-trace": { type: "string" },
      },
      required: ["petId"],
    });
    assert.equal(getPet.outputSchema?.type, "object");
    const listPets = tools.find((t) => t.name === "listPets")!;
    assert.deepEqual(listPets.outputSchema?.required, ["result"], "an array answer is wrapped as {result}");
    assert.deepEqual(tools.find((t) => t.name === "deletePet")!.annotations, { idempotentHint: true });
    assert.ok(
      tools.find((t) => t.name === "createPet")!.inputSchema.properties?.body,
      "the JSON body is `body`",
    );
  });

  it("sends path, query and header parameters where the document says; a path value never leaves its path", async () => {
    const result = await rc.client.callTool({
      name: "getPet",
      arguments: { petId: "a/../b?c#d", fields: "name", "x-trace": "t-1" },
    });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    const seen = lastSeen();
    assert.equal(seen.url, "/pets/a%2F%2E%2E%2Fb%3Fc%23d?fields=name");
    assert.equal(seen.headers["x-trace"], "t-1");
    assert.equal(seen.headers["x-api-key"], "k-secret-1", "the provider's configured header");
    assert.deepEqual(result.structuredContent, { id: "a/../b?c#d", name: "pet a/../b?c#d", tags: [] });
  });

  it("serializes an array query parameter as form, exploded, and wraps an array answer", async () => {
    const result = await rc.client.callTool({ name: "listPets", arguments: { limit: 3, tag: ["x", "y z"] } });
    assert.equal(lastSeen().url, "/pets?limit=3&tag=x&tag=y%20z");
    const structured = result.structuredContent as { result: unknown[] };
    assert.equal(structured.result.length, 3);
  });

  it("sends a JSON body and returns the created record", async () => {
    const result = await rc.client.callTool({
      name: "createPet",
      arguments: { body: { name: "Rex", tags: ["dog"] } },
    });
    assert.equal(lastSeen().headers["content-type"], "application/json");
    assert.deepEqual(lastSeen().body, { name: "Rex", tags: ["dog"] });
    assert.deepEqual(result.structuredContent, { id: "p-9", name: "Rex", tags: ["dog"] });
  });

  it("sends a form body as application/x-www-form-urlencoded", async () => {
    const result = await rc.client.callTool({
      name: "sendFeedback",
      arguments: { body: { text: "good & fast", stars: "5" } },
    });
    assert.match(String(lastSeen().headers["content-type"]), /^application\/x-www-form-urlencoded/);
    assert.deepEqual(result.structuredContent, { got: { text: "good & fast", stars: "5" } });
  });

  it("answers an image as image content and other binary as an embedded resource", async () => {
    const photo = await rc.client.callTool({ name: "getPhoto", arguments: { petId: "1" } });
    const [image] = photo.content as Array<{ type: string; mimeType?: string }>;
    assert.equal(image!.type, "image");
    assert.equal(image!.mimeType, "image/png");
    const record = await rc.client.callTool({ name: "getRecord", arguments: { petId: "1" } });
    const [embedded] = record.content as Array<{
      type: string;
      resource?: { mimeType: string; blob: string; uri: string };
    }>;
    assert.equal(embedded!.type, "resource");
    assert.equal(embedded!.resource!.mimeType, "application/pdf");
    assert.equal(Buffer.from(embedded!.resource!.blob, "base64").toString(), "%PDF-1.4 not really");
    assert.equal(embedded!.resource!.uri, `${rest.url}/pets/1/record`);
  });

  it("answers a non-2xx as a tool error with the status, the configured header's value redacted", async () => {
    const result = await rc.client.callTool({
      name: "alwaysFails",
      arguments: { "x-secret-echo": "k-secret-1" },
    });
    assert.equal(result.isError, true);
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    assert.match(text, /^pets\/alwaysFails: upstream answered HTTP 404/);
    assert.ok(!text.includes("k-secret-1"), text);
  });

  it("refuses a call without a path parameter as a tool error", async () => {
    const result = await rc.client.callTool({ name: "getPet", arguments: {} });
    assert.equal(result.isError, true);
    assert.match((result.content as Array<{ text: string }>)[0]!.text, /petId is required/);
  });
});

describe("documents refused when saved, and documents served as well as they can be", () => {
  const save = (id: string, document: unknown, extra: object = {}) =>
    admin.post("/tenants/acme/providers", {
      id,
      kind: "openapi",
      document,
      baseUrl: rest.url,
      prefix: id,
      ...extra,
    });
  const paths = (schema: object) => ({
    "/x": {
      post: {
        operationId: "x",
        requestBody: { content: { "application/json": { schema } } },
        responses: { 200: { description: "ok" } },
      },
    },
  });
  const doc = (extra: object) => ({ openapi: "3.1.0", info: { title: "t", version: "1" }, ...extra });

  for (const [what, document, detail] of [
    [
      "an external $ref to a metadata address",
      doc({ paths: paths({ $ref: "http://169.254.169.254/latest/meta-data" }) }),
      /\$ref whose document could not be fetched from http:\/\/169\.254\.169\.254\/latest\/meta-data: the egress policy refuses/,
    ],
    [
      "a $ref to a local file",
      doc({ paths: paths({ $ref: "file:///etc/passwd" }) }),
      /\$ref "file:\/\/\/etc\/passwd" to a file: URL: Portico fetches only http\(s\) documents/,
    ],
    [
      "a relative external $ref in an inline document",
      doc({ paths: paths({ $ref: "other.yaml#/Pet" }) }),
      /relative \$ref "other\.yaml#\/Pet" and no URL to resolve it against/,
    ],
    [
      "a chain of 40 $refs",
      doc({
        paths: paths({ $ref: "#/components/schemas/s0" }),
        components: {
          schemas: Object.fromEntries(
            Array.from({ length: 41 }, (_, i) => [
              `s${i}`,
              i < 40 ? { $ref: `#/components/schemas/s${i + 1}` } : { type: "string" },
            ]),
          ),
        },
      }),
      /chain of more than 32 \$refs/,
    ],
    [
      "a YAML alias bomb",
      [
        "openapi: 3.1.0",
        "info: {title: t, version: '1'}",
        "paths: {}",
        'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ]
        .concat(
          ["b", "c", "d", "e", "f", "g", "h"].map(
            (k, i) => `${k}: &${k} [${Array(9).fill(`*${"abcdefgh"[i]}`).join(",")}]`,
          ),
        )
        .join("\n"),
      /not valid YAML/,
    ],
    [
      "a YAML alias inside its own anchor (a cycle)",
      "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\nx: &a {y: *a, $ref: 'http://127.0.0.1:1/x.json'}\n",
      /nested more than 200 levels deep/,
    ],
    [
      "a document over the size cap",
      doc({ paths: {}, "x-padding": "p".repeat(250_000) }),
      /larger than 200000 bytes/,
    ],
    ["not an OpenAPI document", { hello: "world" }, /not an OpenAPI 3\.0\/3\.1 or Swagger 2\.0 document/],
    [
      "a document nested 60,000 levels deep, as text",
      `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}, "x": ${"[".repeat(60_000)}${"]".repeat(60_000)}}`,
      /nested more than 200 levels deep/,
    ],
  ] as const)
    it(`refuses ${what} with problem+json naming /document`, async () => {
      const res = await save("bad", document);
      assert.equal(res.status, 422, JSON.stringify(res.body).slice(0, 300));
      assert.equal(res.body.errors[0].pointer, "/document");
      assert.match(res.body.errors[0].detail, detail);
    });

  it("serves a cyclic schema with its cycle cut, and a Swagger 2.0 document in YAML", async () => {
    const cyclic = doc({
      paths: paths({ $ref: "#/components/schemas/Node" }),
      components: {
        schemas: {
          Node: {
            type: "object",
            properties: { name: { type: "string" }, child: { $ref: "#/components/schemas/Node" } },
          },
        },
      },
    });
    assert.equal((await save("cyc", cyclic)).status, 201);
    const node = (await tool("cyc__x"))!.inputSchema.properties!.body as {
      properties: { child: { properties: { child: { description: string } } } };
    };
    assert.match(node.properties.child.properties.child.description, /recursive/);

    const swagger = [
      "swagger: '2.0'",
      "info: {title: legacy, version: '1'}",
      "paths:",
      "  /items:",
      "    get:",
      "      operationId: listItems",
      "      parameters:",
      "        - {name: ids, in: query, type: array, items: {type: string}, collectionFormat: pipes}",
      "      responses: {200: {description: ok}}",
    ].join("\n");
    assert.equal((await save("legacy", swagger)).status, 201);
    const listed = await tool("legacy__listItems");
    assert.deepEqual(listed!.inputSchema.properties, { ids: { type: "array", items: { type: "string" } } });
    await rc.client.callTool({ name: "legacy__listItems", arguments: { ids: ["a", "b"] } });
    assert.equal(lastSeen().url, "/items?ids=a|b", "collectionFormat pipes is pipeDelimited");
  });

  it("fetches the documents external $refs name, and theirs relative to them; refuses more than 20", async () => {
    const served: string[] = [];
    const schemas = createServer((req, res) => {
      served.push(req.url!);
      const documents: Record<string, string> = {
        // A shared schema file that refers to a sibling, and within itself.
        "/common/models.json": JSON.stringify({
          Pet: {
            type: "object",
            properties: { name: { $ref: "#/Name" }, owner: { $ref: "people.yaml#/Person" } },
          },
          Name: { type: "string", maxLength: 40 },
        }),
        "/common/people.yaml": "Person: {type: string}\n",
      };
      const body = /^\/many\/\d+\.json$/.test(req.url!) ? '{"type": "string"}' : documents[req.url!];
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { "content-type": "text/plain" }).end(body);
    });
    await new Promise<void>((resolve) => schemas.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(schemas.address() as AddressInfo).port}`;
    try {
      const saved = await save("ext", doc({ paths: paths({ $ref: `${base}/common/models.json#/Pet` }) }));
      assert.equal(saved.status, 201, JSON.stringify(saved.body).slice(0, 300));
      const body = (await tool("ext__x"))!.inputSchema.properties!.body;
      assert.deepEqual(body, {
        type: "object",
        properties: { name: { type: "string", maxLength: 40 }, owner: { type: "string" } },
      });
      assert.deepEqual(served.slice(0, 2).sort(), ["/common/models.json", "/common/people.yaml"]);

      const many = Object.fromEntries(
        Array.from({ length: 21 }, (_, i) => [`p${i}`, { $ref: `${base}/many/${i}.json` }]),
      );
      const refused = await save("many", doc({ paths: paths({ type: "object", properties: many }) }));
      assert.equal(refused.status, 422, JSON.stringify(refused.body).slice(0, 300));
      assert.match(refused.body.errors[0].detail, /\$refs to more than 20 other documents/);
    } finally {
      schemas.close();
    }
  });

  it("refuses a document whose tools collide with names the tenant serves", async () => {
    const res = await admin.post("/tenants/acme/providers", {
      id: "again",
      kind: "openapi",
      document: rest.document,
      baseUrl: rest.url,
    });
    assert.equal(res.status, 409, JSON.stringify(res.body).slice(0, 300));
    assert.match(res.body.detail, /collides with a served name/);
  });

  it("refuses a document object nested 60,000 levels deep with problem+json", async () => {
    const deep = `${"[".repeat(60_000)}${"]".repeat(60_000)}`;
    const res = await fetch(`${portico.url}/admin/v1/tenants/acme/providers`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: `{"id": "deep", "kind": "openapi", "baseUrl": "${rest.url}", "document": {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}, "x": ${deep}}}`,
    });
    assert.match(res.headers.get("content-type") ?? "", /^application\/problem\+json/);
    const problem = (await res.json()) as { detail: string };
    assert.ok(res.status === 422 || res.status === 400, `${res.status}: ${problem.detail}`);
    assert.match(problem.detail, /nests deeper than|nested more than/);
  });

  it("needs a baseUrl, or useDocumentServers", async () => {
    const res = await admin.post("/tenants/acme/providers", {
      id: "nobase",
      kind: "openapi",
      document: doc({ paths: {} }),
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.errors[0].pointer, "/baseUrl");
  });
});
