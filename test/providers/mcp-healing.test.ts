// The session-era upstream client against a hand-written upstream (node:http) that restarts and
// misbehaves: an upstream that forgot Portico's session (HTTP 404, or HTTP 400 naming the
// session, as server-everything and the SDKs answer) is re-initialized once however many calls
// found it gone, and the call retried; hostile answers fail the call in Portico's words; health
// follows what calls and probes see.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { freePort } from "../support/redis.js";
import { after, before, beforeEach, describe, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { McpProviderDeps } from "../../src/providers/mcp/provider-deps.js";
import type { CallContext } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

type Forgotten = "404" | "400";

/** A session-era upstream whose sessions a test can drop, and whose tools misbehave on purpose. */
async function startRawSessionUpstream() {
  const sessions = new Set<string>();
  const state = { forgotten: "404" as Forgotten, initializations: 0, calls: 0, next: 0 };
  const notifications: Array<{ method: string; params: Record<string, any> }> = [];
  const deleted: string[] = [];
  /** The upstream session each tools/call came on, with its `text` argument. */
  const served: Array<{ sid: string; text: string }> = [];
  const gets: Array<{ sid: string; lastEventId: string | undefined }> = [];
  /** Sessions whose GET stream the upstream serves (others answer 405). */
  const streamsFor = new Set<string>();
  const answers: Array<Record<string, any>> = [];
  const waiters: Array<() => void> = [];
  const http = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method === "DELETE") {
      deleted.push(String(req.headers["mcp-session-id"]));
      return void res.writeHead(200).end();
    }
    if (req.method === "GET") {
      const sid = String(req.headers["mcp-session-id"]);
      if (!streamsFor.has(sid)) return void res.writeHead(405).end();
      gets.push({ sid, lastEventId: req.headers["last-event-id"] as string | undefined });
      res.writeHead(200, { "content-type": "text/event-stream" });
      const log = {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "outside" },
      };
      // The first stream carries one event and drops; the next one stays open.
      if (gets.filter((g) => g.sid === sid).length === 1)
        return void res.end(`id: e1\ndata: ${JSON.stringify(log)}\n\n`);
      return void res.write(": open\n\n");
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, any>;
    const sid = req.headers["mcp-session-id"];
    if (message.method === "initialize") {
      state.initializations++;
      const id = `s${++state.next}`;
      sessions.add(id);
      const result = {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "raw", version: "1" },
      };
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": id });
      return void res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    }
    if (typeof sid !== "string" || !sessions.has(sid)) {
      if (state.forgotten === "400")
        return void res.writeHead(400).end("Bad Request: No valid session ID provided");
      res.writeHead(404, { "content-type": "application/json" });
      return void res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
      );
    }
    if (message.method === undefined) {
      answers.push(message);
      for (const waiter of waiters.splice(0)) waiter();
      return void res.writeHead(202).end();
    }
    if (message.id === undefined) {
      notifications.push({ method: message.method, params: message.params ?? {} });
      return void res.writeHead(202).end();
    }
    const reply = (result: object) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    };
    if (message.method === "tools/list")
      return reply({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
    if (message.method === "ping") return reply({});
    if (message.method !== "tools/call") return reply({});
    state.calls++;
    served.push({ sid: String(sid), text: String(message.params.arguments?.text) });
    const sse = (events: string[]) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const e of events) res.write(e);
      res.end();
    };
    switch (message.params.name) {
      case "oversized":
        return sse([
          `data: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { big: "x".repeat(17 * 1024 * 1024) } })}\n\n`,
        ]);
      case "no-response":
        return sse([
          `data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } })}\n\n`,
        ]);
      case "wrong-id":
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ jsonrpc: "2.0", id: 424242, result: { content: [] } }));
      case "not-json":
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end("<html>surprise</html>");
      case "asks": {
        // A ping and a sampling request on the call's stream, then the answers as the result.
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: "p1", method: "ping" })}\n\n`);
        res.write(
          `data: ${JSON.stringify({ jsonrpc: "2.0", id: "s1", method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } })}\n\n`,
        );
        while (answers.filter((a) => a.id === "p1" || a.id === "s1").length < 2)
          await new Promise<void>((resolve) => waiters.push(resolve));
        const text = JSON.stringify(
          answers
            .filter((a) => a.id === "p1" || a.id === "s1")
            .map(({ id, result, error }) => ({ id, result, error })),
        );
        res.end(
          `data: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text }] } })}\n\n`,
        );
        return;
      }
      case "slow":
        return void setTimeout(() => reply({ content: [{ type: "text", text: "slow" }] }), 2500);
      case "server-error":
        return void res.writeHead(500).end("boom");
      case "streamed":
        return sse([
          ": keep-alive\r\n\r\n",
          `data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: message.params._meta?.progressToken, progress: 1, total: 2 } })}\r\n\r\n`,
          `id: 7\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "streamed" }] } })}\n\n`,
        ]);
      default:
        return reply({ content: [{ type: "text", text: String(message.params.arguments?.text) }] });
    }
  }
  // Restarted on the same port: one the kernel does not hand out to other processes meanwhile.
  const port = await freePort();
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    notifications,
    deleted,
    served,
    gets,
    streamsFor,
    /** As after a restart: every session id is unknown now. */
    forget: () => sessions.clear(),
    stop: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
    restart: () => new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve)),
  };
}

let upstream: Awaited<ReturnType<typeof startRawSessionUpstream>>;
let provider: McpProvider;
const store = new MemoryStore();
const keys = createKeys("heal");
const health: boolean[] = [];
const outletNotes: Array<{ sid: string; method: string; params: Record<string, unknown> }> = [];

/** A replica's provider of the upstream, over the test's store. */
function replica(
  outlet: McpProviderDeps["outlet"] = { notify: async () => undefined, request: async () => ({}) },
) {
  return new McpProvider(
    { id: "raw", kind: "mcp", url: upstream.url, era: "session" },
    {
      tenantId: "acme",
      store,
      keys,
      log: Fastify({ logger: false }).log,
      outlet,
      timeoutMs: 5000,
      sessionTtlSeconds: 60,
      fetch: globalThis.fetch,
      dispatcher: new Agent(),
      healthIntervalMs: 100,
      sweepIntervalMs: 100,
    },
  );
}

before(async () => {
  upstream = await startRawSessionUpstream();
  provider = replica({
    notify: async (_tenant, sid, method, params) => void outletNotes.push({ sid, method, params }),
    request: async () => ({}),
  });
  await provider.start({
    listChanged: () => undefined,
    healthChanged: (healthy) => void health.push(healthy),
  });
});
after(async () => {
  await provider.close();
  await upstream.stop();
  await store.close();
});

function context(sessionId: string, clientCapabilities: CallContext["clientCapabilities"] = {}): CallContext {
  const progress: number[] = [];
  return {
    tenantId: "acme",
    sessionId,
    protocolVersion: "2025-11-25",
    clientCapabilities,
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: (p) => void progress.push(p),
    log: () => undefined,
    request: () => Promise.reject(new Error("no client requests in this test")),
  };
}

const textOf = (r: { content: unknown[] }) => (r.content[0] as { text?: string } | undefined)?.text;

async function until(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  return check();
}

for (const flavour of ["404", "400"] as const) {
  describe(`an upstream that forgot the session (HTTP ${flavour})`, () => {
    beforeEach(() => (upstream.state.forgotten = flavour));

    it("re-initializes once for every call that found the shared session gone, and retries each", async () => {
      assert.equal(textOf(await provider.callTool("echo", { text: "warm" }, context("a"))), "warm");
      upstream.forget();
      const before = upstream.state.initializations;
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => provider.callTool("echo", { text: `c${i}` }, context(`x${i}`))),
      );
      assert.deepEqual(
        results.map(textOf),
        Array.from({ length: 10 }, (_, i) => `c${i}`),
      );
      assert.equal(upstream.state.initializations, before + 1, "one re-initialize, not one per call");
      assert.equal(provider.healthy, true, "a re-initialize that succeeds keeps the provider healthy");
    });

    it("re-opens a dedicated session and stores its new id", async () => {
      await store.set(keys.session("acme", `own-${flavour}`), "{}", { ttlSeconds: 60 });
      const ctx = context(`own-${flavour}`, { roots: {} });
      await provider.callTool("echo", { text: "one" }, ctx);
      const stored = await store.hashGet(keys.upstreamSessions("acme", `own-${flavour}`), "raw");
      assert.ok(stored);
      upstream.forget();
      assert.equal(textOf(await provider.callTool("echo", { text: "two" }, ctx)), "two");
      const renewed = await store.hashGet(keys.upstreamSessions("acme", `own-${flavour}`), "raw");
      assert.ok(renewed && renewed !== stored, `${stored} → ${renewed}`);
    });
  });
}

describe("hostile answers", () => {
  const cases: Array<[string, RegExp]> = [
    ["oversized", /an upstream stream event exceeded 16777216 characters/],
    ["no-response", /the upstream's stream ended without a response/],
    ["wrong-id", /the upstream's answer is not a JSON-RPC response/],
    ["not-json", /the upstream's answer is not a JSON-RPC response/],
    ["server-error", /is unavailable: HTTP 500/],
  ];
  for (const [tool, words] of cases)
    it(`${tool}: a failed tool call in Portico's words`, async () => {
      const result = await provider.callTool(tool, {}, context("hostile"));
      assert.equal(result.isError, true);
      assert.match(textOf(result) ?? "", words);
    });

  it("an SSE answer with comments, CRLF framing and progress before the response is read whole", async () => {
    const progress: number[] = [];
    const ctx = { ...context("sse"), progress: (p: number) => void progress.push(p) };
    assert.equal(textOf(await provider.callTool("streamed", {}, ctx)), "streamed");
    assert.deepEqual(progress, [1]);
  });
});

