// What happens to an upstream MCP server over time, as a client sees it through Portico: tools
// added upstream (list_changed), an upstream that forgets sessions (transparent re-initialize
// and retry), cancellation and roots changes carried upstream.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { startDynamicUpstream, type DynamicUpstream } from "../fixtures/dynamic-server.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let upstream: DynamicUpstream;
let portico: RunningPortico;

before(async () => {
  upstream = await startDynamicUpstream();
  portico = await startPortico({
    redis: true,
    tenants: [
      { id: "acme", auth: "none", providers: [{ id: "dyn", kind: "mcp", url: upstream.url, prefix: "dyn" }] },
    ],
  });
});
after(async () => {
  await portico.close();
  await upstream.close();
});

async function until(check: () => boolean, what: string, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it("a tool added upstream reaches connected clients as tools/list_changed", async () => {
  const rc = await connectClient(portico.mcpUrl("acme"));
  await rc.client.listTools();
  await rc.streamOpen(); // list_changed comes on it
  upstream.addTool("fresh");
  await rc.waitFor("notifications/tools/list_changed", 5000);
  const names = (await rc.client.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes("dyn__fresh"), names.join());
  await rc.client.close();
});

it("an upstream that forgot the session is re-initialized and the call retried once", async () => {
  const { client } = await connectClient(portico.mcpUrl("acme"));
  assert.deepEqual((await client.callTool({ name: "dyn__echo", arguments: { text: "one" } })).content, [
    { type: "text", text: "one" },
  ]);
  const before = upstream.events.filter((e) => e === "initialize").length;
  upstream.forgetSessions();
  const again = await client.callTool({ name: "dyn__echo", arguments: { text: "two" } });
  assert.deepEqual(again.content, [{ type: "text", text: "two" }]);
  assert.ok(
    upstream.events.filter((e) => e === "initialize").length > before,
    "a new upstream session was opened",
  );
  await client.close();
});

it("a client's cancellation cancels the upstream call", async () => {
  const { client } = await connectClient(portico.mcpUrl("acme"));
  const abort = new AbortController();
  const call = client.callTool({ name: "dyn__slow", arguments: { ms: 5000 } }, undefined, {
    signal: abort.signal,
  });
  // Cancelled once the upstream runs it (before, there would be nothing upstream to cancel).
  await until(() => upstream.events.includes("slow"), "the call to reach the upstream");
  abort.abort("enough");
  await assert.rejects(call);
  await until(
    () => upstream.events.some((e) => e.startsWith("cancelled:")),
    "the upstream to see the cancellation",
  );
  await client.close();
});

it("a dedicated upstream session opens its GET stream right after notifications/initialized", async () => {
  // An upstream without an event log loses what it asks before that stream is open (roots, as
  // the filesystem server asks them at once); Portico's own work (store writes, the client's log
  // level, subscriptions) comes after, as a direct client's would.
  const rc = await connectClient(portico.mcpUrl("acme"));
  await rc.client.setLoggingLevel("debug");
  const mark = upstream.events.length;
  await rc.client.callTool({ name: "dyn__echo", arguments: { text: "open the upstream session" } });
  await until(() => upstream.events.slice(mark).includes("get-open"), "the GET stream");
  const seen = upstream.events.slice(mark).filter((e) => e === "get-open" || e.startsWith("post:"));
  assert.deepEqual(seen.slice(0, 4), [
    "post:notifications/initialized",
    "get-open",
    "post:logging/setLevel",
    "post:tools/call",
  ]);
  await rc.client.close();
});

it("notifications/roots/list_changed is passed upstream, and roots/list answered by the client", async () => {
  const { client } = await connectClient(portico.mcpUrl("acme"));
  await client.callTool({ name: "dyn__echo", arguments: { text: "open the upstream session" } });
  await client.sendRootsListChanged();
  await until(() => upstream.events.includes("roots:file:///work"), "the upstream to read the roots");
  await client.close();
});
