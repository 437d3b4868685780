// The admin API under hostile input: every answer is a 4xx RFC 9457 problem (never a 500), invalid
// members are named by JSON Pointer (RFC 6901), nothing is half-saved or audited, Object.prototype
// stays clean, and no response ever carries a secret that was sent.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { OPERATIONS } from "../../src/admin/openapi/operations.js";
import {
  ADMIN_TOKEN,
  AdminClient,
  assertDocumented,
  concretePath,
  type AdminResponse,
  type CallOptions,
} from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { openSession } from "../support/rpc.js";

const BODY_LIMIT = 65_536;
const SEEDED_SECRETS = ["9f86d081884c7d659a2feaa0", "2c26b46b68ffc68ff99b453c"];
const WEATHER_URL = "http://127.0.0.1:9/weather";
const nonce = () => randomBytes(6).toString("hex");

let portico: RunningPortico;
let admin: AdminClient;
let sessionId: string;
let keyId: string;

before(async () => {
  const acme = staticTenant("acme");
  portico = await startPortico({
    tenants: [
      {
        ...acme,
        name: "Acme",
        providers: [
          ...acme.providers,
          {
            id: "wx",
            kind: "http",
            tools: [{ name: "get_weather", url: WEATHER_URL, headers: { "x-api-key": SEEDED_SECRETS[0]! } }],
            auth: { type: "bearer", token: SEEDED_SECRETS[1]! },
          },
        ],
      },
    ],
    redis: true,
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, PORTICO_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
  });
  admin = new AdminClient(portico.url);
  sessionId = await openSession(portico.mcpUrl("acme"));
  keyId = (await admin.post("/tenants/acme/api-keys", { name: "hostile" })).body.id;
});

after(async () => {
  await portico?.close();
});

// ---- helpers -------------------------------------------------------------------------------

/** The newest entry of each audit log: unchanged means nothing was written. */
async function auditHeads(): Promise<(string | undefined)[]> {
  const logs = ["/audit", "/tenants/acme/audit"];
  return Promise.all(logs.map(async (log) => (await admin.get(`${log}?limit=1`)).body.items[0]?.id));
}

/** Everything a bad write could touch. */
async function snapshot() {
  const tenant = await admin.get("/tenants/acme");
  return {
    tenant: tenant.body,
    etag: tenant.headers.get("etag"),
    providers: (await admin.get("/tenants/acme/providers?limit=200")).body,
    tenants: (await admin.get("/tenants?limit=200")).body.items.map((t: { id: string }) => t.id),
    keys: (await admin.get("/tenants/acme/api-keys?limit=200")).body.items.map((k: { id: string }) => k.id),
    session: (await admin.get(`/tenants/acme/sessions/${sessionId}`)).status,
    audit: await auditHeads(),
  };
}

interface Expect {
  readonly code?: string;
  readonly pointer?: string;
  readonly detail?: RegExp;
}

/** A problem+json answer with every RFC 9457 member and Portico's code. */
function assertProblem(res: AdminResponse, status: number | readonly number[], expect: Expect = {}): void {
  const statuses = typeof status === "number" ? [status] : status;
  const where = `${res.status} ${JSON.stringify(res.body)}`;
  assert.ok(statuses.includes(res.status), `expected ${statuses.join(" or ")}, got ${where}`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/problem\+json/, where);
  const body = res.body as Record<string, unknown>;
  for (const member of ["type", "title", "detail", "code"])
    assert.equal(typeof body[member], "string", `${member} in ${where}`);
  assert.equal(body.status, res.status, where);
  assert.match(String(body.code), /^PORTICO_ERR_ADMIN_/, where);
  if (expect.code) assert.equal(body.code, expect.code, where);
  if (expect.pointer !== undefined) {
    assert.equal(body.pointer, expect.pointer, where);
    assert.equal((body.errors as { pointer: string }[])[0]?.pointer, expect.pointer, where);
  }
  if (expect.detail) assert.match(String(body.detail), expect.detail, where);
}

/** Sends a bad request: the answer is the expected problem, and nothing changed or was audited. */
async function rejects(
  send: () => Promise<AdminResponse>,
  status: number | readonly number[],
  expect: Expect = {},
): Promise<AdminResponse> {
  const before = await snapshot();
  const res = await send();
  assertProblem(res, status, expect);
  assert.deepEqual(await snapshot(), before, "nothing was saved or audited");
  return res;
}

const post = (path: string, body: unknown, opts?: CallOptions) => () => admin.post(path, body, opts);
const put = (path: string, body: unknown, opts?: CallOptions) => () => admin.put(path, body, opts);
const patch = (path: string, body: unknown, opts?: CallOptions) => () => admin.patch(path, body, opts);
const raw = (method: string, path: string, text: string, headers?: Record<string, string>) => () =>
  admin.call(method, path, { raw: text, ...(headers ? { headers } : {}) });