describe("health", () => {
  it("goes down when calls fail at transport level and comes back when the upstream does", async () => {
    assert.ok(await until(() => provider.healthy));
    await upstream.stop();
    const failed = await provider.callTool("echo", { text: "x" }, context("h"));
    assert.equal(failed.isError, true);
    assert.match(textOf(failed) ?? "", /unavailable: connection refused/);
    assert.equal(provider.healthy, false);
    await upstream.restart();
    assert.ok(await until(() => provider.healthy), "healthy again once a probe succeeds");
    assert.equal(textOf(await provider.callTool("echo", { text: "back" }, context("h"))), "back");
    assert.deepEqual(health.slice(-2), [false, true]);
  });
});

describe("calls in flight, where another replica can find them", () => {
  it("a call running past a second is recorded while it runs, and its record removed when it ends", async () => {
    let answered = false;
    const call = provider.callTool("slow", {}, context("slow")).finally(() => (answered = true));
    // Recorded a second after it was sent (the session's initialize comes first, slower on a busy
    // machine): looked for until the call ends, which the upstream holds for 2.5 s.
    let during: Record<string, string> = {};
    const recorded = () => Object.keys(during).filter((f) => f.startsWith("raw "));
    while (!answered && recorded().length === 0) {
      await new Promise((r) => setTimeout(r, 50));
      during = await store.hashGetAll(keys.upstreamCalls("acme"));
    }
    const fields = recorded();
    assert.equal(fields.length, 1, JSON.stringify(during));
    assert.match(fields[0]!, /^raw s\d+ \d+$/);
    assert.equal(textOf(await call), "slow");
    await new Promise((r) => setTimeout(r, 50));
    const afterwards = await store.hashGetAll(keys.upstreamCalls("acme"));
    assert.deepEqual(
      Object.keys(afterwards).filter((f) => f.startsWith("raw ")),
      [],
    );
  });

  it("a quick call never touches the store", async () => {
    await provider.callTool("echo", { text: "q" }, context("quick"));
    assert.deepEqual(Object.keys(await store.hashGetAll(keys.upstreamCalls("acme"))), []);
  });

  it("a dead replica's call, its lease lapsed, is cancelled upstream by a survivor and forgotten", async () => {
    await provider.callTool("echo", { text: "open" }, context("orphan"));
    const sid = `s${upstream.state.next}`;
    const field = `raw ${sid} 4242`;
    await store.hashSet(keys.upstreamCalls("acme"), field, `${Date.now() - 200_000} 2025-11-25`, 60);
    await store.hashSet(
      keys.upstreamCalls("acme"),
      `raw ${sid} 4343`,
      `${Date.now() + 60_000} 2025-11-25`,
      60,
    );
    assert.ok(
      await until(() =>
        upstream.notifications.some(
          (n) => n.method === "notifications/cancelled" && n.params.requestId === 4242,
        ),
      ),
      "the upstream was told",
    );
    const left = Object.keys(await store.hashGetAll(keys.upstreamCalls("acme")));
    assert.deepEqual(left, [`raw ${sid} 4343`], "a live lease stays");
    assert.ok(!upstream.notifications.some((n) => n.params.requestId === 4343));
  });
});

