// Tenant and provider validation: every accepted shape next to the hostile or mistyped one, and
// the exact message an operator reads (JSON path first).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isPorticoError } from "../../src/protocol/errors.js";
import { validateProvider, validateTenant } from "../../src/records/validate.js";
import type { McpProviderConfig } from "../../src/records/tenant.js";

function rejects(input: unknown, message: string): void {
  assert.throws(
    () => validateTenant(input, "tenants[0]"),
    (err) => {
      assert.ok(isPorticoError(err));
      assert.equal(err.code, "PORTICO_ERR_CONFIG_INVALID");
      assert.equal(err.message, message);
      return true;
    },
  );
}

const tenant = (...providers: unknown[]) => ({ id: "acme", auth: "none", providers });
const P = "tenants[0].providers[0]";
const msg = { role: "user", text: "Hi" };
const staticWith = (extra: object) => tenant({ id: "docs", kind: "static", ...extra });
const httpTool = (extra: object) =>
  tenant({ id: "api", kind: "http", tools: [{ name: "t", url: "https://api.test/t", ...extra }] });

describe("validateTenant: the tenant record", () => {
  it("accepts a minimal tenant and returns a detached copy", () => {
    const input = { id: "acme", auth: "oauth", name: "Acme" };
    const out = validateTenant(input);
    assert.deepEqual(out, { id: "acme", auth: "oauth", name: "Acme", providers: [] });
    assert.notEqual(out, input);
  });

  it("requires an explicit auth mode, saying which values to set", () => {
    rejects(
      { id: "acme", providers: [] },
      'tenants[0].auth: is required: set "auth": "oauth" or "none" (no sign-in)',
    );
    rejects({ id: "acme", auth: "basic" }, 'tenants[0].auth: must be one of "oauth", "none"');
  });

  it("requires a lowercase slug id", () => {
    const rule =
      "must be a lowercase slug: a–z, 0–9 and -, starting with a letter or digit, at most 63 characters";
    rejects({ id: "Acme", auth: "none" }, `tenants[0].id: "Acme" ${rule}`);
    rejects({ id: "-acme", auth: "none" }, `tenants[0].id: "-acme" ${rule}`);
    rejects({ auth: "none" }, `tenants[0].id: is required: ${rule.replace("must be ", "")}`);
  });

  it("rejects unknown keys and non-objects", () => {
    rejects(
      { id: "acme", auth: "none", provider: [] },
      'tenants[0].provider: unknown field "provider" (did you mean "providers"?)',
    );
    rejects([], "tenants[0]: must be an object");
    rejects({ id: "acme", auth: "none", providers: {} }, "tenants[0].providers: must be an array");
  });

  it("uses 'tenant' as the default path", () => {
    assert.throws(() => validateTenant({ id: "acme" }), { message: /^tenant\.auth: is required/ });
  });
});

describe("validateTenant: identity settings and limits", () => {
  const withIdentity = (identity: object) => ({ id: "acme", auth: "oauth", identity });
  const oidc = { type: "oidc", issuer: "https://idp.test", clientId: "portico", clientSecret: "s3cret" };

  it("accepts each identity type and drops empty limits", () => {
    assert.deepEqual(validateTenant(withIdentity(oidc)).identity, oidc);
    assert.deepEqual(validateTenant({ id: "acme", auth: "none", limits: {} }), {
      id: "acme",
      auth: "none",
      providers: [],
    });
  });

  it("names the bad member and what it must be", () => {
    const I = "tenants[0].identity";
    rejects(withIdentity({ type: "saml" }), `${I}.type: must be one of "local", "oidc", "external"`);
    rejects(
      withIdentity({ type: "oidc", issuer: "https://idp.test", clientId: "portico" }),
      `${I}.clientSecret: is required`,
    );
    rejects(
      withIdentity({ ...oidc, groupsClaim: "a b" }),
      `${I}.groupsClaim: "a b" must be a claim name, or a dotted path of up to five names (A–Z a–z 0–9 _ : / -)`,
    );
    rejects(withIdentity({ ...oidc, issuer: "ftp://idp.test" }), `${I}.issuer: must be an http(s) URL`);
    rejects(
      withIdentity({
        type: "external",
        issuer: "https://idp.test",
        jwksUrl: "https://idp.test/jwks",
        aud: "x",
      }),
      `${I}.aud: unknown field "aud" (allowed: type, issuer, jwksUrl, audience, groupsClaim, rolesClaim, login)`,
    );
    rejects(
      { id: "acme", auth: "none", limits: { requestsPerMinute: -1 } },
      "tenants[0].limits.requestsPerMinute: must be a whole number from 0 to 100000000",
    );
  });
});

