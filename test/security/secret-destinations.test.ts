// Class 1, write-only secrets stay unrecoverable (docs/security.md): a {"set": true} keeps a stored
// secret only when it is matched by name and every URL it would travel to is where it went before.
// A tenant key that points a kept secret at a server it controls gets 422 naming the field, and
// real upstreams that record every request prove the secret never reaches the new host.
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { sameOriginRedirects } from "../../src/egress/fetch.js";
import { startMinimalUpstream } from "../fixtures/minimal-server.js";
import { sendJson, startRawUpstream } from "../support/raw-upstream.js";
import { withinDestination } from "../../src/records/secret-fields.js";
import { ADMIN_TOKEN, AdminClient, type AdminResponse } from "../support/admin.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { openSession, postRpc } from "../support/rpc.js";

interface Recorded {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface Recorder {
  /** Base URL, no trailing slash. */
  readonly url: string;
  readonly requests: Recorded[];
  /** True when any request so far carried `secret` anywhere (headers or body). */
  saw(secret: string): boolean;
  close(): Promise<void>;
}

/** Everything a request carried, a Basic authorization decoded (client_secret_basic). */
function wireText(r: Recorded): string {
  const basic = /^Basic (.+)$/i.exec(r.headers.authorization ?? "")?.[1];
  const decoded = basic === undefined ? "" : Buffer.from(basic, "base64").toString("utf8");
  return `${JSON.stringify(r.headers)}\n${r.body}\n${decodeURIComponent(decoded)}`;
}

/** An upstream that records every request: token endpoints get a token, anything else `{"ok":true}`. */
async function startRecorder(host: string): Promise<Recorder> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", headers: req.headers, body });
      // "?redirect=<url>": an open redirect on the real upstream's own host.
      const to = new URL(req.url ?? "/", "http://x").searchParams.get("redirect");
      if (to !== null) {
        res.writeHead(307, { location: to });
        res.end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        req.url?.endsWith("/token")
          ? JSON.stringify({ access_token: "bought-token-1", token_type: "Bearer", expires_in: 3600 })
          : JSON.stringify({ ok: true }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    requests,
    saw: (secret) => requests.some((r) => wireText(r).includes(secret)),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let portico: RunningPortico;
let admin: AdminClient;
let tenantAdmin: AdminClient;
let good: Recorder;
let evil: Recorder;
let counter = 0;
const nonce = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

before(async () => {
  good = await startRecorder("127.0.0.1");
  // Another host name and port: a server the hostile tenant admin controls.
  evil = await startRecorder("localhost");
  portico = await startPortico({ tenants: [], redis: true, env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } });
  admin = new AdminClient(portico.url);
  assert.equal((await admin.post("/tenants", { id: "acme", auth: "none" })).status, 201);
  const key = await admin.post("/tenants/acme/api-keys", { name: "hostile tenant admin" });
  assert.equal(key.status, 201);
  assert.equal(typeof key.body.token, "string");
  tenantAdmin = new AdminClient(portico.url, key.body.token as string);
});
after(async () => {
  await portico.close();
  await good.close();
  await evil.close();
});

/** Calls a tool of tenant acme through /mcp, as a client would; the raw answer, for leak checks. */
async function callTool(name: string): Promise<string> {
  const url = portico.mcpUrl("acme");
  const sid = await openSession(url);
  const res = await postRpc(
    url,
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: {} } },
    sid,
  );
  assert.equal(res.status, 200);
  return res.text();
}

/** A 422 naming exactly `pointers`, whose body carries none of `secrets`. */
function assertRefused(res: AdminResponse, pointers: readonly string[], secrets: readonly string[]): void {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.code, "PORTICO_ERR_ADMIN_INVALID");
  assert.deepEqual(
    (res.body.errors as { pointer: string }[]).map((e) => e.pointer).sort(),
    [...pointers].sort(),
  );
  for (const error of res.body.errors as { detail: string }[])
    assert.match(error.detail, /send the secret itself/);
  assert.match(res.body.detail, new RegExp(`^${pointers.length === 1 ? pointers[0] : "/"}`));
  const text = JSON.stringify(res.body);
  for (const secret of secrets) assert.ok(!text.includes(secret), text);
}

async function auditText(): Promise<string> {
  return JSON.stringify((await admin.get("/tenants/acme/audit?limit=200")).body);
}

