// A whole session through Portico with the official SDK client, fronting an upstream built with
// the official SDK server (test/fixtures/conformance-server.ts): lists, progress, logging levels,
// sampling and elicitation relayed to the client, subscriptions, DELETE.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { postRpc } from "../support/rpc.js";
import { STANDALONE } from "../../src/mcp/session/streams.js";

let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let portico: RunningPortico;

before(async () => {
  upstream = await startConformanceUpstream();
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [
          { id: "ref", kind: "mcp", url: upstream.url, prefix: "ref" },
          {
            id: "docs",
            kind: "static",
            prompts: [
              {
                name: "code-review",
                arguments: [{ name: "language", required: true }],
                messages: [{ role: "user", text: "Review {{language}}" }],
              },
            ],
            resources: [{ uri: "perf://hello", name: "hello", mimeType: "text/plain", text: "hello" }],
          },
        ],
      },
      {
        id: "other",
        auth: "none",
        providers: [{ id: "ref", kind: "mcp", url: upstream.url, prefix: "ref" }],
      },
    ],
  });
});
after(async () => {
  await portico.close();
  await upstream.close();
});

describe("a session through Portico", () => {
  it("initializes, lists every kind and prefixes upstream names", async () => {
    const { client } = await connectClient(portico.mcpUrl("acme"));
    const caps = client.getServerCapabilities();
    assert.deepEqual(caps?.tools, { listChanged: true });
    assert.equal(caps?.resources?.subscribe, true);
    assert.ok(caps?.logging && caps.completions);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes("ref__test_simple_text"), tools.join());
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes("code-review") && prompts.includes("ref__test_simple_prompt"), prompts.join());
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    assert.ok(
      resources.includes("perf://hello") && resources.includes("test://static-text"),
      resources.join(),
    );
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.deepEqual(templates, ["test://template/{id}/data"]);
    const read = await client.readResource({ uri: "test://template/42/data" });
    assert.match(String((read.contents[0] as { text: string }).text), /Data for ID: 42/);
    const prompt = await client.getPrompt({
      name: "ref__test_prompt_with_arguments",
      arguments: { arg1: "a", arg2: "b" },
    });
    assert.match(JSON.stringify(prompt.messages), /arg1='a'/);
    const done = await client.complete({
      ref: { type: "ref/prompt", name: "ref__test_prompt_with_arguments" },
      argument: { name: "arg1", value: "par" },
    });
    assert.ok(Array.isArray(done.completion.values));
    await client.close();
  });

  it("relays progress in order, then the result", async () => {
    const { client } = await connectClient(portico.mcpUrl("acme"));
    const seen: number[] = [];
    const result = await client.callTool({ name: "ref__test_tool_with_progress" }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.deepEqual(seen, [0, 50, 100]);
    assert.equal(result.isError, undefined);
    await client.close();
  });

  it("relays log messages at or above the session's level only", async () => {
    const rc = await connectClient(portico.mcpUrl("acme"));
    await rc.client.callTool({ name: "ref__test_tool_with_logging" });
    const infos = rc.notifications.filter((n) => n.method === "notifications/message");
    assert.equal(infos.length, 3);
    await rc.client.setLoggingLevel("warning");
    rc.notifications.length = 0;
    await rc.client.callTool({ name: "ref__test_tool_with_logging" });
    assert.equal(rc.notifications.filter((n) => n.method === "notifications/message").length, 0);
    await rc.client.close();
  });

  it("relays sampling and elicitation to the client that made the call", async () => {
    const { client } = await connectClient(portico.mcpUrl("acme"));
    const sampled = await client.callTool({
      name: "ref__test_sampling",
      arguments: { prompt: "Capital of France?" },
    });
    assert.deepEqual(sampled.content, [{ type: "text", text: "LLM response: echo: Capital of France?" }]);
    const elicited = await client.callTool({
      name: "ref__test_elicitation",
      arguments: { message: "Who are you?" },
    });
    assert.match(JSON.stringify(elicited.content), /ada@example.com/);
    await client.close();
  });

  it("a client's answer settles only its own session's requests, never another tenant's", async () => {
    // Raw sessions that declare elicitation; a tools/call that elicits answers on an SSE stream.
    const open = async (tenant: string) => {
      const init = await postRpc(portico.mcpUrl(tenant), {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: {} },
          clientInfo: { name: "raw", version: "1" },
        },
      });
      const sid = init.headers.get("mcp-session-id")!;
      await postRpc(portico.mcpUrl(tenant), { jsonrpc: "2.0", method: "notifications/initialized" }, sid);
      return sid;
    };
    const elicit = async (tenant: string, sid: string) => {
      const res = await postRpc(
        portico.mcpUrl(tenant),
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "ref__test_elicitation", arguments: { message: "Who?" } },
        },
        sid,
      );
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      const next = async (): Promise<Record<string, any>> => {
        for (;;) {
          const at = buffer.indexOf("\n\n");
          if (at >= 0) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const data = block
              .split("\n")
              .filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5).trim())
              .join("");
            if (data) return JSON.parse(data) as Record<string, any>;
            continue;
          }
          const { value, done } = await reader.read();
          if (done) throw new Error("stream ended");
          buffer += value;
        }
      };
      const ask = await next();
      assert.equal(ask.method, "elicitation/create");
      return { id: ask.id as string, next };
    };
    const answer = (tenant: string, sid: string, id: string, username: string) =>
      postRpc(
        portico.mcpUrl(tenant),
        {
          jsonrpc: "2.0",
          id,
          result: { action: "accept", content: { username, email: `${username}@example.com` } },
        },
        sid,
      );

    const attacker = await open("other");
    const own = await elicit("other", attacker);
    await answer("other", attacker, own.id, "mallory");
    assert.match(JSON.stringify((await own.next()).result), /mallory@example.com/);

    const victim = await open("acme");
    const asked = await elicit("acme", victim);
    // Portico's ids for server-to-client requests count up: the attacker predicts the next one.
    const [replica, n] = [
      own.id.slice(0, own.id.lastIndexOf("-")),
      Number(own.id.slice(own.id.lastIndexOf("-") + 1)),
    ];
    for (let i = 1; i <= 3; i++) await answer("other", attacker, `${replica}-${n + i}`, "mallory");
    await answer("acme", victim, asked.id, "ada");
    const result = JSON.stringify((await asked.next()).result);
    assert.match(result, /ada@example.com/);
    assert.doesNotMatch(result, /mallory/);
  });

  it("a client without sampling gets a tool error, not a hang", async () => {
    const { client } = await connectClient(portico.mcpUrl("acme"), { capabilities: false });
    const result = await client.callTool({ name: "ref__test_sampling", arguments: { prompt: "x" } });
    assert.equal(result.isError, true);
    await client.close();
  });

  it("delivers resources/updated to the subscribed session", async () => {
    const rc = await connectClient(portico.mcpUrl("acme"));
    await rc.client.subscribeResource({ uri: "test://watched-resource" });
    const update = await rc.waitFor("notifications/resources/updated", 8000);
    assert.deepEqual(update.params, { uri: "test://watched-resource" });
    await rc.client.unsubscribeResource({ uri: "test://watched-resource" });
    await rc.client.close();
  });

  it("unknown tools and upstream errors stay JSON-RPC errors; tool failures are results", async () => {
    const { client } = await connectClient(portico.mcpUrl("acme"));
    await assert.rejects(client.callTool({ name: "ref__nope" }), /Unknown tool: ref__nope/);
    const failed = await client.callTool({ name: "ref__test_error_handling" });
    assert.equal(failed.isError, true);
    await client.close();
  });

  it("DELETE ends the session and its upstream session", async () => {
    const { client, transport } = await connectClient(portico.mcpUrl("acme"));
    await client.callTool({ name: "ref__test_simple_text" });
    const sid = transport.sessionId!;
    await transport.terminateSession();
    const res = await postRpc(portico.mcpUrl("acme"), { jsonrpc: "2.0", id: 1, method: "ping" }, sid);
    assert.equal(res.status, 404);
    await client.close();
  });

  it("DELETE takes the session's event logs with it: what its streams said leaves the store", async () => {
    const { client, transport } = await connectClient(portico.mcpUrl("acme"));
    // Progress turns the answer into an SSE stream, whose events are logged for resumption.
    await client.callTool({ name: "ref__test_tool_with_progress" }, undefined, { onprogress: () => {} });
    const sid = transport.sessionId!;
    const { store, keys } = portico;
    const streams = await store.setMembers(keys.eventLogIds("acme", sid));
    assert.equal(streams.length, 1, "the request stream's log is named among the session's");
    const logged = () =>
      Promise.all(
        [STANDALONE, ...streams].map(
          async (id) => (await store.streamReadAfter(keys.eventLog("acme", sid, id), "0-0", 10)).length,
        ),
      );
    assert.ok((await logged())[1]! > 1, "the stream's events are in its log");
    await transport.terminateSession();
    assert.deepEqual(await logged(), [0, 0]);
    assert.deepEqual(await store.setMembers(keys.eventLogIds("acme", sid)), []);
    await client.close();
  });
});

