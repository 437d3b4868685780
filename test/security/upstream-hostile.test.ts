// A hostile or broken session-era upstream (a hand-written node:http server) in front of the real
// McpProvider: session ids it may not assign, a 400 that merely mentions a session, lists whose
// pages never end or that hold more entries than Portico keeps (docs/security.md "Hostile
// upstreams"). Each hostile case sits beside the happy one it must not break.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import { readEvents } from "../../src/providers/mcp/exchange.js";
import { MAX_LIST_ENTRIES } from "../../src/providers/mcp/upstream.js";
import { MAX_OUTSTANDING_QUESTIONS } from "../../src/providers/mcp/session/client.js";
import { MAX_PROFILES } from "../../src/providers/mcp/profiles.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  askClient,
  MAX_INPUT_REQUESTS,
  MAX_INPUT_ROUNDS,
  nextRound,
  relayable,
  urlElicitationRound,
} from "../../src/providers/mcp/bridge.js";
import type { CallContext } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

interface Behaviour {
  /** The Mcp-Session-Id initialize assigns. */
  sessionId: () => string;
  /** tools/list: the page for a cursor (`bare`: asked by the session of clients declaring nothing). */
  page: (cursor: string | undefined, bare: boolean) => { tools: object[]; nextCursor?: string };
  /** tools/call: an HTTP status and body instead of a result. */
  refuse?: (name: string) => { status: number; body: string } | undefined;
  /** tools/call: sampling requests sent on the call's stream, all at once, before the result. */
  questions?: number;
  /** tools/call, once: a JSON-RPC error saying the session is gone, on an SSE stream after a progress notification or not. */
  gone?: { afterProgress: boolean };
  /** The GET stream: this many tools/list_changed at once, then kept open (405 without). */
  storm?: number;
  /** The GET stream of the session initialized with `capabilities`: these requests, then kept open. */
  asksOutside?: { capabilities: object; asks: Array<{ id?: string; method: string; params?: object }> };
}

