// Try it's internal passes (docs/admin-api.md "Try it"), presented over real HTTP as a leaked one
// would be: a pass names its caller once, at the one URL it was issued for (a tenant's own, or one
// of its virtual servers); at another tenant's or server's URL, a second time, or unknown, it is
// no credential and the request is the unauthenticated one it is (401).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tryCaller } from "../../src/admin/try-it.js";
import { INTERNAL_CALLER_HEADER, type PassTarget } from "../../src/mcp/internal-callers.js";
import { META, STATELESS_VERSIONS } from "../../src/protocol/era.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";

let portico: RunningPortico;
const VERSION = STATELESS_VERSIONS.at(-1)!;

before(async () => {
  const port = await freePort();
  portico = await startPortico({
    tenants: [
      {
        ...staticTenant("acme"),
        auth: "oauth",
        servers: [{ id: "eng", scopes: ["eng"], providers: [{ provider: "docs" }] }],
      },
      { ...staticTenant("other"), auth: "oauth" },
    ],
    redis: true,
    env: { PORT: String(port), PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
});

after(async () => {
  await portico?.close();
});

const pass = (target: PassTarget, scopes: string[] = []) =>
  portico.internalCallers.issue(tryCaller({ sub: "admin:platform:root" }, scopes), target);

/** prompts/list at `path` (below /mcp/) presenting `header` as the pass. */
function listPrompts(path: string, header: string): Promise<Response> {
  return fetch(`${portico.url}/mcp/${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": "prompts/list",
      [INTERNAL_CALLER_HEADER]: header,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "prompts/list",
      params: {
        _meta: {
          [META.protocolVersion]: VERSION,
          [META.clientCapabilities]: {},
          [META.clientInfo]: { name: "test", version: "1" },
        },
      },
    }),
  });
}

describe("an internal pass", () => {
  it("names its caller at the tenant it was issued for, once", async () => {
    const header = pass({ tenant: "acme" });
    const first = await listPrompts("acme", header);
    assert.equal(first.status, 200, await first.clone().text());
    const body = (await first.json()) as { result: { prompts: Array<{ name: string }> } };
    assert.deepEqual(
      body.result.prompts.map((p) => p.name),
      ["code-review"],
    );
    assert.equal((await listPrompts("acme", header)).status, 401, "spent");
  });

  it("names its caller at the virtual server it was issued for", async () => {
    const res = await listPrompts("acme/eng", pass({ tenant: "acme", server: "eng" }, ["eng"]));
    assert.equal(res.status, 200, await res.text());
  });

  it("is no credential at another tenant's URL, and is spent there", async () => {
    const header = pass({ tenant: "acme" });
    assert.equal((await listPrompts("other", header)).status, 401);
    assert.equal((await listPrompts("acme", header)).status, 401, "spent by the wrong use");
  });

  it("is no credential at another URL of its own tenant", async () => {
    assert.equal((await listPrompts("acme/eng", pass({ tenant: "acme" }, ["eng"]))).status, 401);
    assert.equal((await listPrompts("acme", pass({ tenant: "acme", server: "eng" }, ["eng"]))).status, 401);
  });

  it("made up is no credential", async () => {
    assert.equal((await listPrompts("acme", "a".repeat(43))).status, 401);
  });
});
