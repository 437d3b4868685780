// Upstreams of other shapes than the SDK's default: stateless, JSON-answering, without a GET
// stream or resource templates. Portico serves them the same way.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { startMinimalUpstream } from "../fixtures/minimal-server.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let upstream: Awaited<ReturnType<typeof startMinimalUpstream>>;
let portico: RunningPortico;

before(async () => {
  upstream = await startMinimalUpstream();
  portico = await startPortico({
    redis: true,
    tenants: [
      { id: "acme", auth: "none", providers: [{ id: "min", kind: "mcp", url: upstream.url, prefix: "min" }] },
    ],
  });
});
after(async () => {
  await portico.close();
  await upstream.close();
});

it("serves a stateless JSON-only upstream that has no resource templates", async () => {
  const { client } = await connectClient(portico.mcpUrl("acme"));
  assert.deepEqual(
    client.getServerCapabilities()?.resources,
    { listChanged: true, subscribe: false },
    "no subscribe upstream, none here",
  );
  assert.deepEqual(
    (await client.listTools()).tools.map((t) => t.name),
    ["min__add"],
  );
  const sum = await client.callTool({ name: "min__add", arguments: { a: 2, b: 3 } });
  assert.deepEqual(sum.structuredContent, { sum: 5 });
  assert.deepEqual(
    (await client.listResources()).resources.map((r) => r.uri),
    ["minimal://readme"],
  );
  assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
  const read = await client.readResource({ uri: "minimal://readme" });
  assert.equal((read.contents[0] as { text: string }).text, "read me");
  await client.close();
});