/** A session-era upstream whose answers a test scripts. */
async function startUpstream(behaviour: Behaviour) {
  const state = { initializations: 0, lists: 0, calls: 0 };
  /** The capabilities each session was initialized with, as JSON. */
  const declared = new Map<string, string>();
  const answers: Array<Record<string, any>> = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const outside = behaviour.asksOutside;
    const sid = String(req.headers["mcp-session-id"]);
    if (req.method === "GET" && outside && declared.get(sid) === JSON.stringify(outside.capabilities)) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const ask of outside.asks) res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", ...ask })}\n\n`);
      return;
    }
    if (req.method === "GET" && behaviour.storm !== undefined && declared.get(sid) === "{}") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const changed = `data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })}\n\n`;
      return void res.write(changed.repeat(behaviour.storm));
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, any>;
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method === undefined) {
      answers.push(message);
      for (const waiter of waiters.splice(0)) waiter();
      return void res.writeHead(202).end();
    }
    const reply = (result: object, headers: Record<string, string> = {}) => {
      res.writeHead(200, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    };
    if (message.method === "initialize") {
      state.initializations++;
      const result = {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "1" },
      };
      const assigned = behaviour.sessionId();
      declared.set(assigned, JSON.stringify(message.params.capabilities ?? {}));
      return reply(result, { "mcp-session-id": assigned });
    }
    if (message.method === "tools/list") {
      // Listings of the catalog of clients declaring nothing (the provider also lists for a
      // client declaring every capability, docs/upstream-mcp.md "Capability profiles").
      if (declared.get(sid) === "{}") state.lists++;
      return reply(behaviour.page(message.params?.cursor, declared.get(sid) === "{}"));
    }
    if (message.method === "tools/call") {
      state.calls++;
      const refused = behaviour.refuse?.(message.params.name);
      if (refused) return void res.writeHead(refused.status).end(refused.body);
      if (behaviour.gone) {
        const { afterProgress } = behaviour.gone;
        behaviour.gone = undefined;
        const progressToken = message.params._meta?.progressToken;
        const progress = {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken, progress: 1 },
        };
        const error = {
          jsonrpc: "2.0",
          id: message.id,
          error: { code: -32000, message: "Session not found" },
        };
        res.writeHead(200, { "content-type": "text/event-stream" });
        if (afterProgress) res.write(`data: ${JSON.stringify(progress)}\n\n`);
        return void res.end(`data: ${JSON.stringify(error)}\n\n`);
      }
      const asked = behaviour.questions ?? 0;
      if (asked > 0) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const params = { messages: [], maxTokens: 1 };
        for (let i = 0; i < asked; i++)
          res.write(
            `data: ${JSON.stringify({ jsonrpc: "2.0", id: `q${i}`, method: "sampling/createMessage", params })}\n\n`,
          );
        while (answers.length < asked) await new Promise<void>((resolve) => waiters.push(resolve));
        const refusedCount = answers.filter((a) => a.error !== undefined).length;
        const text = `${asked - refusedCount} answered, ${refusedCount} refused`;
        const result = { content: [{ type: "text", text }] };
        return void res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result })}\n\n`);
      }
      return reply({ content: [{ type: "text", text: "ok" }] });
    }
    return reply({});
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    state,
    answers,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const ONE_TOOL = () => ({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
const cleanups: Array<() => Promise<unknown>> = [];
after(() => Promise.all(cleanups.map((c) => c())));

async function providerFor(
  behaviour: Behaviour,
  asked: string[] = [],
  notified: Array<{ method: string; params: unknown }> = [],
) {
  const upstream = await startUpstream(behaviour);
  const store = new MemoryStore();
  const keys = createKeys("hostile");
  const provider = new McpProvider(
    { id: "hostile", kind: "mcp", url: upstream.url, era: "session" },
    {
      tenantId: "acme",
      store,
      keys,
      log: Fastify({ logger: false }).log,
      outlet: {
        notify: async (_tenant, _sid, method, params) => void notified.push({ method, params }),
        request: async (_tenant, _sid, method) => {
          asked.push(method);
          return { roots: [] };
        },
      },
      timeoutMs: 5000,
      sessionTtlSeconds: 60,
      fetch: globalThis.fetch,
      dispatcher: new Agent(),
      healthIntervalMs: 60_000,
      sweepIntervalMs: 60_000,
    },
  );
  await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
  cleanups.push(async () => {
    await provider.close();
    await upstream.stop();
    await store.close();
  });
  return { upstream, provider, store, keys };
}

function context(
  sessionId: string,
  clientCapabilities: CallContext["clientCapabilities"] = {},
  request: CallContext["request"] = () => Promise.reject(new Error("no client requests in this test")),
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
    request,
  };
}

describe("an upstream's Mcp-Session-Id", () => {
  it("a visible-ASCII id is used, stored for a dedicated session and sent back", async () => {
    const { provider, store, keys } = await providerFor({
      sessionId: () => "abc-DEF_123.~!",
      page: ONE_TOOL,
    });
    assert.equal(provider.healthy, true);
    await store.set(keys.session("acme", "own"), "{}", { ttlSeconds: 60 });
    await provider.callTool("echo", {}, context("own", { roots: {} }));
    const stored = await store.hashGet(keys.upstreamSessions("acme", "own"), "hostile");
    assert.equal(stored, "abc-DEF_123.~! 2025-11-25");
  });

  const hostile: Array<[string, string]> = [
    ["a space (records split on it)", "one two"],
    ["a tab", "one\ttwo"],
    ["a non-ASCII byte", "one\u00e9"],
    ["10 KB", "x".repeat(10 * 1024)],
  ];
  for (const [what, sid] of hostile)
    it(`an id with ${what} is refused: the provider is unhealthy and nothing is stored`, async () => {
      const { provider, store, keys } = await providerFor({ sessionId: () => sid, page: ONE_TOOL });
      assert.equal(provider.healthy, false);
      assert.match(provider.healthReason ?? "", /Mcp-Session-Id/);
      await store.set(keys.session("acme", "own"), "{}", { ttlSeconds: 60 });
      const result = await provider.callTool("echo", {}, context("own", { roots: {} }));
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result.content), /Mcp-Session-Id/);
      assert.equal(await store.hashGet(keys.upstreamSessions("acme", "own"), "hostile"), null);
    });
});

describe("an HTTP 400 from the upstream", () => {
  it("one saying the session header is missing re-initializes and retries once", async () => {
    let refusals = 1;
    let ids = 0;
    const { provider, upstream } = await providerFor({
      sessionId: () => `s${++ids}`,
      page: ONE_TOOL,
      refuse: () =>
        refusals-- > 0 ? { status: 400, body: "Bad Request: Mcp-Session-Id header is required" } : undefined,
    });
    const before = upstream.state.initializations;
    const result = await provider.callTool("echo", {}, context("a"));
    assert.deepEqual(result.content, [{ type: "text", text: "ok" }]);
    assert.equal(upstream.state.initializations, before + 1);
    assert.equal(upstream.state.calls, 2);
  });

  it("one that merely mentions a session is the call's failure: no re-initialize, no retry", async () => {
    const { provider, upstream } = await providerFor({
      sessionId: () => "s1",
      page: ONE_TOOL,
      refuse: () => ({ status: 400, body: '{"error":"argument session_name must be a string"}' }),
    });
    const before = upstream.state.initializations;
    const result = await provider.callTool("echo", { session_name: 1 }, context("a"));
    assert.equal(result.isError, true);
    assert.equal(upstream.state.initializations, before, "the shared session was kept");
    assert.equal(upstream.state.calls, 1, "not retried");
  });
});

describe("a call the upstream answers with 'Session not found' on its stream", () => {
  it("before anything else: it cannot have run, so it is retried on a new session", async () => {
    let ids = 0;
    const { provider, upstream } = await providerFor({
      sessionId: () => `s${++ids}`,
      page: ONE_TOOL,
      gone: { afterProgress: false },
    });
    const result = await provider.callTool("echo", {}, context("a"));
    assert.deepEqual(result.content, [{ type: "text", text: "ok" }]);
    assert.equal(upstream.state.calls, 2);
  });

  it("after a progress notification: it was running, so it is not run twice", async () => {
    let ids = 0;
    const { provider, upstream } = await providerFor({
      sessionId: () => `s${++ids}`,
      page: ONE_TOOL,
      gone: { afterProgress: true },
    });
    await assert.rejects(provider.callTool("echo", {}, context("a")), /Session not found/);
    assert.equal(upstream.state.calls, 1);
  });
});

describe("an upstream's list pages", () => {
  it("pages are followed to the end", async () => {
    const { provider, upstream } = await providerFor({
      sessionId: () => "s1",
      page: (cursor) => {
        const n = Number(cursor ?? 0);
        const tools = [{ name: `t${n}`, inputSchema: { type: "object" } }];
        return n < 4 ? { tools, nextCursor: String(n + 1) } : { tools };
      },
    });
    assert.deepEqual(
      provider.entries().tools.map((t) => t.name),
      ["t0", "t1", "t2", "t3", "t4"],
    );
    assert.equal(upstream.state.lists, 5);
  });

  it("a cursor loop stops at the first cursor seen again", async () => {
    const { provider, upstream } = await providerFor({
      sessionId: () => "s1",
      page: (cursor) => ({
        tools: [{ name: `t${cursor ?? "first"}`, inputSchema: { type: "object" } }],
        nextCursor: cursor === "a" ? "b" : "a",
      }),
    });
    assert.deepEqual(
      provider.entries().tools.map((t) => t.name),
      ["tfirst", "ta", "tb"],
    );
    assert.equal(upstream.state.lists, 3);
  });

  it(`a list of 200,000 tools keeps the first ${MAX_LIST_ENTRIES}`, async () => {
    const tools = Array.from({ length: 200_000 }, (_, i) => ({
      name: `t${i}`,
      inputSchema: { type: "object" },
    }));
    const { provider, upstream } = await providerFor({
      sessionId: () => "s1",
      page: (cursor) => (cursor ? { tools } : { tools, nextCursor: "more" }),
    });
    assert.equal(provider.entries().tools.length, MAX_LIST_ENTRIES);
    assert.equal(upstream.state.lists, 1, "no page asked for once the list is full");
  });
});

describe("server-to-client requests in one call", () => {
  const sampled = { role: "assistant", content: { type: "text", text: "hi" }, model: "m" };

  for (const [asked, relayed] of [
    [3, 3],
    [100, MAX_OUTSTANDING_QUESTIONS],
  ] as const)
    it(`${asked} at once: ${relayed} reach the client, the rest are refused upstream`, async () => {
      const { provider } = await providerFor({ sessionId: () => "s1", page: ONE_TOOL, questions: asked });
      let reached = 0;
      const ask: CallContext["request"] = async () => {
        reached++;
        await new Promise((resolve) => setTimeout(resolve, 100));
        return sampled;
      };
      const result = await provider.callTool("echo", {}, context("a", { sampling: {} }, ask));
      assert.equal(reached, relayed);
      assert.deepEqual(result.content, [
        { type: "text", text: `${relayed} answered, ${asked - relayed} refused` },
      ]);
    });
});

describe("event IDs on an upstream stream (sent back as Last-Event-ID)", () => {
  async function idsOf(chunks: string[]): Promise<string[]> {
    const ids: string[] = [];
    await readEvents(
      { status: 200, headers: {}, text: undefined, body: Readable.from(chunks.map((c) => Buffer.from(c))) },
      () => "more",
      (id) => void ids.push(id),
    );
    return ids;
  }

  it("an ID is taken whole, also when split across chunks", async () => {
    assert.deepEqual(await idsOf(["id: 7\ndata: {}\n\n"]), ["7"]);
    assert.deepEqual(await idsOf(["data: {}\nid: e", "42\n\n"]), ["e42"]);
  });

  it("an ID a header cannot carry, or of 10 KB, is ignored", async () => {
    assert.deepEqual(await idsOf(["id: 1\n\n", "id: a\u0001b\n\n", "id: x\u0000\n\n"]), ["1"]);
    assert.deepEqual(await idsOf(["id: 1\n\n", `id: ${"x".repeat(10 * 1024)}\n\n`]), ["1"]);
  });
});

describe("a list_changed storm", () => {
  for (const storm of [1, 500])
    it(`${storm} tools/list_changed at once cost at most two listings, and the last one is kept`, async () => {
      let lists = 0;
      let ids = 0;
      const { provider, upstream } = await providerFor({
        sessionId: () => `s${++ids}`,
        page: (_cursor, bare) => ({
          tools: [{ name: bare ? `v${++lists}` : "full", inputSchema: { type: "object" } }],
        }),
        storm,
      });
      let settled = -1;
      while (settled !== upstream.state.lists) {
        settled = upstream.state.lists;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      assert.ok(upstream.state.lists >= 2 && upstream.state.lists <= 3, `${upstream.state.lists} listings`);
      assert.deepEqual(
        provider.entries().tools.map((t) => t.name),
        [`v${lists}`],
      );
    });
});

describe("a client cycling capability spellings", () => {
  const sampling = [undefined, {}, { context: {} }, { tools: {} }, { context: {}, tools: {} }];
  const elicitation = [undefined, {}, { form: {} }, { url: {} }, { form: {}, url: {} }];
  const ui = [undefined, { "io.modelcontextprotocol/ui": {} }];
  const profiles: Array<CallContext["clientCapabilities"]> = [];
  for (const s of sampling)
    for (const e of elicitation)
      for (const x of ui)
        profiles.push({
          ...(s && { sampling: s }),
          ...(e && { elicitation: e }),
          ...(x && { extensions: x }),
        });

  it(`${profiles.length} profiles open at most ${MAX_PROFILES} upstream sessions besides the provider's own, and every call works`, async () => {
    let ids = 0;
    const { provider, upstream } = await providerFor({ sessionId: () => `s${++ids}`, page: ONE_TOOL });
    for (const [i, caps] of profiles.entries()) {
      const result = await provider.callTool("echo", {}, context(`c${i}`, caps));
      assert.deepEqual(result.content, [{ type: "text", text: "ok" }]);
    }
    assert.equal(upstream.state.calls, profiles.length);
    assert.ok(
      upstream.state.initializations <= 1 + MAX_PROFILES,
      `${upstream.state.initializations} upstream sessions`,
    );
  });
});

