// Upstream credentials on the wire (docs/architecture.md §3): bearer and client credentials tokens on http
// tools and on an upstream MCP server (official SDK), one token per provider, a new one after
// expiry and after a 401 (retried once), and the client's own token never sent upstream.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import type { HttpProviderConfig, UpstreamAuth } from "../../src/records/tenant.js";
import { egressFetch } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { HttpProvider } from "../../src/providers/http.js";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext } from "../../src/providers/types.js";
import { validateProvider } from "../../src/records/validate.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { connectClient } from "../support/clients.js";
import { startPortico } from "../support/portico.js";
import { startMinimalUpstream } from "../fixtures/minimal-server.js";
import { issue, startTokenEndpoint, type TokenEndpoint } from "../fixtures/token-endpoint.js";

let tokens: TokenEndpoint;

before(async () => {
  tokens = await startTokenEndpoint();
});
after(() => tokens.close());
beforeEach(() => {
  tokens.requests.length = 0;
  tokens.reply = issue(3600);
});

function clientCredentials(extra: Record<string, unknown> = {}): UpstreamAuth {
  return {
    type: "client_credentials",
    tokenUrl: tokens.url,
    clientId: "portico gw",
    clientSecret: "s3cret",
    ...extra,
  };
}

/** A clock tests move by hand. */
function clock() {
  let ms = 1_700_000_000_000;
  return { now: () => ms, advance: (by: number) => void (ms += by) };
}

function context(): CallContext {
  return {
    tenantId: "acme",
    sessionId: undefined,
    protocolVersion: "2025-06-18",
    clientCapabilities: {},
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    request: () => Promise.reject(new Error("no client requests in this test")),
  };
}

// --- http tools ----------------------------------------------------------------------------

