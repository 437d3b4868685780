// The deprecated HTTP+SSE transport (2024-11-05 basic/transports "HTTP with SSE",
// docs/protocol-eras.md): the official SDK's SSEClientTransport, current and 1.0.4, against two
// Portico replicas on one Redis with OAuth, its stream on one replica and its POSTs on the other;
// and the endpoint's hostile cases on the raw wire next to the happy ones.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { EventSource } from "eventsource";
import { Client as Client10 } from "sdk-1-0/client/index.js";
import { SSEClientTransport as SSEClientTransport10 } from "sdk-1-0/client/sse.js";
import { CreateMessageRequestSchema as CreateMessageRequestSchema10 } from "sdk-1-0/types.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { UserStore } from "../../src/oauth/users.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startDynamicUpstream, type DynamicUpstream } from "../fixtures/dynamic-server.js";
import { AdminClient, ADMIN_TOKEN } from "../support/admin.js";
import { TestOAuthClient } from "../support/oauth.js";
import { MemoryOAuthProvider, signInAt } from "../support/sdk-oauth.js";
import { parseExposition, sumOf } from "../support/prometheus.js";
import { startPortico, staticTenant, TEST_SECRET, type RunningPortico } from "../support/portico.js";
import { freePort, getTestRedis, uniquePrefix } from "../support/redis.js";
import { MCP_HEADERS, postRpc } from "../support/rpc.js";
import { readEvents, type SseEvent } from "../support/sse.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ada = { username: "ada", password: "correct horse battery" };
const bob = { username: "bob", password: "battery horse correct" };
const MAX_SESSIONS = 3;

let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let dynamic: DynamicUpstream;
let a: RunningPortico;
let b: RunningPortico;
let issuer: string;
let prefix: string;
let tenants: TenantConfig[];
const tokens = { ada: "", bob: "", adaOther: "" };

before(async () => {
  upstream = await startConformanceUpstream();
  dynamic = await startDynamicUpstream();
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  prefix = uniquePrefix();
  tenants = [
    {
      id: "guarded",
      auth: "oauth",
      providers: [
        { id: "ref", kind: "mcp", url: upstream.url },
        { id: "dyn", kind: "mcp", url: dynamic.url, prefix: "dyn" },
      ],
    },
    { ...staticTenant("other"), auth: "oauth" },
    // A tenant named like the reserved segment: /mcp/sse and /mcp/sse/sse are two things.
    staticTenant("sse"),
  ];
  const env = {
    PORTICO_PUBLIC_URL: issuer,
    PORTICO_MAX_SESSIONS_PER_PRINCIPAL: String(MAX_SESSIONS),
    PORTICO_BODY_LIMIT_BYTES: "65536",
    PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  a = await startPortico({ redisPrefix: prefix, tenants, env: { ...env, PORT: String(port) } });
  b = await startPortico({ redisPrefix: prefix, tenants, env });
  const users = new UserStore(a.store, a.keys);
  for (const user of [ada, bob]) await users.create("guarded", user);
  await users.create("other", ada);
  const client = await TestOAuthClient.register(issuer, "legacy");
  tokens.ada = (await client.tokens("guarded", ada)).access_token;
  tokens.bob = (await client.tokens("guarded", bob)).access_token;
  tokens.adaOther = (await client.tokens("other", ada)).access_token;
});
after(async () => {
  await Promise.all([a.close(), b.close()]);
  await upstream.close();
  await dynamic.close();
});

/** The same URL on replica b. */
function onB(url: string | URL): URL {
  const routed = new URL(url);
  routed.port = new URL(b.url).port;
  return routed;
}

/** An SDK v1 client over SSEClientTransport: its stream on replica a, its POSTs on b. */
async function connectLegacy(token: string, posts: URL[] = []) {
  const client = new Client(
    { name: "legacy-sse-test", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const first = req.params.messages[0]?.content;
    const text = first && "text" in first ? String(first.text) : "";
    return { role: "assistant", model: "test-model", content: { type: "text", text: `echo: ${text}` } };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: { username: "ada", email: "ada@example.com" },
  }));
  const transport = new SSEClientTransport(new URL(`${issuer}/mcp/guarded/sse`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    eventSourceInit: { fetch: (url, init) => fetch(url, init) },
    fetch: (url, init) => {
      posts.push(onB(url));
      return fetch(onB(url), init);
    },
  });
  await client.connect(transport);
  return { client, transport };
}

