// The admin API reference page: anchors, badges, parameters, schema links, escaping, inline code and
// termination on recursive schemas, rendered from a small OpenAPI 3.1 document; then the real page
// in headless Chromium at 1280×800, which must not scroll sideways.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderDocsPage, type OpenApiDocument } from "../../src/admin/docs-page.js";
import { launchBrowser } from "../support/browser.js";
import { startPortico } from "../support/portico.js";

const problem = { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } };

const doc: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "Portico admin API", version: "1.2.3", description: "Manage <tenants> & 'providers'." },
  tags: [
    { name: "tenants", description: 'Tenants "own" providers.' },
    { name: "providers", description: "Upstream MCP servers." },
  ],
  security: [{ adminToken: [] }],
  paths: {
    "/admin/tenants": {
      get: {
        operationId: "listTenants",
        summary: "List tenants",
        description: "Pages through tenants. <script>alert(1)</script>",
        tags: ["tenants"],
        parameters: [
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100 } },
          { name: "cursor", in: "query", description: "From the previous page's `nextCursor`." },
        ],
        responses: {
          "200": {
            description: "A page of tenants.",
            content: {
              "application/json": {
                schema: { type: "array", items: { $ref: "#/components/schemas/Tenant" } },
              },
            },
          },
        },
      },
    },
    "/admin/tenants/{tenantId}": {
      parameters: [{ $ref: "#/components/parameters/TenantId" }],
      put: {
        operationId: "putTenant",
        summary: "Create or replace a tenant",
        tags: ["tenants"],
        requestBody: {
          required: true,
          content: { "application/json": { schema: { $ref: "#/components/schemas/Tenant" } } },
        },
        responses: {
          "200": { description: "Stored." },
          "400": { $ref: "#/components/responses/BadRequest" },
        },
      },
    },
    "/admin/tenants/{tenantId}/providers": {
      parameters: [{ name: "tenantId", in: "path", required: true, description: "Overridden." }],
      post: {
        operationId: "addProvider",
        summary: "Add a provider",
        tags: ["providers", "tenants"],
        parameters: [{ $ref: "#/components/parameters/TenantId" }],
        requestBody: {
          content: { "application/json": { schema: { $ref: "#/components/schemas/Provider" } } },
        },
        responses: {
          "201": { description: "Added.", headers: { Location: { schema: { type: "string" } } } },
          "400": { $ref: "#/components/responses/BadRequest" },
        },
      },
    },
  },
  components: {
    securitySchemes: { adminToken: { type: "http", scheme: "bearer" } },
    parameters: {
      TenantId: {
        name: "tenantId",
        in: "path",
        required: true,
        schema: { type: "string", pattern: "^[a-z0-9-]{1,64}$" },
      },
    },
    responses: { BadRequest: { description: "The request was invalid.", content: problem } },
    schemas: {
      Tenant: {
        type: "object",
        required: ["id", "status"],
        properties: {
          id: { type: "string", readOnly: true, pattern: "^[a-z]+$" },
          status: { type: "string", enum: ["active", "suspended"], description: "Whether <b>it</b> serves." },
          secret: { type: "string", writeOnly: true, minLength: 16 },
          parent: { $ref: "#/components/schemas/Tenant" },
          labels: { type: "object", additionalProperties: { type: "string" } },
          limits: { type: "object", properties: { rps: { type: "number", exclusiveMinimum: 0 } } },
        },
      },
      Provider: {
        oneOf: [
          { $ref: "#/components/schemas/HttpProvider" },
          { $ref: "#/components/schemas/StdioProvider" },
        ],
        discriminator: {
          propertyName: "kind",
          mapping: { http: "#/components/schemas/HttpProvider", stdio: "#/components/schemas/StdioProvider" },
        },
      },
      HttpProvider: {
        type: "object",
        required: ["kind", "url"],
        properties: { kind: { const: "http" }, url: { type: "string", format: "uri" } },
      },
      StdioProvider: {
        type: "object",
        properties: { kind: { const: "stdio" }, args: { type: "array", items: { type: "string" } } },
      },
      Tree: {
        type: "object",
        properties: { children: { type: "array", items: { $ref: "#/components/schemas/Tree" } } },
        additionalProperties: { $ref: "#/components/schemas/Tree" },
      },
      Problem: { type: "object", properties: { title: { type: "string" }, detail: { type: "string" } } },
    },
  },
};

const html = renderDocsPage(doc);
const count = (needle: string): number => html.split(needle).length - 1;

