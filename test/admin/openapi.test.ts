// The admin API and its OpenAPI document agree: the committed document is current, every route is
// in it and everything in it is a route, and every schema compiles. Responses are checked against
// the document by test/support/admin.ts in every admin test.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { it } from "node:test";
import type { RouteOptions } from "fastify";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import { openApiDocument } from "../../src/admin/openapi/document.js";
import { OPERATIONS } from "../../src/admin/openapi/operations.js";
import { AdminValidator } from "../../src/admin/openapi/validator.js";
import { CONSOLE_TYPES, consoleTypesText, OPENAPI_DOC, openApiText } from "../support/generate-docs.js";
import { ADMIN_TOKEN } from "../support/admin.js";

type Paths = Record<
  string,
  Record<
    string,
    { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }
  >
>;

it("openapi/portico-admin.json is the current document (npm run docs)", async () => {
  assert.equal(await readFile(OPENAPI_DOC, "utf8"), openApiText(), "stale: run `npm run docs`");
});

it("the console's client types are generated from the current document (npm run docs)", async () => {
  assert.equal(await readFile(CONSOLE_TYPES, "utf8"), await consoleTypesText(), "stale: run `npm run docs`");
});

it("every admin route is in the document, and every documented operation is a route", async () => {
  const routes = new Set<string>();
  const portico = await buildApp(loadConfig({ PORTICO_ADMIN_TOKEN: ADMIN_TOKEN }), {
    logger: false,
    onRoute: (route: RouteOptions) => {
      if (!route.url.startsWith("/admin/v1/")) return;
      const config = route.config as { methodNotAllowed?: boolean } | undefined;
      if (config?.methodNotAllowed) return;
      for (const method of [route.method].flat())
        if (method !== "HEAD")
          routes.add(
            `${method.toLowerCase()} ${route.url.slice("/admin/v1".length).replace(/:(\w+)/g, "{$1}")}`,
          );
    },
  });
  await portico.app.close();
  const documented = new Set<string>();
  for (const [path, ops] of Object.entries((openApiDocument() as { paths: Paths }).paths))
    for (const method of Object.keys(ops)) documented.add(`${method} ${path}`);
  assert.deepEqual(
    [...routes].filter((r) => !documented.has(r)),
    [],
    "routes the document lacks",
  );
  assert.deepEqual(
    [...documented].filter((r) => !routes.has(r)),
    [],
    "documented operations that are no route",
  );
  assert.equal(routes.size, OPERATIONS.length);
});

it("every schema of the document compiles, and the docs page and document are served", async () => {
  const doc = openApiDocument() as { paths: Paths };
  const validator = new AdminValidator(doc);
  let compiled = 0;
  for (const ops of Object.values(doc.paths))
    for (const op of Object.values(ops))
      for (const response of Object.values(op.responses))
        for (const media of Object.values(response.content ?? {})) {
          validator.compile(media.schema);
          compiled++;
        }
  assert.ok(compiled > 20);
  const portico = await buildApp(loadConfig({ PORTICO_ADMIN_TOKEN: ADMIN_TOKEN }), { logger: false });
  try {
    const json = await portico.app.inject({ url: "/admin/v1/openapi.json" });
    assert.equal(json.statusCode, 200);
    assert.equal(json.json<{ openapi: string }>().openapi, "3.1.0");
    const page = await portico.app.inject({ url: "/admin/docs" });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers["content-type"] as string, /^text\/html/);
    assert.match(page.body, /createProvider/);
  } finally {
    await portico.app.close();
  }
});

it("every discriminator maps each tag as the API spells it to its component (not the component's name)", () => {
  type S = {
    oneOf?: { $ref: string }[];
    discriminator?: { propertyName: string; mapping?: Record<string, string> };
    properties?: Record<string, { const?: string }>;
  };
  const schemas = (openApiDocument() as { components: { schemas: Record<string, S> } }).components.schemas;
  const tagged = Object.entries(schemas).filter(([, s]) => s.discriminator);
  assert.ok(tagged.length >= 3, tagged.map(([n]) => n).join());
  for (const [name, s] of tagged) {
    const { propertyName, mapping } = s.discriminator!;
    const expected = Object.fromEntries(
      s.oneOf!.map(({ $ref }) => [schemas[$ref.split("/").pop()!]!.properties![propertyName]!.const, $ref]),
    );
    assert.deepEqual(mapping, expected, name);
  }
  assert.equal(schemas.Provider!.discriminator!.mapping!.mcp, "#/components/schemas/McpProvider");
});
