// The session index behind the admin API's session list: it costs no write on the hot path, and
// pruning keeps it to live sessions although requests slide their TTLs without touching it.
import assert from "node:assert/strict";
import { after, it } from "node:test";
import { SessionStore } from "../../src/mcp/sessions.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { createKeys } from "../../src/store/keys.js";

const store = new MemoryStore();
const keys = createKeys("t");
after(() => store.close());

const init = {
  tenantId: "acme",
  protocolVersion: "2025-11-25",
  clientCapabilities: {},
  principal: "",
  clientName: "c/1",
};

it("prune drops expired sessions and keeps ones whose TTL requests slid", async () => {
  // A 2 s TTL and 1.1 s pauses: a busy machine may stretch either pause by 0.9 s before slid
  // expires between them (with 1 s and 0.6 s pauses, 0.4 s was enough).
  const sessions = new SessionStore(store, keys, 2);
  const slid = await sessions.create(init);
  const idle = await sessions.create(init);
  await new Promise((r) => setTimeout(r, 1100));
  assert.ok(await sessions.touch("acme", slid.id));
  await new Promise((r) => setTimeout(r, 1100));
  // idle expired 2 s after creation; slid was used 1.1 s ago. Both index scores have passed.
  await sessions.prune("acme");
  assert.deepEqual(await sessions.ids("acme"), [slid.id]);
  assert.deepEqual(
    (await sessions.list("acme")).map((s) => s.session.id),
    [slid.id],
  );
  assert.equal(await sessions.read("acme", idle.id), undefined);
  assert.ok(await sessions.delete("acme", slid.id));
  assert.deepEqual(await sessions.ids("acme"), []);
});

it("a session keeps its capability profile, tasks and MCP Apps included, one shared object per shape", async () => {
  const sessions = new SessionStore(store, keys, 60);
  const caps = {
    sampling: { tools: {} },
    elicitation: { url: {} },
    roots: { listChanged: true },
    tasks: { list: {}, cancel: {} },
    extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
    experimental: { ignored: {} },
  };
  const created = await sessions.create({ ...init, clientCapabilities: caps });
  const read = await sessions.touch("acme", created.id);
  assert.equal(read?.profile, created.profile, "the same profile object on every request");
  assert.deepEqual(read?.profile.capabilities, {
    sampling: { tools: {} },
    elicitation: { url: {} },
    roots: { listChanged: true },
    tasks: { list: {}, cancel: {} },
    extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
  });
  const bare = await sessions.create({
    ...init,
    clientCapabilities: { extensions: { "io.modelcontextprotocol/ui": {} } },
  });
  assert.deepEqual((await sessions.touch("acme", bare.id))?.profile.capabilities, {
    extensions: { "io.modelcontextprotocol/ui": {} },
  });
  const none = await sessions.create(init);
  assert.deepEqual((await sessions.touch("acme", none.id))?.profile.capabilities, {});
  // A capability is declared by an object: anything else declares nothing.
  const odd = await sessions.create({
    ...init,
    clientCapabilities: { sampling: true, roots: "yes", elicitation: [], tasks: null } as never,
  });
  assert.equal((await sessions.touch("acme", odd.id))?.profile, none.profile);
  assert.deepEqual((await sessions.touch("acme", odd.id))?.clientCapabilities, {});
});
