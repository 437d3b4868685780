// Dynamic registration is bounded (docs/oauth.md "Dynamic registration"): one address registers a
// budget of clients an hour, counted across replicas; a registration body is capped at a size real
// clients never reach; an unused registration expires (its authorize page then says to register
// again, its token requests are invalid_client) while a used one is kept; a platform key deletes a
// client everywhere, and the official SDK's client then registers again by itself.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientStore, type ClientRecord } from "../../src/oauth/clients.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { REDIRECT_URI, TestOAuthClient } from "../support/oauth.js";
import { startIssuer, startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { MemoryOAuthProvider, signInAt } from "../support/sdk-oauth.js";

const ADA = { username: "ada", password: "correct horse battery" };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What VS Code sends to /oauth/register (a few hundred bytes). */
const VSCODE = {
  client_name: "Visual Studio Code",
  redirect_uris: ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

function register(issuer: string, body: unknown, from?: string): Promise<Response> {
  return fetch(`${issuer}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(from && { "x-forwarded-for": from }) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Keeps a burst of registrations inside one fixed hour of the budget. */
async function awayFromHourEdge(): Promise<void> {
  const left = 3_600_000 - (Date.now() % 3_600_000);
  if (left < 10_000) await sleep(left + 200);
}

describe("registrations from one address", () => {
  let a: RunningPortico;
  let b: RunningPortico;

  before(async () => {
    const env = {
      PORTICO_OAUTH_REGISTRATIONS_PER_HOUR: "5",
      PORTICO_TRUSTED_PROXIES: "127.0.0.1/32,::1/128",
    };
    const redisPrefix = uniquePrefix();
    a = await startPortico({ tenants: [staticTenant("acme")], redisPrefix, env });
    b = await startPortico({ tenants: [staticTenant("acme")], redisPrefix, env });
  });

  after(async () => {
    await a.close();
    await b.close();
  });

  it("stay within the hour's budget across replicas, and the store within budget × the size cap", async () => {
    await awayFromHourEdge();
    const from = "198.51.100.20";
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => register(i % 2 ? a.url : b.url, VSCODE, from)),
    );
    const created = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status === 429);
    assert.equal(created.length, 5, "the budget, counted across both replicas");
    assert.equal(refused.length, 7);
    const body = (await refused[0]!.json()) as { error: string; error_description: string };
    assert.equal(body.error, "temporarily_unavailable");
    assert.match(body.error_description, /registered too many clients this hour; retry after \d+ s/);
    const wait = Number(refused[0]!.headers.get("retry-after"));
    assert.ok(wait >= 1 && wait <= 3600, `Retry-After ${wait}`);

    // What the flood made the store hold: five records, each under the body cap.
    const ids = await Promise.all(
      created.map(async (r) => ((await r.json()) as { client_id: string }).client_id),
    );
    let bytes = 0;
    for (const id of ids) bytes += (await a.store.get(a.keys.oauthClient(id)))!.length;
    assert.ok(bytes <= 5 * 4096, `${bytes} bytes`);

    assert.equal((await register(a.url, VSCODE, "198.51.100.21")).status, 201, "another address registers");
    assert.equal((await register(a.url, VSCODE, "2001:db8:7:7::1")).status, 201);
    for (let i = 0; i < 4; i++) await register(a.url, VSCODE, `2001:db8:7:7::${i + 2}`);
    assert.equal((await register(a.url, VSCODE, "2001:db8:7:7::9")).status, 429, "one /64 is one address");
  });

  it("hopping /64s inside one IPv6 /48 meets the site's budget: ten times an address's", async () => {
    await awayFromHourEdge();
    const answers = [];
    for (let i = 0; i < 60; i++) answers.push((await register(a.url, VSCODE, `2001:db8:48:${i}::1`)).status);
    assert.equal(answers.filter((s) => s === 201).length, 50);
    assert.deepEqual(answers.slice(50), Array(10).fill(429));
    assert.equal((await register(a.url, VSCODE, "2001:db8:49::1")).status, 201, "another /48 registers");
  });

  it("a malformed registration is refused without spending the budget", async () => {
    await awayFromHourEdge();
    const from = "198.51.100.30";
    for (let i = 0; i < 8; i++)
      assert.equal((await register(a.url, { redirect_uris: "http://127.0.0.1/" }, from)).status, 400);
    assert.equal((await register(a.url, VSCODE, from)).status, 201);
  });

  it("a body over the cap is invalid client metadata that names the limit; a real client's fits", async () => {
    // Valid metadata: 20 redirect URIs of 200 characters each.
    const uris = Array.from({ length: 20 }, (_, i) => `https://app.example/${"p".repeat(180)}/${i}`);
    const padded = { ...VSCODE, redirect_uris: uris };
    const res = await register(a.url, padded, "198.51.100.40");
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      error: "invalid_client_metadata",
      error_description: "the registration request is larger than 4096 bytes",
    });
    assert.ok(JSON.stringify(VSCODE).length < 400);
  });
});