describe("validateProvider: common fields", () => {
  it("accepts each kind with prefix and separator", () => {
    const p = validateProvider({
      id: "gh",
      kind: "mcp",
      prefix: "gh",
      separator: ".",
      url: "https://mcp.test/mcp",
    });
    assert.deepEqual(p, { id: "gh", kind: "mcp", prefix: "gh", separator: ".", url: "https://mcp.test/mcp" });
  });

  it("requires a known kind", () => {
    rejects(tenant({ id: "x" }), `${P}.kind: must be one of "static", "http", "mcp", "openapi"`);
    rejects(
      tenant({ id: "x", kind: "grpc" }),
      `${P}.kind: must be one of "static", "http", "mcp", "openapi"`,
    );
  });

  it("rejects a mistyped key, suggesting the right one, or listing the known keys", () => {
    rejects(
      tenant({ id: "x", kind: "http", tols: [] }),
      `${P}.tols: unknown field "tols" (did you mean "tools"?)`,
    );
    rejects(
      tenant({ id: "x", kind: "static", tools: [] }),
      `${P}.tools: unknown field "tools" (allowed: id, prefix, separator, kind, prompts, resources, resourceTemplates)`,
    );
  });

  it("checks prefix and separator characters", () => {
    rejects(
      tenant({ id: "x", kind: "mcp", url: "http://u.test", prefix: "a b" }),
      `${P}.prefix: "a b" must be at most 32 characters of A–Z a–z 0–9 _ . -`,
    );
    rejects(
      tenant({ id: "x", kind: "mcp", url: "http://u.test", separator: "::" }),
      `${P}.separator: "::" must be at most 8 characters of A–Z a–z 0–9 _ . -`,
    );
  });

  it("requires provider ids unique per tenant", () => {
    const mcp = { id: "up", kind: "mcp", url: "http://u.test" };
    rejects(
      tenant(mcp, mcp),
      'tenants[0].providers[1].id: another provider of this tenant already has id "up"',
    );
  });
});

