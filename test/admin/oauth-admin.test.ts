// The admin API's OAuth resources against a real Portico and Redis: a tenant's local users,
// OAuth clients (pre-registered, or holding grants), grants and identity settings. Tokens come
// from the real flow (oauth4webapi through the login and consent forms); revoking a grant, a
// client, a user or the whole tenant makes them fail on /mcp. Secrets are never sent back.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type * as oauth from "oauth4webapi";
import { ClientStore } from "../../src/oauth/clients.js";
import { GrantStore } from "../../src/oauth/grants.js";
import { UserStore } from "../../src/oauth/users.js";
import { ADMIN_TOKEN, AdminClient, type AdminResponse } from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";
import { formOf, formPoster, REDIRECT_URI, TestOAuthClient } from "../support/oauth.js";
import { initializeWithToken } from "../support/rpc.js";

let portico: RunningPortico;
let admin: AdminClient;
let issuer: string;
let users: UserStore;
let clients: ClientStore;
const redirectUri = REDIRECT_URI;
const PASSWORD = "correct horse battery staple";
const nonce = () => randomBytes(4).toString("hex");
const SEEDED_SECRET = "seeded-oidc-secret-5f0c2a9e";
const SEEDED_IDENTITY = {
  type: "oidc",
  issuer: "https://login.sso.example",
  clientId: "portico",
  clientSecret: SEEDED_SECRET,
} as const;

