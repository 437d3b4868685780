// A token exchange provider through the admin API, as the OpenAPI document describes it: its STS
// client secret is write-only (`{"set": true}`), sealed at rest, kept when sent back, and a tenant
// without sign-in refuses it.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

const SECRET = "sts-client-secret-5b1e77";
let portico: RunningPortico;
let admin: AdminClient;

const provider = {
  id: "notes",
  kind: "mcp",
  url: "http://127.0.0.1:9/mcp",
  auth: {
    type: "token_exchange",
    tokenUrl: "http://127.0.0.1:9/token",
    audience: "https://notes.internal.example",
    clientId: "portico",
    clientSecret: SECRET,
  },
};

before(async () => {
  portico = await startPortico({ tenants: [], redis: true, env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } });
  admin = new AdminClient(portico.url);
  assert.equal((await admin.post("/tenants", { id: "acme", auth: "oauth" })).status, 201);
});
after(async () => {
  await portico.close();
});

it("shows the STS client secret as set, seals it, and keeps it when sent back", async () => {
  const created = await admin.post("/tenants/acme/providers", provider);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(created.body.auth, { ...provider.auth, clientSecret: { set: true } });
  const got = await admin.get("/tenants/acme/providers/notes");
  assert.ok(!JSON.stringify(got.body).includes(SECRET));
  const raw = await portico.store.get(portico.keys.tenant("acme"));
  assert.ok(raw && !raw.includes(SECRET), "sealed at rest");
  const put = await admin.put("/tenants/acme/providers/notes", { ...got.body, timeoutMs: 5000 });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const record = portico.registry.get("acme")!.config.providers.find((p) => p.id === "notes");
  assert.equal((record as { auth: { clientSecret: string } }).auth.clientSecret, SECRET);
  assert.equal((await admin.delete("/tenants/acme/providers/notes")).status, 204);
});

it("is refused on a tenant without sign-in", async () => {
  const res = await admin.post("/tenants", { id: "open", auth: "none", providers: [provider] });
  assert.equal(res.status, 422);
  assert.match(
    JSON.stringify(res.body),
    /acts for each signed-in user: the tenant needs \\"auth\\": \\"oauth\\"/,
  );
  assert.ok(!JSON.stringify(res.body).includes(SECRET));
});

it("is refused as a provider of a tenant without sign-in", async () => {
  assert.equal((await admin.post("/tenants", { id: "open", auth: "none" })).status, 201);
  const res = await admin.post("/tenants/open/providers", provider);
  assert.equal(res.status, 422);
  assert.match(JSON.stringify(res.body), /acts for each signed-in user/);
  assert.ok(!JSON.stringify(res.body).includes(SECRET));
});