describe("requests on a dedicated session's GET stream (outside any call)", () => {
  it("reach the client only when it can be asked them and declared the capability", async () => {
    const asked: string[] = [];
    const asksOutside = [
      { id: "r1", method: "roots/list" },
      { id: "t1", method: "tools/call", params: { name: "x" } },
      { id: "s1", method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } },
    ];
    let ids = 0;
    const { provider, upstream, store, keys } = await providerFor(
      {
        sessionId: () => `s${++ids}`,
        page: ONE_TOOL,
        asksOutside: { capabilities: { roots: {} }, asks: asksOutside },
      },
      asked,
    );
    await store.set(keys.session("acme", "own"), "{}", { ttlSeconds: 60 });
    await provider.callTool("echo", {}, context("own", { roots: {} }));
    const answered = () => upstream.answers.filter((a) => ["r1", "t1", "s1"].includes(a.id as string));
    for (let i = 0; i < 250 && answered().length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(asked, ["roots/list"], "only roots/list reached the client");
    const byId = Object.fromEntries(answered().map((a) => [a.id, a.error?.code ?? "result"]));
    assert.deepEqual(byId, { r1: "result", t1: -32601, s1: -32601 });
  });
});

describe("resources/updated on a dedicated session's GET stream", () => {
  it("reaches the client only for a URI it subscribed to (or under it)", async () => {
    const notified: Array<{ method: string; params: unknown }> = [];
    const updated = (uri: string) => ({ method: "notifications/resources/updated", params: { uri } });
    let ids = 0;
    const { provider, store, keys } = await providerFor(
      {
        sessionId: () => `s${++ids}`,
        page: ONE_TOOL,
        asksOutside: {
          capabilities: { roots: {} },
          asks: [updated("test://never-subscribed"), updated("test://mine/page"), updated("test://mine")],
        },
      },
      [],
      notified,
    );
    await store.set(keys.session("acme", "own"), "{}", { ttlSeconds: 60 });
    await store.setAdd(keys.subscriptions("acme", "own"), "hostile test://mine", 60);
    await provider.callTool("echo", {}, context("own", { roots: {} }));
    for (let i = 0; i < 100 && notified.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      notified.map((n) => n.params),
      [{ uri: "test://mine/page" }, { uri: "test://mine" }],
    );
  });
});

