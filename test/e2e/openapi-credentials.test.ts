// An `openapi` provider's credentials (docs/openapi.md, "Credentials"): one per security scheme of
// its document, each call carrying those of the first of its operation's requirements they meet —
// an apiKey in a header, the query or a cookie, http bearer or basic (a Swagger 2.0 document's
// securityDefinitions too). A key never shows in a result; a save naming a scheme the document
// lacks, or a credential missing a member, is refused at that field; secrets are write-only and
// stay where they were saved for: a document refreshed to call another server has that operation
// disabled until an admin saves the provider again with its secrets.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import Fastify, { type FastifyInstance } from "fastify";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

interface Seen {
  readonly url: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

const KEY = "query-key-9!";
const TOKEN = "bearer-token-7!";

let api: FastifyInstance;
let apiUrl: string;
let other: FastifyInstance;
let otherUrl: string;
const seen: Seen[] = [];
const otherSeen: Seen[] = [];
/** What GET /openapi.json serves: the document's server URL is set by each test. */
let servedServer = "";
let portico: RunningPortico;
let admin: AdminClient;
let rc: RecordingClient;

const ok = { 200: { description: "ok", content: { "application/json": { schema: { type: "object" } } } } };
const op = (operationId: string, security?: unknown[], parameters: unknown[] = []) => ({
  get: { operationId, ...(security && { security }), parameters, responses: ok },
});

/** An OpenAPI 3.1 document with every scheme type Portico sends, and operations needing each. */
const document = (server?: string) => ({
  openapi: "3.1.0",
  info: { title: "keys", version: "1" },
  ...(server !== undefined && { servers: [{ url: server }] }),
  components: {
    securitySchemes: {
      inHeader: { type: "apiKey", in: "header", name: "X-Api-Key" },
      inQuery: { type: "apiKey", in: "query", name: "key" },
      inCookie: { type: "apiKey", in: "cookie", name: "session" },
      bearer: { type: "http", scheme: "bearer" },
      digest: { type: "http", scheme: "digest" },
    },
  },
  // Every operation needs the header key unless it says otherwise.
  security: [{ inHeader: [] }],
  paths: {
    "/default": op("byDefault"),
    "/query": op("inQuery", [{ inQuery: [] }], [{ name: "key", in: "query", schema: { type: "string" } }]),
    "/cookie": op("inCookie", [{ inCookie: [] }]),
    "/bearer": op("withBearer", [{ bearer: [] }]),
    "/either": op("eitherOne", [{ digest: [] }, { bearer: [], inQuery: [] }]),
    "/open": op("open", []),
    "/fails": op("fails", [{ inQuery: [] }]),
    "/echo": op("echo", [{ inQuery: [] }]),
  },
});

/** A Swagger 2.0 document whose one operation needs http basic. */
const swagger = {
  swagger: "2.0",
  info: { title: "basic", version: "1" },
  securityDefinitions: { login: { type: "basic" } },
  paths: {
    "/basic": {
      get: { operationId: "withBasic", security: [{ login: [] }], responses: { 200: { description: "ok" } } },
    },
  },
};

async function recording(into: Seen[]): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  app.get("/openapi.json", async () => document(servedServer));
  app.get("/fails", async (req, reply) =>
    // An error page that echoes the request, as debug pages do.
    reply.code(500).send(`failed: ${req.url}`),
  );
  // An API that echoes its query, as a `next` link does.
  app.get("/echo", async (req) => ({ next: `${req.url}&page=2` }));
  app.get("/*", async (req) => {
    into.push({ url: req.url, headers: { ...req.headers } });
    return { ok: true };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

before(async () => {
  ({ app: api, url: apiUrl } = await recording(seen));
  ({ app: other, url: otherUrl } = await recording(otherSeen));
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [
          {
            id: "keys",
            kind: "openapi",
            document: document(),
            baseUrl: apiUrl,
            credentials: {
              inHeader: { value: "header-key" },
              inQuery: { value: KEY },
              inCookie: { value: "cookie value" },
              bearer: { token: TOKEN },
            },
          },
          {
            id: "basic",
            kind: "openapi",
            document: swagger,
            baseUrl: apiUrl,
            credentials: { login: { username: "ann", password: "pa:ss" } },
          },
        ],
      },
    ],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  admin = new AdminClient(portico.url);
  rc = await connectClient(portico.mcpUrl("acme"));
});
after(async () => {
  await rc?.client.close();
  await portico?.close();
  await api?.close();
  await other?.close();
});

const call = async (name: string, args: Record<string, unknown> = {}) => {
  const result = await rc.client.callTool({ name, arguments: args });
  return { result, last: seen[seen.length - 1]! };
};
const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

describe("each operation carries the credentials its requirements name", () => {
  it("the document's default requirement: the header key, and nothing else", async () => {
    const { last } = await call("byDefault");
    assert.equal(last.url, "/default");
    assert.equal(last.headers["x-api-key"], "header-key");
    assert.equal(last.headers.authorization, undefined);
    assert.equal(last.headers.cookie, undefined);
  });

  it("a key in the query, which the model is not asked for and cannot override", async () => {
    const tool = (await rc.client.listTools()).tools.find((t) => t.name === "inQuery")!;
    assert.deepEqual(tool.inputSchema.properties ?? {}, {}, "the key parameter is the provider's");
    const { last } = await call("inQuery", { key: "from-the-model" });
    assert.equal(last.url, `/query?key=${encodeURIComponent(KEY)}`);
    assert.equal(last.headers["x-api-key"], undefined, "its own requirement replaces the default");
  });

  it("a key in a cookie, and a bearer token", async () => {
    assert.equal((await call("inCookie")).last.headers.cookie, "session=cookie%20value");
    assert.equal((await call("withBearer")).last.headers.authorization, `Bearer ${TOKEN}`);
  });

  it("the first alternative the credentials meet, every scheme of it; none for an open operation", async () => {
    const { last } = await call("eitherOne");
    assert.equal(last.headers.authorization, `Bearer ${TOKEN}`, "digest cannot be sent: the next one");
    assert.equal(last.url, `/either?key=${encodeURIComponent(KEY)}`);
    const open = (await call("open")).last;
    assert.equal(open.headers["x-api-key"], undefined);
    assert.equal(open.headers.authorization, undefined);
  });

  it("http basic from a Swagger 2.0 document's securityDefinitions", async () => {
    const { last } = await call("withBasic");
    assert.equal(last.headers.authorization, `Basic ${Buffer.from("ann:pa:ss").toString("base64")}`);
  });

  it("never shows a key in a result: an error page echoing the URL is redacted", async () => {
    const { result } = await call("fails");
    assert.equal(result.isError, true);
    assert.match(textOf(result), /HTTP 500: failed: \/fails\?key=\[redacted\]/);
    assert.ok(!textOf(result).includes(KEY), textOf(result));
    assert.ok(!textOf(result).includes(encodeURIComponent(KEY)), textOf(result));
  });

  it("never shows a key in a successful answer either: an echoed link is redacted", async () => {
    const { result } = await rc.client.callTool({ name: "echo", arguments: {} }).then((r) => ({ result: r }));
    assert.deepEqual(result.structuredContent, { next: "/echo?key=[redacted]&page=2" });
    assert.ok(!JSON.stringify(result).includes(encodeURIComponent(KEY)), JSON.stringify(result));
  });

  it("shows the secrets as {set: true}, never their values", async () => {
    const got = await admin.get("/tenants/acme/providers/keys");
    assert.deepEqual(got.body.credentials, {
      inHeader: { value: { set: true } },
      inQuery: { value: { set: true } },
      inCookie: { value: { set: true } },
      bearer: { token: { set: true } },
    });
    assert.ok(!JSON.stringify(got.body).includes(KEY));
  });
});

describe("saving credentials", () => {
  const base = () => ({ id: "keys2", kind: "openapi", document: document(), baseUrl: apiUrl });

  it("refuses a credential for a scheme the document does not declare, or cannot send, at that field", async () => {
    const res = await admin.post("/tenants/acme/providers", {
      ...base(),
      credentials: { nope: { value: "x" }, digest: { token: "y" } },
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    const pointers = res.body.errors.map((e: { pointer: string }) => e.pointer).sort();
    assert.deepEqual(pointers, ["/credentials/digest", "/credentials/nope"]);
    assert.match(JSON.stringify(res.body), /names no security scheme of the document/);
  });

  it("refuses a credential without the member its scheme needs, or with one it does not take", async () => {
    const res = await admin.post("/tenants/acme/providers", {
      ...base(),
      credentials: { inHeader: { token: "t" }, bearer: { token: "t" } },
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(res.body.errors.map((e: { pointer: string }) => e.pointer).sort(), [
      "/credentials/inHeader/token",
      "/credentials/inHeader/value",
    ]);
  });

  it("keeps a secret across a save that does not move it; one moving baseUrl must send it again", async () => {
    const kept = await admin.patch("/tenants/acme/providers/keys", { timeoutMs: 20_000 });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal((await call("byDefault")).last.headers["x-api-key"], "header-key", "kept");
    const moved = await admin.patch("/tenants/acme/providers/keys", { baseUrl: otherUrl });
    assert.equal(moved.status, 422, JSON.stringify(moved.body));
    assert.ok(
      moved.body.errors.some((e: { pointer: string }) => e.pointer === "/credentials/inQuery/value"),
      JSON.stringify(moved.body.errors),
    );
    assert.equal(otherSeen.length, 0, "nothing was sent to the other server");
  });

  it("keeps a secret of a provider calling an inline document's servers only while the document is the same", async () => {
    const withServers = (url: string) => ({
      ...document(),
      servers: [{ url: "{api}", variables: { api: { default: url } } }],
    });
    const created = await admin.post("/tenants/acme/providers", {
      id: "inline",
      kind: "openapi",
      prefix: "inline",
      document: withServers(apiUrl),
      useDocumentServers: true,
      include: ["byDefault"],
      credentials: { inHeader: { value: "inline-key" } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await call("inline__byDefault")).last.headers["x-api-key"], "inline-key");
    // The server variable's default moves the calls: the kept key must not follow.
    const moved = await admin.patch("/tenants/acme/providers/inline", { document: withServers(otherUrl) });
    assert.equal(moved.status, 422, JSON.stringify(moved.body));
    assert.match(
      JSON.stringify(moved.body.errors),
      /\/credentials\/inHeader\/value.*the servers the inline document/,
    );
    assert.equal(otherSeen.length, 0, "nothing was sent to the other server");
  });
});

describe("a fetched document calling its own servers", () => {
  it("disables an operation a refresh moves to another server, until saved again with the secret", async () => {
    servedServer = apiUrl;
    const saved = await admin.post("/tenants/acme/providers", {
      id: "fetched",
      kind: "openapi",
      documentUrl: `${apiUrl}/openapi.json`,
      useDocumentServers: true,
      prefix: "f",
      include: ["byDefault"],
      credentials: { inHeader: { value: "fetched-key" } },
    });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    assert.equal((await call("f__byDefault")).last.headers["x-api-key"], "fetched-key");

    // The document's host now names another server: the key must not follow it there.
    servedServer = otherUrl;
    const refreshed = await admin.post("/tenants/acme/providers/fetched/refresh", {});
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.deepEqual(refreshed.body.disabled, ["byDefault"]);
    const gone = await rc.client.callTool({ name: "f__byDefault", arguments: {} }).catch((e: Error) => e);
    assert.match(String(gone instanceof Error ? gone.message : textOf(gone)), /Unknown tool/);
    assert.equal(otherSeen.length, 0, "nothing was sent to the other server");
    const health = (await admin.get("/tenants/acme/providers")).body.items.find(
      (p: { id: string }) => p.id === "fetched",
    ).health;
    assert.ok(
      health.warnings.some((w: string) => /byDefault: disabled: the document now calls it at/.test(w)),
      JSON.stringify(health),
    );
    const audit = await admin.get("/tenants/acme/audit");
    const entry = audit.body.items.find((e: { action: string }) => e.action === "provider.refresh");
    assert.deepEqual(entry?.after, { disabled: ["byDefault"] }, JSON.stringify(audit.body.items[0]));

    // A save that keeps the stored secret keeps the binding; one that sends it binds anew.
    const keptSave = await admin.patch("/tenants/acme/providers/fetched", { timeoutMs: 20_000 });
    assert.equal(keptSave.status, 200, JSON.stringify(keptSave.body));
    const stillGone = await rc.client
      .callTool({ name: "f__byDefault", arguments: {} })
      .catch((e: Error) => e);
    assert.ok(stillGone instanceof Error || stillGone.isError, "still disabled");
    const resaved = await admin.patch("/tenants/acme/providers/fetched", {
      credentials: { inHeader: { value: "fetched-key-2" } },
    });
    assert.equal(resaved.status, 200, JSON.stringify(resaved.body));
    let result;
    for (let i = 0; i < 100 && !result; i++) {
      result = await rc.client
        .callTool({ name: "f__byDefault", arguments: {} })
        .then((r) => (r.isError ? undefined : r))
        .catch(() => undefined);
      if (!result) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(result, "served again");
    assert.equal(otherSeen[otherSeen.length - 1]!.headers["x-api-key"], "fetched-key-2");

    // A baseUrl added beside the document's URL, keeping the secret: refused, not sent there.
    const based = await admin.patch("/tenants/acme/providers/fetched", { baseUrl: apiUrl });
    assert.equal(based.status, 422, JSON.stringify(based.body));

    // A save that fails (a stale If-Match) with other secrets binds nothing: the document moved
    // back to the first server is still off after a refresh.
    servedServer = apiUrl;
    const current = await admin.get("/tenants/acme/providers/fetched");
    const failed = await admin.put(
      "/tenants/acme/providers/fetched",
      { ...current.body, credentials: { inHeader: { value: "made-up" } } },
      { headers: { "if-match": '"stale"' } },
    );
    assert.equal(failed.status, 412, JSON.stringify(failed.body));
    const again = await admin.post("/tenants/acme/providers/fetched/refresh", {});
    assert.deepEqual(again.body.disabled, ["byDefault"], "still bound to the other server only");
  });
});
