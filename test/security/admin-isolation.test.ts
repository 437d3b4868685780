// Tenant isolation on the admin API as a hostile tenant admin (docs/security.md "Admin API"): a
// tenant key reaches its own tenant only, whatever the tenant is named, and nothing of the
// platform scope (its keys, their names, revoking them) is within its reach.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let portico: RunningPortico;
let admin: AdminClient;

before(async () => {
  portico = await startPortico({ tenants: [], redis: true, env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } });
  admin = new AdminClient(portico.url);
});
after(() => portico.close());

async function createKey(path: string): Promise<{ id: string; token: string }> {
  const res = await admin.post(path, { name: `key for ${path}` });
  assert.equal(res.status, 201);
  return { id: res.body.id as string, token: res.body.token as string };
}

describe('a tenant named "platform" is a tenant like any other', () => {
  it("its key neither lists nor revokes platform keys; deleting it leaves them working", async () => {
    const platform = await createKey("/api-keys");
    assert.equal((await admin.post("/tenants", { id: "platform", auth: "none" })).status, 201);
    const own = await createKey("/tenants/platform/api-keys");

    const listed = await admin.get("/tenants/platform/api-keys", { token: own.token });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      (listed.body.items as { id: string }[]).map((k) => k.id),
      [own.id],
      "only the tenant's own key",
    );
    const revoke = await admin.delete(`/tenants/platform/api-keys/${platform.id}`, { token: own.token });
    assert.equal(revoke.status, 404);
    assert.equal((await admin.get("/tenants", { token: platform.token })).status, 200, "still works");

    // The platform's list shows platform keys only, and /api-keys cannot revoke the tenant's key.
    const platformList = await admin.get("/api-keys");
    const ids = (platformList.body.items as { id: string; tenant: unknown }[]).map((k) => k.id);
    assert.ok(ids.includes(platform.id));
    assert.ok(!ids.includes(own.id), "a tenant key is not a platform key");
    assert.equal((await admin.delete(`/api-keys/${own.id}`)).status, 404);

    assert.equal((await admin.delete("/tenants/platform")).status, 204);
    assert.equal((await admin.get("/tenants", { token: platform.token })).status, 200, "survives");
    assert.equal((await admin.get("/tenants/platform/providers", { token: own.token })).status, 401);
    const after = await admin.get("/api-keys");
    assert.ok((after.body.items as { id: string }[]).some((k) => k.id === platform.id));
  });
});

describe("a tenant key and another tenant's login throttle", () => {
  it("cannot clear it (404, counters intact); the owner's key can, and it is audited", async () => {
    for (const id of ["throttle-a", "throttle-b"])
      assert.equal((await admin.post("/tenants", { id, auth: "oauth" })).status, 201);
    const user = { username: "alice", password: "correct horse battery staple" };
    assert.equal((await admin.post("/tenants/throttle-b/users", user)).status, 201);
    const a = await createKey("/tenants/throttle-a/api-keys");
    const b = await createKey("/tenants/throttle-b/api-keys");
    // Failed logins counted on b's alice, as the login page counts them (oauth/login-throttle.ts).
    const account = createHash("sha256").update("alice").digest("base64url").slice(0, 22);
    const failures = portico.keys.loginFailures("throttle-b", account);
    await portico.store.incr(failures, 7, 600);

    for (const path of [
      "/tenants/throttle-b/users/alice/throttle",
      "/tenants/throttle-a/users/alice/throttle",
    ]) {
      const res = await admin.delete(path, { token: a.token });
      assert.equal(res.status, 404, path);
      assert.ok(!JSON.stringify(res.body).includes("throttle-b") || path.includes("throttle-b/"));
    }
    assert.equal(await portico.store.get(failures), "7", "nothing cleared");
    assert.equal((await admin.post("/secrets/reseal", undefined, { token: a.token })).status, 403);

    assert.equal(
      (await admin.delete("/tenants/throttle-b/users/alice/throttle", { token: b.token })).status,
      204,
    );
    assert.equal(await portico.store.get(failures), null);
    const audit = await admin.get("/tenants/throttle-b/audit?limit=1");
    assert.equal(audit.body.items[0].action, "user.throttle-clear");
    assert.equal(audit.body.items[0].target, "alice");
    const aAudit = JSON.stringify((await admin.get("/tenants/throttle-a/audit")).body);
    assert.ok(!aAudit.includes("throttle-clear"), aAudit);
  });
});