before(async () => {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  portico = await startPortico({
    tenants: [
      { ...staticTenant("acme"), auth: "oauth" },
      { ...staticTenant("other"), auth: "oauth" },
      { ...staticTenant("sso"), auth: "oauth", identity: SEEDED_IDENTITY },
    ],
    redis: true,
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  admin = new AdminClient(portico.url);
  users = new UserStore(portico.store, portico.keys);
  clients = new ClientStore(portico.store, portico.keys);
});
after(() => portico?.close());

// ---- helpers -------------------------------------------------------------------------------

/** A public client registered the RFC 7591 way (/oauth/register), as MCP clients do. */
async function dynamicClient(): Promise<oauth.Client> {
  return (await TestOAuthClient.register(issuer)).client;
}

/** Signs in and consents through the forms as a browser would, then redeems the code. */
async function tokensFor(tenant: string, client: oauth.Client, username: string, password = PASSWORD) {
  return (await TestOAuthClient.forClient(issuer, client.client_id)).tokens(tenant, { username, password });
}

/** initialize on a tenant's MCP URL with a bearer token: 200 when the token is good. */
async function mcpStatus(tenant: string, token: string): Promise<number> {
  const res = await initializeWithToken(`${issuer}/mcp/${tenant}`, token);
  await res.body?.cancel();
  return res.status;
}

async function createUser(tenant: string, username = `user-${nonce()}`, extra: Record<string, unknown> = {}) {
  const res = await admin.post(`/tenants/${tenant}/users`, { username, password: PASSWORD, ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { username: string; sub: string; email?: string; createdAt: string };
}

async function auditText(tenant: string): Promise<string> {
  return JSON.stringify((await admin.get(`/tenants/${tenant}/audit?limit=200`)).body);
}

function assertInvalid(res: AdminResponse, pointer: string, detail?: RegExp): void {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.code, "PORTICO_ERR_ADMIN_INVALID");
  assert.equal(res.body.pointer, pointer, JSON.stringify(res.body));
  if (detail) assert.match(res.body.detail, detail);
}

// ---- users ---------------------------------------------------------------------------------

describe("users", () => {
  it("create, list, get, patch and delete; a duplicate username is 409", async () => {
    const username = `ada.${nonce()}@acme`;
    const created = await admin.post("/tenants/acme/users", {
      username,
      password: PASSWORD,
      email: "ada@acme.example",
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("location"), `/admin/v1/tenants/acme/users/${username}`);
    assert.deepEqual(Object.keys(created.body).sort(), ["createdAt", "email", "sub", "username"]);
    assert.match(created.body.sub, /^u_/);

    const dup = await admin.post("/tenants/acme/users", { username, password: "another password" });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, "PORTICO_ERR_ADMIN_CONFLICT");
    assert.match(dup.body.detail, new RegExp(`already has a user "${username}"`));

    const listed = await admin.get("/tenants/acme/users?limit=200");
    assert.deepEqual(
      listed.body.items.find((u: { username: string }) => u.username === username),
      created.body,
    );
    assert.deepEqual((await admin.get(`/tenants/acme/users/${username}`)).body, created.body);
    assert.equal((await admin.get(`/tenants/other/users/${username}`)).status, 404, "users are per tenant");

    const patched = await admin.patch(`/tenants/acme/users/${username}`, { email: "ada@new.example" });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.email, "ada@new.example");
    assert.equal(patched.body.sub, created.body.sub, "the subject never changes");
    const removed = await admin.patch(`/tenants/acme/users/${username}`, { email: null });
    assert.equal(removed.body.email, undefined);

    const newPassword = "a brand new passphrase";
    assert.equal(
      (await admin.patch(`/tenants/acme/users/${username}`, { password: newPassword })).status,
      200,
    );
    assert.equal(
      await users.verify("acme", username, PASSWORD),
      undefined,
      "the old password no longer works",
    );
    assert.equal((await users.verify("acme", username, newPassword))?.sub, created.body.sub);

    assert.equal((await admin.delete(`/tenants/acme/users/${username}`)).status, 204);
    assert.equal((await admin.get(`/tenants/acme/users/${username}`)).status, 404);
    assert.equal((await admin.delete(`/tenants/acme/users/${username}`)).status, 404);
    assert.equal(await users.verify("acme", username, newPassword), undefined);

    const actions = (await admin.get("/tenants/acme/audit?limit=10")).body.items
      .filter((e: { target: string }) => e.target === username)
      .map((e: { action: string }) => e.action);
    assert.deepEqual(actions, ["user.delete", "user.update", "user.update", "user.update", "user.create"]);
  });

  it("passwords are never sent back, stored in clear or audited", async () => {
    const password = `secret-${nonce()}-${nonce()}`;
    const username = `pw-${nonce()}`;
    const seen: AdminResponse[] = [await admin.post("/tenants/acme/users", { username, password })];
    seen.push(await admin.patch(`/tenants/acme/users/${username}`, { password: `${password}-2` }));
    seen.push(await admin.get(`/tenants/acme/users/${username}`), await admin.get("/tenants/acme/users"));
    seen.push(await admin.post("/tenants/acme/users", { username, password }), await admin.get("/audit"));
    const audit = await auditText("acme");
    for (const text of [...seen.map((r) => JSON.stringify(r.body)), audit]) {
      assert.ok(!text.includes(password), text);
      assert.ok(!text.includes("scrypt$"), "no hash either");
      assert.doesNotMatch(text, /"password"/);
    }
    const stored = await portico.store.get(portico.keys.user("acme", username));
    assert.ok(stored && !stored.includes(password), "stored as a hash only");
    assert.match(audit, /"passwordChanged":true/);
  });

  it("refuses bad usernames, passwords and members by pointer", async () => {
    const post = (body: unknown) => admin.post("/tenants/acme/users", body);
    for (const username of ["", ".", "..", "-lead", "a b", "a/b", "é", "x".repeat(65)])
      assertInvalid(await post({ username, password: PASSWORD }), "/username");
    assertInvalid(await post({ username: "short", password: "1234567" }), "/password");
    assertInvalid(await post({ username: "long", password: "x".repeat(1025) }), "/password");
    assertInvalid(await post({ username: "nopw" }), "/password", /is required/);
    assertInvalid(await post({ username: "mail", password: PASSWORD, email: "not an address" }), "/email");
    assertInvalid(
      await post({ username: "extra", password: PASSWORD, admin: true }),
      "/admin",
      /unknown field/,
    );
    assertInvalid(await admin.patch(`/tenants/acme/users/${(await createUser("acme")).username}`, {}), "");
    assert.equal((await admin.patch("/tenants/acme/users/nobody", { email: "a@b.example" })).status, 404);
    assert.equal((await admin.get("/tenants/acme/users/a%2Fb")).status, 400);
  });

  it("a tenant key manages its own tenant's users only", async () => {
    const key = await admin.post("/tenants/acme/api-keys", { name: "users" });
    const token = key.body.token as string;
    const made = await admin.post(
      "/tenants/acme/users",
      { username: `k-${nonce()}`, password: PASSWORD },
      { token },
    );
    assert.equal(made.status, 201);
    assert.equal((await admin.get("/tenants/acme/users", { token })).status, 200);
    const foreign = await admin.post(
      "/tenants/other/users",
      { username: `k-${nonce()}`, password: PASSWORD },
      { token },
    );
    assert.equal(foreign.status, 404);
    assert.equal((await admin.get("/tenants/other/users", { token })).status, 404);
  });
});

// ---- clients -------------------------------------------------------------------------------

describe("clients", () => {
  it("pre-registers public and confidential clients; the secret is shown once and works", async () => {
    const pub = await admin.post("/tenants/acme/clients", {
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      client_name: "Acme CLI",
    });
    assert.equal(pub.status, 201);
    assert.equal(pub.body.client_secret, undefined);
    assert.equal(pub.body.preRegistered, true);
    assert.equal(pub.body.grants, 0);
    assert.equal(pub.headers.get("location"), `/admin/v1/tenants/acme/clients/${pub.body.client_id}`);

    const conf = await admin.post("/tenants/acme/clients", {
      redirect_uris: ["https://app.acme.example/cb"],
      client_name: "Acme Web",
    });
    assert.equal(conf.status, 201);
    const secret = conf.body.client_secret as string;
    assert.ok(secret.length >= 32);
    assert.equal(conf.body.token_endpoint_auth_method, "client_secret_basic");
    assert.equal(conf.body.client_secret_expires_at, 0);
    await clients.authenticate(conf.body.client_id, secret);

    const got = await admin.get(`/tenants/acme/clients/${conf.body.client_id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.client_name, "Acme Web");
    const listed = await admin.get("/tenants/acme/clients?limit=200");
    const ids = listed.body.items.map((c: { client_id: string }) => c.client_id);
    assert.ok(ids.includes(pub.body.client_id) && ids.includes(conf.body.client_id));
    for (const text of [JSON.stringify(got.body), JSON.stringify(listed.body), await auditText("acme")]) {
      assert.ok(!text.includes(secret), "the secret is not shown again");
      assert.doesNotMatch(text, /client_secret"/);
    }
    assert.equal((await admin.get(`/tenants/other/clients/${conf.body.client_id}`)).status, 404);

    assert.equal((await admin.delete(`/tenants/acme/clients/${conf.body.client_id}`)).status, 204);
    assert.equal((await admin.get(`/tenants/acme/clients/${conf.body.client_id}`)).status, 404);
    assert.equal(await clients.get(conf.body.client_id), undefined, "deleted for good");
    await assert.rejects(clients.authenticate(conf.body.client_id, secret));
  });

  it("refuses invalid metadata with a pointer (RFC 7591 rules as at /oauth/register)", async () => {
    const post = (body: Record<string, unknown>) =>
      admin.post("/tenants/acme/clients", { redirect_uris: [redirectUri], ...body });
    assertInvalid(await post({ redirect_uris: [] }), "/redirect_uris");
    assertInvalid(
      await post({ redirect_uris: [redirectUri, "http://evil.example/cb"] }),
      "/redirect_uris/1",
      /loopback/,
    );
    assertInvalid(await post({ grant_types: ["refresh_token"] }), "/grant_types", /authorization_code/);
    assertInvalid(await post({ client_uri: "http://acme.example" }), "/client_uri", /https/);
    assertInvalid(await post({ client_name: "evil\u202Ename" }), "/client_name", /control or bidi/);
    assertInvalid(
      await post({ token_endpoint_auth_method: "private_key_jwt" }),
      "/token_endpoint_auth_method",
    );
    assertInvalid(await post({ jwks: {} }), "/jwks", /unknown field/);
    assert.equal((await admin.get("/tenants/acme/clients/not-a-client-id")).status, 400);
    assert.equal((await admin.get(`/tenants/acme/clients/${"A".repeat(22)}`)).status, 404);
  });
});

// ---- grants and tokens ---------------------------------------------------------------------

describe("grants", () => {
  it("lists the grant behind a token; revoking it makes the token fail on /mcp", async () => {
    const client = await dynamicClient();
    const user = await createUser("acme");
    const tokens = await tokensFor("acme", client, user.username);
    assert.equal(await mcpStatus("acme", tokens.access_token), 200);

    const grants = (await admin.get("/tenants/acme/grants?limit=200")).body.items;
    const grant = grants.find((g: { client_id: string }) => g.client_id === client.client_id);
    assert.deepEqual(
      { client_id: grant.client_id, sub: grant.sub, scope: grant.scope, revokedAt: grant.revokedAt },
      { client_id: client.client_id, sub: user.sub, scope: "mcp:read mcp:tools", revokedAt: undefined },
    );
    const listed = (await admin.get("/tenants/acme/clients?limit=200")).body.items;
    const holder = listed.find((c: { client_id: string }) => c.client_id === client.client_id);
    assert.deepEqual(
      { preRegistered: holder.preRegistered, grants: holder.grants, client_name: holder.client_name },
      { preRegistered: false, grants: 1, client_name: "Test Client" },
    );
    assert.equal((await admin.delete(`/tenants/other/grants/${grant.id}`)).status, 404, "not other's");
    const otherGrants = (await admin.get("/tenants/other/grants?limit=200")).body.items;
    assert.ok(!otherGrants.some((g: { id: string }) => g.id === grant.id));

    assert.equal((await admin.delete(`/tenants/acme/grants/${grant.id}`)).status, 204);
    assert.equal(await mcpStatus("acme", tokens.access_token), 401, "the access token is refused at once");
    await assert.rejects(
      (await TestOAuthClient.forClient(issuer, client.client_id)).refresh(tokens.refresh_token!),
      /invalid_grant|error/,
    );
    const revoked = (await admin.get("/tenants/acme/grants?limit=200")).body.items.find(
      (g: { id: string }) => g.id === grant.id,
    );
    assert.ok(revoked.revokedAt);
    assert.equal((await admin.delete(`/tenants/acme/grants/${grant.id}`)).status, 204, "again: a no-op");
    const audit = (await admin.get("/tenants/acme/audit?limit=200")).body.items;
    assert.equal(audit.filter((e: { target: string }) => e.target === grant.id).length, 1);
    assert.equal(
      (await admin.get(`/tenants/acme/clients/${client.client_id}`)).status,
      404,
      "no grants left",
    );
    assert.equal((await admin.delete("/tenants/acme/grants/g_AAAAAAAAAAAAAAAA")).status, 404);
    assert.equal((await admin.delete("/tenants/acme/grants/nope")).status, 400);
  });

  it("deleting a client revokes its grants: a dynamic one stays registered, a pre-registered one goes", async () => {
    const user = await createUser("acme");
    const dynamic = await dynamicClient();
    const dynTokens = await tokensFor("acme", dynamic, user.username);
    const pre = await admin.post("/tenants/acme/clients", {
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      client_name: "Pre",
    });
    const preClient = { client_id: pre.body.client_id as string };
    const preTokens = await tokensFor("acme", preClient, user.username);
    assert.equal(await mcpStatus("acme", preTokens.access_token), 200);
    assert.equal((await admin.get(`/tenants/acme/clients/${preClient.client_id}`)).body.grants, 1);

    assert.equal((await admin.delete(`/tenants/acme/clients/${dynamic.client_id}`)).status, 204);
    assert.equal(await mcpStatus("acme", dynTokens.access_token), 401);
    assert.ok(
      await clients.get(dynamic.client_id),
      "a dynamically registered client is not the tenant's to delete",
    );
    assert.equal(await mcpStatus("acme", preTokens.access_token), 200, "other clients are untouched");

    assert.equal((await admin.delete(`/tenants/acme/clients/${preClient.client_id}`)).status, 204);
    assert.equal(await mcpStatus("acme", preTokens.access_token), 401);
    assert.equal(await clients.get(preClient.client_id), undefined);
    const actions = (await admin.get("/tenants/acme/audit?limit=20")).body.items.map(
      (e: { action: string }) => e.action,
    );
    assert.ok(actions.includes("client.revoke") && actions.includes("client.delete"));
  });

  it("deleting a user revokes what they granted", async () => {
    const user = await createUser("acme");
    const tokens = await tokensFor("acme", await dynamicClient(), user.username);
    assert.equal(await mcpStatus("acme", tokens.access_token), 200);
    assert.equal((await admin.delete(`/tenants/acme/users/${user.username}`)).status, 204);
    assert.equal(await mcpStatus("acme", tokens.access_token), 401);
  });

  it("a user deleted between signing in and consenting gets no tokens (hostile)", async () => {
    const user = await createUser("acme");
    const client = await TestOAuthClient.forClient(issuer, (await dynamicClient()).client_id);
    const { url, verifier, state } = await client.authorizationUrl("acme");
    const page = await fetch(url, { redirect: "manual" });
    const post = formPoster(issuer, page.headers.get("set-cookie")!.split(";")[0]!);
    const consent = await post("/oauth/login", {
      ...formOf(await page.text()),
      username: user.username,
      password: PASSWORD,
    });
    assert.equal(consent.status, 200, "the consent page");
    // The admin deletes the user while the consent page is open; the user then allows.
    assert.equal((await admin.delete(`/tenants/acme/users/${user.username}`)).status, 204);
    const back = await post("/oauth/consent", { ...formOf(await consent.text()), decision: "allow" });
    const location = back.headers.get("location");
    if (back.status === 303 && location && new URL(location).searchParams.has("code")) {
      const issued = await client.exchange(new URL(location), verifier, state).catch((err: Error) => err);
      assert.ok(issued instanceof Error, "a deleted user's code buys no tokens");
    }
    const live = (await admin.get("/tenants/acme/grants?limit=200")).body.items.filter(
      (g: { sub: string; revokedAt?: string }) => g.sub === user.sub && g.revokedAt === undefined,
    );
    assert.deepEqual(live, [], "no live grant for a deleted user");
  });
});

// ---- identity ------------------------------------------------------------------------------

describe("identity", () => {
  it("local by default; OIDC settings saved with If-Match, the client secret write-only", async () => {
    const tenant = `idp-${nonce()}`;
    assert.equal((await admin.post("/tenants", { id: tenant })).status, 201);
    const path = `/tenants/${tenant}/identity`;
    const first = await admin.get(path);
    assert.deepEqual(first.body, { type: "local" });
    const secret = `oidc-secret-${nonce()}${nonce()}`;
    const oidc = {
      type: "oidc",
      issuer: "https://login.acme.example",
      clientId: "portico",
      clientSecret: secret,
    };

    const stale = await admin.put(path, oidc, { headers: { "if-match": '"stale"' } });
    assert.equal(stale.status, 412);
    const saved = await admin.put(
      path,
      { ...oidc, label: "Acme SSO" },
      { headers: { "if-match": first.headers.get("etag")! } },
    );
    assert.equal(saved.status, 200);
    assert.deepEqual(saved.body, { ...oidc, label: "Acme SSO", clientSecret: { set: true } });
    assert.notEqual(saved.headers.get("etag"), first.headers.get("etag"));
    const read = await admin.get(path);
    assert.deepEqual(read.body, saved.body);
    assert.equal(read.headers.get("etag"), saved.headers.get("etag"));
    const live = () => portico.registry.get(tenant)?.config.identity;
    assert.deepEqual(live(), { ...oidc, label: "Acme SSO" }, "applied at once");

    const kept = await admin.put(path, { ...oidc, clientId: "portico-2", clientSecret: { set: true } });
    assert.equal(kept.status, 200);
    assert.equal(
      (live() as { clientSecret: string }).clientSecret,
      secret,
      '{"set": true} keeps the stored secret',
    );

    const raw = await portico.store.get(portico.keys.tenant(tenant));
    assert.ok(raw && !raw.includes(secret), "sealed at rest");
    const texts = [
      saved,
      read,
      kept,
      await admin.get(`/tenants/${tenant}`),
      await admin.get("/audit?limit=50"),
    ].map((r) => JSON.stringify(r.body));
    for (const text of [...texts, await auditText(tenant)]) assert.ok(!text.includes(secret), text);
    assert.match(await auditText(tenant), /"action":"identity.update"/);

    const external = { type: "external", issuer: "https://as.example", jwksUrl: "https://as.example/jwks" };
    assert.deepEqual((await admin.put(path, external)).body, external);
    assert.deepEqual((await admin.put(path, { type: "local" })).body, { type: "local" });
    assert.equal(live(), undefined, "local is the default, stored as absent");
    assert.equal((await admin.delete(`/tenants/${tenant}`)).status, 204);
  });

  it("a seeded tenant's identity secret is not shown, nor audited by the bootstrap or a deletion", async () => {
    const read = await admin.get("/tenants/sso/identity");
    assert.deepEqual(read.body, { ...SEEDED_IDENTITY, clientSecret: { set: true } });
    assert.equal((await admin.delete("/tenants/sso")).status, 204);
    const audit = JSON.stringify((await admin.get("/audit?limit=200")).body);
    assert.match(audit, /"action":"tenant.create"/);
    assert.match(audit, /"action":"tenant.delete"/);
    assert.ok(!audit.includes(SEEDED_SECRET), audit);
  });

  it("refuses invalid settings with a pointer, and a kept secret where none is stored", async () => {
    const path = "/tenants/other/identity";
    const oidc = { type: "oidc", issuer: "https://login.example", clientId: "c", clientSecret: "s" };
    assertInvalid(
      await admin.put(path, { ...oidc, clientSecret: { set: true } }),
      "/clientSecret",
      /no stored value/,
    );
    assertInvalid(await admin.put(path, { ...oidc, issuer: "ftp://login.example" }), "/issuer", /http/);
    assertInvalid(await admin.put(path, { type: "saml" }), "/type", /"local", "oidc", "external"/);
    assertInvalid(
      await admin.put(path, { type: "local", issuer: "https://x.example" }),
      "/issuer",
      /unknown field/,
    );
    assertInvalid(await admin.put(path, { ...oidc, clientId: "" }), "/clientId");
    assert.deepEqual((await admin.get(path)).body, { type: "local" }, "nothing saved");
  });
});

// ---- tenant deletion -----------------------------------------------------------------------

describe("deleting a tenant", () => {
  it("removes its users and pre-registered clients and revokes its grants, even for a tenant of the same id", async () => {
    const tenant = `gone-${nonce()}`;
    assert.equal((await admin.post("/tenants", { ...staticTenant(tenant), auth: "oauth" })).status, 201);
    const user = await createUser(tenant);
    const pre = await admin.post(`/tenants/${tenant}/clients`, {
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
    });
    const client = { client_id: pre.body.client_id as string };
    const tokens = await tokensFor(tenant, client, user.username);
    assert.equal(await mcpStatus(tenant, tokens.access_token), 200);
    const [grant] = (await admin.get(`/tenants/${tenant}/grants`)).body.items;

    assert.equal((await admin.delete(`/tenants/${tenant}`)).status, 204);
    assert.deepEqual(await users.list(tenant), []);
    assert.equal(await clients.get(client.client_id), undefined);
    const stored = await new GrantStore(portico.store, portico.keys).grant(tenant, grant.id);
    assert.equal(stored, undefined, "the grant is revoked, then forgotten with its tenant");

    assert.equal((await admin.post("/tenants", { ...staticTenant(tenant), auth: "oauth" })).status, 201);
    assert.equal(
      await mcpStatus(tenant, tokens.access_token),
      401,
      "the old token is no good on the new tenant",
    );
    for (const list of ["users", "clients", "grants"])
      assert.deepEqual((await admin.get(`/tenants/${tenant}/${list}`)).body.items, [], list);
    assert.equal((await admin.delete(`/tenants/${tenant}/grants/${grant.id}`)).status, 404);
    assert.equal((await admin.delete(`/tenants/${tenant}`)).status, 204);
  });
});
