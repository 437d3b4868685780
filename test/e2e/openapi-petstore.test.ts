// A public API's real document through an `openapi` provider (docs/openapi.md): the Swagger
// Petstore's OpenAPI 3.0 YAML, kept verbatim (test/fixtures/petstore/openapi.yaml), served against a
// local stand-in for its host. An official SDK client sees one tool per operation and calls them;
// the stand-in records what Portico sent: parameters where and as the document says, JSON and
// binary bodies, the configured `api_key` header, and statuses other than 2xx as tool errors.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { parse as parseYaml } from "yaml";
import {
  API_KEY,
  CLIENT,
  startPetstoreStandIn,
  type PetstoreStandIn,
} from "../fixtures/petstore/stand-in.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

const DOCUMENT = readFileSync(new URL("../fixtures/petstore/openapi.yaml", import.meta.url), "utf8");
/** OpenAPI 3.0 "Path Item Object": the fields that are operations. */
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** The document's operations, read here with `yaml` rather than by Portico. */
const operations = Object.entries(
  (parseYaml(DOCUMENT) as { paths: Record<string, Record<string, { operationId: string }>> }).paths,
).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => ({ method, path, operationId: item[method]!.operationId })),
);

let standIn: PetstoreStandIn;
let portico: RunningPortico;
let rc: RecordingClient;
/** Listed once before the calls, so the SDK client checks each result against its output schema. */
let tools: Tool[];

