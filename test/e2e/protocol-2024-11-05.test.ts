// The official SDK 1.10 client, which asks for protocol 2024-11-05 and accepts nothing newer,
// against two Portico replicas on one Redis with OAuth on (docs/protocol-eras.md "Older
// revisions"): it connects on 2024-11-05, is offered no capability that revision lacks, lists
// and calls tools, reads prompts and resources, and gets the audio and resource links of an
// upstream (test/fixtures/media-server.ts) as text blocks saying what was left out; its requests
// alternate between the replicas and its streams carry no event it cannot parse. Hostile: an
// unknown version, methods 2024-11-05 lacks, batches, client capabilities it lacks (with
// server-everything as the upstream).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "sdk-1-10/client/index.js";
import { StreamableHTTPClientTransport } from "sdk-1-10/client/streamableHttp.js";
import { McpError, type CallToolResult } from "sdk-1-10/types.js";
import { z } from "zod";
import { UserStore } from "../../src/oauth/users.js";
import { LINK, startMediaUpstream, type MediaUpstream } from "../fixtures/media-server.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort, uniquePrefix } from "../support/redis.js";
import { startEverythingBehindPortico, type EverythingBehindPortico } from "../support/everything.js";
import { postRpc, postRpcWithToken } from "../support/rpc.js";
import { readEvents, type SseEvent } from "../support/sse.js";

const ADA = { username: "ada", password: "correct horse battery" };
const AUDIO_TEXT = "[audio content (audio/wav, 12 KB) omitted: not supported by protocol 2024-11-05]";
const LINK_TEXT = `[resource link "readme" (${LINK.uri}, ${LINK.mimeType}) omitted: not supported by protocol 2024-11-05]`;

let upstream: MediaUpstream;
let a: RunningPortico;
let b: RunningPortico;
let issuer: string;
let token: string;
const hits = { a: 0, b: 0 };
const realFetch = globalThis.fetch;

before(async () => {
  upstream = await startMediaUpstream();
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const tenants = [
    {
      id: "acme",
      auth: "oauth" as const,
      providers: [{ id: "media", kind: "mcp" as const, url: upstream.url }],
    },
  ];
  const redisPrefix = uniquePrefix();
  // Both replicas are one deployment: one public URL (the issuer and the tokens' audience).
  a = await startPortico({ redisPrefix, tenants, env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer } });
  b = await startPortico({ redisPrefix, tenants, env: { PORTICO_PUBLIC_URL: issuer } });
  await new UserStore(a.store, a.keys).create("acme", ADA);
  token = (await (await TestOAuthClient.register(issuer)).tokens("acme", ADA)).access_token;
  // SDK 1.10's transport takes no fetch option: requests to Portico alternate between the
  // replicas through the global fetch, for this file only.
  let next = 0;
  globalThis.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin !== issuer) return realFetch(input, init);
    const toB = next++ % 2 === 1;
    if (toB) {
      hits.b++;
      url.port = new URL(b.url).port;
    } else hits.a++;
    return realFetch(url, init);
  };
});
after(async () => {
  globalThis.fetch = realFetch;
  await Promise.all([a.close(), b.close()]);
  await upstream.close();
});

