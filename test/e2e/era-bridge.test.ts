// Era bridging through `mcp` providers (docs/architecture.md §2–3), with official SDK clients of both eras and
// two Portico replicas on one Redis:
//  - a 2026-07-28 client (SDK v2) calls a session-era upstream that asks the client mid-call
//    (sampling, elicitation, roots): Portico answers input_required, holds the upstream call, and
//    resumes it when the retry comes, on either replica; no retry in time cancels it upstream;
//  - a session-era client (SDK v1) calls a 2026-07-28 upstream (SDK v2) that answers
//    input_required: Portico asks the client with session-era requests and retries upstream.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startStatelessUpstream, type StatelessUpstream } from "../fixtures/stateless-server.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { readEvents } from "../support/sse.js";
import { uniquePrefix } from "../support/redis.js";

const VERSION = "2026-07-28";
const CAPS = { sampling: {}, elicitation: {}, roots: {} };
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": CAPS,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
};
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": VERSION,
};

/** A session-era upstream whose tool waits on an elicitation; it records how each call ended. */
async function startAskingUpstream() {
  const ended: string[] = [];
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const server = new McpServer({ name: "asking", version: "1.0.0" }, { capabilities: { logging: {} } });
    server.registerTool("ask_name", { description: "Asks the user for a name" }, async (extra) => {
      try {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              message: "Name?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } } },
            },
          },
          ElicitResultSchema,
        );
        ended.push("answered");
        // After the answer: a progress and a log message, which go to the retry now waiting.
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined)
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: 1 },
          });
        await extra.sendNotification({
          method: "notifications/message",
          params: { level: "info", data: "answered" },
        });
        return { content: [{ type: "text", text: `Hello, ${String(answer.content?.name)}` }] };
      } catch (err) {
        ended.push(extra.signal.aborted ? "cancelled" : `failed: ${(err as Error).message}`);
        throw err;
      }
    });
    server.registerTool("slow", { description: "Answers after 5 s" }, async () => {
      await sleep(5000);
      return { content: [{ type: "text", text: "late" }] };
    });
    // One session per initialize; stateful, as session-era servers are.
    const transport = sessions.get(String(req.headers["mcp-session-id"]));
    if (transport) return void transport.handleRequest(req, res);
    const fresh = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, fresh),
    });
    void server.connect(fresh).then(() => fresh.handleRequest(req, res));
  });
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    ended,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let sessionEra: Awaited<ReturnType<typeof startConformanceUpstream>>;
let asking: Awaited<ReturnType<typeof startAskingUpstream>>;
let modern: StatelessUpstream;
let a: RunningPortico;
let b: RunningPortico;

before(async () => {
  sessionEra = await startConformanceUpstream();
  asking = await startAskingUpstream();
  modern = await startStatelessUpstream();
  const prefix = uniquePrefix();
  const tenants = [
    {
      id: "legacy",
      auth: "none" as const,
      providers: [{ id: "ref", kind: "mcp" as const, url: sessionEra.url }],
    },
    {
      id: "asking",
      auth: "none" as const,
      providers: [{ id: "ask", kind: "mcp" as const, url: asking.url }],
    },
    {
      id: "modern",
      auth: "none" as const,
      // The fixture also serves the session era; pinned, so session-era clients are bridged.
      providers: [{ id: "next", kind: "mcp" as const, url: modern.url, era: "stateless" as const }],
    },
  ];
  const env = { PORTICO_INPUT_TIMEOUT_SECONDS: "1" };
  a = await startPortico({ redisPrefix: prefix, tenants, env });
  b = await startPortico({ redisPrefix: prefix, tenants, env });
});
after(async () => {
  await Promise.all([a.close(), b.close()]);
  await Promise.all([sessionEra.close(), asking.close(), modern.close()]);
});

/** A fetch that sends each request to the replica after the one before. */
function alternating(): typeof fetch {
  let next = 0;
  const ports = [new URL(a.url).port, new URL(b.url).port];
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.port = ports[next++ % 2]!;
    return fetch(url, init);
  };
}

