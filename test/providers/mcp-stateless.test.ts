// The 2026-07-28 upstream client and catalog against real servers: the SDK v2 fixture
// (stateless-server.ts), a small SDK v2 server of our own for timing, cancellation and list changes,
// the session-era fixtures for era detection, and a raw HTTP peer for SSE framing edge cases.
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  createMcpHandler,
  fromJsonSchema,
  McpServer,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import { McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/v4";
import { egressDispatcher, egressFetch } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { isPorticoError } from "../../src/protocol/errors.js";
import type { UpstreamAuth } from "../../src/records/tenant.js";
import { StatelessCatalog } from "../../src/providers/mcp/stateless/catalog.js";
import { encodeHeaderValue } from "../../src/protocol/request-headers.js";
import {
  discoverEra,
  StatelessUpstreamClient,
  UPSTREAM_STATELESS_VERSION,
} from "../../src/providers/mcp/stateless/client.js";
import { describeFailure, type UpstreamTarget } from "../../src/providers/mcp/upstream.js";
import type { ListChangeKind } from "../../src/providers/types.js";
import { UpstreamCredentials } from "../../src/providers/upstream-auth.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startMinimalUpstream } from "../fixtures/minimal-server.js";
import { WATCHED_URI } from "../fixtures/stateless/catalog.js";
import { serveFetch } from "../fixtures/stateless/node-fetch.js";
import { startStatelessUpstream, type StatelessUpstream } from "../fixtures/stateless-server.js";

const dispatcher = egressDispatcher(new EgressPolicy());
const fetch = egressFetch(dispatcher);
const NONE = { clientCapabilities: {} };
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function target(
  url: string,
  extra: { headers?: Record<string, string>; auth?: UpstreamAuth } = {},
): UpstreamTarget {
  return {
    cfg: { id: "up", kind: "mcp", url, ...extra },
    fetch,
    dispatcher,
    credentials: new UpstreamCredentials(extra.auth, { fetch }),
    timeoutMs: 5000,
  };
}

/** Polls until `check` holds, calling `poke` between tries (timers run late on a busy machine), at most 5 s. */
async function until(check: () => boolean, poke?: () => void): Promise<boolean> {
  for (let i = 0; i < 100 && !check(); i++) {
    poke?.();
    await wait(50);
  }
  return check();
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail("expected a rejection");
}

// Constants: `x-mcp-header` is no JSON Schema keyword, so inline literals fail the excess-property check.
const TYPED_HEADERS = {
  type: "object",
  properties: {
    count: { type: "integer", "x-mcp-header": "Count" },
    flag: { type: "boolean", "x-mcp-header": "Flag" },
    outer: { type: "object", properties: { inner: { type: "string", "x-mcp-header": "Inner" } } },
  },
} as const;
const HEADER_UNDER_ITEMS = {
  type: "object",
  properties: { list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } },
} as const;

/**
 * Our own SDK v2 server: `slow` sleeps `steps` × `intervalMs`, reporting progress when asked and
 * recording when its request signal fires; `extraTools` changes its tool list.
 */