describe("validateProvider: static", () => {
  const prompt = {
    name: "review",
    arguments: [{ name: "language", required: true, values: ["go"] }],
    messages: [{ role: "user", text: "Review this {{ language }} code." }],
  };

  it("accepts prompts, resources and templates", () => {
    const out = validateTenant(
      staticWith({
        prompts: [prompt],
        resources: [
          { uri: "docs://a", name: "a", mimeType: "text/plain", text: "A" },
          { uri: "docs://b", name: "b", blob: "aGk=" },
        ],
        resourceTemplates: [
          { uriTemplate: "docs://p/{page}", name: "p", text: "{page}", values: { page: ["x"] } },
        ],
      }),
    );
    assert.deepEqual(out.providers[0], {
      id: "docs",
      kind: "static",
      prompts: [prompt],
      resources: [
        { uri: "docs://a", name: "a", mimeType: "text/plain", text: "A" },
        { uri: "docs://b", name: "b", blob: "aGk=" },
      ],
      resourceTemplates: [
        { uriTemplate: "docs://p/{page}", name: "p", text: "{page}", values: { page: ["x"] } },
      ],
    });
  });

  it("rejects bad messages and placeholders naming no argument", () => {
    rejects(
      staticWith({ prompts: [{ name: "p", messages: [] }] }),
      `${P}.prompts[0].messages: must hold at least one message`,
    );
    rejects(
      staticWith({ prompts: [{ name: "p", messages: [{ role: "system", text: "x" }] }] }),
      `${P}.prompts[0].messages[0].role: must be one of "user", "assistant"`,
    );
    rejects(
      staticWith({ prompts: [{ ...prompt, messages: [{ role: "user", text: "{{lang}}" }] }] }),
      `${P}.prompts[0].messages[0].text: placeholder {{lang}} names no argument of the prompt`,
    );
  });

  it("rejects duplicate prompt and argument names", () => {
    rejects(
      staticWith({ prompts: [prompt, prompt] }),
      `${P}.prompts[1].name: duplicate name "review" (also ${P}.prompts[0].name)`,
    );
    rejects(
      staticWith({ prompts: [{ ...prompt, arguments: [{ name: "a" }, { name: "a" }] }] }),
      `${P}.prompts[0].arguments[1].name: duplicate argument "a" (also ${P}.prompts[0].arguments[0].name)`,
    );
  });

  it("rejects exposed prompt names beyond 64 characters once prefixed", () => {
    const name = "p".repeat(60);
    rejects(
      tenant({ id: "docs", kind: "static", prefix: "docs", prompts: [{ name, messages: [msg] }] }),
      `${P}.prompts[0].name: exposed name "docs__${name}" must be 1–64 characters of A–Z a–z 0–9 _ . -`,
    );
  });

  it("checks resource URIs, content and base64", () => {
    rejects(
      staticWith({ resources: [{ uri: "quote", name: "q", text: "" }] }),
      `${P}.resources[0].uri: "quote" must be an absolute URI with a scheme, e.g. docs://guide`,
    );
    rejects(
      staticWith({ resources: [{ uri: "docs://q", name: "q" }] }),
      `${P}.resources[0]: set exactly one of "text" and "blob"`,
    );
    rejects(
      staticWith({ resources: [{ uri: "docs://q", name: "q", text: "", blob: "" }] }),
      `${P}.resources[0]: set exactly one of "text" and "blob"`,
    );
    rejects(
      staticWith({ resources: [{ uri: "docs://q", name: "q", blob: "not base64!" }] }),
      `${P}.resources[0].blob: "not base64!" must be base64 (RFC 4648 §4, with padding)`,
    );
    rejects(
      staticWith({ resources: [{ uri: "docs://q", name: "q", text: "", mimeType: "text" }] }),
      `${P}.resources[0].mimeType: "text" must be a MIME type such as text/plain`,
    );
  });

  it("checks templates: level-1 expressions, at least one variable, values per variable", () => {
    const t = { uriTemplate: "docs://p/{page}", name: "p", text: "" };
    rejects(
      staticWith({ resourceTemplates: [{ ...t, uriTemplate: "docs://{+path}" }] }),
      `${P}.resourceTemplates[0].uriTemplate: "{+path}" is not a simple {name} expression (only RFC 6570 level 1 is supported)`,
    );
    rejects(
      staticWith({ resourceTemplates: [{ ...t, uriTemplate: "docs://p" }] }),
      `${P}.resourceTemplates[0].uriTemplate: has no {variable}; declare it as a resource instead`,
    );
    rejects(
      staticWith({ resourceTemplates: [{ ...t, values: { pg: ["1"] } }] }),
      `${P}.resourceTemplates[0].values.pg: is not a variable of the uriTemplate`,
    );
  });

  it("rejects prompt names and resource URIs two providers of a tenant share, naming both", () => {
    const a = {
      id: "a",
      kind: "static",
      prompts: [{ name: "hello", messages: [msg] }],
      resources: [{ uri: "x://1", name: "1", text: "" }],
    };
    const b = { ...a, id: "b", resources: [] };
    rejects(
      tenant(a, b),
      'tenants[0].providers[1].prompts[0].name: prompt name "hello" of provider "b" collides with provider "a"; give one of them a "prefix"',
    );
    rejects(
      tenant(a, { ...a, id: "c", prefix: "c" }),
      'tenants[0].providers[1].resources[0].uri: resource URI "x://1" of provider "c" collides with provider "a"; a "prefix" renames tools and prompts, not resource URIs: remove the resource from one of the providers (a static provider\'s "resources"; an upstream MCP server serves its own list), or serve the two providers in separate tenants',
    );
    assert.equal(validateTenant(tenant(a, { ...b, prefix: "b" })).providers.length, 2);
  });
});