describe("provider isolation", () => {
  it("an upstream that goes away fails only its own calls, naming the provider", async () => {
    const flaky = await startConformanceUpstream();
    const p = await startPortico({
      tenants: [
        {
          id: "mixed",
          auth: "none",
          providers: [
            { id: "flaky", kind: "mcp", url: flaky.url, prefix: "flaky" },
            { id: "never", kind: "mcp", url: "http://127.0.0.1:9/mcp", prefix: "never" },
            {
              id: "docs",
              kind: "static",
              resources: [{ uri: "perf://hello", name: "hello", text: "hello" }],
            },
          ],
        },
      ],
    });
    try {
      const { client } = await connectClient(p.mcpUrl("mixed"));
      assert.ok((await client.listTools()).tools.some((t) => t.name === "flaky__test_simple_text"));
      await flaky.close();
      const failed = await client.callTool({ name: "flaky__test_simple_text" });
      assert.equal(failed.isError, true);
      assert.match(JSON.stringify(failed.content), /Provider 'flaky' is unavailable/);
      await assert.rejects(
        client.readResource({ uri: "test://static-text" }),
        /Provider 'flaky' is unavailable/,
      );
      const read = await client.readResource({ uri: "perf://hello" });
      assert.equal((read.contents[0] as { text: string }).text, "hello");
      await client.close();
    } finally {
      await p.close();
    }
  });
});