describe("shared upstream sessions, where another replica can find them", () => {
  it("are leased in the store while used, and a dead replica's are ended upstream by a survivor", async () => {
    await provider.callTool("echo", { text: "lease" }, context("lease"));
    const mine = () => store.hashGetAll(keys.upstreamShared("acme"));
    let leased: Record<string, string> = {};
    assert.ok(
      await until(() => {
        void mine().then((all) => (leased = all));
        return Object.keys(leased).some((f) => /^raw s\d+$/.test(f));
      }),
    );
    for (const value of Object.values(leased)) assert.ok(Number(value.split(" ")[0]) > Date.now());
    await store.hashSet(keys.upstreamShared("acme"), "raw gone-1", `${Date.now() - 1000} 2025-11-25`, 60);
    assert.ok(await until(() => upstream.deleted.includes("gone-1")), "the upstream was told (DELETE)");
    assert.ok(!("raw gone-1" in (await mine())));
  });
});

describe("requests from the upstream on a call's stream", () => {
  it("a ping is answered at once; a question the client cannot be asked is answered Method not found", async () => {
    let asked = 0;
    const ctx = { ...context("asks"), request: () => (asked++, Promise.resolve({})) };
    const result = await provider.callTool("asks", {}, ctx);
    const answers = JSON.parse(textOf(result) ?? "[]") as Array<Record<string, any>>;
    const byId = Object.fromEntries(answers.map((a) => [a.id, a]));
    assert.deepEqual(byId.p1.result, {});
    assert.equal(byId.s1.error?.code, -32601);
    assert.equal(asked, 0, "the client, which declared no sampling, was not asked");
  });
});