async function call(url: string, id: number, params: Record<string, unknown>, caps = CAPS) {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...HEADERS, "mcp-method": "tools/call", "mcp-name": String(params.name) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { ...params, _meta: { ...META, "io.modelcontextprotocol/clientCapabilities": caps } },
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe("a 2026-07-28 client, a session-era upstream that asks mid-call", () => {
  it("answers input_required and resumes the held call when the SDK v2 client retries", async () => {
    const client = new V2Client(
      { name: "v2", version: "1.0.0" },
      { capabilities: CAPS, versionNegotiation: { mode: "auto" } },
    );
    client.setRequestHandler("sampling/createMessage", async (req) => ({
      model: "m",
      role: "assistant",
      content: { type: "text", text: `echo: ${JSON.stringify(req.params.messages[0]?.content)}` },
    }));
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { username: "ada", email: "ada@example.com" },
    }));
    await client.connect(new V2Transport(new URL(a.mcpUrl("legacy")), { fetch: alternating() }));
    assert.equal(client.getProtocolEra(), "modern");
    const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "capital?" } });
    assert.match(JSON.stringify(sampled.content), /LLM response: echo: .*capital\?/);
    const elicited = await client.callTool({ name: "test_elicitation", arguments: { message: "who?" } });
    assert.match(JSON.stringify(elicited.content), /action=accept.*ada@example\.com/);
    await client.close();
  });

  it("a retry on the other replica reaches the held call; missing answers are asked again", async () => {
    const first = await call(a.mcpUrl("legacy"), 1, {
      name: "test_elicitation",
      arguments: { message: "who?" },
    });
    assert.equal(first.status, 200);
    const { resultType, inputRequests, requestState } = first.body.result;
    assert.equal(resultType, "input_required");
    const [key] = Object.keys(inputRequests);
    assert.equal(inputRequests[key!].method, "elicitation/create");
    assert.equal(inputRequests[key!].params.message, "who?");
    assert.equal(typeof requestState, "string");

    // Wrong keys only: the same question again, not an error.
    const wrong = await call(b.mcpUrl("legacy"), 2, {
      name: "test_elicitation",
      arguments: { message: "who?" },
      inputResponses: { nope: { action: "accept", content: {} } },
      requestState,
    });
    assert.equal(wrong.body.result.resultType, "input_required");
    assert.deepEqual(Object.keys(wrong.body.result.inputRequests), [key]);

    const done = await call(b.mcpUrl("legacy"), 3, {
      name: "test_elicitation",
      arguments: { message: "who?" },
      inputResponses: { [key!]: { action: "accept", content: { username: "bob", email: "b@x" } }, extra: {} },
      requestState: wrong.body.result.requestState,
    });
    assert.equal(done.status, 200);
    assert.equal(done.body.result.resultType, "complete");
    assert.match(JSON.stringify(done.body.result.content), /username.*bob/);
  });

  it("refuses tampered, foreign or replayed state with -32602", async () => {
    const first = await call(a.mcpUrl("legacy"), 1, { name: "test_sampling", arguments: { prompt: "x" } });
    const { requestState, inputRequests } = first.body.result;
    const key = Object.keys(inputRequests)[0]!;
    const answer = { [key]: { role: "assistant", model: "m", content: { type: "text", text: "y" } } };
    const at = requestState.length - 10;
    const flipped =
      requestState.slice(0, at) + (requestState[at] === "A" ? "B" : "A") + requestState.slice(at + 1);
    for (const [params, why] of [
      [{ name: "test_sampling", arguments: { prompt: "x" }, requestState: flipped }, "tampered"],
      [{ name: "test_sampling", arguments: { prompt: "other" }, requestState }, "another request"],
      [{ name: "test_sampling", arguments: { prompt: "x" }, requestState: 42 }, "not a string"],
    ] as const) {
      const res = await call(b.mcpUrl("legacy"), 9, { ...params, inputResponses: answer });
      assert.equal(res.body.error?.code, -32602, `${why}: ${JSON.stringify(res.body)}`);
    }
    // Another tenant cannot use it either.
    const foreign = await call(b.mcpUrl("asking"), 9, {
      name: "test_sampling",
      arguments: { prompt: "x" },
      inputResponses: answer,
      requestState,
    });
    assert.equal(foreign.body.error?.code, -32602);
    const ok = await call(b.mcpUrl("legacy"), 10, {
      name: "test_sampling",
      arguments: { prompt: "x" },
      inputResponses: answer,
      requestState,
    });
    assert.match(JSON.stringify(ok.body.result.content), /LLM response: y/);
    // The held call is over: its state cannot resume anything now.
    const replay = await call(a.mcpUrl("legacy"), 11, {
      name: "test_sampling",
      arguments: { prompt: "x" },
      inputResponses: answer,
      requestState,
    });
    assert.equal(replay.body.error?.code, -32602);
  });

  it("the upstream sees the capabilities each request declares", async () => {
    // test_sampling checks the client's sampling capability first: without it, it fails in-band.
    const without = await call(a.mcpUrl("legacy"), 1, { name: "test_sampling", arguments: { prompt: "x" } }, {
      elicitation: {},
    } as never);
    assert.equal(without.body.result.isError, true, JSON.stringify(without.body));
    assert.match(JSON.stringify(without.body.result.content), /sampling/);
    const withIt = await call(a.mcpUrl("legacy"), 2, { name: "test_sampling", arguments: { prompt: "x" } }, {
      sampling: {},
    } as never);
    assert.equal(withIt.body.result.resultType, "input_required");
    assert.deepEqual(Object.keys(withIt.body.result.inputRequests), ["sampling-1"]);
  });

  it("a retry's own progress token and log level count, not the first request's", async () => {
    /** ask_name with `meta`, then its retry with `retryMeta`: the messages on the retry's stream. */
    async function askThenRetry(meta: Record<string, unknown>, retryMeta: Record<string, unknown>) {
      const post = (
        url: string,
        id: number,
        params: Record<string, unknown>,
        extra: Record<string, unknown>,
      ) =>
        fetch(url, {
          method: "POST",
          headers: { ...HEADERS, "mcp-method": "tools/call", "mcp-name": "ask_name" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "ask_name", ...params, _meta: { ...META, ...extra } },
          }),
        });
      const first = (await (await post(a.mcpUrl("asking"), 1, {}, meta)).json()) as Record<string, any>;
      const { inputRequests, requestState } = first.result;
      const [key] = Object.keys(inputRequests);
      const retry = await post(
        b.mcpUrl("asking"),
        2,
        { inputResponses: { [key!]: { action: "accept", content: { name: "ada" } } }, requestState },
        retryMeta,
      );
      assert.equal(retry.headers.get("content-type"), "text/event-stream");
      const messages = (await readEvents(retry)).map((e) => JSON.parse(e.data) as Record<string, any>);
      assert.match(JSON.stringify(messages.at(-1)?.result.content), /Hello, ada/);
      return messages.slice(0, -1);
    }
    const withLevel = await askThenRetry(
      { progressToken: "first" },
      { progressToken: "second", "io.modelcontextprotocol/logLevel": "info" },
    );
    assert.deepEqual(
      withLevel.map((m) => [m.method, m.params.progressToken ?? m.params.data]),
      [
        ["notifications/progress", "second"],
        ["notifications/message", "answered"],
      ],
    );
    const without = await askThenRetry(
      { progressToken: "first", "io.modelcontextprotocol/logLevel": "debug" },
      { progressToken: 7 },
    );
    assert.deepEqual(
      without.map((m) => [m.method, m.params.progressToken]),
      [["notifications/progress", 7]],
      "no log messages for a retry that named no level",
    );
  });

  it("waiting on the client does not count against the upstream timeout; a slow upstream still times out", async () => {
    // A short upstream timeout (the providers' default) and a longer time to answer. 1 s, not
    // less: every upstream round trip must fit in it, on a busy machine too.
    const patient = await startPortico({
      redisPrefix: uniquePrefix(),
      tenants: [{ id: "patient", auth: "none", providers: [{ id: "ask", kind: "mcp", url: asking.url }] }],
      env: { PORTICO_UPSTREAM_TIMEOUT_MS: "1000", PORTICO_INPUT_TIMEOUT_SECONDS: "10" },
    });
    try {
      const first = await call(patient.mcpUrl("patient"), 1, { name: "ask_name" });
      assert.equal(first.body.result.resultType, "input_required");
      await sleep(2000); // twice the upstream timeout
      const key = Object.keys(first.body.result.inputRequests)[0]!;
      const done = await call(patient.mcpUrl("patient"), 2, {
        name: "ask_name",
        inputResponses: { [key]: { action: "accept", content: { name: "ada" } } },
        requestState: first.body.result.requestState,
      });
      assert.deepEqual(
        done.body.result?.content,
        [{ type: "text", text: "Hello, ada" }],
        JSON.stringify(done.body),
      );

      // A session-era client that takes its time to answer.
      const client = new V1Client({ name: "v1", version: "1.0.0" }, { capabilities: CAPS });
      client.setRequestHandler(ElicitRequestSchema, async () => {
        await sleep(2000);
        return { action: "accept", content: { name: "bob" } };
      });
      await client.connect(new V1Transport(new URL(patient.mcpUrl("patient"))));
      const hello = await client.callTool({ name: "ask_name" });
      assert.deepEqual(hello.content, [{ type: "text", text: "Hello, bob" }]);

      const started = Date.now();
      const slow = await client.callTool({ name: "slow" });
      assert.equal(slow.isError, true);
      assert.match(JSON.stringify(slow.content), /did not answer in time/);
      assert.ok(
        Date.now() - started < 4000,
        `timed out after ${Date.now() - started} ms (it answers after 5 s)`,
      );
      await client.close();
    } finally {
      await patient.close();
    }
  });

  it("cancels the upstream call when no retry comes in time", async () => {
    const first = await call(a.mcpUrl("asking"), 1, { name: "ask_name" });
    assert.equal(first.body.result.resultType, "input_required");
    const deadline = Date.now() + 5000;
    while (!asking.ended.includes("cancelled") && Date.now() < deadline) await sleep(50);
    assert.deepEqual(asking.ended.slice(-1), ["cancelled"]);
    const late = await call(b.mcpUrl("asking"), 2, {
      name: "ask_name",
      inputResponses: {
        [Object.keys(first.body.result.inputRequests)[0]!]: { action: "accept", content: {} },
      },
      requestState: first.body.result.requestState,
    });
    assert.equal(late.body.error?.code, -32602);
    assert.match(late.body.error?.message, /no longer waiting|expired/);
  });
});