before(async () => {
  standIn = await startPetstoreStandIn();
  const baseUrl = `${standIn.url}/api/v3`;
  portico = await startPortico({
    tenants: [
      {
        id: "zoo",
        auth: "none",
        providers: [
          {
            id: "petstore",
            kind: "openapi",
            document: DOCUMENT,
            baseUrl,
            // A credential for each of the document's two security schemes.
            credentials: {
              api_key: { value: API_KEY },
              petstore_auth: {
                tokenUrl: `${standIn.url}/oauth/token`,
                clientId: CLIENT.id,
                clientSecret: CLIENT.secret,
              },
            },
          },
          // The same document without the key, for the one operation that needs it.
          {
            id: "keyless",
            kind: "openapi",
            document: DOCUMENT,
            baseUrl,
            include: ["getInventory"],
            prefix: "keyless",
          },
        ],
      },
    ],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  rc = await connectClient(portico.mcpUrl("zoo"));
  tools = (await rc.client.listTools()).tools;
});
after(async () => {
  await rc?.client.close();
  await portico?.close();
  await standIn?.close();
});

const tool = (name: string) => {
  const found = tools.find((t) => t.name === name);
  assert.ok(found, `no tool ${name} in ${tools.map((t) => t.name).join(", ")}`);
  return found;
};
const lastSeen = () => standIn.seen[standIn.seen.length - 1]!;
const textOf = (result: Record<string, unknown>) => (result.content as Array<{ text: string }>)[0]!.text;

async function call(name: string, args: Record<string, unknown>) {
  const result = await rc.client.callTool({ name, arguments: args });
  assert.equal(result.isError, undefined, `${name} failed: ${JSON.stringify(result)}`);
  return result;
}

describe("the Swagger Petstore's document as tools", () => {
  it("lists one tool per operation of the document, named by its operationId", () => {
    assert.equal(operations.length, 19, "the fixture holds the Petstore's 19 operations");
    const own = tools.filter((t) => !t.name.startsWith("keyless__")).map((t) => t.name);
    assert.deepEqual(own.sort(), operations.map((o) => o.operationId).sort());
    for (const name of ["findPetsByStatus", "getPetById", "addPet", "deletePet", "getInventory", "loginUser"])
      assert.ok(own.includes(name), `${name} is a tool`);
    assert.deepEqual(
      tools.filter((t) => t.name.startsWith("keyless__")).map((t) => t.name),
      ["keyless__getInventory"],
      "include keeps only getInventory",
    );
  });

  it("reads the document without a warning in the provider's health", async () => {
    const listed = await new AdminClient(portico.url).get("/tenants/zoo/providers");
    const health = listed.body.items.find((p: { id: string }) => p.id === "petstore")?.health;
    assert.equal(health?.status, "healthy", JSON.stringify(health));
    assert.equal(health?.warnings, undefined, "no operation left out, no $ref to nothing");
    const keyless = listed.body.items.find((p: { id: string }) => p.id === "keyless")?.health;
    assert.deepEqual(
      keyless?.warnings,
      [
        'security scheme "api_key" has no credential ("credentials"), and 1 operation(s) need it: getInventory',
      ],
      "the provider without credentials is told which scheme its operations lack",
    );
  });

  it("marks every GET read-only, PUT and DELETE idempotent, and takes title and description from the document", () => {
    for (const { method, operationId } of operations) {
      const { annotations } = tool(operationId);
      assert.equal(
        annotations?.readOnlyHint,
        method === "get" ? true : undefined,
        `${operationId} (${method})`,
      );
      assert.equal(
        annotations?.idempotentHint,
        method === "put" || method === "delete" ? true : undefined,
        `${operationId} (${method})`,
      );
    }
    assert.equal(tool("getPetById").title, "Find pet by ID.");
    assert.equal(tool("getPetById").description, "Returns a single pet.");
  });

  it("takes parameters by name and the request body as `body`, with the document's schemas", () => {
    assert.deepEqual(tool("getPetById").inputSchema, {
      type: "object",
      properties: { petId: { type: "integer", format: "int64", description: "ID of pet to return" } },
      required: ["petId"],
    });
    const status = tool("findPetsByStatus").inputSchema.properties!.status as { enum: string[] };
    assert.deepEqual(status.enum, ["available", "pending", "sold"]);
    const addPet = tool("addPet").inputSchema;
    assert.deepEqual(addPet.required, ["body"], "the document requires the body");
    const pet = addPet.properties!.body as { type: string; required: string[]; properties: object };
    assert.equal(pet.type, "object");
    assert.deepEqual(pet.required, ["name", "photoUrls"], "the Pet schema's required fields, $ref resolved");
    assert.deepEqual(Object.keys(pet.properties), ["id", "name", "category", "photoUrls", "tags", "status"]);
    const upload = tool("uploadFile").inputSchema.properties!;
    assert.deepEqual(Object.keys(upload), ["petId", "additionalMetadata", "body"]);
    assert.match((upload.body as { description: string }).description, /application\/octet-stream.*base64/);
    assert.deepEqual(Object.keys(tool("deletePet").inputSchema.properties!), ["petId", "api_key"]);
    assert.deepEqual(
      tool("findPetsByStatus").outputSchema?.required,
      ["result"],
      "an array answer is wrapped",
    );
  });
});

describe("calls through Portico to the stand-in", () => {
  it("findPetsByStatus sends the status in the query and answers the pets as {result: [...]}", async () => {
    const result = await call("findPetsByStatus", { status: "available" });
    assert.equal(lastSeen().url, "/api/v3/pet/findByStatus?status=available");
    assert.equal(lastSeen().headers.api_key, undefined, "its one scheme is petstore_auth, not api_key");
    assert.equal(
      lastSeen().headers.authorization,
      `Bearer ${standIn.issued[0]}`,
      "petstore_auth's token, bought at the admin's token URL with the client credentials grant",
    );
    const pets = (result.structuredContent as { result: Array<{ name: string; status: string }> }).result;
    assert.deepEqual(
      pets.map((p) => p.name),
      ["doggie", "rex"],
      "the available pets",
    );
    assert.deepEqual(JSON.parse(textOf(result)), pets, "the text is the same JSON");
  });

  it("findPetsByTags sends two tags as the document says: form, exploded", async () => {
    const result = await call("findPetsByTags", { tags: ["tag2", "tag3"] });
    assert.equal(lastSeen().url, "/api/v3/pet/findByTags?tags=tag2&tags=tag3");
    const pets = (result.structuredContent as { result: Array<{ name: string }> }).result;
    assert.deepEqual(
      pets.map((p) => p.name),
      ["kitty", "rex"],
    );
  });

  it("getPetById puts the id in the path and answers the pet as structured content", async () => {
    const result = await call("getPetById", { petId: 2 });
    assert.equal(lastSeen().method, "GET");
    assert.equal(lastSeen().url, "/api/v3/pet/2");
    assert.deepEqual(result.structuredContent, standIn.pets.get(2));
  });

  it("addPet sends the pet as a JSON body; updatePet replaces it with PUT", async () => {
    const rover = {
      name: "rover",
      category: { id: 1, name: "Dogs" },
      photoUrls: ["https://example.com/rover.jpg"],
      tags: [{ id: 9, name: "new" }],
      status: "pending",
    };
    const added = await call("addPet", { body: rover });
    assert.equal(lastSeen().method, "POST");
    assert.equal(lastSeen().url, "/api/v3/pet");
    assert.equal(lastSeen().headers["content-type"], "application/json");
    assert.deepEqual(lastSeen().body, rover, "the body as given");
    const { id } = added.structuredContent as { id: number };
    assert.ok(
      Number.isInteger(id),
      `the store gave the pet an id: ${JSON.stringify(added.structuredContent)}`,
    );
    assert.deepEqual(added.structuredContent, { ...rover, id });

    await call("updatePet", { body: { ...rover, id, status: "sold" } });
    assert.equal(lastSeen().method, "PUT");
    assert.equal(lastSeen().url, "/api/v3/pet");
    const fetched = await call("getPetById", { petId: id });
    assert.equal(
      (fetched.structuredContent as { status: string }).status,
      "sold",
      "the update reached the store",
    );
  });

  it("deletePet sends DELETE with the caller's api_key header parameter (its scheme is petstore_auth)", async () => {
    const result = await call("deletePet", { petId: 4, api_key: "caller-key" });
    assert.equal(lastSeen().method, "DELETE");
    assert.equal(lastSeen().url, "/api/v3/pet/4");
    assert.equal(lastSeen().headers.api_key, "caller-key");
    assert.equal(lastSeen().headers.authorization, `Bearer ${standIn.issued[0]}`, "the token, reused");
    assert.equal(result.structuredContent, undefined, "a 200 without content has nothing structured");
    assert.ok(!standIn.pets.has(4), "the pet is gone");
    const again = await rc.client.callTool({ name: "getPetById", arguments: { petId: 4 } });
    assert.equal(again.isError, true);
    assert.match(textOf(again), /^petstore\/getPetById: upstream answered HTTP 404: .*Pet not found/);
  });

  it("uploadFile sends the image's bytes as application/octet-stream, its metadata in the query", async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
    const result = await call("uploadFile", {
      petId: 1,
      additionalMetadata: "front view",
      body: bytes.toString("base64"),
    });
    assert.equal(lastSeen().url, "/api/v3/pet/1/uploadImage?additionalMetadata=front%20view");
    assert.equal(lastSeen().headers["content-type"], "application/octet-stream");
    assert.deepEqual(lastSeen().body, bytes, "the bytes, decoded from base64");
    const answer = result.structuredContent as { code: number; message: string };
    assert.equal(answer.code, 200);
    assert.match(answer.message, /front view[\s\S]*10 bytes/);
  });

  it("getInventory carries the api_key header; without it the stand-in's 401 is a tool error", async () => {
    const result = await call("getInventory", {});
    assert.equal(lastSeen().url, "/api/v3/store/inventory");
    assert.equal(lastSeen().headers.api_key, API_KEY);
    const counts: Record<string, number> = {};
    for (const { status } of standIn.pets.values()) if (status) counts[status] = (counts[status] ?? 0) + 1;
    assert.deepEqual(
      result.structuredContent,
      counts,
      "a map of statuses to counts, as the store holds them",
    );

    const keyless = await rc.client.callTool({ name: "keyless__getInventory", arguments: {} });
    assert.equal(lastSeen().headers.api_key, undefined, "no key sent");
    assert.equal(keyless.isError, true, JSON.stringify(keyless));
    assert.match(textOf(keyless), /^keyless\/getInventory: upstream answered HTTP 401/);
  });

  it("loginUser sends the credentials in the query and answers the document's JSON string", async () => {
    const result = await call("loginUser", { username: "user1", password: "XXXXXXXXXXX" });
    assert.equal(lastSeen().url, "/api/v3/user/login?username=user1&password=XXXXXXXXXXX");
    assert.deepEqual(result.structuredContent, { result: "logged in user session: 1" });
  });

  it("getUserByName answers a known user, and an unknown one as a tool error naming the 404", async () => {
    const known = await call("getUserByName", { username: "user1" });
    assert.equal(lastSeen().url, "/api/v3/user/user1");
    assert.equal((known.structuredContent as { email: string }).email, "email1@test.com");

    const unknown = await rc.client.callTool({ name: "getUserByName", arguments: { username: "nobody" } });
    assert.equal(lastSeen().url, "/api/v3/user/nobody");
    assert.equal(unknown.isError, true, JSON.stringify(unknown));
    assert.match(textOf(unknown), /^petstore\/getUserByName: upstream answered HTTP 404: .*User not found/);
  });
});
