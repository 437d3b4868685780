// Provider traffic under the egress policy: the resolved address is checked for every request.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { ConfigError, loadConfig } from "../../src/config/env.js";
import { startMinimalUpstream } from "../fixtures/minimal-server.js";
import { connectClient } from "../support/clients.js";
import { startPortico } from "../support/portico.js";

const hits: string[] = [];
const target = createServer((req, res) => {
  hits.push(req.url ?? "");
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
});
let port = 0;

before(async () => {
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  port = (target.address() as AddressInfo).port;
});
after(() => target.close());

const tenant = (tools: Array<{ name: string; url: string }>) => ({
  id: "acme",
  auth: "none" as const,
  providers: [{ id: "wx", kind: "http" as const, tools }],
});

it("refuses metadata addresses and denied ranges, even behind a host name", async () => {
  const portico = await startPortico({
    tenants: [
      tenant([
        { name: "metadata", url: "http://169.254.169.254/latest/meta-data/" },
        { name: "by_name", url: `http://localhost:${port}/by-name` },
        { name: "by_ip", url: `http://127.0.0.1:${port}/by-ip` },
      ]),
    ],
    env: { PORTICO_PROVIDER_DENY_CIDRS: "127.0.0.0/8" },
  });
  try {
    const { client } = await connectClient(portico.mcpUrl("acme"));
    const metadata = await client.callTool({ name: "metadata" });
    assert.equal(metadata.isError, true);
    assert.match(JSON.stringify(metadata.content), /egress policy refuses 169\.254\.169\.254 .*metadata/);
    for (const name of ["by_name", "by_ip"]) {
      const result = await client.callTool({ name });
      assert.equal(result.isError, true, name);
      assert.match(JSON.stringify(result.content), /inside PORTICO_PROVIDER_DENY_CIDRS/, name);
    }
    assert.deepEqual(hits, [], "nothing reached the denied server");
    await client.close();
  } finally {
    await portico.close();
  }
});

it("without a deny list, the same local endpoint is reached", async () => {
  const portico = await startPortico({
    tenants: [tenant([{ name: "by_name", url: `http://localhost:${port}/ok` }])],
  });
  try {
    const { client } = await connectClient(portico.mcpUrl("acme"));
    assert.equal((await client.callTool({ name: "by_name" })).isError, undefined);
    assert.deepEqual(hits, ["/ok"]);
    await client.close();
  } finally {
    await portico.close();
  }
});

it("rejects a malformed CIDR at boot", () => {
  assert.throws(
    () => loadConfig({ PORTICO_PROVIDER_DENY_CIDRS: "10.0.0.0/99" }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /PORTICO_PROVIDER_DENY_CIDRS: "10.0.0.0\/99" has an invalid prefix length/);
      return true;
    },
  );
});

it("applies to upstream MCP servers too", async () => {
  const upstream = await startMinimalUpstream();
  const providers = [{ id: "min", kind: "mcp" as const, url: upstream.url, prefix: "min" }];
  const denied = await startPortico({
    tenants: [{ id: "acme", auth: "none", providers }],
    env: { PORTICO_PROVIDER_DENY_CIDRS: "127.0.0.0/8" },
  });
  const allowed = await startPortico({ tenants: [{ id: "acme", auth: "none", providers }] });
  try {
    const a = await connectClient(denied.mcpUrl("acme"));
    assert.deepEqual((await a.client.listTools()).tools, [], "the refused upstream contributes nothing");
    const b = await connectClient(allowed.mcpUrl("acme"));
    assert.deepEqual(
      (await b.client.listTools()).tools.map((t) => t.name),
      ["min__add"],
    );
    await Promise.all([a.client.close(), b.client.close()]);
  } finally {
    await Promise.all([denied.close(), allowed.close()]);
    await upstream.close();
  }
});