describe("an unused registration expires; a used one is kept", () => {
  let portico: RunningPortico;
  let issuer: string;

  before(async () => {
    ({ portico, issuer } = await startIssuer({
      tenant: "acme",
      users: [ADA],
      env: { PORTICO_OAUTH_UNUSED_CLIENT_TTL_SECONDS: "2", PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    }));
  });

  after(() => portico.close());

  const record = async (id: string) => {
    const raw = await portico.store.get(portico.keys.oauthClient(id));
    return raw === null ? undefined : (JSON.parse(raw) as ClientRecord);
  };

  it("a confidential client's client_secret_expires_at is its registration's expiry", async () => {
    const res = await register(issuer, { ...VSCODE, token_endpoint_auth_method: "client_secret_post" });
    const body = (await res.json()) as { client_id_issued_at: number; client_secret_expires_at: number };
    assert.equal(body.client_secret_expires_at, body.client_id_issued_at + 2);
  });

  it("gone after its TTL: the authorize page says to register again, the token endpoint invalid_client", async () => {
    const client = await TestOAuthClient.register(issuer);
    const id = client.client.client_id;
    assert.ok(await record(id));
    await sleep(2600);
    assert.equal(await record(id), undefined);
    const { url } = await client.authorizationUrl("acme");
    const page = await fetch(url, { redirect: "manual" });
    assert.equal(page.status, 400);
    assert.match(
      await page.text(),
      /registration expired after going unused\. The application must register again/,
    );
    const token = await fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x", client_id: id }),
    });
    assert.equal(token.status, 401);
    assert.equal(((await token.json()) as { error: string }).error, "invalid_client");
  });

  it("a client that obtains a token is kept past the unused TTL, its last use and expiry shown to the admin", async () => {
    const client = await TestOAuthClient.register(issuer);
    const id = client.client.client_id;
    const tokens = await client.tokens("acme", ADA);
    await sleep(2600);
    const kept = await record(id);
    assert.ok(kept, "kept: it was used");
    assert.ok(kept.lastUsedAt !== undefined && kept.expiresAt! > kept.lastUsedAt + 30 * 86_400);
    const ttl = await portico.store.ttl(portico.keys.oauthClient(id));
    assert.ok(ttl > 30 * 86_400, `TTL ${ttl}`);
    await client.refresh(tokens.refresh_token!);

    const admin = new AdminClient(portico.url, ADMIN_TOKEN);
    const listed = await admin.get("/tenants/acme/clients");
    const view = (listed.body.items as Array<Record<string, unknown>>).find((c) => c.client_id === id)!;
    assert.equal(view.lastUsedAt, new Date(kept.lastUsedAt * 1000).toISOString());
    assert.equal(typeof view.expiresAt, "string");
  });

  it("a pre-registered client never expires", async () => {
    const clients = new ClientStore(portico.store, portico.keys);
    const { client_id, client_secret_expires_at } = await clients.preRegister("acme", {
      ...VSCODE,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "client_secret_basic",
    } as never);
    assert.equal(client_secret_expires_at, 0);
    await sleep(2600);
    assert.ok(await record(client_id));
    assert.equal(await portico.store.ttl(portico.keys.oauthClient(client_id)), -1);
  });
});

describe("a client deleted everywhere by a platform key", () => {
  let portico: RunningPortico;
  let issuer: string;
  let admin: AdminClient;

  before(async () => {
    ({ portico, issuer } = await startIssuer({
      tenant: "acme",
      users: [ADA],
      env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    }));
    admin = new AdminClient(portico.url, ADMIN_TOKEN);
  });

  after(() => portico.close());

  it("loses its grants and registration (audited); the SDK's client registers again and works", async () => {
    const provider = new MemoryOAuthProvider("re-registering SDK client");
    const url = new URL(`${issuer}/mcp/acme`);
    const connect = async () => {
      const client = new Client({ name: "sdk", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
      return client;
    };
    await assert.rejects(connect(), UnauthorizedError);
    const first = provider.information!.client_id;
    await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(
      await signInAt(issuer, provider.authorizationUrl!, ADA),
    );
    const client = await connect();
    assert.ok((await client.listPrompts()).prompts.length > 0);
    await client.close();

    const deleted = await admin.delete(`/clients/${first}`);
    assert.equal(deleted.status, 204);
    assert.equal(await portico.store.get(portico.keys.oauthClient(first)), null);
    const grants = await admin.get("/tenants/acme/grants");
    const own = (grants.body.items as Array<{ client_id: string; revokedAt?: string }>).filter(
      (g) => g.client_id === first,
    );
    assert.ok(own.length > 0 && own.every((g) => g.revokedAt !== undefined), "its grants revoked");
    const audit = await admin.get("/audit");
    assert.ok(
      (audit.body.items as Array<{ action: string; target: string }>).some(
        (e) => e.action === "client.delete" && e.target === first,
      ),
    );
    assert.equal((await admin.delete(`/clients/${first}`)).status, 404, "gone");

    // Its access token was revoked with the grant: the SDK's refresh is invalid_client, so it
    // forgets the registration, registers again and sends the user to sign in.
    provider.authorizationUrl = undefined;
    await assert.rejects(connect(), UnauthorizedError);
    const second = provider.information?.client_id;
    assert.ok(second && second !== first, "registered again");
    assert.equal(provider.authorizationUrl!.searchParams.get("client_id"), second);
    await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(
      await signInAt(issuer, provider.authorizationUrl!, ADA),
    );
    const again = await connect();
    assert.ok((await again.listPrompts()).prompts.length > 0);
    await again.close();
  });

  it("a tenant key may not", async () => {
    const key = await admin.post("/tenants/acme/api-keys", { name: "t" });
    const tenantAdmin = new AdminClient(portico.url, (key.body as { token: string }).token);
    const client = await TestOAuthClient.register(issuer);
    assert.equal((await tenantAdmin.delete(`/clients/${client.client.client_id}`)).status, 403);
  });
});
