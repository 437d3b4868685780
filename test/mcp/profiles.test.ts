// Capability profiles on the endpoint (docs/architecture.md §3): each request is listed and routed
// with its own profile's catalog on both lanes, a flood of 2026-07-28 requests each spelling its
// capabilities differently keeps the tenant's profiles within the bound, and a list cursor is
// good only for the profile it was issued to.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_PROFILES } from "../../src/tenants/profile-views.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { postRpc } from "../support/rpc.js";
import { profileOf } from "../../src/protocol/profile.js";

const VERSION = "2026-07-28";
let portico: RunningPortico;

before(async () => {
  portico = await startPortico({
    env: { PORTICO_PAGE_SIZE: "1" },
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [
          {
            id: "docs",
            kind: "static",
            prompts: [
              { name: "one", messages: [{ role: "user", text: "1" }] },
              { name: "two", messages: [{ role: "user", text: "2" }] },
            ],
          },
        ],
      },
    ],
  });
});
after(() => portico.close());

async function call(method: string, params: Record<string, unknown>, capabilities: Record<string, unknown>) {
  const res = await portico.app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
    },
    payload: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    }),
  });
  return JSON.parse(res.body) as { result?: Record<string, any>; error?: { code: number; message: string } };
}

describe("capability profiles on /mcp", () => {
  it("a flood of capability spellings keeps the tenant's profiles within the bound", async () => {
    const kinds = ["sampling", "elicitation", "roots", "tasks"];
    for (let i = 0; i < 300; i++) {
      const caps: Record<string, unknown> = { experimental: { [`noise${i}`]: { n: i } } };
      // Every subset of the four capabilities, each spelled with junk inside.
      kinds.forEach((k, bit) => {
        if (i & (1 << bit))
          caps[k] = { [`junk${i}`]: {}, ...(k === "roots" && i & 64 ? { listChanged: true } : {}) };
      });
      if (i & 16)
        caps.extensions = {
          "io.modelcontextprotocol/ui": i & 32 ? { mimeTypes: ["text/html;profile=mcp-app"] } : {},
        };
      const answer = await call("prompts/list", {}, caps);
      assert.ok(answer.result, JSON.stringify(answer));
    }
    const kept = portico.registry.get("acme")!.profileCount;
    assert.equal(kept, MAX_PROFILES, "more shapes than the bound were asked for: the bound holds");
  });

  it("a cursor is good for the profile it was issued to only", async () => {
    const first = await call("prompts/list", {}, {});
    assert.deepEqual(
      first.result?.prompts.map((p: { name: string }) => p.name),
      ["one"],
    );
    const cursor = first.result?.nextCursor as string;
    const next = await call("prompts/list", { cursor }, {});
    assert.deepEqual(
      next.result?.prompts.map((p: { name: string }) => p.name),
      ["two"],
    );
    const other = await call("prompts/list", { cursor }, { sampling: {} });
    assert.equal(other.error?.code, -32602);
    assert.match(other.error?.message ?? "", /Invalid cursor/);
  });

  it("lists are cacheScope public until a provider lists per profile, then private (auth: none)", async () => {
    const before = await call("prompts/list", {}, {});
    assert.equal(before.result?.cacheScope, "public");
    // The static provider given a prepare(), as an upstream that lists per profile has one: the
    // tenant's lists may now differ between clients, so no shared cache may keep them.
    const live = portico.registry.provider("acme", "docs")!;
    const prepared: string[] = [];
    live.prepare = async (profile) => void prepared.push(profile.key);
    try {
      await portico.registry.reload("acme");
      for (const caps of [{}, { sampling: {} }]) {
        const list = await call("prompts/list", {}, caps);
        assert.equal(list.result?.cacheScope, "private", JSON.stringify(caps));
        assert.equal(list.result?.ttlMs, 60_000);
        const read = await call("prompts/get", { name: "one" }, caps);
        assert.equal(read.result?.cacheScope, undefined, "prompts/get carries no hints");
      }
      assert.ok(prepared.length >= 2, "each profile was prepared");
      const discover = await call("server/discover", {}, {});
      assert.equal(discover.result?.cacheScope, "public", "discover does not vary");
    } finally {
      delete live.prepare;
      await portico.registry.reload("acme");
    }
  });

  it("a session pages with its own profile's cursors", async () => {
    const { client } = await connectClient(portico.mcpUrl("acme"));
    const page = await client.listPrompts();
    assert.deepEqual(
      page.prompts.map((p) => p.name),
      ["one"],
    );
    const rest = await client.listPrompts({ cursor: page.nextCursor });
    assert.deepEqual(
      rest.prompts.map((p) => p.name),
      ["two"],
    );
    await client.close();
  });
});

describe("a session's profile on the replica that carries its stream", () => {
  it("is listed there when the GET stream opens, so its changes are followed there", async () => {
    const prefix = uniquePrefix();
    const tenant = {
      id: "acme",
      auth: "none" as const,
      providers: [{ id: "docs", kind: "static" as const, prompts: [{ name: "one", messages: [] }] }],
    };
    const a = await startPortico({ tenants: [tenant], redisPrefix: prefix });
    const b = await startPortico({ tenants: [], redisPrefix: prefix });
    const controller = new AbortController();
    try {
      // Replica b's provider lists per profile (a static provider given a prepare()).
      const prepared: string[] = [];
      b.registry.provider("acme", "docs")!.prepare = async (profile) => void prepared.push(profile.key);
      await b.registry.reload("acme");
      const init = await postRpc(a.mcpUrl("acme"), {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: { sampling: {}, roots: {} } },
      });
      const sid = init.headers.get("mcp-session-id")!;
      const sampling = profileOf({ sampling: {}, roots: {} }).key;
      assert.ok(!prepared.includes(sampling), "nothing asked b for it yet");
      const stream = await fetch(b.mcpUrl("acme"), {
        headers: { accept: "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
        signal: controller.signal,
      });
      assert.equal(stream.status, 200);
      for (let i = 0; i < 50 && !prepared.includes(sampling); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(prepared.includes(sampling), JSON.stringify(prepared));
    } finally {
      controller.abort();
      await Promise.all([a.close(), b.close()]);
    }
  });
});
