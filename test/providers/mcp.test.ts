// The mcp provider on its own: client sessions that need no upstream session of their own share
// one; dedicated ones (roots, a log level, subscriptions) are let go when idle and resumed (not
// re-initialized) on the next call, and those of ended sessions are closed.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { startDynamicUpstream, type DynamicUpstream } from "../fixtures/dynamic-server.js";

let upstream: DynamicUpstream;
let provider: McpProvider;
const store = new MemoryStore();
const keys = createKeys("t");

/** A started provider for `url`, keeping its records in `on`. */
async function startProvider(url: string, on: MemoryStore): Promise<McpProvider> {
  const started = new McpProvider(
    { id: "dyn", kind: "mcp", url },
    {
      tenantId: "acme",
      store: on,
      keys,
      log: Fastify({ logger: false }).log,
      outlet: { notify: async () => undefined, request: async () => ({}) },
      timeoutMs: 5000,
      sessionTtlSeconds: 60,
      fetch: globalThis.fetch,
      dispatcher: new Agent(),
      clientIdleMs: 100,
      sweepIntervalMs: 50,
    },
  );
  await started.start({ listChanged: () => undefined, healthChanged: () => undefined });
  return started;
}

before(async () => {
  upstream = await startDynamicUpstream();
  provider = await startProvider(upstream.url, store);
});
after(async () => {
  await provider.close();
  await upstream.close();
  await store.close();
});

/** A client that declared roots: the upstream may ask for them any time, so it gets its own upstream session. */
function context(
  sessionId: string,
  clientCapabilities: CallContext["clientCapabilities"] = { roots: {} },
): CallContext {
  return {
    tenantId: "acme",
    sessionId,
    protocolVersion: "2025-11-25",
    clientCapabilities,
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    request: () => Promise.reject(new Error("no client requests in this test")),
  };
}

const initializations = () => upstream.events.filter((e) => e === "initialize").length;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const closes = () => upstream.events.filter((e) => e === "get-closed").length;

/** Polls until `check` holds (timers run late on a busy machine), at most 5 s. */
async function until(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 250 && !check(); i++) await wait(20);
  return check();
}

it("an idle client is let go and its upstream session resumed on the next call", async () => {
  await store.set(keys.session("acme", "s1"), "{}", { ttlSeconds: 60 });
  const before = initializations();
  const first = await provider.callTool("echo", { text: "a" }, context("s1"));
  assert.deepEqual(first.content, [{ type: "text", text: "a" }]);
  assert.equal(initializations(), before + 1, "the session's upstream session was opened");
  assert.ok(
    await until(() => upstream.events.includes("get-closed")),
    "the idle client was closed (its GET stream ended)",
  );
  const second = await provider.callTool("echo", { text: "b" }, context("s1"));
  assert.deepEqual(second.content, [{ type: "text", text: "b" }]);
  assert.equal(initializations(), before + 1, "resumed from the stored record, not re-initialized");
});

it("a client of an ended session is closed; one of a subscribed session is kept", async () => {
  await store.set(keys.session("acme", "s3"), "{}", { ttlSeconds: 60 });
  await store.setAdd(keys.subscriptions("acme", "s3"), "dyn test://x");
  await provider.callTool("echo", { text: "kept" }, context("s3"));
  const closedBefore = closes();
  await wait(400); // several sweeps past clientIdleMs
  assert.equal(closes(), closedBefore, "subscribed: kept open");
  await store.del(keys.session("acme", "s3"));
  assert.ok(await until(() => closes() === closedBefore + 1), "ended: closed");
});

it("the stored upstream session outlives the sweep while the client session lives", async () => {
  await store.set(keys.session("acme", "s2"), "{}", { ttlSeconds: 60 });
  await provider.callTool("echo", { text: "x" }, context("s2"));
  await wait(200); // a few sweeps
  assert.notEqual(await store.hashGet(keys.upstreamSessions("acme", "s2"), "dyn"), null);
  assert.ok((await store.ttl(keys.upstreamSessions("acme", "s2"))) > 0);
});

it("client sessions that declare nothing share the upstream session of their profile", async () => {
  const before = initializations();
  const calls = ["a", "b", "c"].map((sid) =>
    provider.callTool("echo", { text: sid }, context(`shared-${sid}`, {})),
  );
  const results = await Promise.all(calls);
  assert.deepEqual(
    results.map((r) => r.content),
    ["a", "b", "c"].map((text) => [{ type: "text", text }]),
  );
  assert.equal(initializations(), before, "no upstream session was opened for them");
  assert.equal(await store.hashGet(keys.upstreamSessions("acme", "shared-a"), "dyn"), null);
});

it("a client session that sets a log level gets its own upstream session on its next call", async () => {
  await store.set(keys.session("acme", "lvl"), "{}", { ttlSeconds: 60 });
  await provider.callTool("echo", { text: "x" }, context("lvl", { sampling: {} }));
  const before = initializations();
  await provider.setLogLevel("lvl", "error");
  await provider.callTool("echo", { text: "y" }, { ...context("lvl", { sampling: {} }), logLevel: "error" });
  assert.equal(initializations(), before + 1);
  assert.notEqual(await store.hashGet(keys.upstreamSessions("acme", "lvl"), "dyn"), null);
  await provider.callTool("echo", { text: "z" }, { ...context("lvl", { sampling: {} }), logLevel: "error" });
  assert.equal(initializations(), before + 1, "and keeps it");
});

it("a dedicated session whose record cannot be stored leaves no GET stream behind", async () => {
  // The GET stream opens right after initialize, before the record is stored: a store failure
  // then must end it, or it would live on (reconnecting) beside the session the next call opens.
  const own = await startDynamicUpstream();
  const failing = new MemoryStore();
  const fresh = await startProvider(own.url, failing);
  const open = () =>
    own.events.filter((e) => e === "get-open").length - own.events.filter((e) => e === "get-closed").length;
  try {
    await wait(300); // the provider's own catalogs open their streams
    const catalogs = open();
    await failing.set(keys.session("acme", "s-fail"), "{}", { ttlSeconds: 60 });
    const hashSet = failing.hashSet.bind(failing);
    failing.hashSet = () => Promise.reject(new Error("the store is away"));
    try {
      const result = await fresh.callTool("echo", { text: "x" }, context("s-fail"));
      assert.equal(result.isError, true, "the call fails with the store");
    } finally {
      failing.hashSet = hashSet;
    }
    await wait(500); // the stream would have opened, and reconnected, by now
    assert.equal(open(), catalogs, "no GET stream of the failed session is left open");
    const next = await fresh.callTool("echo", { text: "y" }, context("s-fail"));
    assert.deepEqual(next.content, [{ type: "text", text: "y" }], "the next call opens a session of its own");
    assert.ok(await until(() => open() === catalogs + 1), "one more GET stream, the new session's");
  } finally {
    await fresh.close();
    await own.close();
    await failing.close();
  }
});