describe("http tools: a kept header goes only where it went", () => {
  it("PUT moving a tool's url to another host with the header kept is 422; the secret never reaches it", async () => {
    const id = `wx-${nonce()}`;
    const secret = `tool-secret-${nonce()}`;
    const tool = { name: "forecast", url: `${good.url}/v1/forecast`, headers: { "X-Api-Key": secret } };
    assert.equal(
      (await admin.post("/tenants/acme/providers", { id, kind: "http", prefix: id, tools: [tool] })).status,
      201,
    );

    const moved = { ...tool, url: `${evil.url}/v1/forecast`, headers: { "X-Api-Key": { set: true } } };
    const put = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [moved],
    });
    assertRefused(put, ["/tools/0/headers/X-Api-Key"], [secret]);
    const dry = await tenantAdmin.put(`/tenants/acme/providers/${id}?dryRun=true`, {
      id,
      kind: "http",
      prefix: id,
      tools: [moved],
    });
    assertRefused(dry, ["/tools/0/headers/X-Api-Key"], [secret]);
    // The same host on another scheme or port, or a path outside the stored one, is a new destination.
    for (const url of [
      `${good.url.replace("http:", "https:")}/v1/forecast`,
      `${evil.url.replace("localhost", "127.0.0.1")}/v1/forecast`,
      `${good.url}/v2/forecast`,
      `${good.url}/v1/forecast-evil`,
      `${good.url}/v1/forecast/..%2F..%2Fevil`,
    ]) {
      const res = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
        id,
        kind: "http",
        prefix: id,
        tools: [{ ...tool, url, headers: { "X-Api-Key": { set: true } } }],
      });
      assertRefused(res, ["/tools/0/headers/X-Api-Key"], [secret]);
    }

    // Nothing half-saved: the stored record still points at the real upstream.
    assert.equal((await admin.get(`/tenants/acme/providers/${id}`)).body.tools[0].url, tool.url);
    await callTool(`${id}__forecast`);
    assert.ok(good.saw(secret), "the real upstream still gets its secret");
    assert.ok(!evil.saw(secret), "the new host never gets it");
    assert.ok(!(await auditText()).includes(secret));
  });

  it("a change that keeps the destination keeps the secret; re-sending the secret allows a new one", async () => {
    const id = `wx-${nonce()}`;
    const secret = `tool-secret-${nonce()}`;
    const tool = { name: "forecast", url: `${good.url}/v1/forecast`, headers: { "X-Api-Key": secret } };
    await admin.post("/tenants/acme/providers", { id, kind: "http", prefix: id, tools: [tool] });

    // A description, a query string or a path below the stored one: same destination.
    const same = {
      ...tool,
      description: "Forecast",
      url: `${good.url}/v1/forecast/daily?units=metric`,
      headers: { "X-Api-Key": { set: true } },
    };
    const kept = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [same],
    });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual(kept.body.tools[0].headers, { "X-Api-Key": { set: true } });
    await callTool(`${id}__forecast`);
    assert.ok(
      good.requests.some(
        (r) => r.path === "/v1/forecast/daily?units=metric" && r.headers["x-api-key"] === secret,
      ),
    );

    // The secret itself, sent again, may go anywhere the egress policy allows.
    const fresh = `fresh-secret-${nonce()}`;
    const moved = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [{ ...tool, url: `${evil.url}/hook`, headers: { "X-Api-Key": fresh } }],
    });
    assert.equal(moved.status, 200);
    await callTool(`${id}__forecast`);
    assert.ok(evil.saw(fresh) && !evil.saw(secret), "only the re-sent secret reaches the new host");

    const audit = await auditText();
    assert.ok(!audit.includes(secret) && !audit.includes(fresh), "no value in the audit log");
    const entries = (await admin.get("/tenants/acme/audit?limit=200")).body.items as {
      target: string;
      secrets?: { kept: string[]; set: string[] };
    }[];
    const mine = entries.filter((e) => e.target === id);
    assert.deepEqual(mine[0]?.secrets, { kept: [], set: ["/tools/0/headers/X-Api-Key"], removed: [] });
    assert.deepEqual(mine[1]?.secrets, { kept: ["/tools/0/headers/X-Api-Key"], set: [], removed: [] });
  });

  it("tools are matched by name: a reorder keeps each tool's own secret, a swap of names is 422", async () => {
    const id = `two-${nonce()}`;
    const secretA = `secret-a-${nonce()}`;
    const secretB = `secret-b-${nonce()}`;
    // Tool b's url is the tenant admin's own server, with a secret of its own.
    const a = { name: "a", url: `${good.url}/a`, headers: { "X-Key": secretA } };
    const b = { name: "b", url: `${evil.url}/b`, headers: { "X-Key": secretB } };
    await admin.post("/tenants/acme/providers", { id, kind: "http", prefix: id, tools: [a, b] });
    const keep = { "X-Key": { set: true } };

    // Reordered: position 0 is now b. By position, b would have been given a's secret.
    const reordered = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [
        { ...b, headers: keep },
        { ...a, headers: keep },
      ],
    });
    assert.equal(reordered.status, 200, JSON.stringify(reordered.body));
    await callTool(`${id}__b`);
    await callTool(`${id}__a`);
    assert.ok(evil.saw(secretB) && !evil.saw(secretA), "b keeps its own secret, never a's");
    assert.ok(good.saw(secretA));

    // Names swapped, urls in place: "a" would now send a's secret to the tenant admin's server.
    const swapped = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [
        { name: "a", url: b.url, headers: keep },
        { name: "b", url: a.url, headers: keep },
      ],
    });
    assertRefused(swapped, ["/tools/0/headers/X-Key", "/tools/1/headers/X-Key"], [secretA, secretB]);

    // A renamed tool has no stored secret to keep.
    const renamed = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [{ ...a, name: "a2", headers: keep }],
    });
    assert.equal(renamed.status, 422);
    assert.equal(renamed.body.errors[0].pointer, "/tools/0/headers/X-Key");
    assert.match(renamed.body.detail, /has no stored value to keep/);
    await callTool(`${id}__a`);
    assert.ok(!evil.saw(secretA));
  });

  it("PATCH is the same rule: a merged url change carries every untouched secret with it", async () => {
    const id = `mcp-${nonce()}`;
    const secret = `mcp-secret-${nonce()}`;
    const created = await admin.post("/tenants/acme/providers", {
      id,
      kind: "mcp",
      prefix: id,
      url: `${good.url}/mcp`,
      headers: { authorization: `Bearer ${secret}` },
    });
    assert.equal(created.status, 201);
    const before = evil.requests.length;

    assertRefused(
      await tenantAdmin.patch(`/tenants/acme/providers/${id}`, { url: `${evil.url}/mcp` }),
      ["/headers/authorization"],
      [secret],
    );
    assertRefused(
      await tenantAdmin.patch(`/tenants/acme/providers/${id}?dryRun=true`, { url: `${evil.url}/mcp` }),
      ["/headers/authorization"],
      [secret],
    );
    assertRefused(
      await tenantAdmin.patch(`/tenants/acme/providers/${id}`, {
        url: `${evil.url}/mcp`,
        headers: { authorization: { set: true } },
      }),
      ["/headers/authorization"],
      [secret],
    );
    assert.equal(evil.requests.length, before, "not even a dry run connected to the new host");

    // A field that is no destination: the secret is kept.
    const renamed = await tenantAdmin.patch(`/tenants/acme/providers/${id}`, { prefix: `${id}x` });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.ok(good.saw(secret));

    // The url moves with the secret sent again, or with the secret removed.
    const fresh = `fresh-${nonce()}`;
    const moved = await tenantAdmin.patch(`/tenants/acme/providers/${id}`, {
      url: `${evil.url}/mcp`,
      headers: { authorization: `Bearer ${fresh}` },
    });
    assert.equal(moved.status, 200);
    assert.ok(!evil.saw(secret));
    const dropped = await tenantAdmin.patch(`/tenants/acme/providers/${id}`, {
      url: `${good.url}/mcp2`,
      headers: null,
    });
    assert.equal(dropped.status, 200);
    assert.equal(dropped.body.headers, undefined);
  });
});