describe("a dedicated session found gone by two replicas at once", () => {
  it("is opened again by one of them; the other resumes it (one upstream session per client session)", async () => {
    // Another replica: a provider of its own over the same store.
    const other = replica();
    await other.start({ listChanged: () => undefined, healthChanged: () => undefined });
    try {
      upstream.state.forgotten = "404";
      await store.set(keys.session("acme", "raced"), "{}", { ttlSeconds: 60 });
      const ctx = context("raced", { roots: {} });
      await provider.callTool("echo", { text: "here" }, ctx);
      await other.callTool("echo", { text: "there" }, ctx);
      const sessionsOf = (prefix: string) =>
        new Set(upstream.served.filter((c) => c.text.startsWith(prefix)).map((c) => c.sid));
      assert.equal(sessionsOf("here").size, 1);
      assert.deepEqual(
        sessionsOf("there"),
        sessionsOf("here"),
        "the other replica resumed the stored session",
      );
      for (let round = 0; round < 3; round++) {
        upstream.forget();
        const calls = [provider, other, provider, other].map((p, i) =>
          p.callTool("echo", { text: `r${round}-${i}` }, ctx),
        );
        assert.deepEqual(
          (await Promise.all(calls)).map(textOf),
          [0, 1, 2, 3].map((i) => `r${round}-${i}`),
        );
        const used = sessionsOf(`r${round}-`);
        assert.equal(used.size, 1, `round ${round}: both replicas' calls on one new upstream session`);
        assert.ok(!sessionsOf("here").has([...used][0]!));
      }
    } finally {
      await other.close();
    }
  });
});

describe("a dedicated session's GET stream", () => {
  it("relays messages outside a call to the client session, and resumes with Last-Event-ID", async () => {
    upstream.streamsFor.add(`s${upstream.state.next + 1}`);
    await store.set(keys.session("acme", "streamed"), "{}", { ttlSeconds: 60 });
    await provider.callTool("echo", { text: "open" }, context("streamed", { roots: {} }));
    assert.ok(await until(() => outletNotes.some((n) => n.sid === "streamed")), "relayed to the session");
    assert.deepEqual(outletNotes.find((n) => n.sid === "streamed")?.params, {
      level: "info",
      data: "outside",
    });
    assert.ok(await until(() => upstream.gets.length >= 2), "reconnected");
    assert.deepEqual(
      upstream.gets.map((g) => g.lastEventId),
      [undefined, "e1"],
    );
  });
});
