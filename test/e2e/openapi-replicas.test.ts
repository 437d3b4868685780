// An `openapi` provider whose document is fetched from its `documentUrl` (docs/openapi.md), on two
// replicas: the document is fetched once, when the provider is saved, and both replicas serve
// that copy from the store; its relative server is resolved against the document's URL; the
// refresh call fetches it again, once, and clients of either replica hear list_changed.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { startRestService, type RestService } from "../fixtures/rest-service.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

let rest: RestService;
let a: RunningPortico;
let b: RunningPortico;
let onB: RecordingClient;

before(async () => {
  rest = await startRestService();
  const prefix = uniquePrefix();
  const tenants = [{ id: "acme", auth: "none" as const, providers: [] }];
  const env = { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN };
  a = await startPortico({ redisPrefix: prefix, tenants, env });
  b = await startPortico({ redisPrefix: prefix, tenants, env });
});
after(async () => {
  await onB?.client.close();
  await Promise.all([a?.close(), b?.close()]);
  await rest?.close();
});

const documentFetches = () => rest.seen.filter((r) => r.url === "/openapi.json").length;

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it("fetches the document once when saved; both replicas serve it, calling its relative server", async () => {
  const saved = await new AdminClient(a.url).post("/tenants/acme/providers", {
    id: "pets",
    kind: "openapi",
    documentUrl: `${rest.url}/openapi.json`,
    useDocumentServers: true,
    prefix: "pets",
  });
  assert.equal(saved.status, 201, JSON.stringify(saved.body).slice(0, 300));
  assert.equal(documentFetches(), 1, "fetched once, by the save");
  onB = await connectClient(b.mcpUrl("acme"));
  await until(
    async () => (await onB.client.listTools()).tools.some((t) => t.name === "pets__getPet"),
    "B serves it",
  );
  const result = await onB.client.callTool({ name: "pets__getPet", arguments: { petId: "7" } });
  assert.deepEqual(result.structuredContent, { id: "7", name: "pet 7", tags: [] });
  assert.equal(
    rest.seen[rest.seen.length - 1]!.url,
    "/pets/7",
    "the server `/` is the document's own origin",
  );
  assert.equal(documentFetches(), 1, "no replica fetched it again");
});

it("the refresh call fetches it again, once; the other replica's clients hear list_changed", async () => {
  rest.withPing = true;
  const seen = onB.notifications.length;
  const refreshed = await new AdminClient(a.url).post("/tenants/acme/providers/pets/refresh", {});
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.equal(documentFetches(), 2);
  await until(
    () => onB.notifications.slice(seen).some((n) => n.method === "notifications/tools/list_changed"),
    "list_changed on B",
  );
  const tools = (await onB.client.listTools()).tools.map((t) => t.name);
  assert.ok(tools.includes("pets__ping"), tools.join());
  assert.equal(documentFetches(), 2);
});

it("refuses a documentUrl it cannot fetch, naming the field", async () => {
  const res = await new AdminClient(a.url).post("/tenants/acme/providers", {
    id: "gone",
    kind: "openapi",
    documentUrl: `${rest.url}/nowhere.json`,
    baseUrl: rest.url,
  });
  assert.equal(res.status, 422);
  assert.equal(res.body.errors[0].pointer, "/documentUrl");
  assert.match(res.body.errors[0].detail, /could not be fetched from .*HTTP 404/);
});