describe("validateProvider: http", () => {
  it("accepts a tool with schema, headers and timeout", () => {
    const out = validateTenant(
      httpTool({ inputSchema: { type: "object" }, headers: { "x-api-key": "k" }, timeoutMs: 500 }),
    );
    assert.deepEqual(out.providers[0], {
      id: "api",
      kind: "http",
      tools: [
        {
          name: "t",
          url: "https://api.test/t",
          inputSchema: { type: "object" },
          headers: { "x-api-key": "k" },
          timeoutMs: 500,
        },
      ],
    });
  });

  it("requires the tools list", () => {
    rejects(tenant({ id: "api", kind: "http" }), `${P}.tools: is required`);
  });

  it("requires an http(s) URL without credentials", () => {
    rejects(httpTool({ url: "ftp://api.test/t" }), `${P}.tools[0].url: must be an http(s) URL`);
    rejects(httpTool({ url: "not a url" }), `${P}.tools[0].url: must be an http(s) URL`);
    rejects(
      httpTool({ url: "https://u:p@api.test/" }),
      `${P}.tools[0].url: must not carry credentials; put them in headers`,
    );
  });

  it("checks headers without echoing their values", () => {
    rejects(
      httpTool({ headers: { "x-key": "secret\r\nx: y" } }),
      `${P}.tools[0].headers.x-key: value must be a string without line breaks`,
    );
    rejects(
      httpTool({ headers: { "bad header": "v" } }),
      `${P}.tools[0].headers.bad header: is not a valid header name`,
    );
    rejects(
      httpTool({ headers: { Host: "v" } }),
      `${P}.tools[0].headers.Host: is set by Portico and cannot be configured`,
    );
  });

  it("checks timeout and schemas", () => {
    rejects(httpTool({ timeoutMs: 0 }), `${P}.tools[0].timeoutMs: must be a whole number from 1 to 600000`);
    rejects(httpTool({ timeoutMs: 1.5 }), `${P}.tools[0].timeoutMs: must be a whole number from 1 to 600000`);
    rejects(httpTool({ inputSchema: { type: "array" } }), `${P}.tools[0].inputSchema.type: must be "object"`);
    rejects(
      httpTool({ timeout: 5 }),
      `${P}.tools[0].timeout: unknown field "timeout" (did you mean "timeoutMs"?)`,
    );
  });

  it("rejects tool names two providers expose alike, and accepts them once prefixed", () => {
    const tool = { name: "search", url: "http://a.test" };
    rejects(
      tenant({ id: "a", kind: "http", tools: [tool] }, { id: "b", kind: "http", tools: [tool] }),
      'tenants[0].providers[1].tools[0].name: tool name "search" of provider "b" collides with provider "a"; give one of them a "prefix"',
    );
    rejects(
      tenant(
        { id: "a", kind: "http", prefix: "x", tools: [tool] },
        { id: "b", kind: "http", tools: [{ ...tool, name: "x__search" }] },
      ),
      'tenants[0].providers[1].tools[0].name: tool name "x__search" of provider "b" collides with provider "a"; give one of them a "prefix"',
    );
  });

  it("checks against the tenant's other providers when validated alone", () => {
    const existing = validateProvider({
      id: "a",
      kind: "http",
      tools: [{ name: "t", url: "http://a.test" }],
    });
    assert.throws(
      () =>
        validateProvider({ id: "b", kind: "http", tools: [{ name: "t", url: "http://b.test" }] }, "body", [
          existing,
        ]),
      {
        message:
          'body.tools[0].name: tool name "t" of provider "b" collides with provider "a"; give one of them a "prefix"',
      },
    );
  });
});