describe("provider credentials: a bearer token and a client secret", () => {
  it("a PUT that leaves a secret out, or a PATCH that sets it to null, removes it, and the audit says so", async () => {
    const id = `rm-${nonce()}`;
    const secret = `removed-secret-${nonce()}`;
    const headers = { "X-Api-Key": secret, "X-Other": `other-${secret}` };
    const base = { id, kind: "mcp", url: `${good.url}/mcp` };
    assert.equal((await tenantAdmin.post("/tenants/acme/providers", { ...base, headers })).status, 201);
    const put = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      ...base,
      headers: { "X-Other": { set: true } },
    });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.headers, { "X-Other": { set: true } });
    const patched = await tenantAdmin.patch(`/tenants/acme/providers/${id}`, {
      headers: { "X-Other": null },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.headers ?? {}, {});
    const entries = (await admin.get("/tenants/acme/audit?limit=50")).body.items as {
      target: string;
      secrets?: unknown;
    }[];
    const mine = entries.filter((e) => e.target === id).map((e) => e.secrets);
    assert.deepEqual(mine.slice(0, 2), [
      { kept: [], set: [], removed: ["/headers/X-Other"] },
      { kept: ["/headers/X-Other"], set: [], removed: ["/headers/X-Api-Key"] },
    ]);
    assert.ok(!JSON.stringify(entries).includes(secret));
    const again = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      ...base,
      headers: { "X-Api-Key": { set: true } },
    });
    assert.equal(again.status, 422, "a removed secret cannot be brought back with a marker");
  });

  it('{"set": true} where nothing is stored is the same clear 422 on every create: provider, tenant, identity', async () => {
    const id = `new-${nonce()}`;
    const provider = {
      id: "p",
      kind: "mcp",
      url: `${good.url}/mcp`,
      auth: { type: "bearer", token: { set: true } },
    };
    const created = await admin.post("/tenants/acme/providers", { ...provider, id });
    assert.equal(created.status, 422);
    assert.equal(created.body.errors[0].pointer, "/auth/token");
    assert.match(created.body.detail, /has no stored value to keep/);
    const tenant = await admin.post("/tenants", { id, auth: "none", providers: [provider] });
    assert.equal(tenant.status, 422);
    assert.equal(tenant.body.errors[0].pointer, "/providers/0/auth/token");
    assert.match(tenant.body.detail, /has no stored value to keep/);
    assert.equal((await admin.get(`/tenants/${id}`)).status, 404, "nothing half-saved");
    const identity = await tenantAdmin.put("/tenants/acme/identity", {
      type: "oidc",
      issuer: good.url,
      clientId: "portico",
      clientSecret: { set: true },
    });
    assert.equal(identity.status, 422);
    assert.match(identity.body.detail, /has no stored value to keep/);
  });

  it("a kept bearer token of an http provider goes to every tool: a tool on a new host needs it again", async () => {
    const id = `tok-${nonce()}`;
    const token = `bearer-${nonce()}`;
    const tool = { name: "t", url: `${good.url}/t` };
    await admin.post("/tenants/acme/providers", {
      id,
      kind: "http",
      prefix: id,
      tools: [tool],
      auth: { type: "bearer", token },
    });
    const res = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [tool, { name: "leak", url: `${evil.url}/leak` }],
      auth: { type: "bearer", token: { set: true } },
    });
    assertRefused(res, ["/auth/token"], [token]);
    // Merged: adding the tool by PATCH carries the token along just the same.
    assertRefused(
      await tenantAdmin.patch(`/tenants/acme/providers/${id}`, {
        tools: [tool, { name: "leak", url: `${evil.url}/leak` }],
      }),
      ["/auth/token"],
      [token],
    );
    const ok = await tenantAdmin.patch(`/tenants/acme/providers/${id}`, {
      tools: [tool, { name: "u", url: `${good.url}/t/u` }],
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.ok(!evil.saw(token));
  });

  it("a kept client secret goes to its token endpoint only, and the token it buys only to the upstream", async () => {
    const id = `cc-${nonce()}`;
    const clientSecret = `client-secret-${nonce()}`;
    const auth = {
      type: "client_credentials",
      tokenUrl: `${good.url}/oauth/token`,
      clientId: "portico",
      clientSecret,
    };
    const tool = { name: "t", url: `${good.url}/t` };
    await admin.post("/tenants/acme/providers", { id, kind: "http", prefix: id, tools: [tool], auth });
    const keep = { ...auth, clientSecret: { set: true } };

    assertRefused(
      await tenantAdmin.patch(`/tenants/acme/providers/${id}`, {
        auth: { tokenUrl: `${evil.url}/oauth/token` },
      }),
      ["/auth/clientSecret"],
      [clientSecret],
    );
    // The token bought with the kept secret would go to the new tool url: refused as well.
    assertRefused(
      await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
        id,
        kind: "http",
        prefix: id,
        tools: [{ name: "t", url: `${evil.url}/t` }],
        auth: keep,
      }),
      ["/auth/clientSecret"],
      [clientSecret],
    );
    // The scope or client id are no destination.
    const scoped = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [tool],
      auth: { ...keep, scope: "read" },
    });
    assert.equal(scoped.status, 200, JSON.stringify(scoped.body));
    await callTool(`${id}__t`);
    assert.ok(good.saw(clientSecret) && !evil.saw(clientSecret));

    // Switching the credential's kind keeps nothing.
    const switched = await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "http",
      prefix: id,
      tools: [tool],
      auth: { type: "bearer", token: { set: true } },
    });
    assert.equal(switched.status, 422);
    assert.equal(switched.body.errors[0].pointer, "/auth/token");
  });
});