async function connect(): Promise<{ client: Client; errors: Error[] }> {
  const client = new Client({ name: "sdk-1-10", version: "1.10.2" });
  const errors: Error[] = [];
  client.onerror = (err) => errors.push(err);
  const transport = new StreamableHTTPClientTransport(new URL(`${issuer}/mcp/acme`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, errors };
}

describe("SDK 1.10 on protocol 2024-11-05", () => {
  it("connects (SDK 1.10 refuses any version but 2024-11-05 and 2024-10-07) and is offered what 2024-11-05 defines", async () => {
    const { client } = await connect();
    const caps = client.getServerCapabilities()!;
    assert.equal(caps.completions, undefined, "completions is a 2025-03-26 capability");
    assert.deepEqual(caps.tools, { listChanged: true });
    assert.deepEqual(caps.prompts, { listChanged: true });
    assert.ok(caps.logging);
    assert.equal(client.getServerVersion()?.name, "portico");
    await client.close();
  });

  it("lists and calls tools; audio and resource links come as text saying what was left out", async () => {
    const { client, errors } = await connect();
    const before = { ...hits };
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["media", "sum"]);
    // Fields later revisions added pass through, as the SDK servers let them.
    const sum = tools.find((t) => t.name === "sum")!;
    assert.equal(sum.title, "Sum");
    assert.deepEqual(sum.outputSchema, {
      type: "object",
      properties: { sum: { type: "number" } },
      required: ["sum"],
    });
    const media = (await client.callTool({ name: "media", arguments: {} })) as CallToolResult;
    assert.deepEqual(media.content, [
      { type: "text", text: "here it is" },
      { type: "text", text: AUDIO_TEXT },
      { type: "text", text: LINK_TEXT },
      { type: "image", data: Buffer.from("not really a png").toString("base64"), mimeType: "image/png" },
    ]);
    const result = await client.callTool({ name: "sum", arguments: { a: 2, b: 3 } });
    assert.deepEqual(result.content, [{ type: "text", text: "5" }]);
    assert.deepEqual(result.structuredContent, { sum: 5 });
    assert.ok(hits.a > before.a && hits.b > before.b, "the session's requests reached both replicas");
    // Its GET stream is open by now; an event without data (a priming event) would be an error here.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(
      errors.map((e) => e.message),
      [],
    );
    await client.close();
  });

  it("gets prompts with their content fitted, and reads resources", async () => {
    const { client } = await connect();
    const prompt = await client.getPrompt({ name: "media" });
    assert.deepEqual(
      prompt.messages.map((m) => (m.content.type === "text" ? m.content.text : m.content.type)),
      ["here it is", AUDIO_TEXT, LINK_TEXT, "image"],
    );
    const { resources } = await client.listResources();
    assert.deepEqual(
      resources.map((r) => r.uri),
      [LINK.uri],
    );
    const read = await client.readResource({ uri: LINK.uri });
    assert.deepEqual(read.contents, [{ uri: LINK.uri, mimeType: LINK.mimeType, text: "# Read me" }]);
    await client.close();
  });

  it("a method 2024-11-05 lacks is -32601 (tasks are 2025-11-25, server/discover 2026-07-28)", async () => {
    const { client } = await connect();
    for (const method of ["tasks/list", "server/discover"]) {
      await assert.rejects(
        client.request({ method, params: {} }, z.object({}).passthrough() as never),
        (err: unknown) => err instanceof McpError && err.code === -32601,
        method,
      );
    }
    await client.ping();
    await client.close();
  });
});