describe("validateProvider: mcp", () => {
  it("requires an http(s) url and bounds the timeout", () => {
    rejects(tenant({ id: "up", kind: "mcp" }), `${P}.url: is required`);
    rejects(tenant({ id: "up", kind: "mcp", url: "ws://u.test" }), `${P}.url: must be an http(s) URL`);
    rejects(
      tenant({ id: "up", kind: "mcp", url: "http://u.test", timeoutMs: -1 }),
      `${P}.timeoutMs: must be a whole number from 1 to 3600000`,
    );
  });

  it("takes an era of auto, session or stateless, and nothing else", () => {
    for (const era of ["auto", "session", "stateless"])
      assert.equal(
        (
          validateTenant(tenant({ id: "up", kind: "mcp", url: "http://u.test", era }))
            .providers[0] as McpProviderConfig
        ).era,
        era,
      );
    for (const era of ["2026-07-28", "Session", "", 1])
      rejects(
        tenant({ id: "up", kind: "mcp", url: "http://u.test", era }),
        `${P}.era: must be one of "auto", "session", "stateless"`,
      );
  });
});

describe("validateProvider: task marks", () => {
  const http = (tasks: unknown, tools = ["export_report", "export_csv", "ping"]) =>
    tenant({
      id: "api",
      kind: "http",
      tools: tools.map((name) => ({ name, url: `https://api.test/${name}` })),
      tasks,
    });
  const mcp = (tasks: unknown) => tenant({ id: "up", kind: "mcp", url: "https://u.test/mcp", tasks });
  const openapi = (tasks: unknown) =>
    tenant({ id: "pets", kind: "openapi", document: { openapi: "3.1.0" }, baseUrl: "https://p.test", tasks });

  it("takes marks by own name or pattern, and afterSeconds, on http, mcp and openapi providers", () => {
    const tasks = { tools: { export_report: "required", "export_*": "optional" }, afterSeconds: 30 };
    assert.deepEqual(validateTenant(http(tasks)).providers[0], {
      id: "api",
      kind: "http",
      tools: ["export_report", "export_csv", "ping"].map((name) => ({
        name,
        url: `https://api.test/${name}`,
      })),
      tasks,
    });
    // An upstream's tools are known only once listed, a document's once compiled: any name goes.
    const unknown = { tools: { "research-*": "required", "*": "optional" }, afterSeconds: 3600 };
    assert.deepEqual(validateTenant(mcp(unknown)).providers[0], {
      id: "up",
      kind: "mcp",
      url: "https://u.test/mcp",
      tasks: unknown,
    });
    assert.deepEqual(
      (validateTenant(openapi({ tools: { listPets: "optional" } })).providers[0] as never)["tasks"],
      {
        tools: { listPets: "optional" },
      },
    );
  });

  it("refuses a mark on a static provider, saying which kinds take them", () => {
    rejects(
      staticWith({ tasks: { tools: { "*": "required" } } }),
      `${P}.tasks: is not allowed: static providers have no tools to mark (task marks apply to http, openapi and mcp providers)`,
    );
  });

  it("refuses wildcard syntax other than *, and names outside the tool-name characters", () => {
    const rule =
      "must be a tool name or a pattern of 1–128 characters of A–Z a–z 0–9 _ . - where * matches any run of characters (no other wildcard syntax)";
    for (const key of ["export_?", "export_[a-z]", "{a,b}", "export report", "x".repeat(129), ""])
      rejects(mcp({ tools: { [key]: "required" } }), `${P}.tasks.tools.${key}: ${rule}`);
  });

  it("refuses a mark other than required or optional, and a bad afterSeconds", () => {
    for (const mark of ["forbidden", "Required", true, null])
      rejects(
        mcp({ tools: { research: mark } }),
        `${P}.tasks.tools.research: must be one of "required", "optional"`,
      );
    for (const afterSeconds of [0, -5, 3601, 1.5, "30"])
      rejects(mcp({ afterSeconds }), `${P}.tasks.afterSeconds: must be a whole number from 1 to 3600`);
    rejects(mcp("required"), `${P}.tasks: must be an object`);
    rejects(
      mcp({ tool: { research: "required" } }),
      `${P}.tasks.tool: unknown field "tool" (did you mean "tools"?)`,
    );
  });

  it("refuses an http provider's mark that names or matches none of its tools", () => {
    rejects(
      http({ tools: { export_pdf: "required" } }),
      `${P}.tasks.tools.export_pdf: names no tool of the provider (its tools: export_report, export_csv, ping)`,
    );
    rejects(
      http({ tools: { "import_*": "optional" } }),
      `${P}.tasks.tools.import_*: matches no tool of the provider (its tools: export_report, export_csv, ping)`,
    );
  });
});