describe("a tenant IdP's client secret", () => {
  it("is kept for the same issuer only", async () => {
    const tenant = `idp-${nonce()}`;
    assert.equal((await admin.post("/tenants", { id: tenant, auth: "oauth" })).status, 201);
    const path = `/tenants/${tenant}/identity`;
    const secret = `oidc-secret-${nonce()}`;
    const oidc = {
      type: "oidc",
      issuer: "https://login.acme.example",
      clientId: "portico",
      clientSecret: secret,
    };
    assert.equal((await admin.put(path, oidc)).status, 200);

    const moved = await admin.put(path, {
      ...oidc,
      issuer: "https://login.attacker.example",
      clientSecret: { set: true },
    });
    assertRefused(moved, ["/clientSecret"], [secret]);
    const sibling = await admin.put(path, {
      ...oidc,
      issuer: "https://login.acme.example.attacker.example",
      clientSecret: { set: true },
    });
    assertRefused(sibling, ["/clientSecret"], [secret]);
    // An issuer below the stored one is another issuer: its discovery document (a file a user of
    // the IdP's host may serve there) names any token endpoint it likes.
    for (const below of [
      "https://login.acme.example/attacker/project/-/raw/main",
      "https://login.acme.example/?x=1",
    ])
      assertRefused(
        await admin.put(path, { ...oidc, issuer: below, clientSecret: { set: true } }),
        ["/clientSecret"],
        [secret],
      );
    assert.equal(
      (portico.registry.get(tenant)?.config.identity as { issuer: string }).issuer,
      oidc.issuer,
      "nothing saved",
    );

    const labelled = await admin.put(path, { ...oidc, label: "Acme SSO", clientSecret: { set: true } });
    assert.equal(labelled.status, 200);
    assert.equal(
      (portico.registry.get(tenant)?.config.identity as { clientSecret: string }).clientSecret,
      secret,
    );
    const audit = JSON.stringify((await admin.get(`/tenants/${tenant}/audit`)).body);
    assert.ok(!audit.includes(secret));
    assert.match(audit, /"kept":\["\/clientSecret"\]/);

    const fresh = await admin.put(path, {
      ...oidc,
      issuer: "https://login2.acme.example",
      clientSecret: "another-secret",
    });
    assert.equal(fresh.status, 200);
  });
});