describe("renderDocsPage", () => {
  it("is one self-contained HTML page: inline CSS, no scripts, no external resources", () => {
    assert.match(html, /^<!doctype html>/);
    assert.equal(count("<style>"), 1);
    assert.doesNotMatch(html, /<script|<link|src=|https?:\/\//i);
    assert.match(html, /prefers-color-scheme:dark/);
  });

  it("anchors every operation by operationId and links each from the contents", () => {
    for (const id of ["listTenants", "putTenant", "addProvider"]) {
      assert.equal(count(`id="${id}"`), 1, `one section for ${id}`);
      assert.ok(html.includes(`href="#${id}"`), `contents link to ${id}`);
    }
    // Listed under both its tags, rendered once, under its first.
    assert.equal(count(`href="#addProvider"`), 2);
    assert.ok(html.indexOf('id="tag-providers"') < html.indexOf('id="addProvider"'));
  });

  it("groups the contents by tag in declaration order", () => {
    assert.ok(html.indexOf('href="#tag-tenants"') < html.indexOf('href="#tag-providers"'));
    assert.match(html, /Tenants &#34;own&#34; providers\./);
  });

  it("shows a METHOD badge and the path for each operation", () => {
    assert.ok(html.includes('<span class="m m-get">GET</span> <code>/admin/tenants</code>'));
    assert.ok(html.includes('<span class="m m-put">PUT</span> <code>/admin/tenants/{tenantId}</code>'));
    assert.ok(
      html.includes('<span class="m m-post">POST</span> <code>/admin/tenants/{tenantId}/providers</code>'),
    );
  });

  it("tables parameters, resolving $ref'd and path-level ones, with their constraints", () => {
    assert.ok(html.includes("<td><code>limit</code></td><td>query</td><td>no</td>"));
    assert.ok(html.includes("<td><code>cursor</code></td>"));
    // Path-level on both paths; addProvider's own $ref'd parameter overrides its path-level one.
    assert.equal(count("<td><code>tenantId</code></td><td>path</td><td>yes</td>"), 2);
    assert.ok(!html.includes("Overridden."));
    assert.ok(html.includes("pattern <code>^[a-z0-9-]{1,64}$</code>"));
    assert.ok(html.includes("&ge; 1 &middot; &le; 100"));
  });

  it("links schema $refs to one section per component schema", () => {
    for (const name of ["Tenant", "Provider", "HttpProvider", "StdioProvider", "Tree", "Problem"])
      assert.equal(count(`id="schema-${name}"`), 1, name);
    assert.ok(html.includes('<a href="#schema-Tenant">Tenant</a>'));
    assert.ok(html.includes('array of <a href="#schema-Tenant">Tenant</a>'));
    assert.ok(html.includes("Request body (required)"));
    assert.ok(html.includes('<a href="#schema-Problem">Problem</a>'), "through a $ref'd response");
  });

  it("every in-page link has a target", () => {
    const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    for (const [, target] of html.matchAll(/href="#([^"]+)"/g)) assert.ok(ids.has(target), `#${target}`);
  });

  it("lists oneOf alternatives and the discriminator mapping", () => {
    assert.ok(
      html.includes(
        'one of <a href="#schema-HttpProvider">HttpProvider</a> | <a href="#schema-StdioProvider">',
      ),
    );
    assert.ok(html.includes("Discriminated by <code>kind</code>: <code>http</code> &rarr; <a"));
    assert.ok(html.includes("const <code>&#34;stdio&#34;</code>"));
  });

  it("shows enums, formats, bounds, maps, nested objects and read/write-only marks", () => {
    assert.ok(html.includes("one of <code>&#34;active&#34;</code>, <code>&#34;suspended&#34;</code>"));
    assert.ok(html.includes("format <code>uri</code>"));
    assert.ok(html.includes("length &ge; 16"));
    assert.ok(html.includes("map of string"));
    assert.ok(html.includes('<td><code>rps</code></td><td>number<div class="c">&gt; 0</div>'));
    assert.ok(html.includes('<span class="mark">read-only</span>'));
    assert.ok(html.includes('<span class="mark">write-only</span>'));
    assert.ok(html.includes("Authentication: <code>adminToken</code>"));
  });

  it("escapes every string taken from the document", () => {
    assert.ok(!html.includes("<script>"));
    assert.ok(html.includes("&#60;script&#62;alert(1)&#60;/script&#62;"));
    assert.ok(html.includes("Manage &#60;tenants&#62; &#38; &#39;providers&#39;."));
    assert.ok(html.includes("Whether &#60;b&#62;it&#60;/b&#62; serves."));
  });

  it("sets Markdown inline code as <code>, after escaping, and leaves a lone backtick alone", () => {
    const page = renderDocsPage({
      info: { title: "t", version: "0", description: "Use `Bearer <key>` or `x-api-key`; a lone ` stays." },
      paths: {},
    });
    assert.ok(
      page.includes("Use <code>Bearer &#60;key&#62;</code> or <code>x-api-key</code>; a lone ` stays."),
    );
    assert.ok(html.includes("From the previous page&#39;s <code>nextCursor</code>."));
    assert.ok(!html.includes("`nextCursor`"));
  });

  it("terminates on self-referential schemas, rendering the $ref as a link", () => {
    assert.ok(html.includes('array of <a href="#schema-Tree">Tree</a>'));
    assert.ok(html.includes('<td><em>other keys</em></td><td><a href="#schema-Tree">Tree</a>'));
    const loop: OpenApiDocument = {
      info: { title: "t", version: "0" },
      paths: {},
      components: { schemas: { Loop: { $ref: "#/components/schemas/Loop" } } },
    };
    assert.ok(renderDocsPage(loop).includes('<a href="#schema-Loop">Loop</a>'));
  });
});

describe("GET /admin/docs in a browser", () => {
  it("at 1280×800 the page does not scroll sideways: long code wraps, wide tables scroll in their box", async () => {
    const portico = await startPortico({ tenants: [] });
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const res = await page.goto(`${portico.url}/admin/docs`);
      assert.equal(res?.status(), 200);
      const [scrollWidth, clientWidth] = await page.evaluate<[number, number]>(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]",
      );
      assert.ok(
        scrollWidth <= clientWidth,
        `the page is ${scrollWidth} px wide in a ${clientWidth} px window`,
      );
      const literal = await page.evaluate<string | null>(
        "/`[^`\\s][^`]*`/.exec(document.body.innerText)?.[0] ?? null",
      );
      assert.equal(literal, null, "no backticks shown literally");
    } finally {
      await browser.close();
      await portico.close();
    }
  });
});
