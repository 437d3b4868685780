// Codes are single-use, refresh tokens rotate, and a second use of either is reported as a replay
// (the token endpoint then revokes the grant). Secrets are stored only as hashes.
import assert from "node:assert/strict";
import { after, it } from "node:test";
import { GrantStore, tenantOfSecret } from "../../src/oauth/grants.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

const store = new MemoryStore();
const keys = createKeys("t");
const grants = new GrantStore(store, keys);
after(() => store.close());

const code = {
  grantId: "g_1",
  client_id: "c1",
  redirect_uri: "http://127.0.0.1:9/cb",
  code_challenge: "x".repeat(43),
  scope: "mcp:read",
  resource: "http://localhost/mcp/acme",
};

it("a code is redeemed once; the second attempt is a replay", async () => {
  const c = await grants.issueCode("acme", code);
  assert.equal(tenantOfSecret(c), "acme");
  assert.deepEqual(await grants.redeemCode(c), { ok: true, record: code });
  const again = await grants.redeemCode(c);
  assert.equal(again.ok, false);
  assert.equal(!again.ok && again.replay?.grantId, "g_1");
  assert.deepEqual(await grants.redeemCode("acme.unknown"), { ok: false });
  assert.deepEqual(await grants.redeemCode(`acme.${"A".repeat(43)}`), { ok: false });
  const raced = await grants.issueCode("acme", code);
  const [both1, both2] = await Promise.all([grants.redeemCode(raced), grants.redeemCode(raced)]);
  assert.equal([both1.ok, both2.ok].filter(Boolean).length, 1, "concurrent redemptions: exactly one wins");
});

it("a refresh token rotates once; reuse is reported", async () => {
  const rt = await grants.issueRefresh("acme", {
    grantId: "g_1",
    client_id: "c1",
    scope: "mcp:read",
    resource: code.resource,
  });
  assert.equal((await grants.useRefresh(rt)).ok, true);
  const reuse = await grants.useRefresh(rt);
  assert.equal(reuse.ok, false);
  assert.equal(!reuse.ok && reuse.replay?.grantId, "g_1");
  const raw = JSON.stringify(await store.get(keys.refreshToken("acme", "x")));
  assert.ok(!raw.includes(rt));
});

it("grants record their access tokens; revoking returns them once", async () => {
  const g = await grants.createGrant({ tenant: "acme", client_id: "c1", sub: "u_1", scope: "mcp:read" });
  await grants.noteToken("acme", g.id, "jti-1", Math.floor(Date.now() / 1000) + 3600);
  const revoked = await grants.revokeGrant("acme", g.id);
  assert.deepEqual(Object.keys(revoked?.tokens ?? {}), ["jti-1"]);
  assert.equal(await grants.revokeGrant("acme", g.id), undefined);
  assert.ok((await grants.grant("acme", g.id))?.revokedAt);
  assert.deepEqual(
    (await grants.grants("acme")).map((x) => x.id),
    [g.id],
  );
});

it("consent is remembered per user and client, and merges scopes", async () => {
  assert.deepEqual(await grants.consented("acme", "u_1", "c1"), []);
  await grants.rememberConsent("acme", "u_1", "c1", undefined, ["mcp:read"]);
  await grants.rememberConsent("acme", "u_1", "c1", undefined, ["mcp:tools"]);
  assert.deepEqual(await grants.consented("acme", "u_1", "c1"), ["mcp:read", "mcp:tools"]);
  assert.deepEqual(await grants.consented("acme", "u_1", "c2"), []);
  assert.deepEqual(await grants.consented("other", "u_1", "c1"), []);
});

it("consent is per protected resource: the tenant's URL and each virtual server's apart", async () => {
  await grants.rememberConsent("acme", "u_2", "c1", "eng", ["mcp:read"]);
  assert.deepEqual(await grants.consented("acme", "u_2", "c1", "eng"), ["mcp:read"]);
  assert.deepEqual(await grants.consented("acme", "u_2", "c1"), [], "not the tenant's URL");
  assert.deepEqual(await grants.consented("acme", "u_2", "c1", "ops"), [], "nor another server");
});

it("each resource's consent lasts its own 30 days: consent on another later does not extend it", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const clocked = new GrantStore(store, keys, () => new Date(now));
  await clocked.rememberConsent("acme", "u_4", "c1", "eng", ["mcp:read"]);
  now += 29 * 86_400_000;
  await clocked.rememberConsent("acme", "u_4", "c1", "ops", ["mcp:read"]);
  now += 2 * 86_400_000;
  assert.deepEqual(await clocked.consented("acme", "u_4", "c1", "eng"), [], "eng's expired");
  assert.deepEqual(await clocked.consented("acme", "u_4", "c1", "ops"), ["mcp:read"]);
});

it("revoking a grant forgets the user's consent to its client on the tenant, on every resource", async () => {
  await grants.rememberConsent("acme", "u_3", "c1", undefined, ["mcp:read"]);
  await grants.rememberConsent("acme", "u_3", "c1", "eng", ["mcp:read"]);
  await grants.rememberConsent("acme", "u_3", "c2", undefined, ["mcp:read"]);
  const g = await grants.createGrant({ tenant: "acme", client_id: "c1", sub: "u_3", scope: "mcp:read" });
  await grants.revokeGrant("acme", g.id);
  assert.deepEqual(await grants.consented("acme", "u_3", "c1"), []);
  assert.deepEqual(await grants.consented("acme", "u_3", "c1", "eng"), []);
  assert.deepEqual(await grants.consented("acme", "u_3", "c2"), ["mcp:read"], "another client's stays");
});