describe("http provider with auth", () => {
  const seen: (string | undefined)[] = [];
  const refused = new Set<string>();
  let base: string;
  const tools = createServer((req, res) => {
    const authorization = req.headers.authorization;
    seen.push(authorization);
    req.resume();
    if (authorization === undefined || refused.has(authorization))
      return void res.writeHead(401, { "content-type": "text/plain" }).end(`refused: ${authorization}`);
    if (req.url === "/echo-fail")
      return void res.writeHead(400, { "content-type": "text/plain" }).end(`bad: ${authorization}`);
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  before(async () => {
    await new Promise<void>((resolve) => tools.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(tools.address() as AddressInfo).port}`;
  });
  after(() => tools.close());
  beforeEach(() => {
    seen.length = 0;
    refused.clear();
  });

  function provider(auth: unknown, now?: () => number) {
    const config = validateProvider({
      id: "api",
      kind: "http",
      auth,
      tools: [
        { name: "echo", url: `${base}/echo` },
        { name: "fail", url: `${base}/echo-fail` },
      ],
    }) as HttpProviderConfig;
    return new HttpProvider(config, { now, fetch: egressFetch(new EgressPolicy()) });
  }
  const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

  it("sends a bearer token to every tool, and redacts it from error excerpts", async () => {
    const p = provider({ type: "bearer", token: "static-bearer-token" });
    assert.deepEqual((await p.callTool("echo", {}, context())).structuredContent, { ok: true });
    const failed = await p.callTool("fail", {}, context());
    assert.equal(text(failed), "api/fail: upstream answered HTTP 400: bad: Bearer [redacted]");
    assert.deepEqual(seen, ["Bearer static-bearer-token", "Bearer static-bearer-token"]);
  });

  it("does not retry a 401 to a bearer token: a new one cannot be had", async () => {
    refused.add("Bearer static-bearer-token");
    const result = await provider({ type: "bearer", token: "static-bearer-token" }).callTool(
      "echo",
      {},
      context(),
    );
    assert.equal(text(result), "api/echo: upstream answered HTTP 401: refused: Bearer [redacted]");
    assert.equal(seen.length, 1);
  });

  it("uses one client credentials token for all tools and calls", async () => {
    const p = provider(clientCredentials());
    await Promise.all([p.callTool("echo", {}, context()), p.callTool("echo", {}, context())]);
    await p.callTool("fail", {}, context());
    assert.deepEqual(seen, ["Bearer tok-1", "Bearer tok-1", "Bearer tok-1"]);
    assert.equal(tokens.requests.length, 1);
  });

  it("fetches a new token after expiry", async () => {
    tokens.reply = issue(2);
    const time = clock();
    const p = provider(clientCredentials(), time.now);
    await p.callTool("echo", {}, context());
    time.advance(1_500);
    await p.callTool("echo", {}, context());
    assert.deepEqual(seen, ["Bearer tok-1", "Bearer tok-2"]);
  });

  it("after a 401, fetches a new token once and sends the call again", async () => {
    const p = provider(clientCredentials());
    await p.callTool("echo", {}, context());
    refused.add("Bearer tok-1");
    assert.deepEqual((await p.callTool("echo", {}, context())).structuredContent, { ok: true });
    assert.deepEqual(seen, ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]);
    refused.add("Bearer tok-2").add("Bearer tok-3");
    const result = await p.callTool("echo", {}, context());
    assert.equal(text(result), "api/echo: upstream answered HTTP 401: refused: Bearer [redacted]");
    assert.deepEqual(seen.slice(3), ["Bearer tok-2", "Bearer tok-3"], "one retry, not a loop");
    assert.equal(tokens.requests.length, 3);
  });

  it("reports a token endpoint failure as a tool error", async () => {
    tokens.reply = () => ({ status: 400, body: { error: "invalid_scope" } });
    const result = await provider(clientCredentials({ scope: "admin" })).callTool("echo", {}, context());
    assert.equal(result.isError, true);
    assert.equal(
      text(result),
      "api/echo: could not obtain an upstream access token: the token endpoint answered HTTP 400 (invalid_scope)",
    );
    assert.equal(seen.length, 0, "the tool was not called without a token");
  });
});

// --- upstream MCP servers ---------------------------------------------------------------------

describe("mcp provider with auth", () => {
  it("sends the token on every upstream request and replaces it after a 401", async () => {
    const allowed = new Set(["Bearer tok-1"]);
    const upstream = await startMinimalUpstream({ authorize: (a) => a !== undefined && allowed.has(a) });
    const store = new MemoryStore();
    const provider = new McpProvider(
      { id: "up", kind: "mcp", url: upstream.url, auth: clientCredentials() },
      {
        tenantId: "acme",
        store,
        keys: createKeys("t"),
        log: Fastify({ logger: false }).log,
        outlet: { notify: async () => undefined, request: async () => ({}) },
        timeoutMs: 5000,
        sessionTtlSeconds: 60,
        fetch: globalThis.fetch,
        dispatcher: new Agent(),
      },
    );
    try {
      await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
      assert.equal(provider.healthy, true);
      const sum = await provider.callTool("add", { a: 2, b: 3 }, context());
      assert.deepEqual(sum.structuredContent, { sum: 5 });
      assert.ok(upstream.authorizations.length >= 3);
      assert.ok(upstream.authorizations.every((a) => a === "Bearer tok-1"));
      assert.equal(tokens.requests.length, 1, "one token for the catalog client and the calls");

      allowed.clear();
      allowed.add("Bearer tok-2");
      const again = await provider.callTool("add", { a: 1, b: 1 }, context());
      assert.deepEqual(again.structuredContent, { sum: 2 });
      assert.deepEqual(upstream.authorizations.slice(-2), ["Bearer tok-1", "Bearer tok-2"]);
      assert.equal(tokens.requests.length, 2);
    } finally {
      await provider.close();
      await upstream.close();
      await store.close();
    }
  });

  it("through Portico: the upstream sees the provider's bearer token, never the client's", async () => {
    const upstream = await startMinimalUpstream();
    const portico = await startPortico({
      tenants: [
        {
          id: "acme",
          auth: "none",
          providers: [
            { id: "up", kind: "mcp", url: upstream.url, auth: { type: "bearer", token: "upstream-token" } },
          ],
        },
      ],
    });
    try {
      const { client, transport } = await connectClient(portico.mcpUrl("acme"), {
        headers: { authorization: "Bearer client-own-token" },
      });
      // The provider may still be connecting when the client does: wait for its tool to be listed.
      for (let i = 0; i < 100 && (await client.listTools()).tools.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const result = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
      assert.deepEqual(result.structuredContent, { sum: 3 });
      await transport.close();
      assert.ok(upstream.authorizations.length > 0);
      assert.deepEqual(new Set(upstream.authorizations), new Set(["Bearer upstream-token"]));
    } finally {
      await portico.close();
      await upstream.close();
    }
  });
});