describe("validateProvider: upstream auth", () => {
  const mcpAuth = (auth: unknown) => tenant({ id: "up", kind: "mcp", url: "https://u.test/mcp", auth });
  const cc = (extra: object = {}) => ({
    type: "client_credentials",
    tokenUrl: "https://as.test/token",
    clientId: "gw",
    clientSecret: "s3cret",
    ...extra,
  });

  it("accepts a bearer token on mcp providers and client credentials on http providers", () => {
    assert.deepEqual(validateTenant(mcpAuth({ type: "bearer", token: "abc.def" })).providers[0], {
      id: "up",
      kind: "mcp",
      url: "https://u.test/mcp",
      auth: { type: "bearer", token: "abc.def" },
    });
    const full = cc({ scope: "read write", resource: "https://api.test/", authMethod: "client_secret_post" });
    const http = validateTenant(
      tenant({ id: "api", kind: "http", auth: full, tools: [{ name: "t", url: "https://api.test/t" }] }),
    );
    assert.deepEqual((http.providers[0] as { auth?: unknown }).auth, full);
    assert.deepEqual(validateTenant(mcpAuth(cc({ tokenUrl: "http://10.0.0.5:8080/token" }))).providers[0], {
      id: "up",
      kind: "mcp",
      url: "https://u.test/mcp",
      auth: cc({ tokenUrl: "http://10.0.0.5:8080/token" }),
    });
  });

  it("requires a known type", () => {
    const types = 'must be one of "bearer", "client_credentials", "token_exchange", "user_oauth"';
    rejects(mcpAuth("token"), `${P}.auth: must be an object`);
    rejects(mcpAuth({ token: "t" }), `${P}.auth.type: ${types}`);
    rejects(mcpAuth({ type: "basic", token: "t" }), `${P}.auth.type: ${types}`);
  });

  it("checks the bearer token without echoing it", () => {
    rejects(mcpAuth({ type: "bearer" }), `${P}.auth.token: is required`);
    rejects(
      mcpAuth({ type: "bearer", token: "Bearer s3cret" }),
      `${P}.auth.token: must be visible ASCII characters without spaces`,
    );
  });

  it("checks the token endpoint, scope, resource and client authentication method", () => {
    rejects(mcpAuth(cc({ tokenUrl: "ftp://as.test/token" })), `${P}.auth.tokenUrl: must be an http(s) URL`);
    rejects(
      mcpAuth(cc({ tokenUrl: "https://gw:pw@as.test/token" })),
      `${P}.auth.tokenUrl: must not carry credentials; put them in clientId and clientSecret`,
    );
    rejects(
      mcpAuth(cc({ tokenUrl: "https://as.test/token#x" })),
      `${P}.auth.tokenUrl: must not include a fragment (RFC 6749 §3.2)`,
    );
    rejects(
      mcpAuth(cc({ scope: 'read "all"' })),
      `${P}.auth.scope: "read \\"all\\"" must be space-separated scope tokens (RFC 6749 §3.3)`,
    );
    rejects(
      mcpAuth(cc({ resource: "https://api.test/#frag" })),
      `${P}.auth.resource: "https://api.test/#frag" must be an absolute URI without a fragment (RFC 8707 §2)`,
    );
    rejects(
      mcpAuth(cc({ authMethod: "private_key_jwt" })),
      `${P}.auth.authMethod: must be one of "client_secret_basic", "client_secret_post"`,
    );
    rejects(mcpAuth(cc({ clientId: "" })), `${P}.auth.clientId: must be a non-empty string`);
  });

  it("lists auth among the known keys of http and mcp providers", () => {
    rejects(
      tenant({ id: "up", kind: "mcp", url: "https://u.test/mcp", credentials: {} }),
      `${P}.credentials: unknown field "credentials" (allowed: id, prefix, separator, kind, url, transport, roots, start, serverRequests, headers, timeoutMs, auth, referenceUser, pinning, era, tasks)`,
    );
    rejects(
      tenant({ id: "api", kind: "http", tools: [], auht: {} }),
      `${P}.auht: unknown field "auht" (did you mean "auth"?)`,
    );
  });
});

