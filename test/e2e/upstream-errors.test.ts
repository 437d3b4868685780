// What an upstream answers, as Portico's clients get it (basic/index §Error Codes, server/utilities/
// caching, basic/patterns/mrtr): an upstream's error codes reach the client unless they would say
// something false of Portico; its input requests only when they are ones a client may be asked,
// under capabilities the request declared; its cache hints only when valid, and never on
// input_required; a session-era upstream's -32042 becomes URL-mode input requests for a 2026-07-28
// client and stays -32042 for a 2025-11-25 one.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { McpError, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { sendJson, startRawUpstream } from "../support/raw-upstream.js";

const VERSION = "2026-07-28";
const SERVER_META = { "io.modelcontextprotocol/serverInfo": { name: "odd", version: "1" } };
const FORM = { mode: "form", message: "Name?", requestedSchema: { type: "object", properties: {} } };

/** Answers of a hand-written 2026-07-28 upstream that breaks the rules in every way it can. */
const TOOL_ANSWERS: Record<string, (id: unknown) => object> = {
  ...Object.fromEntries(
    [-32700, -32600, -32020, -32021, -32022, -32042, -32050, -32601, 7].map((code) => [
      `err${-code}`,
      (id: unknown) => ({
        jsonrpc: "2.0",
        id,
        error: {
          code,
          message: `upstream said ${code}`,
          data: code === -32021 ? { requiredCapabilities: { sampling: {} } } : { supported: ["2099-01-01"] },
        },
      }),
    ]),
  ),
  ask_anything: (id) => inputRequired(id, { k: { method: "tools/call", params: { name: "x" } } }),
  ask_nothing: (id) => inputRequired(id, {}),
  ask_two: (id) =>
    inputRequired(id, {
      name: { method: "elicitation/create", params: FORM },
      draft: { method: "sampling/createMessage", params: { messages: [], maxTokens: 1 } },
    }),
};

function inputRequired(id: unknown, inputRequests: Record<string, unknown>) {
  const result = { resultType: "input_required", inputRequests, ttlMs: 10, cacheScope: "public" };
  return { jsonrpc: "2.0", id, result: { ...result, _meta: SERVER_META } };
}

const READS: Record<string, Record<string, unknown>> = {
  "odd://negative": { ttlMs: -5, cacheScope: "weird" },
  "odd://fraction": { ttlMs: 1.5 },
  "odd://own": { ttlMs: 5000, cacheScope: "private" },
};

function startOddUpstream() {
  return startRawUpstream((m, res) => {
    const ok = (result: Record<string, unknown>) => ({
      jsonrpc: "2.0",
      id: m.id,
      result: { resultType: "complete", _meta: SERVER_META, ...result },
    });
    let out: object;
    if (m.method === "server/discover")
      // No completions: Portico answers completion/complete itself, with nothing.
      out = ok({ supportedVersions: [VERSION], capabilities: { tools: {}, prompts: {}, resources: {} } });
    else if (m.method === "tools/list")
      out = ok({
        tools: [
          ...[...Object.keys(TOOL_ANSWERS), "endless"].map((name) => ({
            name,
            inputSchema: { type: "object" },
          })),
          ...MIXED_TOOLS.slice(1),
        ],
      });
    else if (m.method === "prompts/list") out = ok({ prompts: [{ name: "pp", arguments: [{ name: "a" }] }] });
    else if (m.method === "resources/list")
      out = ok({
        resources: [...Object.keys(READS), "odd://asks"].map((uri) => ({ uri, name: uri })),
      });
    else if (m.method === "resources/templates/list") out = ok({ resourceTemplates: [] });
    else if (m.method === "tools/call" && m.params!.name === "endless") {
      // Progress every 50 ms, and never a result.
      res.writeHead(200, { "content-type": "text/event-stream" });
      let progress = 0;
      const progressToken = m.params!._meta?.progressToken;
      const timer = setInterval(() => {
        const note = {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken, progress: ++progress },
        };
        res.write(`data: ${JSON.stringify(note)}\n\n`);
      }, 50);
      res.on("close", () => clearInterval(timer));
      return;
    } else if (m.method === "tools/call") out = TOOL_ANSWERS[m.params!.name as string]!(m.id);
    else if (m.method === "resources/read" && m.params!.uri === "odd://asks")
      out = inputRequired(m.id, { name: { method: "elicitation/create", params: FORM } });
    else if (m.method === "resources/read")
      out = ok({ contents: [{ uri: m.params!.uri, text: "t" }], ...READS[m.params!.uri as string] });
    else out = { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } };
    sendJson(res, out);
  });
}

