// Lists shaped by the client's capabilities (docs/upstream-mcp.md "Capability profiles"): an
// upstream that offers a tool only to clients that can sample is listed once per profile, in
// both eras; a client's calls go through its own profile's upstream session, so the gated tool
// exists where it is called, and a client without the capability gets what the upstream tells it.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import { profileOf, NO_PROFILE } from "../../src/protocol/profile.js";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext, ListChangeKind } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

const SAMPLING = { sampling: {} };
const META_CAPS = "io.modelcontextprotocol/clientCapabilities";

/**
 * One upstream for both eras (chosen by the provider's pinned era): "echo" for everyone, "summarize"
 * only for a client that declared sampling (at initialize, or in the request's _meta).
 */
async function startGatingUpstream(gate = true) {
  const sessions = new Map<string, boolean>();
  let next = 0;
  const http = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const m = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, any>;
    if (m.id === undefined) return void res.writeHead(202).end();
    const reply = (result: object, headers: Record<string, string> = {}) => {
      res.writeHead(200, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }));
    };
    const modern = m.params?._meta?.[META_CAPS] !== undefined;
    if (m.method === "server/discover")
      return reply({ supportedVersions: ["2026-07-28"], capabilities: { tools: { listChanged: false } } });
    if (m.method === "initialize") {
      const sid = `s${++next}`;
      sessions.set(sid, m.params.capabilities?.sampling !== undefined);
      return reply(
        {
          protocolVersion: m.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "g", version: "1" },
        },
        { "mcp-session-id": sid },
      );
    }
    const sampling = modern
      ? m.params._meta[META_CAPS].sampling !== undefined
      : sessions.get(String(req.headers["mcp-session-id"])) === true;
    const tools = [{ name: "echo", inputSchema: { type: "object" } }];
    if (sampling && gate) tools.push({ name: "summarize", inputSchema: { type: "object" } });
    if (m.method === "tools/list") return reply(modern ? { resultType: "complete", tools } : { tools });
    if (m.method === "tools/call") {
      if (!tools.some((t) => t.name === m.params.name)) {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: m.id,
            error: { code: -32602, message: `Tool ${m.params.name} not found` },
          }),
        );
      }
      const content = [{ type: "text", text: m.params.name }];
      return reply(modern ? { resultType: "complete", content } : { content });
    }
    return reply({});
  }
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let upstream: Awaited<ReturnType<typeof startGatingUpstream>>;
const store = new MemoryStore();
before(async () => void (upstream = await startGatingUpstream()));
after(async () => {
  await upstream.close();
  await store.close();
});

function context(
  era: "session" | "stateless",
  clientCapabilities: CallContext["clientCapabilities"],
): CallContext {
  return {
    tenantId: "acme",
    sessionId: era === "session" ? `c-${JSON.stringify(clientCapabilities)}` : undefined,
    protocolVersion: era === "session" ? "2025-11-25" : "2026-07-28",
    clientCapabilities,
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    request: () => Promise.reject(new Error("no client requests in this test")),
  };
}

/** An `mcp` provider of tenant acme for `url`, pinned to `era`. */
function providerOf(url: string, id: string, era: "session" | "stateless"): McpProvider {
  return new McpProvider(
    { id, kind: "mcp", url, era },
    {
      tenantId: "acme",
      store,
      keys: createKeys(`profiles-${id}-${era}`),
      log: Fastify({ logger: false }).log,
      outlet: { notify: async () => undefined, request: async () => ({}) },
      timeoutMs: 5000,
      sessionTtlSeconds: 60,
      fetch: globalThis.fetch,
      dispatcher: new Agent(),
    },
  );
}

const names = (p: McpProvider, profile?: ReturnType<typeof profileOf>) =>
  p.entries(profile).tools.map((t) => t.name);

for (const era of ["session", "stateless"] as const)
  describe(`an upstream whose tools depend on the client's capabilities (${era} era)`, () => {
    let provider: McpProvider;
    const changes: Array<[ListChangeKind, string | undefined]> = [];
    before(async () => {
      provider = providerOf(upstream.url, "g", era);
      await provider.start({
        listChanged: (kind, profile) => void changes.push([kind, profile?.key]),
        healthChanged: () => undefined,
      });
    });
    after(() => provider.close());

    it("lists per profile: the gated tool only for a profile that declares sampling", async () => {
      assert.deepEqual(names(provider), ["echo"]);
      assert.deepEqual(names(provider, NO_PROFILE), ["echo"]);
      const sampling = profileOf(SAMPLING);
      await Promise.all([provider.prepare(sampling), provider.prepare(sampling)]);
      assert.deepEqual(names(provider, sampling), ["echo", "summarize"]);
      assert.deepEqual(names(provider), ["echo"], "the profile without capabilities is unchanged");
      assert.deepEqual(changes, [], "a first listing announces nothing");
    });

    it("knows its lists vary by profile (so they are never cacheScope public)", () => {
      assert.equal(provider.variesByProfile, true);
    });

    it("routes a client's call through its profile, so the gated tool exists there", async () => {
      const called = await provider.callTool("summarize", {}, context(era, SAMPLING));
      assert.deepEqual(called.content, [{ type: "text", text: "summarize" }]);
      await assert.rejects(
        provider.callTool("summarize", {}, context(era, {})),
        (err: Error & { code?: number }) => {
          assert.equal(err.code, -32602);
          return true;
        },
      );
    });
  });

for (const era of ["session", "stateless"] as const)
  it(`an upstream that lists the same for every profile says so once started (${era} era)`, async () => {
    const same = await startGatingUpstream(false);
    const provider = providerOf(same.url, "s", era);
    try {
      await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
      assert.equal(provider.variesByProfile, false);
    } finally {
      await provider.close();
      await same.close();
    }
  });
