// The admin API of connected accounts, every response checked against the OpenAPI document: a
// user's accounts, revoking one (gone on every replica, audited, never token material), a
// provider's connected users paged; and per-user providers refused where the connect page could
// not know who opens it (no sign-in, an external issuer without a login client), as problem+json.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { AccountStore, type AccountTokens } from "../../src/accounts/account-store.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, TEST_SECRET, type RunningPortico } from "../support/portico.js";

let portico: RunningPortico;
let admin: AdminClient;
let records: AccountStore;
const PER_USER = {
  id: "gh",
  kind: "mcp",
  url: "https://mcp.gh.example/mcp",
  auth: { type: "user_oauth", issuer: "http://127.0.0.1:9" },
};
const tokens = (n: number): AccountTokens => ({
  accessToken: `access-secret-${n}`,
  refreshToken: `refresh-secret-${n}`,
  expiresAt: Date.now() + 3_600_000,
  issuer: "http://127.0.0.1:9",
  clientId: "portico",
  mode: "preregistered",
  connectedAt: new Date().toISOString(),
  destinations: [PER_USER.url],
});

before(async () => {
  portico = await startPortico({
    redis: true,
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    tenants: [{ id: "acme", auth: "oauth", providers: [PER_USER as never] }, staticTenant("open")],
  });
  admin = new AdminClient(portico.url);
  records = new AccountStore(portico.store, portico.keys, new Secrets(TEST_SECRET));
  for (let i = 0; i < 5; i++) await records.put("acme", `user|${i}`, "gh", tokens(i));
});
after(() => portico.close());