describe("what counts as the same destination", () => {
  it("same scheme, host and port, and the stored path or below it; the query does not count", () => {
    const stored = "https://api.example.com/v1";
    for (const same of [
      "https://api.example.com/v1",
      "https://API.example.com:443/v1",
      "https://api.example.com/v1/",
      "https://api.example.com/v1/tools/x",
      "https://api.example.com/v1?x=1#f",
      "https://user@api.example.com/v1/x",
      "https://api.example.com/v1/my%20tool;v=2",
      "https://api.example.com/v1/a.b/..c",
    ])
      assert.ok(withinDestination(same, stored), same);
    for (const moved of [
      "http://api.example.com/v1",
      "https://api.example.com:8443/v1",
      "https://api.example.com./v1",
      "https://api.example.com.attacker.example/v1",
      "https://api.example.com/v1x",
      "https://api.example.com/v2",
      "https://api.example.com/",
      "https://api.example.com/v1/../v2",
      "https://api.example.com/v1/%2e%2e/v2",
      "https://api.example.com/v1/..%2Fv2",
      "https://api.example.com/v1/x%5C..%5C..%5Cv2",
      // Read as ".." by servers that decode twice, cut ";" parameters (Tomcat, Spring) or stop at NUL.
      "https://api.example.com/v1/..;/v2",
      "https://api.example.com/v1/..;jsessionid=1/v2",
      "https://api.example.com/v1/..%3b/v2",
      "https://api.example.com/v1/%252e%252e/v2",
      "https://api.example.com/v1/%25252e%25252e/v2",
      "https://api.example.com/v1/..%00/v2",
      "https://api.example.com/v1/%u002e%u002e/v2",
      "https://api.example.com/v1/.../v2",
      "not a url",
      "",
      5,
      undefined,
    ])
      assert.ok(!withinDestination(moved, stored), String(moved));
    assert.ok(
      withinDestination("http://[::1]:8080/mcp", "http://[0:0::1]:8080/mcp"),
      "IPv6 in its canonical form",
    );
    assert.ok(
      withinDestination("https://h.example/anything", "https://h.example/"),
      "a root path covers the host",
    );
  });

  it("an mcp provider's url carries its headers and its bearer token: both are named", async () => {
    const id = `both-${nonce()}`;
    const token = `tok-${nonce()}`;
    const header = `hdr-${nonce()}`;
    await admin.post("/tenants/acme/providers", {
      id,
      kind: "mcp",
      prefix: id,
      url: `${good.url}/mcp`,
      headers: { "x-api-key": header },
      auth: { type: "bearer", token },
    });
    const before = evil.requests.length;
    assertRefused(
      await tenantAdmin.patch(`/tenants/acme/providers/${id}`, { url: `${evil.url}/mcp` }),
      ["/auth/token", "/headers/x-api-key"],
      [token, header],
    );
    assert.equal(evil.requests.length, before);
  });

  it("an upstream redirect never carries a provider's secret to another origin", async () => {
    // An open redirect below the stored url keeps the destination rule's letter ("/mcp/open" is
    // below "/mcp"); the hop to another origin must not carry the kept header or token.
    const id = `redir-${nonce()}`;
    const token = `tok-${nonce()}`;
    const header = `hdr-${nonce()}`;
    const created = await admin.post("/tenants/acme/providers", {
      id,
      kind: "mcp",
      prefix: id,
      url: `${good.url}/mcp`,
      headers: { "x-api-key": header },
      auth: { type: "bearer", token },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const away = `${good.url}/mcp/open?redirect=${encodeURIComponent(`${evil.url}/stolen`)}`;
    const patched = await tenantAdmin.patch(`/tenants/acme/providers/${id}`, { url: away });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const health = await tenantAdmin.get(`/tenants/acme/providers/${id}/health`);
    assert.equal(health.body.status, "unhealthy");
    // A fresh secret given with a redirecting url does not travel either.
    const fresh = `hdr-${nonce()}`;
    await tenantAdmin.put(`/tenants/acme/providers/${id}`, {
      id,
      kind: "mcp",
      prefix: id,
      url: away,
      headers: { "x-api-key": fresh },
    });
    await tenantAdmin.post(`/tenants/acme/providers/${id}/refresh`, {});
    assert.ok(
      good.requests.some((r) => r.path.startsWith("/mcp/open")),
      "the redirect was asked for",
    );
    for (const secret of [token, header, fresh])
      assert.ok(!evil.saw(secret), `${secret} reached the other origin`);
  });

  it("a redirect within the origin is still followed, the request body with it", async () => {
    const fetch = sameOriginRedirects(globalThis.fetch);
    const here = `${good.url}/a?redirect=${encodeURIComponent(`${good.url}/b`)}`;
    const res = await fetch(here, { method: "POST", body: '{"n":1}', headers: { "x-api-key": "k" } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true });
    const last = good.requests.at(-1)!;
    assert.equal(last.path, "/b");
    assert.equal(last.body, '{"n":1}');
    const elsewhere = `${good.url}/a?redirect=${encodeURIComponent(`${evil.url}/b`)}`;
    const before = evil.requests.length;
    await assert.rejects(fetch(elsewhere, { method: "POST", body: "{}" }), /redirected to another origin/);
    assert.equal(evil.requests.length, before);
  });

  it("an upstream error page echoing the request in any spelling never shows a secret to the MCP client", async () => {
    // A slash, a plus, an ampersand and a quote: PHP's json_encode writes "\/", a form "%2F" and
    // "%2B", an HTML page "&amp;" and "&quot;".
    const header = `k/${nonce()}+v&"x`;
    const token = `t/${nonce()}+=`;
    const echo = createServer((req, res) => {
      const sent = { "x-api-key": req.headers["x-api-key"], authorization: req.headers.authorization };
      const json = JSON.stringify(sent);
      const ascii = json.replace(
        /[\u007f-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
      const page = [
        ascii.replaceAll("/", "\\/"),
        new URLSearchParams(sent as Record<string, string>).toString(),
        String(sent["x-api-key"]).replaceAll("&", "&amp;").replaceAll('"', "&quot;"),
      ].join(" | ");
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(page);
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    try {
      const id = `echo-${nonce()}`;
      const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/tool`;
      const created = await admin.post("/tenants/acme/providers", {
        id,
        kind: "http",
        prefix: id,
        auth: { type: "bearer", token },
        tools: [{ name: "t", url, headers: { "x-api-key": header } }],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const text = await callTool(`${id}__t`);
      assert.match(text, /upstream answered HTTP 500/);
      for (const secret of [header, token])
        for (const spelling of [
          secret,
          JSON.stringify(secret).slice(1, -1).replaceAll("/", "\\/"),
          encodeURIComponent(secret),
          secret.replaceAll("&", "&amp;").replaceAll('"', "&quot;"),
        ])
          assert.ok(!text.includes(spelling), `${spelling} in ${text}`);
    } finally {
      echo.closeAllConnections();
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });

  it("health, refresh and dry runs never show an upstream error page that echoes a kept secret", async () => {
    // The upstream serves, then refuses with a page repeating the request's Authorization and
    // API key (a debug error page): the tenant admin must not read them back through the admin API.
    const token = `tok-${nonce()}`;
    const header = `hdr-${nonce()}`;
    let refusing = false;
    const upstream = await startMinimalUpstream({ authorize: () => !refusing });
    try {
      const id = `probe-${nonce()}`;
      const record = {
        id,
        kind: "mcp",
        prefix: id,
        era: "session",
        url: upstream.url,
        headers: { "x-api-key": header },
        auth: { type: "bearer", token },
      };
      assert.equal((await admin.post("/tenants/acme/providers", record)).status, 201);
      assert.equal((await tenantAdmin.get(`/tenants/acme/providers/${id}/health`)).body.status, "healthy");
      refusing = true;
      const seen = [
        await tenantAdmin.get(`/tenants/acme/providers/${id}/health`),
        await tenantAdmin.post(`/tenants/acme/providers/${id}/refresh`, {}),
        await tenantAdmin.put(`/tenants/acme/providers/${id}?dryRun=true`, {
          ...record,
          headers: { "x-api-key": { set: true } },
          auth: { type: "bearer", token: { set: true } },
        }),
      ];
      assert.equal(seen[0]!.body.status, "unhealthy");
      for (const res of seen) {
        const text = JSON.stringify(res.body);
        for (const secret of [token, header]) assert.ok(!text.includes(secret), `${secret} in ${text}`);
      }
    } finally {
      await upstream.close();
    }
  });

  it("an upstream's JSON-RPC error repeating the API key or token reaches the MCP client without them", async () => {
    const token = `tok/${nonce()}`;
    const header = `hdr+${nonce()}`;
    const upstream = await startRawUpstream((m, res) => {
      const answer = (payload: object) => sendJson(res, { jsonrpc: "2.0", id: m.id, ...payload });
      if (m.method === "initialize")
        return answer({
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "e", version: "1" },
          },
        });
      if (m.method === "tools/list")
        return answer({ result: { tools: [{ name: "t", inputSchema: { type: "object" } }] } });
      if (m.method === "ping") return answer({ result: {} });
      // A chatty upstream: its error repeats what it was sent (the message, and data, escaped as JSON).
      answer({
        error: {
          code: -32000,
          message: `key ${header} is not allowed; token ${encodeURIComponent(token)}`,
          data: {
            received: { "x-api-key": header, authorization: `Bearer ${token}` },
            hint: "check your plan",
          },
        },
      });
    });
    try {
      const id = `chatty-${nonce()}`;
      const created = await admin.post("/tenants/acme/providers", {
        id,
        kind: "mcp",
        prefix: id,
        era: "session",
        url: upstream.url,
        headers: { "x-api-key": header },
        auth: { type: "bearer", token },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const text = await callTool(`${id}__t`);
      assert.match(text, /is not allowed/);
      assert.match(text, /check your plan/, "the rest of the upstream's error is relayed");
      for (const spelling of [token, header, encodeURIComponent(token), JSON.stringify(token).slice(1, -1)])
        assert.ok(!text.includes(spelling), `${spelling} in ${text}`);
    } finally {
      await upstream.close();
    }
  });
});