describe("a 2026-07-28 upstream's input requests asked of a session-era client", () => {
  const sampling = { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } };

  async function ask(requests: Record<string, unknown>, caps: CallContext["clientCapabilities"]) {
    const asked: string[] = [];
    const ctx = context("a", caps, async (method) => {
      asked.push(method);
      return { role: "assistant", content: { type: "text", text: "hi" }, model: "m" };
    });
    const outcome = await askClient(requests, ctx, "up").then(
      (answers) => Object.keys(answers).length,
      (err: Error) => err.message,
    );
    return { asked, outcome };
  }

  it("those the client declared are asked, all at once", async () => {
    assert.deepEqual(await ask({ a: sampling, b: sampling }, { sampling: {} }), {
      asked: ["sampling/createMessage", "sampling/createMessage"],
      outcome: 2,
    });
  });

  it("a method no client can be asked, or one it did not declare, fails the call before anything is asked", async () => {
    const hostile = await ask(
      { a: sampling, b: { method: "tools/call", params: { name: "x" } } },
      { sampling: {} },
    );
    assert.deepEqual(hostile.asked, []);
    assert.match(String(hostile.outcome), /asked the client for tools\/call/);
    const undeclared = await ask({ a: sampling }, {});
    assert.deepEqual(undeclared.asked, []);
    assert.match(String(undeclared.outcome), /sampling\/createMessage, which it cannot be asked/);
  });

  it(`more than ${MAX_INPUT_REQUESTS} in one round fail the call before anything is asked`, async () => {
    const many = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`q${i}`, sampling]));
    const { asked, outcome } = await ask(many, { sampling: {} });
    assert.equal(asked.length, 0);
    assert.match(String(outcome), /asked for 1000 inputs at once/);
  });
});