/** An authorization server an attacker runs: its metadata, and every request body it is sent. */
async function recordingIssuer(): Promise<{ url: string; bodies: string[]; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      bodies.push(`${req.method} ${req.url} ${body}`);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      res.setHeader("content-type", "application/json");
      if (req.url?.startsWith("/.well-known/")) {
        res.end(
          JSON.stringify({
            issuer: url,
            token_endpoint: `${url}/token`,
            revocation_endpoint: `${url}/revoke`,
          }),
        );
        return;
      }
      res.end(JSON.stringify({ access_token: "attacker-token", token_type: "Bearer", expires_in: 3600 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server };
}

describe("connected accounts in the admin API", () => {
  it("lists a user's accounts without token material", async () => {
    const res = await admin.get(`/tenants/acme/subjects/${encodeURIComponent("user|1")}/accounts`);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.items.map((a: { provider: string; user: string }) => [a.provider, a.user]),
      [["gh", "user|1"]],
    );
    assert.doesNotMatch(JSON.stringify(res.body), /secret/);
    const none = await admin.get("/tenants/acme/subjects/nobody/accounts");
    assert.deepEqual(none.body, { items: [] });
  });

  it("pages a provider's connected users, with the count", async () => {
    const first = await admin.get("/tenants/acme/providers/gh/accounts?limit=2");
    assert.equal(first.body.count, 5);
    assert.deepEqual(
      first.body.items.map((a: { user: string }) => a.user),
      ["user|0", "user|1"],
    );
    const second = await admin.get(
      `/tenants/acme/providers/gh/accounts?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );
    assert.deepEqual(
      second.body.items.map((a: { user: string }) => a.user),
      ["user|2", "user|3"],
    );
    assert.equal((await admin.get("/tenants/acme/providers/nope/accounts")).status, 404);
  });

  it("revokes one account: gone at once, audited without tokens; a second revoke is 404", async () => {
    const changes: unknown[] = [];
    const stop = portico.accounts.onChange((c) => changes.push(c));
    assert.equal(await portico.accounts.tokenFor("acme", "user|2", "gh"), "access-secret-2");
    const res = await admin.delete(`/tenants/acme/subjects/${encodeURIComponent("user|2")}/accounts/gh`);
    assert.equal(res.status, 204);
    assert.equal(await portico.accounts.tokenFor("acme", "user|2", "gh"), undefined);
    assert.equal(await portico.accounts.tokenFor("acme", "user|3", "gh"), "access-secret-3");
    const audit = await admin.get("/tenants/acme/audit");
    const entry = audit.body.items.find((e: { action: string }) => e.action === "account.revoke");
    assert.equal(entry?.target, "gh user|2");
    assert.doesNotMatch(JSON.stringify(audit.body), /access-secret|refresh-secret/);
    // The change comes back through the store's channel: up to 5 s on a busy machine.
    for (let i = 0; i < 100 && changes.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(changes, [{ tenant: "acme", user: "user|2", provider: "gh", connected: false }]);
    stop();
    const again = await admin.delete(`/tenants/acme/subjects/${encodeURIComponent("user|2")}/accounts/gh`);
    assert.equal(again.status, 404);
    assert.equal((await admin.get("/tenants/acme/providers/gh/accounts")).body.count, 4);
  });

  it("refuses per-user providers on tenants whose users cannot be signed in", async () => {
    const open = await admin.post("/tenants/open/providers", PER_USER);
    assert.equal(open.status, 422);
    assert.equal(open.body.errors[0].pointer, "/auth/type");
    assert.match(open.body.errors[0].detail, /"auth": "oauth"/);
    const external = { type: "external", issuer: "https://idp.example", jwksUrl: "https://idp.example/jwks" };
    const switched = await admin.put("/tenants/acme/identity", external);
    assert.equal(switched.status, 422);
    assert.match(switched.body.errors[0].detail, /identity\.login/);
    const withLogin = await admin.put("/tenants/acme/identity", {
      ...external,
      login: { clientId: "portico", clientSecret: "login-secret-0123" },
    });
    assert.equal(withLogin.status, 200);
    assert.deepEqual(withLogin.body.login, { clientId: "portico", clientSecret: { set: true } });
  });

  it("validates user_oauth settings", async () => {
    const bad = await admin.post("/tenants/acme/providers", {
      ...PER_USER,
      id: "bad",
      auth: { type: "user_oauth", registration: "preregistered" },
    });
    assert.equal(bad.status, 422);
    assert.match(JSON.stringify(bad.body.errors), /clientId/);
    const secretAlone = await admin.post("/tenants/acme/providers", {
      ...PER_USER,
      id: "bad",
      auth: { type: "user_oauth", clientSecret: "s3cret-value" },
    });
    assert.equal(secretAlone.status, 422);
    assert.doesNotMatch(JSON.stringify(secretAlone.body), /s3cret-value/);
    const good = await admin.post("/tenants/acme/providers", {
      ...PER_USER,
      id: "pre",
      auth: {
        type: "user_oauth",
        clientId: "portico",
        clientSecret: "s3cret-value",
        scope: "repo read:user",
      },
    });
    assert.equal(good.status, 201);
    assert.deepEqual(good.body.auth, {
      type: "user_oauth",
      clientId: "portico",
      clientSecret: { set: true },
      scope: "repo read:user",
    });
  });

  it("keeps a pre-registered client secret only for the same authorization server", async () => {
    const moved = await admin.put("/tenants/acme/providers/pre", {
      ...PER_USER,
      id: "pre",
      auth: {
        type: "user_oauth",
        issuer: "https://attacker.example",
        clientId: "portico",
        clientSecret: { set: true },
      },
    });
    assert.equal(moved.status, 422);
    assert.equal(moved.body.errors[0].pointer, "/auth/clientSecret");
  });

  it("a provider moved to another upstream sends no user's token there", async () => {
    const moving = { ...PER_USER, id: "moving", auth: { ...PER_USER.auth, clientId: "portico" } };
    assert.equal((await admin.post("/tenants/acme/providers", moving)).status, 201);
    await records.put("acme", "mover", "moving", tokens(7));
    // Another path below the same upstream is still that upstream.
    const below = await admin.patch("/tenants/acme/providers/moving", { url: `${PER_USER.url}/v2` });
    assert.equal(below.status, 200);
    assert.equal(await portico.accounts.tokenFor("acme", "mover", "moving"), "access-secret-7");
    // A tenant admin points the provider at a server they run: the user's token is not for it.
    const moved = await admin.patch("/tenants/acme/providers/moving", {
      url: "https://attacker.example/mcp",
    });
    assert.equal(moved.status, 200);
    assert.equal(await portico.accounts.tokenFor("acme", "mover", "moving"), undefined);
    // Moving back does not bring the account back: it was dropped, the user connects again.
    await admin.patch("/tenants/acme/providers/moving", { url: PER_USER.url });
    assert.equal(await portico.accounts.tokenFor("acme", "mover", "moving"), undefined);
    assert.equal(await records.get("acme", "mover", "moving"), undefined);
  });

  it("a provider moved to another authorization server is sent no refresh token", async () => {
    const evil = await recordingIssuer();
    try {
      const moving = { ...PER_USER, id: "reissued", auth: { ...PER_USER.auth, clientId: "portico" } };
      assert.equal((await admin.post("/tenants/acme/providers", moving)).status, 201);
      // Due for a refresh: it expires within the minute.
      await records.put("acme", "mover", "reissued", { ...tokens(8), expiresAt: Date.now() + 30_000 });
      const patched = await admin.patch("/tenants/acme/providers/reissued", {
        auth: { type: "user_oauth", issuer: evil.url, clientId: "portico" },
      });
      assert.equal(patched.status, 200);
      const token = await portico.accounts.tokenFor("acme", "mover", "reissued");
      assert.notEqual(token, "attacker-token");
      assert.doesNotMatch(evil.bodies.join("\n"), /secret-8/);
      // Nor is it sent there to be revoked.
      await records.put("acme", "mover", "reissued", tokens(8));
      assert.ok(await portico.accounts.disconnect("acme", "mover", "reissued"));
      await new Promise((r) => setTimeout(r, 200));
      assert.doesNotMatch(evil.bodies.join("\n"), /secret-8/);
    } finally {
      evil.server.close();
    }
  });

  it("deleting a provider drops its users' accounts on every replica", async () => {
    const before = (await admin.get("/tenants/acme/providers/gh/accounts")).body.count;
    assert.ok(before > 0);
    assert.equal((await admin.delete("/tenants/acme/providers/gh")).status, 204);
    assert.equal(await records.get("acme", "user|3", "gh"), undefined);
    assert.deepEqual(
      (await admin.get(`/tenants/acme/subjects/${encodeURIComponent("user|3")}/accounts`)).body,
      { items: [] },
    );
  });
});