/** Tool lists with one valid entry among invalid ones (no inputSchema, a non-object one, a null). */
const MIXED_TOOLS = [
  { name: "good", inputSchema: { type: "object" } },
  // Valid in 2026-07-28 (any JSON Schema object), refused by session-era clients' schema.
  { name: "array_output", inputSchema: { type: "object" }, outputSchema: { type: "array" } },
  null,
  { name: "no_schema" },
  { name: "string_schema", inputSchema: { type: "string" } },
  { inputSchema: { type: "object" } },
];

/** A raw session-era upstream (no sessions) whose tools/list mixes valid and invalid tools. */
function startMixedSessionUpstream() {
  return startRawUpstream((m, res) => {
    const answer = (payload: object) => sendJson(res, { jsonrpc: "2.0", id: m.id, ...payload });
    if (m.method === "initialize")
      return answer({
        result: {
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "mixed", version: "1" },
        },
      });
    if (m.method === "tools/list") return answer({ result: { tools: MIXED_TOOLS } });
    if (m.method === "ping") return answer({ result: {} });
    answer({ error: { code: -32601, message: "Method not found" } });
  });
}

/** A session-era upstream whose tool needs the user to open a URL first, then succeeds. */
async function startUrlUpstream() {
  let calls = 0;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const known = sessions.get(String(req.headers["mcp-session-id"]));
    if (known) return void known.handleRequest(req, res);
    const server = new McpServer({ name: "urls", version: "1.0.0" });
    server.registerTool("connect", { description: "Needs an account connected" }, async () => {
      if (++calls % 2 === 1)
        throw new UrlElicitationRequiredError([
          {
            mode: "url",
            elicitationId: "e1",
            url: "https://auth.example/connect",
            message: "Connect your account",
          },
        ]);
      return { content: [{ type: "text", text: "connected" }] };
    });
    server.registerTool("endless", { description: "Reports progress, never finishes" }, async (extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let progress = 1; !extra.signal.aborted; progress++) {
        if (progressToken !== undefined)
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress },
          });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return { content: [] };
    });
    const fresh = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, fresh),
    });
    void server.connect(fresh).then(() => fresh.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    /** The next call is a first one again: it asks for the URL. */
    reset: () => void (calls = 0),
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let odd: Awaited<ReturnType<typeof startOddUpstream>>;
let mixed: Awaited<ReturnType<typeof startMixedSessionUpstream>>;
let urls: Awaited<ReturnType<typeof startUrlUpstream>>;
let portico: RunningPortico;

before(async () => {
  [odd, urls, mixed] = await Promise.all([
    startOddUpstream(),
    startUrlUpstream(),
    startMixedSessionUpstream(),
  ]);
  portico = await startPortico({
    tenants: [
      { id: "odd", auth: "none", providers: [{ id: "odd", kind: "mcp", url: odd.url }] },
      { id: "urls", auth: "none", providers: [{ id: "urls", kind: "mcp", url: urls.url }] },
      { id: "mixed", auth: "none", providers: [{ id: "mixed", kind: "mcp", url: mixed.url }] },
      // Short timeouts: 500 ms without news, 5 s in all however much progress comes. Progress
      // comes every 50 ms; a busy machine may hold one back for 450 ms before it counts as none.
      {
        id: "hasty",
        auth: "none",
        providers: [
          { id: "odd", kind: "mcp", url: odd.url, prefix: "odd", timeoutMs: 500 },
          { id: "urls", kind: "mcp", url: urls.url, prefix: "urls", timeoutMs: 500 },
        ],
      },
    ],
  });
});
after(async () => {
  await portico.close();
  await Promise.all([odd.close(), urls.close(), mixed.close()]);
});

/** A 2026-07-28 request through Portico. */
async function call(tenant: string, method: string, params: Record<string, unknown>, caps: object = {}) {
  const name = params.name ?? params.uri;
  const res = await fetch(portico.mcpUrl(tenant), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...(typeof name === "string" && { "mcp-name": name }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": caps,
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
        },
      },
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe("an upstream's JSON-RPC errors, to a 2026-07-28 client", () => {
  it("codes that would speak of Portico's own request or methods are the provider's failure", async () => {
    for (const code of [32700, 32600, 32020, 32022, 32601]) {
      const res = await call("odd", "tools/call", { name: `err${code}` });
      assert.equal(res.status, 200, `-${code}`);
      assert.equal(res.body.result?.isError, true, `-${code}: ${JSON.stringify(res.body)}`);
      assert.match(
        res.body.result.content[0].text,
        new RegExp(`Provider 'odd' refused the request \\(its error -${code}`),
      );
    }
  });

  it("reserved codes the revision does not define become -32603; others are relayed as they are", async () => {
    for (const code of [32042, 32050]) {
      const res = await call("odd", "tools/call", { name: `err${code}` });
      assert.equal(res.status, 200);
      assert.equal(res.body.error?.code, -32603, JSON.stringify(res.body));
      assert.match(res.body.error.message, new RegExp(`its error -${code}: upstream said -${code}`));
    }
    const capability = await call("odd", "tools/call", { name: "err32021" });
    assert.equal(capability.status, 400);
    assert.deepEqual(capability.body.error, {
      code: -32021,
      message: "upstream said -32021",
      data: { requiredCapabilities: { sampling: {} } },
    });
    const own = await call("odd", "tools/call", { name: "err-7" });
    assert.deepEqual(own.body.error, {
      code: 7,
      message: "upstream said 7",
      data: { supported: ["2099-01-01"] },
    });
  });

  it("the reserved range is 2026-07-28's: a session-era client gets such codes as they are", async () => {
    const client = new Client({ name: "v1", version: "1" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(portico.mcpUrl("odd"))));
    const err = await client.callTool({ name: "err32050" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof McpError && err.code === -32050, String(err));
    // Method not found still says nothing true of Portico, whatever the revision.
    const refused = await client.callTool({ name: "err32601" });
    assert.equal(refused.isError, true);
    await client.close();
  });
});

describe("an upstream's input requests, to a 2026-07-28 client", () => {
  it("only requests a client may be asked, under capabilities the request declared", async () => {
    const anything = await call("odd", "tools/call", { name: "ask_anything" }, { elicitation: {} });
    assert.equal(anything.body.result?.isError, true, JSON.stringify(anything.body));
    assert.match(anything.body.result.content[0].text, /asked the client for tools\/call/);
    const nothing = await call("odd", "tools/call", { name: "ask_nothing" }, { elicitation: {} });
    assert.equal(nothing.body.result?.isError, true);

    const undeclared = await call("odd", "tools/call", { name: "ask_two" }, { elicitation: { url: {} } });
    assert.equal(undeclared.status, 400);
    assert.equal(undeclared.body.error.code, -32021);
    assert.deepEqual(undeclared.body.error.data, {
      requiredCapabilities: { elicitation: { form: {} }, sampling: {} },
    });
    const declared = await call("odd", "tools/call", { name: "ask_two" }, { elicitation: {}, sampling: {} });
    assert.equal(declared.body.result.resultType, "input_required");
    assert.deepEqual(Object.keys(declared.body.result.inputRequests), ["name", "draft"]);
  });
});

describe("cache hints", () => {
  it("an upstream's are kept when valid, replaced when not, and dropped from input_required", async () => {
    const hints = async (uri: string) => {
      const { body } = await call("odd", "resources/read", { uri });
      return [body.result.ttlMs, body.result.cacheScope];
    };
    assert.deepEqual(await hints("odd://negative"), [60_000, "public"]);
    assert.deepEqual(await hints("odd://fraction"), [60_000, "public"]);
    assert.deepEqual(await hints("odd://own"), [5000, "private"]);
    const asks = await call("odd", "resources/read", { uri: "odd://asks" }, { elicitation: {} });
    assert.equal(asks.body.result.resultType, "input_required");
    assert.equal("ttlMs" in asks.body.result, false, JSON.stringify(asks.body.result));
    assert.equal("cacheScope" in asks.body.result, false);
  });

  it("completion on an upstream without completions is empty, not its 'Method not found'", async () => {
    const res = await call("odd", "completion/complete", {
      ref: { type: "ref/prompt", name: "pp" },
      argument: { name: "a", value: "x" },
    });
    assert.deepEqual(res.body.result.completion, { values: [] });
  });
});

describe("an upstream's invalid list entries", () => {
  it("are left out, one by one, from upstreams of both eras; clients list the rest", async () => {
    for (const tenant of ["odd", "mixed"]) {
      const client = new Client({ name: "v1", version: "1" }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(portico.mcpUrl(tenant))));
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      assert.ok(names.includes(tenant === "odd" ? "ask_two" : "good"), `${tenant}: ${names.join()}`);
      for (const bad of ["no_schema", "string_schema"]) assert.ok(!names.includes(bad), `${tenant}: ${bad}`);
      const loose = tools.find((t) => t.name === "array_output");
      assert.ok(loose && loose.outputSchema === undefined, "listed to a session-era client without it");
      await client.close();
    }
    const modern = await call("mixed", "tools/list", {});
    assert.deepEqual(modern.body.result.tools, [
      { name: "good", inputSchema: { type: "object" } },
      { name: "array_output", inputSchema: { type: "object" }, outputSchema: { type: "array" } },
    ]);
  });
});

describe("an upstream that reports progress and never finishes", () => {
  for (const tool of ["odd__endless", "urls__endless"]) {
    it(`${tool}: ends after ten of its timeouts, however much progress comes`, async () => {
      const started = Date.now();
      const res = await call("hasty", "tools/call", { name: tool });
      const took = Date.now() - started;
      assert.equal(res.body.result?.isError, true, JSON.stringify(res.body));
      assert.match(res.body.result.content[0].text, /did not finish within 10 of its timeouts \(5000 ms\)/);
      assert.ok(took >= 4800 && took < 15_000, `ended after ${took} ms`);
    });
  }
});

describe("a session-era upstream's -32042 (URL elicitation required)", () => {
  it("is URL-mode input requests for a 2026-07-28 client, whose retry calls the upstream again", async () => {
    const caps = { elicitation: { url: {} } };
    urls.reset();
    const first = await call("urls", "tools/call", { name: "connect" }, caps);
    assert.equal(first.body.result?.resultType, "input_required", JSON.stringify(first.body));
    assert.deepEqual(first.body.result.inputRequests, {
      "elicitation-url-1": {
        method: "elicitation/create",
        params: { mode: "url", url: "https://auth.example/connect", message: "Connect your account" },
      },
    });
    /** The retry of `connect` with the user's answer to the URL round. */
    const answer = (state: string, action: string) =>
      call(
        "urls",
        "tools/call",
        { name: "connect", inputResponses: { "elicitation-url-1": { action } }, requestState: state },
        caps,
      );
    const retry = await answer(first.body.result.requestState, "accept");
    assert.deepEqual(retry.body.result?.content, [{ type: "text", text: "connected" }]);
    // A user who declines to open the URL ends the call: the upstream is not asked again.
    urls.reset();
    const again = await call("urls", "tools/call", { name: "connect" }, caps);
    const declined = await answer(again.body.result.requestState, "decline");
    assert.equal(declined.body.result?.isError, true, JSON.stringify(declined.body));
    assert.match(
      declined.body.result.content[0].text,
      /needs the user to open a URL first, and the answer was "decline"/,
    );
    // A client that cannot open URLs is told what it lacks.
    urls.reset();
    const formOnly = await call("urls", "tools/call", { name: "connect" }, { elicitation: {} });
    assert.equal(formOnly.body.error?.code, -32021, JSON.stringify(formOnly.body));
    assert.deepEqual(formOnly.body.error.data, { requiredCapabilities: { elicitation: { url: {} } } });
  });

  it("stays -32042, with the upstream's elicitations, for a 2025-11-25 client; other codes too", async () => {
    const client = new Client({ name: "v1", version: "1" }, { capabilities: { elicitation: { url: {} } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(portico.mcpUrl("urls"))));
    urls.reset();
    const err = await client.callTool({ name: "connect" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof McpError && err.code === -32042, String(err));
    assert.match(JSON.stringify(err.data), /https:\/\/auth\.example\/connect/);
    await client.close();
  });
});