describe("a 2026-07-28 upstream that asks for input round after round", () => {
  const sampling = { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } };
  const asking = { resultType: "input_required", inputRequests: { q: sampling }, requestState: "s" };

  it(`a session-era client is asked ${MAX_INPUT_ROUNDS} rounds at most; a 2026-07-28 client gets each round as it is`, async () => {
    let asked = 0;
    const ctx = context("a", { sampling: {} }, async () => {
      asked++;
      return { role: "assistant", content: { type: "text", text: "hi" }, model: "m" };
    });
    for (let round = 1; round < MAX_INPUT_ROUNDS; round++)
      assert.deepEqual(await nextRound(asking, round, ctx, "up"), {
        round: {
          inputResponses: { q: { role: "assistant", content: { type: "text", text: "hi" }, model: "m" } },
          requestState: "s",
        },
      });
    await assert.rejects(
      nextRound(asking, MAX_INPUT_ROUNDS, ctx, "up"),
      /still asked for input after 10 rounds/,
    );
    assert.equal(asked, MAX_INPUT_ROUNDS - 1, "the last round asks nothing");
    const relayed = await nextRound(asking, MAX_INPUT_ROUNDS, { ...ctx, mrtr: {} }, "up");
    assert.deepEqual(relayed, { relay: asking });
  });
});