describe("validateTenant: per-user authorization (user_oauth)", () => {
  const perUser = (auth: object, over: object = {}) => ({
    id: "acme",
    auth: "oauth",
    providers: [
      { id: "gh", kind: "mcp", url: "https://mcp.gh.test/mcp", auth: { type: "user_oauth", ...auth } },
    ],
    ...over,
  });

  it("accepts the settings, and an external identity with a login client", () => {
    const out = validateTenant(
      perUser({ issuer: "https://gh.test", scope: "repo", registration: "dynamic" }),
    );
    assert.deepEqual((out.providers[0] as McpProviderConfig).auth, {
      type: "user_oauth",
      issuer: "https://gh.test",
      scope: "repo",
      registration: "dynamic",
    });
    const login = { clientId: "portico", clientSecret: "s3cret" };
    const external = {
      type: "external",
      issuer: "https://idp.test",
      jwksUrl: "https://idp.test/jwks",
      login,
    };
    assert.deepEqual(validateTenant(perUser({}, { identity: external })).identity, external);
  });

  it("refuses bad settings, never echoing the secret", () => {
    rejects(
      perUser({ registration: "magic" }),
      `${P}.auth.registration: must be one of "auto", "metadata_document", "dynamic", "preregistered"`,
    );
    rejects(
      perUser({ registration: "preregistered" }),
      `${P}.auth.clientId: is required with "registration": "preregistered"`,
    );
    rejects(
      perUser({ clientSecret: "s3cret" }),
      `${P}.auth.clientSecret: needs "clientId": a secret belongs to a pre-registered client`,
    );
    rejects(
      perUser({ issuer: "https://gh.test/?x=1" }),
      `${P}.auth.issuer: must have no query or fragment (RFC 8414 §2)`,
    );
    rejects(
      perUser({ tokenUrl: "https://gh.test/token" }),
      `${P}.auth.tokenUrl: unknown field "tokenUrl" (allowed: type, issuer, scope, registration, clientId, clientSecret)`,
    );
  });

  it("refuses tenants whose users the connect page cannot sign in", () => {
    rejects(
      perUser({}, { auth: "none" }),
      `${P}.auth: "user_oauth" acts for each signed-in user: the tenant needs "auth": "oauth"`,
    );
    const external = { type: "external", issuer: "https://idp.test", jwksUrl: "https://idp.test/jwks" };
    assert.throws(() => validateTenant(perUser({}, { identity: external }), "tenants[0]"), /identity\.login/);
  });
});
