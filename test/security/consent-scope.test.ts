// Consent means what it says (docs/oauth.md "Consent"): a user's remembered consent is for the
// protected resource it was given on (the tenant's URL, or one virtual server's), so consent on
// one virtual server does not skip the consent page of another or of the tenant; and an admin's
// revocation of the grant, or deletion of the client, forgets it: the next sign-in asks again.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { formOf, TestOAuthClient } from "../support/oauth.js";
import { startIssuer, type RunningPortico } from "../support/portico.js";

const alice = { username: "alice", password: "correct horse battery staple" };
let portico: RunningPortico;
let issuer: string;
let admin: AdminClient;

before(async () => {
  ({ portico, issuer } = await startIssuer({
    tenant: "acme",
    users: [alice],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  }));
  admin = new AdminClient(portico.url);
  for (const id of ["eng", "ops"])
    assert.equal(
      (await admin.post("/tenants/acme/servers", { id, providers: [{ provider: "docs" }] })).status,
      201,
    );
});

after(() => portico.close());

/** Signs alice in for `resource` ("acme" or "acme/<server>"); whether the consent page was shown. */
async function signIn(client: TestOAuthClient, resource: string): Promise<boolean> {
  const { url } = await client.authorizationUrl(resource);
  const page = await fetch(url, { redirect: "manual" });
  assert.equal(page.status, 200, "the login page");
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${issuer}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams(fields),
    });
  let back = await post("/oauth/login", { ...formOf(await page.text()), ...alice });
  const consentShown = back.status === 200;
  if (consentShown) {
    const html = await back.text();
    assert.match(html, /allow/i, "the consent page");
    back = await post("/oauth/consent", { ...formOf(html), decision: "allow" });
  }
  assert.equal(back.status, 303, "sent back to the client");
  return consentShown;
}

/** Revokes every live grant `client` holds on acme, as an admin. */
async function revokeAll(client: TestOAuthClient): Promise<void> {
  const grants = (await admin.get("/tenants/acme/grants")).body.items as Array<{
    id: string;
    client_id: string;
    revokedAt?: string;
  }>;
  const live = grants.filter((g) => g.client_id === client.client.client_id && g.revokedAt === undefined);
  assert.ok(live.length > 0);
  for (const g of live) assert.equal((await admin.delete(`/tenants/acme/grants/${g.id}`)).status, 204);
}

describe("remembered consent", () => {
  it("is for the resource it was given on: one virtual server's does not open another's, nor the tenant's", async () => {
    const client = await TestOAuthClient.register(issuer);
    assert.equal(await signIn(client, "acme/eng"), true, "first time on eng: asked");
    assert.equal(await signIn(client, "acme/eng"), false, "again on eng: remembered");
    assert.equal(await signIn(client, "acme/ops"), true, "ops is another resource: asked");
    assert.equal(await signIn(client, "acme"), true, "the tenant's URL too");
    assert.equal(await signIn(client, "acme"), false);
    assert.equal(await signIn(client, "acme/ops"), false);
  });

  it("is forgotten when an admin revokes the grant: the next sign-in asks again, on every resource", async () => {
    const client = await TestOAuthClient.register(issuer);
    assert.equal(await signIn(client, "acme"), true);
    assert.equal(await signIn(client, "acme/eng"), true);
    assert.equal(await signIn(client, "acme"), false);
    await revokeAll(client);
    assert.equal(await signIn(client, "acme"), true, "asked again after the revocation");
    assert.equal(await signIn(client, "acme/eng"), true);
  });

  it("is forgotten when an admin deletes the client from the tenant", async () => {
    const client = await TestOAuthClient.register(issuer);
    assert.equal(await signIn(client, "acme"), true);
    assert.equal(await signIn(client, "acme"), false);
    assert.equal((await admin.delete(`/tenants/acme/clients/${client.client.client_id}`)).status, 204);
    assert.equal(await signIn(client, "acme"), true, "asked again");
  });

  it("of another client, or another user's, is not this one's", async () => {
    const first = await TestOAuthClient.register(issuer);
    const second = await TestOAuthClient.register(issuer);
    assert.equal(await signIn(first, "acme"), true);
    assert.equal(await signIn(second, "acme"), true);
  });
});
