// The bridge's 2026-07-28 relay fits what it hands an older local client as Portico's session lane
// does (docs/protocol-eras.md "Older revisions"), against a scripted server: the capabilities it
// offers and passes on, and the content of a sampling request asked through an
// InputRequiredResult. The SDK 1.10.2 client through the bridge is test/e2e/connect-older-clients.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HttpPeer } from "../../src/connect/http-peer.js";
import { StatelessRelay } from "../../src/connect/stateless-relay.js";

type Json = Record<string, any>;

const AUDIO = { type: "audio", data: "AAAA", mimeType: "audio/wav" };
const SAMPLING = {
  method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: AUDIO }], maxTokens: 5 },
};

/** A 2026-07-28 server offering completions, whose one tool asks for sampling once, then echoes the answer. */
function scriptedServer(posted: Json[]): HttpPeer {
  const answer = (request: Json): Json => {
    if (request.method === "server/discover")
      return { supportedVersions: ["2026-07-28"], capabilities: { tools: {}, completions: {} } };
    if (!request.params.inputResponses)
      return { resultType: "input_required", inputRequests: { s: SAMPLING }, requestState: "st" };
    return {
      resultType: "complete",
      content: [{ type: "text", text: "answered" }, AUDIO],
    };
  };
  const peer = {
    url: new URL("http://127.0.0.1:1/mcp/acme"),
    send: async (_method: string, _headers: Record<string, string>, body?: string) => {
      const request = JSON.parse(body!) as Json;
      posted.push(request);
      const reply = { jsonrpc: "2.0", id: request.id, result: answer(request) };
      return new Response(JSON.stringify(reply), { headers: { "content-type": "application/json" } });
    },
  };
  return peer as unknown as HttpPeer;
}

/** A local client of `protocolVersion` declaring `capabilities`; it answers every sampling request. */
async function session(protocolVersion: string, capabilities: Json) {
  const posted: Json[] = [];
  const received: Json[] = [];
  const sink = {
    send(message: unknown) {
      const m = message as Json;
      received.push(m);
      if (m.method === "sampling/createMessage")
        queueMicrotask(() => void relay.handle({ jsonrpc: "2.0", id: m.id, result: { content: "ok" } }));
    },
  };
  const relay = new StatelessRelay(scriptedServer(posted), sink, () => undefined);
  const clientInfo = { name: "raw", version: "1" };
  await relay.handle({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities, clientInfo },
  });
  await relay.handle({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "ask", arguments: {} } });
  await relay.close();
  const byId = (id: unknown) => received.find((m) => m.id === id && !("method" in m))!;
  return {
    init: byId(1).result as Json,
    call: byId(2).result as Json,
    asked: received.find((m) => m.method === "sampling/createMessage")!,
    declared: posted.map((p) => p.params._meta["io.modelcontextprotocol/clientCapabilities"] as Json),
  };
}

const DECLARED = { sampling: {}, elicitation: {}, tasks: { requests: {} } };

describe("stateless relay: an older local client", () => {
  it("2024-11-05: no completions offered, elicitation and tasks not passed on, audio as text in the sampling request and the result", async () => {
    const { init, call, asked, declared } = await session("2024-11-05", DECLARED);
    assert.equal(init.protocolVersion, "2024-11-05");
    assert.deepEqual(init.capabilities, { tools: {}, logging: {} });
    assert.deepEqual(
      declared,
      [{ sampling: {} }, { sampling: {} }, { sampling: {} }],
      "every request's _meta",
    );
    const text = "[audio content (audio/wav, 3 bytes) omitted: not supported by protocol 2024-11-05]";
    assert.deepEqual(asked.params.messages, [{ role: "user", content: { type: "text", text } }]);
    assert.deepEqual(call, {
      content: [
        { type: "text", text: "answered" },
        { type: "text", text },
      ],
    });
  });

  it("2025-11-25: everything offered, passed on and sent as it is", async () => {
    const { init, call, asked, declared } = await session("2025-11-25", DECLARED);
    assert.equal(init.protocolVersion, "2025-11-25");
    assert.deepEqual(init.capabilities, { tools: {}, completions: {}, logging: {} });
    assert.deepEqual(declared[0], DECLARED);
    assert.deepEqual(asked.params.messages, [{ role: "user", content: AUDIO }]);
    assert.deepEqual(call, { content: [{ type: "text", text: "answered" }, AUDIO] });
  });

  it("an unknown revision is answered in 2025-11-25, as Portico's own initialize answers it", async () => {
    const { init } = await session("2023-01-01", {});
    assert.equal(init.protocolVersion, "2025-11-25");
  });
});