describe("hostile", () => {
  const url = () => `${issuer}/mcp/acme`;
  const initialize = (protocolVersion: string, capabilities: object = {}) =>
    postRpcWithToken(url(), token, {
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } },
    });

  it("an unknown version gets the latest, with everything it offers; SDK 1.10 would then give up", async () => {
    const res = await initialize("2023-01-01");
    assert.equal(res.status, 200);
    const { result } = (await res.json()) as { result: { protocolVersion: string; capabilities: object } };
    assert.equal(result.protocolVersion, "2025-11-25");
    assert.ok("completions" in result.capabilities);
  });

  it("a 2024-11-05 session's JSON-RPC batch is refused (batches came and went with 2025-03-26)", async () => {
    const res = await initialize("2024-11-05");
    const sid = res.headers.get("mcp-session-id")!;
    const batch = await realFetch(url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        "mcp-session-id": sid,
      },
      body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]),
    });
    assert.equal(batch.status, 400);
    const body = (await batch.json()) as { error: { message: string } };
    assert.match(body.error.message, /batches are not allowed in protocol version 2024-11-05/);
  });

  it("the MCP-Protocol-Version header 2024-11-05 is a session-era version, not a 2026-07-28 client's", async () => {
    const res = await initialize("2024-11-05");
    const sid = res.headers.get("mcp-session-id")!;
    const ping = await realFetch(url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2024-11-05",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal(ping.status, 200);
    assert.deepEqual(await ping.json(), { jsonrpc: "2.0", id: 1, result: {} });
  });

  it("a GET stream primes only clients of 2025-11-25 on (older ones cannot read an event without data)", async () => {
    const firstEvents = async (version: string): Promise<SseEvent[]> => {
      const sid = (await initialize(version)).headers.get("mcp-session-id")!;
      const abort = new AbortController();
      const res = await realFetch(url(), {
        headers: { accept: "text/event-stream", authorization: `Bearer ${token}`, "mcp-session-id": sid },
        signal: abort.signal,
      });
      assert.equal(res.status, 200);
      const events: SseEvent[] = [];
      const reading = readEvents(res, (seen) => (events.push(...seen.slice(events.length)), false));
      await new Promise((resolve) => setTimeout(resolve, 300));
      abort.abort();
      await reading.catch(() => undefined);
      return events;
    };
    assert.deepEqual(await firstEvents("2024-11-05"), []);
    const primed = await firstEvents("2025-11-25");
    assert.equal(primed.length, 1);
    assert.equal(primed[0]!.data, "");
  });
});

describe("client capabilities a revision lacks", () => {
  // server-everything lists trigger-elicitation-request only to clients that declared elicitation.
  let everything: EverythingBehindPortico;
  before(async () => {
    everything = await startEverythingBehindPortico();
  });
  after(() => everything.close());

  async function openAt(protocolVersion: string, capabilities: object): Promise<string> {
    const init = await postRpc(everything.portico.mcpUrl("acme"), {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } },
    });
    assert.equal(
      ((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion,
      protocolVersion,
    );
    return init.headers.get("mcp-session-id")!;
  }

  async function rpc(sid: string, method: string, params: object): Promise<Record<string, any>> {
    const res = await postRpc(
      everything.portico.mcpUrl("acme"),
      { jsonrpc: "2.0", id: 1, method, params },
      sid,
    );
    return ((await res.json()) as { result: Record<string, any> }).result;
  }

  async function toolsOf(protocolVersion: string, capabilities: object): Promise<string[]> {
    const sid = await openAt(protocolVersion, capabilities);
    const list = await postRpc(
      everything.portico.mcpUrl("acme"),
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
      sid,
    );
    return ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (t) => t.name,
    );
  }

  it("elicitation declared by a 2024-11-05 client is not taken: no upstream will ask it", async () => {
    const caps = { sampling: {}, elicitation: {} };
    const old = await toolsOf("2024-11-05", caps);
    assert.ok(old.includes("trigger-sampling-request"), "sampling, which 2024-11-05 defines, is taken");
    assert.ok(!old.includes("trigger-elicitation-request"));
    assert.ok((await toolsOf("2025-06-18", caps)).includes("trigger-elicitation-request"));
  });

  it("server-everything's resource links reach a 2025-03-26 session as text, a 2025-06-18 one as links", async () => {
    const call = async (version: string) =>
      (
        await rpc(await openAt(version, {}), "tools/call", {
          name: "get-resource-links",
          arguments: { count: 2 },
        })
      ).content as Array<{ type: string; text?: string }>;
    const old = await call("2025-03-26");
    assert.deepEqual(
      old.map((b) => b.type),
      ["text", "text", "text"],
    );
    assert.match(
      old[1]!.text!,
      /^\[resource link "Blob Resource 1" \(.+\) omitted: not supported by protocol 2025-03-26\]$/,
    );
    assert.deepEqual(
      (await call("2025-06-18")).map((b) => b.type),
      ["text", "resource_link", "resource_link"],
    );
  });
});