async function startLocalUpstream() {
  const extraTools = new Set<string>();
  const aborts: string[] = [];
  const handler: McpHttpHandler = createMcpHandler(() => {
    const server = new McpServer({ name: "local", version: "1.0.0" }, { capabilities: {} });
    const slowInput = z.object({ steps: z.number(), intervalMs: z.number(), label: z.string() });
    server.registerTool("slow", { inputSchema: slowInput }, async ({ steps, intervalMs, label }, ctx) => {
      ctx.mcpReq.signal.addEventListener("abort", () => aborts.push(label));
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= steps && !ctx.mcpReq.signal.aborted; step++) {
        await wait(intervalMs);
        if (progressToken !== undefined)
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken, progress: step },
          });
      }
      return { content: [{ type: "text", text: `slept ${steps} steps` }] };
    });
    server.registerTool("typed_headers", { inputSchema: fromJsonSchema(TYPED_HEADERS) }, (args) => ({
      content: [{ type: "text", text: JSON.stringify(args) }],
    }));
    // The SDK itself warns on stderr that conforming clients leave this tool out: expected.
    server.registerTool("header_under_items", { inputSchema: fromJsonSchema(HEADER_UNDER_ITEMS) }, () => ({
      content: [],
    }));
    for (const name of extraTools)
      server.registerTool(name, { inputSchema: z.object({}) }, () => ({ content: [] }));
    return server;
  });
  const counts = { toolsList: 0 };
  const http = createServer(
    (req, res) =>
      void serveFetch(req, res, (request) => {
        if (request.headers.get("mcp-method") === "tools/list") counts.toolsList++;
        return handler.fetch(request);
      }),
  );
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    counts,
    extraTools,
    aborts,
    notify: handler.notify,
    async close() {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A raw HTTP peer: records each request's headers and body, answers with `respond`. */
async function startRawPeer(
  respond: (body: { id: number }, res: ServerResponse) => void,
): Promise<{ url: string; seen: { headers: IncomingHttpHeaders; body: any }[]; close(): Promise<void> }> {
  const seen: { headers: IncomingHttpHeaders; body: any }[] = [];
  const http: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const body = JSON.parse(text);
      seen.push({ headers: req.headers, body });
      respond(body, res);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let upstream: StatelessUpstream;
let local: Awaited<ReturnType<typeof startLocalUpstream>>;
let client: StatelessUpstreamClient;

before(async () => {
  [upstream, local] = await Promise.all([startStatelessUpstream(), startLocalUpstream()]);
  client = new StatelessUpstreamClient(target(upstream.url));
});
after(async () => {
  await Promise.all([upstream.close(), local.close()]);
});

describe("discoverEra", () => {
  it("finds 2026-07-28 with the upstream's capabilities and identity", async () => {
    const outcome = await discoverEra(target(upstream.url), 5000);
    assert.equal(outcome.era, "stateless");
    assert.ok(outcome.era === "stateless");
    assert.ok(outcome.discover.supportedVersions.includes(UPSTREAM_STATELESS_VERSION));
    assert.deepEqual(outcome.discover.capabilities.tools, { listChanged: true });
    assert.equal(outcome.discover.capabilities.resources?.subscribe, true);
    assert.equal(outcome.discover.serverInfo?.name, "portico-stateless-upstream");
  });

  it("finds the session era on a sessionful and on a stateless 2025 server", async () => {
    const sessionful = await startConformanceUpstream();
    const minimal = await startMinimalUpstream();
    try {
      assert.deepEqual(await discoverEra(target(sessionful.url), 5000), { era: "session" });
      assert.deepEqual(await discoverEra(target(minimal.url), 5000), { era: "session" });
    } finally {
      await Promise.all([sessionful.close(), minimal.close()]);
    }
  });

  it("takes an upstream's internal error for no verdict: it throws, to be asked again later", async () => {
    const failing = createServer((req, res) => {
      req.resume();
      req.on("end", () =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end('{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"warming up"}}'),
      );
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/mcp`;
      const err = await rejection(discoverEra(target(url), 5000));
      assert.ok(err instanceof McpError && err.code === -32603, String(err));
    } finally {
      failing.close();
    }
  });

  it("throws the transport failure when the upstream is unreachable", async () => {
    const gone = await startMinimalUpstream();
    await gone.close();
    const err = await rejection(discoverEra(target(gone.url), 5000));
    assert.equal(describeFailure(err), "connection refused");
    const guarded = await startMinimalUpstream({
      authorize: (authorization) => authorization === "Bearer right",
    });
    try {
      const refused = await rejection(
        discoverEra(target(guarded.url, { auth: { type: "bearer", token: "wrong" } }), 5000),
      );
      assert.equal(describeFailure(refused), "HTTP 401");
    } finally {
      await guarded.close();
    }
  });
});

describe("StatelessUpstreamClient.request", () => {
  it("answers a JSON result as sent, resultType included", async () => {
    const result = await client.request("tools/call", { name: "test_simple_text", arguments: {} }, NONE);
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.content, [{ type: "text", text: "This is a simple text response for testing." }]);
  });

  it("relays the notifications of an SSE response and resolves at its response", async () => {
    const seen: [string, Record<string, unknown>][] = [];
    const result = await client.request(
      "tools/call",
      { name: "test_tool_with_progress", arguments: {} },
      { ...NONE, progressToken: "p1", onNotification: (method, params) => seen.push([method, params]) },
    );
    assert.equal(result.resultType, "complete");
    assert.deepEqual(
      seen.map(([method, params]) => [method, params.progressToken, params.progress]),
      [0, 50, 100].map((progress) => ["notifications/progress", "p1", progress]),
    );
  });

  it("relays log messages only at the requested level (logLevel goes in _meta)", async () => {
    const logs: unknown[] = [];
    const onNotification = (method: string, params: Record<string, unknown>) => {
      if (method === "notifications/message") logs.push(params.data);
    };
    await client.request("tools/call", { name: "test_logging_tool" }, { ...NONE, onNotification });
    assert.deepEqual(logs, [], "no logLevel, no log");
    await client.request(
      "tools/call",
      { name: "test_logging_tool" },
      { ...NONE, logLevel: "info", onNotification },
    );
    assert.deepEqual(logs, ["test_logging_tool ran"]);
  });

  it("mirrors x-mcp-header arguments into Mcp-Param-* (the fixture refuses a mismatch)", async () => {
    const listed = await client.request("tools/list", {}, NONE);
    const tool = (listed.tools as Tool[]).find((t) => t.name === "test_x_mcp_header");
    assert.ok(tool);
    for (const region of ["us-west1", "Zürich ", "=?base64?literal?="]) {
      const result = await client.request(
        "tools/call",
        { name: tool.name, arguments: { region, level: 3 } },
        { ...NONE, tool },
      );
      assert.deepEqual(result.content, [{ type: "text", text: `region=${region}` }]);
    }
    const absent = await client.request(
      "tools/call",
      { name: tool.name, arguments: { level: 3 } },
      { ...NONE, tool },
    );
    assert.deepEqual(absent.content, [{ type: "text", text: "region=<none>" }]);
    const unmirrored = await rejection(
      client.request("tools/call", { name: tool.name, arguments: { region: "eu" } }, NONE),
    );
    assert.ok(unmirrored instanceof McpError);
    assert.equal(unmirrored.code, -32020, "without the tool definition the header is missing");
  });

  it("mirrors integer, boolean and nested x-mcp-header arguments", async () => {
    const localClient = new StatelessUpstreamClient(target(local.url));
    const listed = await localClient.request("tools/list", {}, NONE);
    const tool = (listed.tools as Tool[]).find((t) => t.name === "typed_headers");
    assert.ok(tool);
    const args = { count: 42, flag: false, outer: { inner: "grüß dich" } };
    const result = await localClient.request(
      "tools/call",
      { name: tool.name, arguments: args },
      { ...NONE, tool },
    );
    assert.deepEqual(result.content, [{ type: "text", text: JSON.stringify(args) }]);
  });

  it("encodes header values per §Value Encoding", () => {
    assert.equal(encodeHeaderValue("us-west1"), "us-west1");
    assert.equal(encodeHeaderValue("a b"), "a b");
    assert.equal(encodeHeaderValue("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
    assert.equal(encodeHeaderValue(" padded "), "=?base64?IHBhZGRlZCA=?=");
    assert.equal(encodeHeaderValue("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
    assert.equal(encodeHeaderValue("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  });

  it("rejects a JSON-RPC error as an McpError with the upstream's code, message and data", async () => {
    const unknownResource = await rejection(client.request("resources/read", { uri: "test://nope" }, NONE));
    assert.ok(unknownResource instanceof McpError);
    assert.equal(unknownResource.code, -32602);
    assert.equal(unknownResource.message, "Resource not found: test://nope");
    assert.deepEqual(unknownResource.data, { uri: "test://nope" });
    // 2026-07-28 answers an unknown method with HTTP 404 and a JSON-RPC body.
    const unknownMethod = await rejection(client.request("ping", {}, NONE));
    assert.ok(unknownMethod instanceof McpError);
    assert.equal(unknownMethod.code, -32601);
  });

  it("passes input_required through, and its retry with inputResponses and requestState", async () => {
    const name = "test_input_required_result_request_state";
    const caps = { clientCapabilities: { elicitation: {} } };
    const first = await client.request("tools/call", { name, arguments: {} }, caps);
    assert.equal(first.resultType, "input_required");
    const requests = first.inputRequests as Record<string, { method: string }>;
    assert.equal(requests.confirm?.method, "elicitation/create");
    assert.equal(typeof first.requestState, "string");
    const inputResponses = { confirm: { action: "accept", content: { ok: true } } };
    const second = await client.request(
      "tools/call",
      { name, arguments: {}, inputResponses, requestState: first.requestState },
      caps,
    );
    assert.equal(second.resultType, "complete");
    const [block] = second.content as { text: string }[];
    assert.match(block?.text ?? "", /^state-ok: requestState verified/);
    const prompt = await client.request("prompts/get", { name: "test_input_required_result_prompt" }, caps);
    assert.equal(prompt.resultType, "input_required");
  });

  it("keeps a slow call alive while progress arrives, and times out without it", async () => {
    // 1.5 s of work against a 1 s timeout: progress every 300 ms leaves 700 ms for a busy machine
    // to be late with one (60 ms against 200 ms left 140 ms).
    const args = { steps: 5, intervalMs: 300, label: "progress" };
    const opts = { ...NONE, timeoutMs: 1000 };
    const localClient = new StatelessUpstreamClient(target(local.url));
    const done = await localClient.request(
      "tools/call",
      { name: "slow", arguments: args },
      { ...opts, progressToken: 1 },
    );
    assert.deepEqual(done.content, [{ type: "text", text: "slept 5 steps" }]);
    const err = await rejection(
      localClient.request("tools/call", { name: "slow", arguments: { ...args, label: "quiet" } }, opts),
    );
    assert.ok(isPorticoError(err) && err.code === "PORTICO_ERR_PROVIDER_TIMEOUT");
    assert.equal(err.message, "Provider 'up' did not answer in time");
    assert.ok(
      await until(() => local.aborts.includes("quiet")),
      "the timeout closed the stream: cancelled upstream",
    );
  });

  it("cancels upstream when the caller aborts: the request stream closes", async () => {
    const localClient = new StatelessUpstreamClient(target(local.url));
    const controller = new AbortController();
    const call = localClient.request(
      "tools/call",
      { name: "slow", arguments: { steps: 50, intervalMs: 40, label: "cancelled" } },
      { ...NONE, progressToken: "c", signal: controller.signal, onNotification: () => controller.abort() },
    );
    const err = await rejection(call);
    assert.equal((err as Error).name, "AbortError");
    assert.ok(await until(() => local.aborts.includes("cancelled")), "the upstream's request signal fired");
  });

  it("sends the envelope and headers, cfg.headers and cfg.auth; reads CRLF, comments and multi-line data", async () => {
    const peer = await startRawPeer((body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": keep-alive\r\n\r\n");
      res.write('event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",\r\n');
      res.write('data: "params":{"progressToken":"t","progress":1}}\r');
      res.write("\n\r\n");
      res.write('data: {"jsonrpc":"2.0","id":"s1","method":"roots/list"}\n\n'); // forbidden: ignored
      res.write(`data: {"jsonrpc":"2.0","id":${body.id + 1000},"result":{}}\n\n`); // not ours
      res.write(
        `data: {"jsonrpc":"2.0","id":${body.id},\ndata: "result":{"resultType":"complete","ok":1}}\r\n\r\n`,
      );
    });
    try {
      const raw = new StatelessUpstreamClient(
        target(peer.url, {
          headers: { "X-Api-Key": "k1", "Mcp-Method": "spoofed" },
          auth: { type: "bearer", token: "tok" },
        }),
      );
      const seen: string[] = [];
      const result = await raw.request(
        "resources/read",
        { uri: "file:///ä.txt" },
        {
          clientCapabilities: { roots: {} },
          logLevel: "debug",
          progressToken: "t",
          onNotification: (m) => seen.push(m),
        },
      );
      assert.deepEqual(result, { resultType: "complete", ok: 1 });
      assert.deepEqual(seen, ["notifications/progress"]);
      const [{ headers, body }] = peer.seen as [{ headers: IncomingHttpHeaders; body: any }];
      assert.equal(headers["content-type"], "application/json");
      assert.equal(headers.accept, "application/json, text/event-stream");
      assert.equal(headers["mcp-protocol-version"], "2026-07-28");
      assert.equal(headers["mcp-method"], "resources/read");
      assert.equal(headers["mcp-name"], encodeHeaderValue("file:///ä.txt"));
      assert.equal(headers["x-api-key"], "k1");
      assert.equal(headers.authorization, "Bearer tok");
      assert.deepEqual(body.params, {
        uri: "file:///ä.txt",
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": {
            name: "portico",
            version: body.params._meta["io.modelcontextprotocol/clientInfo"].version,
          },
          "io.modelcontextprotocol/clientCapabilities": { roots: {} },
          "io.modelcontextprotocol/logLevel": "debug",
          progressToken: "t",
        },
      });
    } finally {
      await peer.close();
    }
  });

  it("fails clearly on a stream that ends without the response, and on an oversized message", async () => {
    const peer = await startRawPeer((body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (body.id === 1)
        return void res.end('data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n');
      res.write("data: ");
      const chunk = "x".repeat(1024 * 1024);
      for (let i = 0; i < 17; i++) res.write(chunk);
      res.end();
    });
    try {
      const raw = new StatelessUpstreamClient(target(peer.url));
      const ended = await rejection(raw.request("tools/list", {}, NONE));
      assert.match((ended as Error).message, /stream ended without a response/);
      const oversized = await rejection(raw.request("tools/list", {}, NONE));
      assert.match((oversized as Error).message, /exceeded 16777216 characters/);
      assert.equal(describeFailure(ended), "the upstream's stream ended without a response");
    } finally {
      await peer.close();
    }
  });

  it("says what was wrong with a JSON body that is not one JSON-RPC response (newline-delimited here)", async () => {
    const peer = await startRawPeer((body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const progress = { jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } };
      res.end(`${JSON.stringify(progress)}\n${JSON.stringify({ jsonrpc: "2.0", id: body.id, result: {} })}`);
    });
    try {
      const err = await rejection(
        new StatelessUpstreamClient(target(peer.url)).request("tools/list", {}, NONE),
      );
      assert.equal(describeFailure(err), "the upstream's answer is not a JSON-RPC response");
    } finally {
      await peer.close();
    }
  });
});

describe("StatelessUpstreamClient.listen", () => {
  it("resolves at the acknowledgement, relays what follows, and closes on abort", async () => {
    const seen: [string, Record<string, unknown>][] = [];
    const controller = new AbortController();
    const { acknowledged, closed } = await client.listen(
      { toolsListChanged: true, resourceSubscriptions: ["test://static-text"] },
      (method, params) => seen.push([method, params]),
      controller.signal,
    );
    assert.deepEqual(acknowledged, { toolsListChanged: true, resourceSubscriptions: ["test://static-text"] });
    await client.request("tools/call", { name: "test_trigger_tool_change" }, NONE);
    assert.ok(await until(() => seen.length > 0));
    const [method, params] = seen[0]!;
    assert.equal(method, "notifications/tools/list_changed");
    assert.ok("io.modelcontextprotocol/subscriptionId" in (params._meta as object), "subscriptionId kept");
    controller.abort();
    await closed;
  });

  it("rejects a refused filter with the upstream's error", async () => {
    const filter = { toolsListChanged: "yes" } as unknown as { toolsListChanged: boolean };
    const err = await rejection(client.listen(filter, () => undefined, new AbortController().signal));
    assert.ok(err instanceof McpError);
    assert.equal(err.code, -32602);
  });

  it("settles `closed` when the upstream ends the subscription (graceful final response)", async () => {
    const own = await startStatelessUpstream();
    const { closed } = await new StatelessUpstreamClient(target(own.url)).listen(
      { promptsListChanged: true },
      () => undefined,
      new AbortController().signal,
    );
    await own.close();
    await closed;
  });
});

describe("StatelessCatalog", () => {
  function recorder() {
    const changes: ListChangeKind[] = [];
    const health: [boolean, string | undefined][] = [];
    return {
      changes,
      health,
      events: {
        listChanged: (kind: ListChangeKind) => changes.push(kind),
        healthChanged: (healthy: boolean, reason?: string) => health.push([healthy, reason]),
      },
    };
  }

  it("reports its first verdict even when it is unhealthy from the start", async () => {
    const gone = await startMinimalUpstream();
    await gone.close();
    const { events, health } = recorder();
    const catalog = new StatelessCatalog(target(gone.url), events);
    try {
      await catalog.start(60_000);
      assert.deepEqual(health, [[false, "connection refused"]]);
    } finally {
      await catalog.close();
    }
    // The SDK's words for an initialize that agreed on no revision, in Portico's.
    assert.equal(
      describeFailure(new Error("Server's protocol version is not supported: 2026-07-28")),
      'it answered initialize with protocol version "2026-07-28", which Portico does not speak',
    );
  });

  it("lists every kind, watches resources, and goes unhealthy when the upstream closes", async () => {
    const own = await startStatelessUpstream();
    const { events, changes, health } = recorder();
    const updates: string[] = [];
    const catalog = new StatelessCatalog(target(own.url), events, {
      onResourceUpdated: (uri) => updates.push(uri),
    });
    try {
      await catalog.start(100);
      assert.equal(catalog.healthy, true);
      assert.deepEqual(health, [[true, undefined]]);
      // The first listing is announced by whoever started the provider (the registry, once).
      assert.deepEqual(changes, []);
      const { tools, prompts, resources, resourceTemplates } = catalog.entries;
      assert.ok(tools.some((t) => t.name === "test_simple_text"));
      assert.ok(prompts.some((p) => p.name === "test_input_required_result_prompt"));
      assert.ok(resources.some((r) => r.uri === WATCHED_URI));
      assert.ok(resourceTemplates.some((t) => t.uriTemplate === "test://template/{id}/data"));
      assert.equal(catalog.tool("test_x_mcp_header")?.name, "test_x_mcp_header");
      assert.equal(catalog.capabilities?.resources?.subscribe, true);
      assert.equal(typeof (await catalog.ping(1000)), "number");

      const release = catalog.watch(WATCHED_URI);
      assert.ok(
        await until(
          () => updates.length > 0,
          () => own.notify.resourceUpdated(WATCHED_URI),
        ),
        "resources/updated reached onResourceUpdated",
      );
      assert.equal(updates[0], WATCHED_URI);
      release();

      await own.close();
      assert.ok(await until(() => !catalog.healthy), "the health probe noticed");
      assert.deepEqual(health.at(-1), [false, "connection refused"]);
    } finally {
      await catalog.close();
      await own.close();
    }
  });

  it("re-reads a list on list_changed and announces it only when it differs", async () => {
    const { events, changes } = recorder();
    const catalog = new StatelessCatalog(target(local.url), events);
    try {
      await catalog.start(60_000);
      assert.deepEqual(
        catalog.entries.tools.map((t) => t.name),
        ["slow", "typed_headers"],
        "header_under_items is left out: its x-mcp-header is not reachable through properties",
      );
      changes.length = 0;
      local.extraTools.add("added");
      assert.ok(
        await until(
          () => changes.includes("tools"),
          () => local.notify.toolsChanged(),
        ),
        "tools list_changed announced",
      );
      assert.deepEqual(
        catalog.entries.tools.map((t) => t.name),
        ["slow", "typed_headers", "added"],
      );
      assert.ok(catalog.tool("added"));
    } finally {
      await catalog.close();
      local.extraTools.clear();
    }
  });

  it("a storm of tools/list_changed costs two listings, not one each, and the last list is kept", async () => {
    const { events, changes } = recorder();
    const catalog = new StatelessCatalog(target(local.url), events);
    try {
      await catalog.start(60_000);
      assert.ok(await until(() => catalog.entries.tools.length > 0));
      // Wait for the listen stream: a notification needs it.
      local.extraTools.add("first");
      assert.ok(
        await until(
          () => catalog.entries.tools.some((t) => t.name === "first"),
          () => local.notify.toolsChanged(),
        ),
      );
      await wait(200);
      const before = local.counts.toolsList;
      changes.length = 0;
      local.extraTools.add("stormed");
      for (let i = 0; i < 300; i++) local.notify.toolsChanged();
      assert.ok(await until(() => catalog.entries.tools.some((t) => t.name === "stormed")));
      await wait(500);
      const listings = local.counts.toolsList - before;
      assert.ok(listings >= 1 && listings <= 3, `${listings} listings for 300 list_changed`);
    } finally {
      await catalog.close();
      local.extraTools.clear();
    }
  });

  it("hands a session-era upstream to onEraChanged", async () => {
    const sessionful = await startConformanceUpstream();
    let switched = 0;
    const { events } = recorder();
    const catalog = new StatelessCatalog(target(sessionful.url), events, { onEraChanged: () => switched++ });
    try {
      await catalog.connect();
      assert.equal(switched, 1);
      await assert.rejects(catalog.refresh(), /does not speak 2026-07-28/);
    } finally {
      await catalog.close();
      await sessionful.close();
    }
  });
});