/** A request over a socket of its own, the path sent byte for byte (fetch would resolve dot segments). */
function rawHttp(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<AdminResponse & { text: string }> {
  const { port } = new URL(portico.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: `/admin/v1${path}`,
        agent: false,
        headers: {
          authorization: `Bearer ${ADMIN_TOKEN}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          const h = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            if (value !== undefined) h.set(name, Array.isArray(value) ? value.join(", ") : value);
          let parsed: unknown;
          try {
            parsed = text === "" ? undefined : JSON.parse(text);
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const WRITE_OPS = OPERATIONS.filter((op) => op.body);
/** A concrete path of an operation, on acme's own resources. */
const pathOf = (op: (typeof OPERATIONS)[number]) =>
  concretePath(op, { tenant: "acme", provider: "docs", session: sessionId, key: keyId });

const httpProvider = (
  id: string,
  tool: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) => ({
  id,
  kind: "http",
  tools: [{ name: `tool_${id.replaceAll("-", "_")}`, url: "http://127.0.0.1:9/t", ...tool }],
  ...extra,
});

/** The current ETag of a provider. */
async function etagOf(path: string): Promise<string> {
  const res = await admin.get(path);
  assert.equal(res.status, 200);
  return res.headers.get("etag")!;
}

function deeplyNested(levels: number, open = "[", close = "]", leaf = "1"): string {
  return open.repeat(levels) + leaf + close.repeat(levels);
}

// ---- bodies --------------------------------------------------------------------------------

describe("bodies that are not a JSON object", () => {
  for (const op of WRITE_OPS)
    it(`${op.method.toUpperCase()} ${op.path}: malformed JSON is 400`, async () => {
      for (const text of ["{bad", '{"id": "x",}', "{", "nul", "{'id': 'x'}", '{"a":1}}'])
        await rejects(raw(op.method.toUpperCase(), pathOf(op), text), 400, {
          code: "PORTICO_ERR_ADMIN_MALFORMED",
          detail: /not valid JSON/,
        });
    });

  for (const op of WRITE_OPS)
    it(`${op.method.toUpperCase()} ${op.path}: an array, string, number, boolean or null is 4xx`, async () => {
      for (const text of ["[]", '[{"id":"x"}]', '"x"', "5", "true", "null"])
        await rejects(raw(op.method.toUpperCase(), pathOf(op), text), [400, 422]);
    });

  it("an empty body where one is required is 400", async () => {
    for (const op of WRITE_OPS.filter((o) => o.body?.optional !== true))
      await rejects(
        () => rawHttp(op.method.toUpperCase(), pathOf(op), { "content-type": "application/json" }),
        400,
        {
          code: "PORTICO_ERR_ADMIN_MALFORMED",
        },
      );
  });
});

describe("members of the wrong type or unknown", () => {
  const cases: [string, () => Promise<AdminResponse>, string][] = [
    ["id: 5", post("/tenants/acme/providers", { id: 5, kind: "static" }), "/id"],
    ['tools: "x"', post("/tenants/acme/providers", { id: "h1", kind: "http", tools: "x" }), "/tools"],
    ["tools: {}", post("/tenants/acme/providers", { id: "h1", kind: "http", tools: {} }), "/tools"],
    [
      'timeoutMs: "1"',
      post("/tenants/acme/providers", httpProvider("h1", { timeoutMs: "1" })),
      "/tools/0/timeoutMs",
    ],
    [
      'role: "system"',
      post("/tenants/acme/providers", {
        id: "s1",
        kind: "static",
        prompts: [{ name: "p", messages: [{ role: "system", text: "hi" }] }],
      }),
      "/prompts/0/messages/0/role",
    ],
    ["api key name: 5", post("/tenants/acme/api-keys", { name: 5 }), "/name"],
    ['expiresAt: "tomorrow"', post("/api-keys", { name: "k", expiresAt: "tomorrow" }), "/expiresAt"],
    [
      "expiresAt in the past",
      post("/api-keys", { name: "k", expiresAt: "2001-01-01T00:00:00Z" }),
      "/expiresAt",
    ],
    ["tenant auth: 5", patch("/tenants/acme", { auth: 5 }), "/auth"],
    ['tenant auth: "basic"', post("/tenants", { id: "t-auth", auth: "basic" }), "/auth"],
    ["tenant id: uppercase", post("/tenants", { id: "ACME2", auth: "none" }), "/id"],
    [
      "tenant name: 201 characters",
      post("/tenants", { id: "t-long", auth: "none", name: "n".repeat(201) }),
      "/name",
    ],
    ["provider patch prefix: 5", patch("/tenants/acme/providers/docs", { prefix: 5 }), "/prefix"],
    [
      "a secret of 8193 characters",
      post("/tenants/acme/providers", httpProvider("h1", { headers: { "x-k": "s".repeat(8193) } })),
      "/tools/0/headers/x-k",
    ],
    [
      "an empty secret",
      post("/tenants/acme/providers", httpProvider("h1", {}, { auth: { type: "bearer", token: "" } })),
      "/auth/token",
    ],
  ];
  for (const [name, send, pointer] of cases)
    it(`${name} is 422 at ${pointer}`, async () => {
      await rejects(send, 422, { code: "PORTICO_ERR_ADMIN_INVALID", pointer });
    });

  const unknown: [string, () => Promise<AdminResponse>, string][] = [
    ["top level", post("/tenants/acme/providers", { id: "s1", kind: "static", bogus: 1 }), "/bogus"],
    ["in a tool", post("/tenants/acme/providers", httpProvider("h1", { bogus: 1 })), "/tools/0/bogus"],
    [
      "in a prompt message",
      post("/tenants/acme/providers", {
        id: "s1",
        kind: "static",
        prompts: [{ name: "p", messages: [{ role: "user", text: "hi", bogus: true }] }],
      }),
      "/prompts/0/messages/0/bogus",
    ],
    [
      "in auth",
      post(
        "/tenants/acme/providers",
        httpProvider("h1", {}, { auth: { type: "bearer", token: "t", bogus: 1 } }),
      ),
      "/auth/bogus",
    ],
    [
      "in a tenant's provider",
      post("/tenants", { id: "t-nested", auth: "none", providers: [{ id: "a", kind: "static", bogus: 1 }] }),
      "/providers/0/bogus",
    ],
    ["in a tenant", post("/tenants", { id: "t-top", auth: "none", bogus: 1 }), "/bogus"],
    ["in a tenant patch", patch("/tenants/acme", { name: "x", bogus: 1 }), "/bogus"],
    ["in a provider patch", patch("/tenants/acme/providers/docs", { bogus: 1 }), "/bogus"],
    [
      "in a nested provider patch",
      patch("/tenants/acme/providers/wx", { auth: { bogus: 1 } }),
      "/auth/bogus",
    ],
    ["in a PUT", put("/tenants/acme/providers/docs", { id: "docs", kind: "static", bogus: 1 }), "/bogus"],
    ["in an API key", post("/tenants/acme/api-keys", { name: "k", bogus: 1 }), "/bogus"],
  ];
  for (const [name, send, pointer] of unknown)
    it(`an unknown member ${name} is 422 at ${pointer}`, async () => {
      const res = await rejects(send, 422, { code: "PORTICO_ERR_ADMIN_INVALID", pointer });
      assert.match(res.body.detail, /unknown field "bogus"/);
    });

  const marks: [string, () => Promise<AdminResponse>, string, RegExp][] = [
    [
      "task marks on a static provider",
      post("/tenants/acme/providers", { id: "s1", kind: "static", tasks: { tools: { "*": "required" } } }),
      "/tasks",
      /static providers have no tools to mark \(task marks apply to http, openapi and mcp providers\)/,
    ],
    [
      "a task mark with wildcard syntax other than *",
      post("/tenants/acme/providers", {
        id: "m1",
        kind: "mcp",
        url: "http://127.0.0.1:9/mcp",
        tasks: { tools: { "export_?": "required" } },
      }),
      "/tasks/tools/export_?",
      /no other wildcard syntax/,
    ],
    [
      'a task mark of "forbidden"',
      post("/tenants/acme/providers", httpProvider("h1", {}, { tasks: { tools: { tool_h1: "forbidden" } } })),
      "/tasks/tools/tool_h1",
      /must be one of "required", "optional"/,
    ],
    [
      "afterSeconds: 0",
      post("/tenants/acme/providers", httpProvider("h1", {}, { tasks: { afterSeconds: 0 } })),
      "/tasks/afterSeconds",
      /whole number from 1 to 3600/,
    ],
    [
      "an http provider's task mark naming none of its tools",
      post(
        "/tenants/acme/providers",
        httpProvider("h1", {}, { tasks: { tools: { "export_*": "optional" } } }),
      ),
      "/tasks/tools/export_*",
      /matches no tool of the provider \(its tools: tool_h1\)/,
    ],
    [
      "a patch marking a tool an http provider lacks",
      patch("/tenants/acme/providers/wx", { tasks: { tools: { get_forecast: "required" } } }),
      "/tasks/tools/get_forecast",
      /names no tool of the provider \(its tools: get_weather\)/,
    ],
  ];
  for (const [name, send, pointer, detail] of marks)
    it(`${name} is 422 at ${pointer}`, async () => {
      await rejects(send, 422, { code: "PORTICO_ERR_ADMIN_INVALID", pointer, detail });
    });

  it("an unknown provider kind is 422 at /kind", async () => {
    for (const kind of ["ftp", "", "STATIC", 5, null])
      await rejects(post("/tenants/acme/providers", { id: "k1", kind }), 422, { pointer: "/kind" });
    await rejects(post("/tenants/acme/providers", { id: "k1" }), 422, { pointer: "/kind" });
  });

  it("an unknown provider kind's detail names the kinds there are", async () => {
    const res = await rejects(post("/tenants/acme/providers", { id: "k1", kind: "ftp" }), 422);
    assert.match(res.body.detail, /"static", "http", "mcp", "openapi"/);
  });

  const URLS = [
    "not a url",
    "ftp://example.com/x",
    "http://user:pass@example.com/",
    "javascript:alert(1)",
    "",
    "http://",
  ];
  for (const url of URLS)
    it(`the URL ${JSON.stringify(url)} is 422 wherever a URL goes`, async () => {
      await rejects(post("/tenants/acme/providers", httpProvider("u1", { url })), 422, {
        pointer: "/tools/0/url",
      });
      await rejects(post("/tenants/acme/providers", { id: "u2", kind: "mcp", url }), 422, {
        pointer: "/url",
      });
      await rejects(patch("/tenants/acme/providers/wx", { tools: [{ name: "get_weather", url }] }), 422, {
        pointer: "/tools/0/url",
      });
      const auth = { type: "client_credentials", tokenUrl: url, clientId: "c", clientSecret: "s" };
      await rejects(post("/tenants/acme/providers", httpProvider("u3", {}, { auth })), 422, {
        pointer: "/auth/tokenUrl",
      });
    });
});

describe("size and media type", () => {
  it(`a body over PORTICO_BODY_LIMIT_BYTES (${BODY_LIMIT}) is 413`, async () => {
    const big = {
      id: "big",
      kind: "static",
      prompts: [{ name: "p", description: "x".repeat(100_000), messages: [{ role: "user", text: "hi" }] }],
    };
    await rejects(post("/tenants/acme/providers", big), 413, { code: "PORTICO_ERR_ADMIN_BODY_TOO_LARGE" });
    await rejects(raw("POST", "/tenants", "[".repeat(100_000)), 413);
    await rejects(patch("/tenants/acme", { name: "n".repeat(100_000) }), 413);
    assert.equal((await admin.get("/tenants/acme/providers/big")).status, 404);
  });

  it("a body that is not JSON is 415", async () => {
    const body = JSON.stringify({ id: "ct", kind: "static" });
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/xml",
      "multipart/form-data",
    ])
      for (const [method, path] of [
        ["POST", "/tenants/acme/providers"],
        ["PUT", "/tenants/acme/providers/docs"],
        ["PATCH", "/tenants/acme/providers/docs"],
        ["POST", "/tenants"],
      ] as const)
        await rejects(raw(method, path, body, { "content-type": type }), 415, {
          code: "PORTICO_ERR_ADMIN_CONTENT_TYPE",
        });
  });
});

// ---- path parameters -----------------------------------------------------------------------

describe("odd ids in the path: 4xx problem details, never a 500 or another resource", () => {
  const ODD: [label: string, encoded: string, todo?: string][] = [
    ["..%2F..%2Fetc", "..%2F..%2Fetc"],
    ["%2e%2e", "%2e%2e"],
    ["%2E%2E%2F%2E%2E%2Fetc", "%2E%2E%2F%2E%2E%2Fetc"],
    ["..", ".."],
    [".", "%2e"],
    ["a/b encoded", "a%2Fb"],
    ["a\\b encoded", "a%5Cb"],
    ["uppercase", "ACME"],
    ["unicode", "%C3%A9cole"],
    ["emoji", "%F0%9F%98%80"],
    ["NUL", "%00"],
    ["a space", "a%20b"],
    ["a newline", "a%0Ab"],
    ["a query in the id", "a%3Fb%3D1"],
    ["100 characters", "a".repeat(100)],
    ["200 characters", "a".repeat(200)],
    ["broken percent-encoding", "%ZZ"],
    ["invalid UTF-8", "%C3"],
  ];
  const routes = (id: string): [string, string, string?][] => [
    ["GET", `/tenants/${id}`],
    ["PATCH", `/tenants/${id}`, JSON.stringify({ name: "x" })],
    ["DELETE", `/tenants/${id}`],
    ["GET", `/tenants/${id}/providers`],
    ["GET", `/tenants/acme/providers/${id}`],
    ["PUT", `/tenants/acme/providers/${id}`, JSON.stringify({ id: "x", kind: "static" })],
    ["DELETE", `/tenants/acme/providers/${id}`],
    ["POST", `/tenants/acme/providers/${id}/refresh`],
    ["GET", `/tenants/acme/sessions/${id}`],
    ["DELETE", `/tenants/acme/sessions/${id}`],
    ["DELETE", `/tenants/acme/api-keys/${id}`],
    ["DELETE", `/api-keys/${id}`],
    ["GET", `/tenants/acme/users/${id}`],
    ["PATCH", `/tenants/acme/users/${id}`, JSON.stringify({ email: "a@b.example" })],
    ["DELETE", `/tenants/acme/users/${id}`],
    ["GET", `/tenants/acme/clients/${id}`],
    ["DELETE", `/tenants/acme/clients/${id}`],
    ["DELETE", `/tenants/acme/grants/${id}`],
    ["GET", `/tenants/${id}/identity`],
    ["PUT", `/tenants/${id}/identity`, JSON.stringify({ type: "local" })],
  ];
  for (const [label, encoded, todo] of ODD)
    it(
      `${label} as tenant, provider, session, key, user, client and grant id`,
      todo ? { todo } : {},
      async () => {
        const before = await snapshot();
        for (const [method, path, body] of routes(encoded)) {
          const res = await rawHttp(method, path, {}, body);
          const where = `${method} ${path} → ${res.status} ${res.text.slice(0, 300)}`;
          assert.ok(res.status >= 400 && res.status < 500, where);
          assertProblem(res, res.status);
          assertDocumented(method, path, res);
        }
        assert.deepEqual(await snapshot(), before, "nothing was changed");
      },
    );
});

// ---- query parameters ----------------------------------------------------------------------

describe("query parameters", () => {
  it("an unknown query parameter is 400 and nothing is saved", async () => {
    const fresh = { id: "q-new", kind: "static" };
    for (const query of ["dry_run=true", "dryrun=true", "DryRun=true", "dryRun=yes", "dryRun=1", "dryRun="])
      await rejects(post(`/tenants/acme/providers?${query}`, fresh), 400, {
        code: "PORTICO_ERR_ADMIN_MALFORMED",
      });
    await rejects(put("/tenants/acme/providers/docs?dry_run=true", { id: "docs", kind: "static" }), 400);
    await rejects(() => admin.delete("/tenants/acme/providers/docs?force=true"), 400);
    await rejects(() => admin.delete(`/tenants/acme/sessions/${sessionId}?x=1`), 400);
    await rejects(() => admin.get("/tenants/acme/providers?foo=1"), 400, {
      detail: /Unknown query parameter "foo"/,
    });
    assert.equal((await admin.get("/tenants/acme/providers/q-new")).status, 404);
  });

  const LISTS = OPERATIONS.filter((op) => op.parameters?.includes("limit"));
  for (const op of LISTS)
    it(`GET ${op.path}: limit and cursor out of range are 400`, async () => {
      const path = pathOf(op);
      for (const query of [
        "limit=0",
        "limit=-1",
        "limit=201",
        "limit=abc",
        "limit=1.5",
        "limit=1e3",
        "limit=",
        "limit=1&limit=2",
        "limit=99999999999999999999",
        "cursor=garbage",
        "cursor=a.b",
        "cursor=a.b.c",
        "cursor=",
        `cursor=${"a".repeat(600)}`,
      ])
        await rejects(() => admin.get(`${path}?${query}`), 400, { code: "PORTICO_ERR_ADMIN_MALFORMED" });
    });

  it("a cursor is good only for the list that issued it, unaltered", async () => {
    const first = await admin.get("/tenants/acme/providers?limit=1");
    const cursor: string = first.body.nextCursor;
    assert.ok(cursor, "two providers, one per page: a next page");
    assert.equal((await admin.get(`/tenants/acme/providers?limit=1&cursor=${cursor}`)).status, 200);
    for (const path of ["/tenants", "/tenants/acme/api-keys", "/tenants/acme/audit", "/audit", "/api-keys"])
      await rejects(() => admin.get(`${path}?cursor=${cursor}`), 400, { detail: /Invalid cursor/ });
    const [body, mac] = cursor.split(".") as [string, string];
    const forged = `${Buffer.from("999999", "utf8").toString("base64url")}.${mac}`;
    const flipped = `${body}.${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`;
    for (const bad of [forged, flipped, `${cursor}x`])
      await rejects(() => admin.get(`/tenants/acme/providers?cursor=${encodeURIComponent(bad)}`), 400);
  });
});

// ---- conflicts and preconditions -----------------------------------------------------------

describe("conflicts", () => {
  it("creating a tenant that exists is 409 and leaves it as it was", async () => {
    const res = await rejects(post("/tenants", { id: "acme", auth: "oauth", name: "Hijacked" }), 409, {
      code: "PORTICO_ERR_ADMIN_CONFLICT",
    });
    assert.match(res.body.detail, /"acme" already exists/);
    assert.equal((await admin.get("/tenants/acme")).body.name, "Acme");
  });

  it("a provider id that is taken is 409, on create and in a new tenant", async () => {
    await rejects(post("/tenants/acme/providers", { id: "docs", kind: "static" }), 409, { detail: /"docs"/ });
    await rejects(
      post("/tenants", {
        id: "t-dup",
        auth: "none",
        providers: [
          { id: "a", kind: "static" },
          { id: "a", kind: "static" },
        ],
      }),
      409,
    );
    assert.equal((await admin.get("/tenants/t-dup")).status, 404);
  });

  const collisions: [string, () => Promise<AdminResponse>, string][] = [
    [
      "a prompt name",
      post("/tenants/acme/providers", {
        id: "docs-2",
        kind: "static",
        prompts: [{ name: "code-review", messages: [{ role: "user", text: "x" }] }],
      }),
      "docs-2",
    ],
    ["a tool name", post("/tenants/acme/providers", httpProvider("wx-2", { name: "get_weather" })), "wx-2"],
    [
      "a prefixed tool name",
      post(
        "/tenants/acme/providers",
        httpProvider("wx-3", { name: "weather" }, { prefix: "get", separator: "_" }),
      ),
      "wx-3",
    ],
    [
      "a resource URI",
      post("/tenants/acme/providers", {
        id: "docs-3",
        kind: "static",
        resources: [{ uri: "perf://hello", name: "again", text: "again" }],
      }),
      "docs-3",
    ],
  ];
  for (const [what, send, id] of collisions)
    it(`${what} another provider serves is 409 naming both providers, and what fixes it`, async () => {
      const res = await rejects(send, 409, { code: "PORTICO_ERR_ADMIN_CONFLICT" });
      assert.match(res.body.detail, new RegExp(`"${id}"`));
      assert.match(res.body.detail, /"(docs|wx)"/);
      if (what === "a resource URI") {
        // A prefix does not rename URIs: the advice is what does.
        assert.doesNotMatch(res.body.detail, /give it (a|another) "prefix"/);
        assert.match(res.body.detail, /not resource URIs: remove the resource from one of the providers/);
      } else assert.match(res.body.detail, /give one of them a "prefix"/);
    });

  it("a replace or patch that collides is 409 naming both, and changes nothing", async () => {
    const path = "/tenants/acme/providers/coll";
    assert.equal(
      (await admin.post("/tenants/acme/providers", httpProvider("coll", { name: "mine" }))).status,
      201,
    );
    for (const send of [
      put(path, httpProvider("coll", { name: "get_weather" })),
      patch(path, { tools: [{ name: "get_weather", url: "http://127.0.0.1:9/t" }] }),
    ]) {
      const res = await rejects(send, 409);
      assert.match(res.body.detail, /"coll"/);
      assert.match(res.body.detail, /"wx"/);
    }
  });
});

describe("If-Match", () => {
  it("a stale ETag is 412 on PUT, PATCH and DELETE of a provider, and changes nothing", async () => {
    const path = "/tenants/acme/providers/docs";
    const current = await etagOf(path);
    for (const stale of ['"stale"', `W/${current}`, '"a", "b"', current.slice(0, -2) + '"'])
      for (const send of [
        put(path, { id: "docs", kind: "static" }, { headers: { "if-match": stale } }),
        patch(path, { prefix: "p" }, { headers: { "if-match": stale } }),
        () => admin.delete(path, { headers: { "if-match": stale } }),
      ])
        await rejects(send, 412, { code: "PORTICO_ERR_ADMIN_PRECONDITION_FAILED" });
    assert.equal(await etagOf(path), current);
  });

  it("an ETag made stale by another write is 412", async () => {
    const path = "/tenants/acme/providers/etag-p";
    assert.equal((await admin.post("/tenants/acme/providers", { id: "etag-p", kind: "static" })).status, 201);
    const read = await etagOf(path);
    assert.equal((await admin.patch(path, { prefix: "v2" }, { headers: { "if-match": read } })).status, 200);
    await rejects(
      put(path, { id: "etag-p", kind: "static", prefix: "v3" }, { headers: { "if-match": read } }),
      412,
    );
    await rejects(patch(path, { prefix: "v3" }, { headers: { "if-match": read } }), 412);
    assert.equal((await admin.get(path)).body.prefix, "v2");
  });

  it("a stale ETag is 412 on PATCH of a tenant", async () => {
    await rejects(patch("/tenants/acme", { name: "Renamed" }, { headers: { "if-match": '"stale"' } }), 412);
  });
});

describe("changes that are not allowed", () => {
  const cases: [string, () => Promise<AdminResponse>, string][] = [
    ["PATCH a new id", patch("/tenants/acme/providers/docs", { id: "renamed" }), "/id"],
    ["PATCH the id away", patch("/tenants/acme/providers/docs", { id: null }), "/id"],
    ["PATCH a new kind", patch("/tenants/acme/providers/docs", { kind: "http" }), "/kind"],
    ["PATCH the kind away", patch("/tenants/acme/providers/docs", { kind: null }), "/kind"],
    ["PUT another id", put("/tenants/acme/providers/docs", { id: "renamed", kind: "static" }), "/id"],
    ["PUT another kind", put("/tenants/acme/providers/docs", httpProvider("docs")), "/kind"],
    [
      'create with {"set": true} for a header',
      post("/tenants/acme/providers", httpProvider("set-1", { headers: { "x-k": { set: true } } })),
      "/tools/0/headers/x-k",
    ],
    [
      'create with {"set": true} for a token',
      post(
        "/tenants/acme/providers",
        httpProvider("set-2", {}, { auth: { type: "bearer", token: { set: true } } }),
      ),
      "/auth/token",
    ],
    [
      'PUT {"set": true} for a header never stored',
      put(
        "/tenants/acme/providers/wx",
        httpProvider("wx", { name: "get_weather", url: WEATHER_URL, headers: { "x-new": { set: true } } }),
      ),
      "/tools/0/headers/x-new",
    ],
    [
      'PATCH {"set": true} for a client secret never stored',
      patch("/tenants/acme/providers/wx", {
        auth: {
          type: "client_credentials",
          tokenUrl: "http://127.0.0.1:9/token",
          clientId: "c",
          clientSecret: { set: true },
        },
      }),
      "/auth/clientSecret",
    ],
    [
      'create an mcp provider with {"set": true} for a header',
      post("/tenants/acme/providers", {
        id: "set-3",
        kind: "mcp",
        url: "http://127.0.0.1:9/mcp",
        headers: { a: { set: true } },
      }),
      "/headers/a",
    ],
    [
      'send {"set": false}',
      post("/tenants/acme/providers", httpProvider("set-4", { headers: { "x-k": { set: false } } })),
      "/tools/0/headers/x-k",
    ],
  ];
  for (const [name, send, pointer] of cases)
    it(`${name} is 422 at ${pointer}`, async () => {
      await rejects(send, 422, { code: "PORTICO_ERR_ADMIN_INVALID", pointer });
    });
});

// ---- exhaustion ----------------------------------------------------------------------------

describe("sizes and shapes meant to exhaust", () => {
  it("thousands of request headers are refused (431) and the server goes on", async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) headers[`x-h-${i}`] = "value";
    const res = await rawHttp("GET", "/tenants/acme/providers", headers);
    assert.equal(res.status, 431);
    assert.equal((await admin.get("/tenants/acme")).status, 200);
  });

  it("more than 64 upstream headers are 422", async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 65; i++) headers[`x-h-${i}`] = "v";
    await rejects(post("/tenants/acme/providers", httpProvider("many-h", { headers })), 422, {
      pointer: "/tools/0/headers",
    });
  });

  it("thousands of unknown members are 422", async () => {
    const body: Record<string, unknown> = { id: "many-f", kind: "static" };
    for (let i = 0; i < 5000; i++) body[`f${i}`] = i;
    await rejects(post("/tenants/acme/providers", body), 422, { pointer: "/f0" });
    await rejects(patch("/tenants/acme", { name: "x", ...body }), 422);
  });

  const deep = deeplyNested(10_000);
  it("10 000 levels of nesting where a typed member goes are 4xx", async () => {
    await rejects(raw("POST", "/tenants/acme/providers", deep), [400, 422]);
    await rejects(
      raw("POST", "/tenants/acme/providers", `{"id":"deep","kind":"static","prompts":${deep}}`),
      422,
    );
    await rejects(raw("POST", "/tenants", `{"id":"deep","auth":"none","providers":${deep}}`), 422);
    await rejects(raw("POST", "/tenants/acme/api-keys", `{"name":${deep}}`), 422);
    await rejects(raw("PATCH", "/tenants/acme/providers/docs", `{"prompts":${deep}}`), 422);
    assert.equal((await admin.get("/tenants/acme")).status, 200);
  });

  it("10 000 levels of nesting in a free-form member (tool annotations, inputSchema) are 422", async () => {
    const tool = (member: string) =>
      `{"id":"deep","kind":"http","tools":[{"name":"a","url":"http://127.0.0.1:9/",${member}}]}`;
    for (const member of [
      `"annotations":{"a":${deep}}`,
      `"inputSchema":{"type":"object","properties":{"a":${deep}}}`,
    ]) {
      await rejects(raw("POST", "/tenants/acme/providers", tool(member)), 422, { detail: /nests deeper/ });
      await rejects(raw("POST", "/tenants/acme/providers?dryRun=true", tool(member)), 422);
    }
  });

  it("10 000 levels of nested objects in a merge patch are 422", async () => {
    const nested = deeplyNested(10_000, '{"a":', "}");
    await rejects(raw("PATCH", "/tenants/acme/providers/docs", `{"x":${nested}}`), 422, {
      detail: /nests deeper/,
    });
    await rejects(raw("PATCH", "/tenants/acme", `{"name":${nested}}`), 422);
  });

  it("the server still serves after all that", async () => {
    assert.equal((await admin.get("/tenants/acme/providers")).status, 200);
  });
});

// ---- prototype pollution -------------------------------------------------------------------

describe("prototype pollution", () => {
  const clean = () => {
    assert.equal(({} as Record<string, unknown>).polluted, undefined, "Object.prototype is clean");
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), PROTO_KEYS);
  };
  const PROTO_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();

  it('"__proto__" and "constructor" are refused where members are typed', async () => {
    const payloads = [`"__proto__":{"polluted":1}`, `"constructor":{"prototype":{"polluted":1}}`];
    for (const member of payloads) {
      const name = member.slice(1, member.indexOf('"', 1));
      await rejects(raw("POST", "/tenants/acme/providers", `{"id":"pp","kind":"static",${member}}`), 422, {
        pointer: `/${name}`,
      });
      await rejects(raw("POST", "/tenants", `{"id":"pp","auth":"none",${member}}`), 422, {
        pointer: `/${name}`,
      });
      await rejects(raw("PATCH", "/tenants/acme", `{"name":"x",${member}}`), 422, { pointer: `/${name}` });
      await rejects(raw("POST", "/tenants/acme/api-keys", `{"name":"x",${member}}`), 422, {
        pointer: `/${name}`,
      });
      await rejects(
        raw("PUT", "/tenants/acme/providers/docs", `{"id":"docs","kind":"static",${member}}`),
        422,
        {
          pointer: `/${name}`,
        },
      );
      await rejects(
        raw(
          "POST",
          "/tenants/acme/providers",
          `{"id":"pp","kind":"static","prompts":[{"name":"p","messages":[{"role":"user","text":"t",${member}}]}]}`,
        ),
        422,
        { pointer: `/prompts/0/messages/0/${name}` },
      );
      clean();
    }
    await rejects(() => admin.get("/tenants/acme/providers?__proto__[polluted]=1"), 400);
    await rejects(() => admin.get("/tenants/acme/providers?constructor=1"), 400);
    clean();
  });

  it("in free-form members they stay plain data", async () => {
    const body = `{"id":"pp-free","kind":"http","tools":[{"name":"pp_free","url":"http://127.0.0.1:9/","annotations":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}},"headers":{"__proto__":"v1","constructor":"v2"}}]}`;
    const res = await admin.call("POST", "/tenants/acme/providers", { raw: body });
    assert.equal(res.status, 201);
    clean();
    const got = await admin.get("/tenants/acme/providers/pp-free");
    const tool = got.body.tools[0];
    assert.ok(Object.hasOwn(tool.annotations, "__proto__"), "kept as an own member");
    assert.deepEqual(Object.keys(tool.headers).sort(), ["__proto__", "constructor"]);
    assert.equal(Object.getPrototypeOf(tool.annotations), Object.prototype);
    assert.equal((await admin.delete("/tenants/acme/providers/pp-free")).status, 204);
    clean();
  });

  it('a merge patch with "__proto__" is refused like any unknown member', async () => {
    await rejects(raw("PATCH", "/tenants/acme/providers/docs", `{"__proto__":{"prefix":"zz"}}`), 422, {
      pointer: "/__proto__",
    });
    clean();
  });
});

// ---- secrets -------------------------------------------------------------------------------

describe("secrets sent are never sent back", () => {
  /** Every secret sent so far; no response may carry one, nor any 8 characters of one. */
  const sent = new Set<string>(SEEDED_SECRETS);
  const check = (what: string, res: AdminResponse) => {
    const text = JSON.stringify(res.body ?? "") + JSON.stringify([...res.headers]);
    for (const s of sent)
      for (let i = 0; i + 8 <= s.length; i++)
        assert.ok(!text.includes(s.slice(i, i + 8)), `${what} (${res.status}) echoes secret ${s}: ${text}`);
  };
  const fresh = (bytes = 12) => {
    const s = randomBytes(bytes).toString("hex");
    sent.add(s);
    return s;
  };

  it("through create, GET, list, PUT, PATCH, dry runs, catalog, tenants and audit", async () => {
    const path = "/tenants/acme/providers/sec";
    const create = await admin.post(
      "/tenants/acme/providers",
      httpProvider(
        "sec",
        { headers: { "x-api-key": fresh() } },
        { auth: { type: "bearer", token: fresh() } },
      ),
    );
    assert.equal(create.status, 201);
    check("create", create);
    assert.deepEqual(create.body.auth.token, { set: true });
    check("GET", await admin.get(path));
    check("list", await admin.get("/tenants/acme/providers?limit=200"));

    const put1 = await admin.put(
      path,
      httpProvider(
        "sec",
        { headers: { "x-api-key": { set: true }, "x-other": fresh() } },
        { auth: { type: "bearer", token: fresh() } },
      ),
    );
    assert.equal(put1.status, 200);
    check("PUT", put1);
    const patch1 = await admin.patch(path, {
      auth: {
        type: "client_credentials",
        tokenUrl: "http://127.0.0.1:9/token",
        clientId: "c",
        clientSecret: fresh(),
        token: null,
      },
    });
    assert.equal(patch1.status, 200);
    check("PATCH", patch1);
    assert.deepEqual(patch1.body.auth.clientSecret, { set: true });

    const dry = [
      await admin.post(
        "/tenants/acme/providers?dryRun=true",
        httpProvider("sec-dry", { headers: { "x-k": fresh() } }),
      ),
      await admin.put(`${path}?dryRun=true`, httpProvider("sec", { headers: { "x-k": fresh() } })),
      await admin.patch(`${path}?dryRun=true`, { auth: { clientSecret: fresh() } }),
      await admin.post("/tenants/acme/providers?dryRun=true", {
        id: "sec-mcp",
        kind: "mcp",
        url: "http://127.0.0.1:9/mcp",
        headers: { "x-k": fresh() },
        auth: { type: "bearer", token: fresh() },
      }),
    ];
    for (const res of dry) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      check("dry run", res);
    }

    const tenant = await admin.post("/tenants", {
      id: `sec-${nonce()}`,
      auth: "none",
      providers: [
        httpProvider("p", { headers: { "x-k": fresh() } }, { auth: { type: "bearer", token: fresh() } }),
      ],
    });
    assert.equal(tenant.status, 201);
    check("tenant create", tenant);
    check("tenant's providers", await admin.get(`/tenants/${tenant.body.id}/providers`));
    assert.equal((await admin.delete(`/tenants/${tenant.body.id}`)).status, 204);

    check("catalog", await admin.get("/tenants/acme/catalog"));
    check("tenant audit", await admin.get("/tenants/acme/audit?limit=200"));
    check("platform audit", await admin.get("/audit?limit=200"));
    assert.equal((await admin.delete(path)).status, 204);
    check("audit after delete", await admin.get("/tenants/acme/audit?limit=5"));
  });

  it("through users, clients and identity settings, their errors and the audit", async () => {
    const username = `sec-${nonce()}`;
    check("user create", await admin.post("/tenants/acme/users", { username, password: fresh() }));
    check("user patch", await admin.patch(`/tenants/acme/users/${username}`, { password: fresh() }));
    check("user duplicate", await admin.post("/tenants/acme/users", { username, password: fresh() }));
    check(
      "user unknown member",
      await admin.post("/tenants/acme/users", { username: "x", password: fresh(), role: fresh() }),
    );
    check(
      "user bad username",
      await admin.post("/tenants/acme/users", { username: fresh(), password: fresh(), x: 1 }),
    );
    check(
      "user short password",
      await admin.post("/tenants/acme/users", { username: "y", password: fresh(3) }),
    );
    check("users", await admin.get("/tenants/acme/users?limit=200"));

    const client = await admin.post("/tenants/acme/clients", { redirect_uris: ["https://app.example/cb"] });
    assert.equal(client.status, 201);
    sent.add(client.body.client_secret);
    check("client", await admin.get(`/tenants/acme/clients/${client.body.client_id}`));
    check("clients", await admin.get("/tenants/acme/clients?limit=200"));

    const identity = { type: "oidc", issuer: "https://idp.example", clientId: "portico" };
    check("identity", await admin.put("/tenants/acme/identity", { ...identity, clientSecret: fresh() }));
    check(
      "identity kept",
      await admin.put("/tenants/acme/identity", { ...identity, clientSecret: { set: true } }),
    );
    check(
      "identity bad",
      await admin.put("/tenants/acme/identity", { ...identity, clientSecret: fresh(), x: fresh() }),
    );
    check(
      "identity bad issuer",
      await admin.put("/tenants/acme/identity", { ...identity, issuer: "ftp://a", clientSecret: fresh() }),
    );
    check("identity GET", await admin.get("/tenants/acme/identity"));
    check("tenant", await admin.get("/tenants/acme"));
    check("tenant audit", await admin.get("/tenants/acme/audit?limit=200"));
    check("platform audit", await admin.get("/audit?limit=200"));
    assert.equal((await admin.put("/tenants/acme/identity", { type: "local" })).status, 200);
    assert.equal((await admin.delete(`/tenants/acme/clients/${client.body.client_id}`)).status, 204);
    assert.equal((await admin.delete(`/tenants/acme/users/${username}`)).status, 204);
  });

  it("through 4xx answers to bodies that carry secrets", async () => {
    const s = fresh();
    const withSecret = (extra: Record<string, unknown>) =>
      httpProvider(
        "sec-err",
        { headers: { "x-api-key": s } },
        { auth: { type: "bearer", token: s }, ...extra },
      );
    const answers = [
      await admin.post("/tenants/acme/providers", withSecret({ bogus: 1 })),
      await admin.post("/tenants/acme/providers", { ...withSecret({}), id: "wx" }),
      await admin.post(
        "/tenants/acme/providers",
        httpProvider("sec-err", { name: "get_weather", headers: { "x-k": s } }),
      ),
      await admin.put("/tenants/acme/providers/wx", withSecret({ id: "wx" }), {
        headers: { "if-match": '"stale"' },
      }),
      await admin.patch("/tenants/acme/providers/wx", { auth: { token: s }, kind: "mcp" }),
      await admin.post(
        "/tenants/acme/providers",
        httpProvider(
          "sec-err",
          { headers: { "x-k": s, Authorization: s } },
          { auth: { type: "bearer", token: s } },
        ),
      ),
      await admin.post("/tenants/acme/providers?dry_run=true", withSecret({})),
      await admin.post("/tenants/acme/providers", {
        ...withSecret({}),
        auth: { type: "bearer", token: s, extra: s },
      }),
    ];
    for (const res of answers) {
      assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${JSON.stringify(res.body)}`);
      check("error", res);
    }
  });

  it("through the 400 for malformed JSON", async () => {
    const s = fresh(5);
    for (const text of [
      `{"id":"x","kind":"http","auth":{"type":"bearer","token":'${s}'}}`,
      // Never a bare hex string: one of digits and an "e" (1 in 20 or so) is a valid JSON number.
      `{"id":"x","kind":"http","auth":{"type":"bearer","token":x${s}}}`,
      `secret ${s}`,
    ]) {
      const res = await admin.call("POST", "/tenants/acme/providers", { raw: text });
      assert.equal(res.status, 400);
      check("malformed JSON", res);
    }
  });
});

// ---- routes --------------------------------------------------------------------------------

describe("routes that do not exist", () => {
  it("an unknown path is 404 and a known path with another method 405 with Allow, both problems", async () => {
    assertProblem(await admin.get("/nope"), 404);
    assertProblem(await admin.get("/tenants/acme/nope"), 404);
    const put405 = await admin.put("/tenants", { id: "x", auth: "none" });
    assertProblem(put405, 405);
    assert.equal(put405.headers.get("allow"), "GET, POST");
    assertProblem(await admin.post("/tenants/acme/catalog", {}), 405);
  });
});
