// Provider health says since when its current state holds (docs/admin-api.md "Provider health"):
// set in the list and the health check, stable while the state lasts, moved when the upstream goes
// away and the check sees it unhealthy.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let everything: EverythingServer;
let portico: RunningPortico;
let admin: AdminClient;

before(async () => {
  everything = await startEverything();
  portico = await startPortico({
    tenants: [
      { id: "acme", auth: "none", providers: [{ id: "everything", kind: "mcp", url: everything.url }] },
    ],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  admin = new AdminClient(portico.url);
});

after(async () => {
  await portico?.close();
  await everything?.stop();
});

it("since is when the current status began, and moves when it changes", async () => {
  const started = Date.now();
  const listed = (await admin.get("/tenants/acme/providers")).body.items[0].health;
  assert.equal(listed.status, "healthy");
  const healthySince = Date.parse(listed.since);
  assert.ok(healthySince <= Date.now(), listed.since);
  const checked = (await admin.get("/tenants/acme/providers/everything/health")).body;
  assert.equal(checked.status, "healthy");
  assert.equal(checked.since, listed.since, "the same state: the same since");

  await everything.stop();
  const down = (await admin.get("/tenants/acme/providers/everything/health")).body;
  assert.equal(down.status, "unhealthy");
  const downSince = Date.parse(down.since);
  assert.ok(downSince > healthySince && downSince >= started, `${down.since} after ${listed.since}`);
  const again = (await admin.get("/tenants/acme/providers/everything/health")).body;
  assert.equal(again.status, "unhealthy");
  assert.equal(again.since, down.since, "still down: since stays");
});
