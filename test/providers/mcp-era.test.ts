// Which era an `mcp` provider speaks upstream: "auto" discovers it (server/discover, else
// initialize); a pinned era is used as configured, and an upstream that does not speak it is
// unhealthy with a reason instead of being followed. Each upstream request is recorded by method.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Fastify from "fastify";
import { Agent, type Dispatcher } from "undici";
import type { UpstreamEra } from "../../src/records/tenant.js";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startStatelessUpstream } from "../fixtures/stateless-server.js";

type Upstream = { url: string; close(): Promise<void> };
let sessionOnly: Upstream;
let dualEra: Upstream; // the SDK v2 fixture: 2026-07-28, and 2025 requests on its legacy leg
const store = new MemoryStore();

before(async () => {
  [sessionOnly, dualEra] = await Promise.all([startConformanceUpstream(), startStatelessUpstream()]);
});
after(async () => {
  await Promise.all([sessionOnly.close(), dualEra.close()]);
  await store.close();
});

/** Starts a provider on `url` whose upstream requests are recorded as their JSON-RPC methods. */
async function started(url: string, era: UpstreamEra | undefined) {
  const methods: string[] = [];
  class Recording extends Agent {
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      if (typeof options.body === "string")
        methods.push((JSON.parse(options.body) as { method?: string }).method ?? "");
      return super.dispatch(options, handler);
    }
  }
  const provider = new McpProvider(
    { id: "up", kind: "mcp", url, ...(era && { era }) },
    {
      tenantId: "acme",
      store,
      keys: createKeys("era"),
      log: Fastify({ logger: false }).log,
      outlet: { notify: async () => undefined, request: async () => ({}) },
      timeoutMs: 5000,
      sessionTtlSeconds: 60,
      fetch: globalThis.fetch,
      dispatcher: new Recording(),
    },
  );
  await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
  return { provider, methods };
}

function context(sessionId: string | undefined): CallContext {
  return {
    tenantId: "acme",
    sessionId,
    protocolVersion: sessionId ? "2025-11-25" : "2026-07-28",
    clientCapabilities: {},
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    request: () => Promise.reject(new Error("no client requests in this test")),
  };
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text?: string }).text;

describe("an mcp provider's upstream era", () => {
  it("auto: a 2026-07-28 upstream is spoken to statelessly, a session-era one after initialize", async () => {
    const modern = await started(dualEra.url, undefined);
    const legacy = await started(sessionOnly.url, "auto");
    try {
      assert.equal(modern.provider.healthy, true);
      assert.deepEqual(modern.methods.slice(0, 1), ["server/discover"]);
      // It also accepts initialize: it speaks both eras, and each client is served in its own.
      assert.ok(modern.methods.includes("initialize"), `sent: ${modern.methods.join(", ")}`);
      const before = modern.methods.length;
      await modern.provider.callTool("test_simple_text", {}, context(undefined));
      assert.ok(!modern.methods.slice(before).includes("initialize"), "a 2026-07-28 client: no session");
      await modern.provider.callTool("test_simple_text", {}, context("s1"));
      assert.ok(
        modern.methods.slice(before).filter((m) => m === "tools/call").length === 2,
        "both calls reached the upstream",
      );
      assert.equal(legacy.provider.healthy, true);
      assert.deepEqual(legacy.methods.slice(0, 2), ["server/discover", "initialize"]);
    } finally {
      await Promise.all([modern.provider.close(), legacy.provider.close()]);
    }
  });

  it('"session" never asks server/discover, even of an upstream that would answer it', async () => {
    const { provider, methods } = await started(dualEra.url, "session");
    try {
      assert.equal(provider.healthy, true);
      assert.equal(methods[0], "initialize");
      assert.ok(provider.entries().tools.some((t) => t.name === "test_simple_text"));
      const result = await provider.callTool("test_simple_text", {}, context("s1"));
      assert.match(text(result) ?? "", /simple text/);
      assert.ok(!methods.includes("server/discover"), `sent: ${methods.join(", ")}`);
    } finally {
      await provider.close();
    }
  });

  it('"stateless" against a session-era upstream is unhealthy, says why, and never initializes', async () => {
    const { provider, methods } = await started(sessionOnly.url, "stateless");
    try {
      assert.equal(provider.healthy, false);
      assert.equal(provider.healthReason, "the upstream does not speak 2026-07-28 (server/discover)");
      await assert.rejects(provider.refresh(), /does not speak 2026-07-28/);
      assert.ok(!methods.includes("initialize"), `sent: ${methods.join(", ")}`);
    } finally {
      await provider.close();
    }
  });

  it('"stateless" against a 2026-07-28 upstream serves its calls', async () => {
    const { provider, methods } = await started(dualEra.url, "stateless");
    try {
      assert.equal(provider.healthy, true);
      const result = await provider.callTool("test_simple_text", {}, context(undefined));
      assert.match(text(result) ?? "", /simple text/);
      assert.ok(methods.includes("tools/call") && !methods.includes("initialize"));
    } finally {
      await provider.close();
    }
  });
});