describe("a 2026-07-28 upstream's input requests relayed to a 2026-07-28 client", () => {
  const sampling = { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } };
  const rounds = (n: number) => ({
    resultType: "input_required",
    inputRequests: Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, sampling])),
  });

  it(`${MAX_INPUT_REQUESTS} are relayed as they are; ${MAX_INPUT_REQUESTS + 1} fail the call`, () => {
    const ctx = context("a", { sampling: {} });
    const fine = rounds(MAX_INPUT_REQUESTS);
    assert.equal(relayable(fine, ctx, "up"), fine);
    assert.throws(() => relayable(rounds(MAX_INPUT_REQUESTS + 1), ctx, "up"), /inputs at once/);
  });
});

describe("a session-era upstream's -32042 relayed to a 2026-07-28 client as a URL round", () => {
  const required = (n: number) =>
    new McpError(-32042, "URL elicitation required", {
      elicitations: Array.from({ length: n }, (_, i) => ({
        mode: "url",
        elicitationId: `e${i}`,
        url: `https://auth.example/${i}`,
        message: "Connect",
      })),
    });

  it(`${MAX_INPUT_REQUESTS} URLs are one round; ${MAX_INPUT_REQUESTS + 1} fail the call`, () => {
    const ctx = { ...context("a", { elicitation: { url: {} } }), mrtr: {} };
    const round = urlElicitationRound(required(MAX_INPUT_REQUESTS), ctx, "up");
    assert.equal(Object.keys(round?.inputRequests ?? {}).length, MAX_INPUT_REQUESTS);
    assert.throws(() => urlElicitationRound(required(10_000), ctx, "up"), /asked for 10000 inputs at once/);
  });
});