describe("a session-era client, a 2026-07-28 upstream that answers input_required", () => {
  /** An SDK v1 client whose requests alternate between the replicas; it answers what it is asked. */
  async function sessionClient() {
    const asked: string[] = [];
    const client = new V1Client({ name: "v1", version: "1.0.0" }, { capabilities: CAPS });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      const field = /color/.test(req.params.message)
        ? "color"
        : /context/.test(req.params.message)
          ? "context"
          : "name";
      return { action: "accept", content: { [field]: field === "color" ? "teal" : "ada" } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked.push("sampling");
      return { role: "assistant", model: "m", content: { type: "text", text: "Hi" } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      asked.push("roots");
      return { roots: [{ uri: "file:///work", name: "work" }] };
    });
    const send = alternating();
    await client.connect(new V1Transport(new URL(a.mcpUrl("modern")), { fetch: (u, init) => send(u, init) }));
    return { client, asked };
  }

  it("asks the client with session-era requests and retries the upstream with the answers", async () => {
    const { client, asked } = await sessionClient();
    const hello = await client.callTool({ name: "test_input_required_result_elicitation" });
    assert.deepEqual(hello.content, [{ type: "text", text: "Hello, ada!" }]);
    assert.equal("resultType" in hello, false, "no 2026-07-28 fields reach a session-era client");
    const many = await client.callTool({ name: "test_input_required_result_multiple_inputs" });
    assert.match(JSON.stringify(many.content), /Hi ada \(1 root\(s\) visible\)/);
    assert.ok(asked.includes("sampling") && asked.includes("roots"));
    // Two rounds, the second with the upstream's new requestState.
    const rounds = await client.callTool({ name: "test_input_required_result_multi_round" });
    assert.deepEqual(rounds.content, [{ type: "text", text: "Multi-round complete: ada likes teal" }]);
    const prompt = await client.getPrompt({ name: "test_input_required_result_prompt" });
    assert.match(JSON.stringify(prompt.messages), /Use the following context: ada/);
    await client.close();
  });

  it("a 2026-07-28 client gets the upstream's rounds through Portico, on either replica", async () => {
    const client = new V2Client(
      { name: "v2", version: "1.0.0" },
      { capabilities: CAPS, versionNegotiation: { mode: "auto" } },
    );
    // One answer fits every question the fixture asks (zod drops the fields a step does not use).
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "ada", color: "teal", ok: true },
    }));
    await client.connect(new V2Transport(new URL(a.mcpUrl("modern")), { fetch: alternating() }));
    const rounds = await client.callTool({ name: "test_input_required_result_multi_round" });
    assert.deepEqual(rounds.content, [{ type: "text", text: "Multi-round complete: ada likes teal" }]);
    const state = await client.callTool({ name: "test_input_required_result_request_state" });
    assert.match(JSON.stringify(state.content), /state-ok/);
    await client.close();
  });

  it("wraps the upstream's requestState: it is bound to the request and opaque to the client", async () => {
    const first = await call(a.mcpUrl("modern"), 1, { name: "test_input_required_result_request_state" });
    const { requestState, inputRequests } = first.body.result;
    assert.deepEqual(Object.keys(inputRequests), ["confirm"]);
    assert.ok(requestState.startsWith("1."), "Portico's own sealed state, not the upstream's");
    const answer = { confirm: { action: "accept", content: { ok: true } } };
    const other = await call(b.mcpUrl("modern"), 2, {
      name: "test_input_required_result_elicitation",
      inputResponses: answer,
      requestState,
    });
    assert.equal(other.body.error?.code, -32602);
    const done = await call(b.mcpUrl("modern"), 3, {
      name: "test_input_required_result_request_state",
      inputResponses: answer,
      requestState,
    });
    assert.match(JSON.stringify(done.body.result.content), /state-ok/);
  });
});