/** Opens a raw stream; resolves with the session id its endpoint event names, and the stream. */
async function openStream(base: string, tenant: string, token?: string) {
  const abort = new AbortController();
  const res = await fetch(`${base}/mcp/${tenant}/sse`, {
    headers: { accept: "text/event-stream", ...(token && { authorization: `Bearer ${token}` }) },
    signal: abort.signal,
  });
  assert.equal(res.status, 200, `GET /mcp/${tenant}/sse`);
  const events: SseEvent[] = [];
  const reading = readEvents(res, (seen) => {
    events.push(...seen.slice(events.length));
    return false;
  }).catch(() => events);
  while (events.length === 0) await new Promise((r) => setTimeout(r, 10));
  const endpoint = events[0]!;
  assert.equal(endpoint.event, "endpoint");
  const m = /^\/mcp\/([a-z0-9-]+)\/messages\?sessionId=([A-Za-z0-9_-]+)$/.exec(endpoint.data);
  assert.ok(m, `endpoint ${endpoint.data}`);
  assert.equal(m[1], tenant);
  /** Resolves with the first `message` event matching `pred`. */
  const next = async (pred: (msg: Record<string, unknown>) => boolean, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = events
        .filter((e) => e.event === "message")
        .map((e) => JSON.parse(e.data) as Record<string, unknown>)
        .find(pred);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no such message within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { sid: m[2]!, events, next, close: () => abort.abort(), reading };
}

function post(base: string, tenant: string, sid: string | undefined, body: unknown, token?: string) {
  const query = sid === undefined ? "" : `?sessionId=${sid}`;
  return fetch(`${base}/mcp/${tenant}/messages${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const initialize = (id = 0) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

async function rpcError(res: Response) {
  return ((await res.json()) as { error: { code: number; message: string } }).error;
}

/** Polls until `fn` resolves true, or fails after `ms`. */
async function eventually(fn: () => Promise<boolean>, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) assert.fail(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the SDK's SSEClientTransport across two replicas with OAuth", () => {
  it("initializes, lists, calls with progress, and answers sampling and elicitation", async () => {
    const posts: URL[] = [];
    const { client } = await connectLegacy(tokens.ada, posts);
    assert.equal(client.getServerVersion()?.name, "portico");
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === "test_sampling"));
    const progress: number[] = [];
    await client.callTool({ name: "test_tool_with_progress" }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    // The SDK's EventSource hands it the events of one read in one go, and it runs progress
    // handlers a microtask late: the last progress may come with the result and be dropped by the
    // client. What Portico sends is checked on the wire below ("progress, then the result").
    assert.deepEqual(progress.slice(0, 2), [0, 50]);
    // The sampling request goes out on a's stream; the client POSTs its answer to b.
    for (let i = 0; i < 3; i++) {
      const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: `q${i}` } });
      assert.deepEqual(sampled.content, [{ type: "text", text: `LLM response: echo: q${i}` }]);
    }
    const elicited = await client.callTool({ name: "test_elicitation", arguments: { message: "name?" } });
    assert.match(JSON.stringify(elicited.content), /ada/);
    await client.close();
    assert.ok(posts.length >= 8, `POSTs: ${posts.length}`);
    // The same metrics as Streamable HTTP; the route tells the transports apart.
    const scrape = async (r: RunningPortico) =>
      parseExposition(await (await fetch(`${r.url}/metrics`)).text());
    const [onA, onB2] = [await scrape(a), await scrape(b)];
    assert.ok(sumOf(onA, "portico_http_requests_total", { route: "/mcp/:tenant/sse", method: "GET" }) >= 1);
    const accepted = { route: "/mcp/:tenant/messages", method: "POST", status: "202" };
    assert.ok(sumOf(onB2, "portico_http_requests_total", accepted) >= 8);
    assert.ok(
      sumOf(onB2, "portico_mcp_requests_total", { method: "tools/call", era: "session", outcome: "ok" }) >= 5,
    );
    assert.ok(posts.every((u) => u.port === new URL(b.url).port && u.pathname === "/mcp/guarded/messages"));
  });

  it("challenges a stream without a token as /mcp/{tenant} does, and refuses another tenant's token", async () => {
    const bare = await fetch(`${issuer}/mcp/guarded/sse`, { headers: { accept: "text/event-stream" } });
    assert.equal(bare.status, 401);
    const challenge = bare.headers.get("www-authenticate") ?? "";
    assert.match(
      challenge,
      new RegExp(`resource_metadata="${issuer}/\\.well-known/oauth-protected-resource/mcp/guarded"`),
    );
    const streamable = await postRpc(`${issuer}/mcp/guarded`, initialize());
    assert.equal(streamable.headers.get("www-authenticate"), challenge, "the same challenge");
    const foreign = await fetch(`${issuer}/mcp/guarded/sse`, {
      headers: { accept: "text/event-stream", authorization: `Bearer ${tokens.adaOther}` },
    });
    assert.equal(foreign.status, 401, "a token for /mcp/other is not good for /mcp/guarded/sse");
  });
});

describe("the SDK's own OAuth over HTTP+SSE", () => {
  it("discovers the tenant's protected resource from the stream's 401, signs in, and connects", async () => {
    const provider = new MemoryOAuthProvider("legacy SSE SDK");
    const url = new URL(`${issuer}/mcp/guarded/sse`);
    const first = new SSEClientTransport(url, { authProvider: provider });
    await assert.rejects(new Client({ name: "sdk-oauth", version: "1" }).connect(first), UnauthorizedError);
    const authorize = provider.authorizationUrl;
    assert.ok(authorize, "the SDK was sent to the authorization endpoint");
    assert.equal(authorize.searchParams.get("resource"), `${issuer}/mcp/guarded`, "the same audience");
    await first.finishAuth(await signInAt(issuer, authorize, ada));
    const client = new Client({ name: "sdk-oauth", version: "1" });
    await client.connect(
      new SSEClientTransport(url, {
        authProvider: provider,
        fetch: (u, init) => fetch(onB(u), init),
      }),
    );
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
  });
});

describe("SDK 1.0.4, which speaks only HTTP+SSE and 2024-11-05", () => {
  // 1.0.4's SSEClientTransport takes a URL and nothing else: it opens its stream with the global
  // EventSource, as in a browser, and POSTs with the global fetch, adding no header of its own. Node
  // has no EventSource, so the test lends it the package the SDK's later versions use; a token can
  // only reach Portico through those two globals, as an app of 1.0.4's day would have given it.
  const global = globalThis as { EventSource?: unknown };
  const realFetch = globalThis.fetch;
  type Seen = { streams: URL[]; posts: URL[] };
  const nothing = (): Seen => ({ streams: [], posts: [] });

  /**
   * Runs `use` with 1.0.4's globals set: the stream to replica b, `token` on the stream and on every
   * POST; `seen` collects the URLs each went to.
   */
  async function withGlobals(token: string | undefined, seen: Seen, use: () => Promise<void>) {
    const signed = (init?: RequestInit): RequestInit => {
      const headers = new Headers(init?.headers);
      if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
      return { ...init, headers };
    };
    const saved = global.EventSource;
    global.EventSource = class extends EventSource {
      constructor(url: string | URL) {
        super(url, {
          fetch: (u, init) => {
            seen.streams.push(onB(u));
            return realFetch(onB(u), signed(init));
          },
        });
      }
    };
    globalThis.fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!url.pathname.endsWith("/messages")) return realFetch(input, init);
      seen.posts.push(url);
      return realFetch(url, signed(init));
    };
    try {
      await use();
    } finally {
      global.EventSource = saved;
      globalThis.fetch = realFetch;
    }
  }

  it("with an OAuth bearer token: connects to a guarded tenant, its stream on b and its POSTs on a; calls, gets audio as text, answers sampling", async () => {
    const seen = nothing();
    await withGlobals(tokens.ada, seen, async () => {
      const client = new Client10(
        { name: "sdk-1.0.4", version: "1.0.4" },
        { capabilities: { sampling: {} } },
      );
      client.setRequestHandler(CreateMessageRequestSchema10, async (req) => {
        const first = req.params.messages[0]?.content;
        const text = first?.type === "text" ? first.text : "";
        return { role: "assistant", model: "m", content: { type: "text", text: `echo: ${text}` } };
      });
      await client.connect(new SSEClientTransport10(new URL(`${issuer}/mcp/guarded/sse`)));
      try {
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === "test_simple_text"));
        const text = await client.callTool({ name: "test_simple_text", arguments: {} });
        assert.equal((text.content as Array<{ type: string }>)[0]?.type, "text");
        const audio = await client.callTool({ name: "test_audio_content", arguments: {} });
        const [block] = audio.content as Array<{ type: string; text?: string }>;
        assert.equal(block?.type, "text", "audio is a 2025-03-26 content type");
        assert.match(
          block.text!,
          /^\[audio content \(audio\/wav, .+\) omitted: not supported by protocol 2024-11-05\]$/,
        );
        const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "q" } });
        assert.deepEqual(sampled.content, [{ type: "text", text: "LLM response: echo: q" }]);
      } finally {
        await client.close();
      }
    });
    assert.deepEqual(
      seen.streams.map((u) => u.href),
      [onB(`${issuer}/mcp/guarded/sse`).href],
      "one stream, on b",
    );
    assert.ok(seen.posts.length >= 4, `POSTs: ${seen.posts.length}`);
    assert.ok(
      seen.posts.every((u) => u.origin === a.url && u.pathname === "/mcp/guarded/messages"),
      "every POST on a",
    );
  });

  it("without a token, or with another tenant's: the stream is refused (401) and connect fails", async () => {
    for (const token of [undefined, tokens.adaOther])
      await withGlobals(token, nothing(), async () => {
        const client = new Client10({ name: "sdk-1.0.4", version: "1.0.4" }, { capabilities: {} });
        await assert.rejects(
          client.connect(new SSEClientTransport10(new URL(`${issuer}/mcp/guarded/sse`))),
          /SSE error.*401/,
        );
      });
  });

  it("connects with no token to an open tenant, its stream on b and its POSTs on a, and calls", async () => {
    await withGlobals(undefined, nothing(), async () => {
      const client = new Client10({ name: "sdk-1.0.4", version: "1.0.4" }, { capabilities: {} });
      await client.connect(new SSEClientTransport10(new URL(`${a.url}/mcp/sse/sse`)));
      const prompts = await client.listPrompts();
      assert.deepEqual(
        prompts.prompts.map((p) => p.name),
        ["code-review"],
      );
      const read = await client.readResource({ uri: "perf://hello" });
      assert.deepEqual(read.contents, [{ uri: "perf://hello", mimeType: "text/plain", text: "hello" }]);
      await client.close();
    });
  });
});

describe("on the wire", () => {
  it("progress, then the result, on the stream of replica a for a POST to replica b", async () => {
    const stream = await openStream(a.url, "guarded", tokens.ada);
    try {
      assert.equal((await post(b.url, "guarded", stream.sid, initialize(), tokens.ada)).status, 202);
      await stream.next((m) => m.id === 0);
      const call = {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "test_tool_with_progress", arguments: {}, _meta: { progressToken: "p" } },
      };
      const accepted = await post(b.url, "guarded", stream.sid, call, tokens.ada);
      assert.equal(accepted.status, 202);
      assert.equal(await accepted.text(), "Accepted");
      await stream.next((m) => m.id === 1);
      const said = stream.events
        .filter((e) => e.event === "message")
        .map((e) => JSON.parse(e.data) as { id?: number; params?: { progress?: number } })
        .filter((m) => m.id !== 0)
        .map((m) => (m.id === undefined ? m.params?.progress : `result ${m.id}`));
      assert.deepEqual(said, [0, 50, 100, "result 1"]);
      assert.ok(
        stream.events.every((e) => e.id === undefined),
        "no event ids: nothing resumes",
      );
    } finally {
      stream.close();
    }
  });
});

describe("cancellation and list changes", () => {
  it("notifications/cancelled POSTed to replica a stops a call running on replica b", async () => {
    const stream = await openStream(a.url, "guarded", tokens.ada);
    try {
      assert.equal((await post(b.url, "guarded", stream.sid, initialize(), tokens.ada)).status, 202);
      await stream.next((m) => m.id === 0);
      const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
      assert.equal((await post(b.url, "guarded", stream.sid, list, tokens.ada)).status, 202);
      const { tools } = (await stream.next((m) => m.id === 1)).result as { tools: Array<{ name: string }> };
      const slow = tools.find((t) => t.name.startsWith("dyn") && t.name.endsWith("slow"))!.name;
      const call = {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: slow, arguments: { ms: 20_000 } },
      };
      assert.equal((await post(b.url, "guarded", stream.sid, call, tokens.ada)).status, 202);
      // Cancelled once the upstream runs it (before, there would be nothing upstream to cancel).
      await eventually(async () => dynamic.events.includes("slow"), 10_000, "the call to reach the upstream");
      const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } };
      assert.equal((await post(a.url, "guarded", stream.sid, cancel, tokens.ada)).status, 202);
      await eventually(
        async () => dynamic.events.some((e) => e.startsWith("cancelled:")),
        5000,
        "the upstream call is cancelled",
      );
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(
        stream.events.every(
          (e) => e.event !== "message" || (JSON.parse(e.data) as { id?: unknown }).id !== 9,
        ),
        "a cancelled request gets no response",
      );
    } finally {
      stream.close();
    }
  });

  it("a tool list change reaches the stream on a while the session was initialized on b", async () => {
    const stream = await openStream(a.url, "guarded", tokens.ada);
    try {
      assert.equal((await post(b.url, "guarded", stream.sid, initialize(), tokens.ada)).status, 202);
      await stream.next((m) => m.id === 0);
      dynamic.addTool("added_for_legacy");
      await stream.next((m) => m.method === "notifications/tools/list_changed", 8000);
    } finally {
      stream.close();
    }
  });
});

describe("hostile messages", () => {
  it("unknown session, POST before any GET, POST without sessionId", async () => {
    const unknown = await post(b.url, "guarded", "A".repeat(22), initialize(), tokens.ada);
    assert.equal(unknown.status, 404);
    assert.match((await rpcError(unknown)).message, /Session not found.*GET \/mcp\/guarded\/sse/);
    const none = await post(b.url, "guarded", undefined, initialize(), tokens.ada);
    assert.equal(none.status, 400);
    assert.match((await rpcError(none)).message, /sessionId query parameter is required/);
    const noToken = await post(b.url, "guarded", "A".repeat(22), initialize());
    assert.equal(noToken.status, 401, "the token is checked before the session");
  });

  it("a message to another tenant's session, or from another principal, finds nothing", async () => {
    const stream = await openStream(a.url, "guarded", tokens.ada);
    try {
      const otherTenant = await post(b.url, "other", stream.sid, initialize(), tokens.adaOther);
      assert.equal(otherTenant.status, 404);
      const otherUser = await post(b.url, "guarded", stream.sid, initialize(), tokens.bob);
      assert.equal(otherUser.status, 404);
      // Nor is it a Streamable HTTP session, nor the other way round.
      const asStreamable = await fetch(`${b.url}/mcp/guarded`, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${tokens.ada}`, "mcp-session-id": stream.sid },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      assert.equal(asStreamable.status, 404);
      const ok = await post(b.url, "guarded", stream.sid, initialize(7), tokens.ada);
      assert.equal(ok.status, 202);
      const answer = await stream.next((m) => m.id === 7);
      assert.equal((answer.result as { protocolVersion: string }).protocolVersion, "2025-11-25");
    } finally {
      stream.close();
    }
  });

  it("oversized, malformed, batched, or out of order: an error, never a 202", async () => {
    const stream = await openStream(a.url, "guarded", tokens.ada);
    try {
      const before = await post(
        b.url,
        "guarded",
        stream.sid,
        { jsonrpc: "2.0", id: 1, method: "ping" },
        tokens.ada,
      );
      assert.equal(before.status, 400);
      assert.match((await rpcError(before)).message, /send initialize first/);
      const big = await post(
        b.url,
        "guarded",
        stream.sid,
        { ...initialize(), pad: "x".repeat(70_000) },
        tokens.ada,
      );
      assert.equal(big.status, 413);
      const malformed = await post(b.url, "guarded", stream.sid, '{"jsonrpc":"2.0",', tokens.ada);
      assert.equal(malformed.status, 400);
      assert.equal((await rpcError(malformed)).code, -32700);
      const batch = await post(b.url, "guarded", stream.sid, [initialize()], tokens.ada);
      assert.equal(batch.status, 400);
      const notRpc = await post(b.url, "guarded", stream.sid, { id: 1, method: "ping" }, tokens.ada);
      assert.equal(notRpc.status, 400);
      assert.equal((await post(b.url, "guarded", stream.sid, initialize(1), tokens.ada)).status, 202);
      await stream.next((m) => m.id === 1);
      const again = await post(b.url, "guarded", stream.sid, initialize(2), tokens.ada);
      assert.equal(again.status, 400);
      assert.match((await rpcError(again)).message, /already initialized/);
      const wrongVersion = await fetch(`${b.url}/mcp/guarded/messages?sessionId=${stream.sid}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${tokens.ada}`,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" }),
      });
      assert.equal(wrongVersion.status, 400);
      // A request the session can serve is still answered on the stream.
      assert.equal(
        (await post(b.url, "guarded", stream.sid, { jsonrpc: "2.0", id: 4, method: "ping" }, tokens.ada))
          .status,
        202,
      );
      assert.deepEqual((await stream.next((m) => m.id === 4)).result, {});
    } finally {
      stream.close();
    }
  });

  it("closing the stream ends the session; its place under the session cap is free again", async () => {
    const streams = [];
    for (let i = 0; i < MAX_SESSIONS; i++)
      streams.push(await openStream(i % 2 ? b.url : a.url, "guarded", tokens.bob));
    const over = await fetch(`${a.url}/mcp/guarded/sse`, {
      headers: { accept: "text/event-stream", authorization: `Bearer ${tokens.bob}` },
    });
    assert.equal(over.status, 429, "GETs are bounded by the session cap");
    assert.match((await rpcError(over)).message, /already holds 3 sessions/);
    const first = streams[0]!;
    first.close();
    await eventually(
      async () => (await post(b.url, "guarded", first.sid, initialize(), tokens.bob)).status === 404,
      3000,
      "the closed stream's session is gone",
    );
    const again = await openStream(b.url, "guarded", tokens.bob);
    for (const s of [...streams.slice(1), again]) s.close();
  });

  it("the admin API lists an HTTP+SSE session with its transport; ending it closes the stream", async () => {
    const stream = await openStream(a.url, "guarded", tokens.ada);
    const admin = new AdminClient(b.url);
    const listed = await admin.get<{ transport: string; protocolVersion: string }>(
      `/tenants/guarded/sessions/${stream.sid}`,
    );
    assert.equal(listed.status, 200);
    assert.equal(listed.body.transport, "sse");
    assert.equal(listed.body.protocolVersion, "", "not initialized yet");
    assert.equal((await admin.delete(`/tenants/guarded/sessions/${stream.sid}`)).status, 204);
    await stream.reading; // the stream ends
    const res = await post(b.url, "guarded", stream.sid, initialize(), tokens.ada);
    assert.equal(res.status, 404);
  });

  it("a replica that shuts down ends the sessions of its streams: POSTs elsewhere answer 404 at once", async () => {
    const c = await startPortico({ redisPrefix: prefix, tenants, env: { PORTICO_PUBLIC_URL: issuer } });
    const stream = await openStream(c.url, "guarded", tokens.ada);
    assert.equal((await post(b.url, "guarded", stream.sid, initialize(), tokens.ada)).status, 202);
    await stream.next((m) => m.id === 0);
    await c.close();
    const res = await post(
      b.url,
      "guarded",
      stream.sid,
      { jsonrpc: "2.0", id: 1, method: "ping" },
      tokens.ada,
    );
    assert.equal(res.status, 404, "ended, not left to its lease");
    await stream.reading;
  });

  // The default idle TTL (30 min) would keep the record: the stream's 15 s lease is what lapses.
  it("a stream whose replica died: POSTs answer 404 once its lease lapses, not 202 and lost", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "portico-legacy-"));
    const config = join(dir, "tenants.json");
    writeFileSync(config, JSON.stringify({ tenants }));
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        PORTICO_PUBLIC_URL: issuer,
        PORTICO_ALLOWED_HOSTS: `127.0.0.1:${port}`,
        PORTICO_REDIS_URL: (await getTestRedis()).url,
        PORTICO_REDIS_KEY_PREFIX: prefix,
        PORTICO_SECRET_KEY: TEST_SECRET,
        PORTICO_CONFIG: config,
        PORTICO_LOG_LEVEL: "silent",
      },
      stdio: "ignore",
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      await eventually(
        async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200,
        20_000,
        "the third replica is ready",
      );
      const stream = await openStream(url, "guarded", tokens.ada);
      assert.equal((await post(b.url, "guarded", stream.sid, initialize(), tokens.ada)).status, 202);
      await stream.next((m) => m.id === 0);
      child.kill("SIGKILL");
      await eventually(
        async () =>
          (await post(b.url, "guarded", stream.sid, { jsonrpc: "2.0", id: 1, method: "ping" }, tokens.ada))
            .status === 404,
        25_000,
        "the dead replica's session is gone",
      );
    } finally {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("paths and the switch", () => {
  it("a tenant named 'sse' keeps its own endpoint beside the reserved segment", async () => {
    const res = await postRpc(`${a.url}/mcp/sse`, initialize());
    assert.equal(res.status, 200);
    const stream = await openStream(a.url, "sse");
    assert.equal((await post(b.url, "sse", stream.sid, initialize(3))).status, 202);
    await stream.next((m) => m.id === 3);
    stream.close();
  });

  it("a Streamable HTTP client POSTing to the stream's URL gets 405 (and falls back to GET)", async () => {
    const posted = await postRpc(`${a.url}/mcp/sse/sse`, initialize());
    assert.equal(posted.status, 405);
    assert.equal(posted.headers.get("allow"), "GET, OPTIONS");
    assert.match((await rpcError(posted)).message, /deprecated HTTP\+SSE transport.*\/mcp\/\{tenant\}/);
    const got = await fetch(`${a.url}/mcp/sse/messages`, { headers: { accept: "text/event-stream" } });
    assert.equal(got.status, 405);
    assert.equal(got.headers.get("allow"), "POST, OPTIONS");
    const preflight = await fetch(`${a.url}/mcp/sse/messages`, {
      method: "OPTIONS",
      headers: { origin: a.url, "access-control-request-method": "POST" },
    });
    assert.equal(preflight.status, 204);
  });

  it("on the embedded store, a stream outliving the idle TTL keeps its session and its place under the cap", async () => {
    const solo = await startPortico({
      tenants: [staticTenant("solo")],
      env: { PORTICO_SESSION_IDLE_TTL_SECONDS: "5", PORTICO_MAX_SESSIONS_PER_ADDRESS: "1" },
    });
    try {
      const stream = await openStream(solo.url, "solo");
      await new Promise((r) => setTimeout(r, 8000));
      const over = await fetch(`${solo.url}/mcp/solo/sse`, { headers: { accept: "text/event-stream" } });
      assert.equal(over.status, 429, "the cap still counts the open stream");
      assert.equal((await post(solo.url, "solo", stream.sid, initialize(5))).status, 202);
      await stream.next((m) => m.id === 5);
      stream.close();
    } finally {
      await solo.close();
    }
  });

  it("a stream needs Accept: text/event-stream", async () => {
    const res = await fetch(`${a.url}/mcp/sse/sse`, { headers: { accept: "application/json" } });
    assert.equal(res.status, 406);
  });

  it("PORTICO_LEGACY_SSE=false: both paths answer 404 saying the transport is disabled", async () => {
    const off = await startPortico({ tenants: [staticTenant("acme")], env: { PORTICO_LEGACY_SSE: "false" } });
    try {
      const get = await fetch(`${off.url}/mcp/acme/sse`, { headers: { accept: "text/event-stream" } });
      assert.equal(get.status, 404);
      assert.match((await rpcError(get)).message, /HTTP\+SSE transport is disabled.*\/mcp\/\{tenant\}/);
      const sent = await post(off.url, "acme", "A".repeat(22), initialize());
      assert.equal(sent.status, 404);
      assert.match((await rpcError(sent)).message, /disabled/);
      assert.equal(
        (await postRpc(off.mcpUrl("acme"), initialize())).status,
        200,
        "Streamable HTTP still served",
      );
    } finally {
      await off.close();
    }
  });
});