describe("resource updates on listen streams, from upstreams of both eras", () => {
  for (const tenant of ["legacy", "modern"]) {
    it(`${tenant}: a listen stream on one replica hears test://watched-resource change upstream`, async () => {
      const controller = new AbortController();
      const res = await fetch(b.mcpUrl(tenant), {
        method: "POST",
        signal: controller.signal,
        headers: { ...HEADERS, "mcp-method": "subscriptions/listen" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "watch-1",
          method: "subscriptions/listen",
          params: { _meta: META, notifications: { resourceSubscriptions: ["test://watched-resource"] } },
        }),
      });
      assert.equal(res.status, 200);
      // The fixtures change it every 3 s; allow two periods.
      const timer = setTimeout(() => controller.abort(), 8000);
      const events = await readEvents(res, (e) => e.length >= 2).catch(() => []);
      clearTimeout(timer);
      controller.abort();
      const messages = events.map(
        (e) => JSON.parse(e.data) as { method: string; params: Record<string, any> },
      );
      assert.equal(messages[0]?.method, "notifications/subscriptions/acknowledged");
      assert.deepEqual(messages[0]?.params.notifications, {
        resourceSubscriptions: ["test://watched-resource"],
      });
      assert.equal(messages[1]?.method, "notifications/resources/updated", JSON.stringify(messages));
      assert.equal(messages[1]?.params.uri, "test://watched-resource");
      assert.equal(messages[1]?.params._meta["io.modelcontextprotocol/subscriptionId"], "watch-1");
    });
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
