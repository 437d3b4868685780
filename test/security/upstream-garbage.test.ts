// An upstream answering a call with garbage (docs/security.md "Hostile upstreams"): a socket closed
// mid-body, a truncated body, bytes that are not UTF-8, the wrong content type, an endless stream of
// keep-alive comments. Each fails the call in Portico's words (a tool result with isError) and the
// next call works; only what says the upstream is gone counts toward its circuit breaker.
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { after, before, describe, it } from "node:test";
import Fastify from "fastify";
import { Agent } from "undici";
import { CircuitBreaker } from "../../src/providers/circuit-breaker.js";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext } from "../../src/providers/types.js";
import { textOf } from "../../src/protocol/verbatim.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { startScriptedUpstream, type ScriptedUpstream, type ToolCall } from "../support/scripted-upstream.js";

const TIMEOUT_MS = 500;
const JSON_TYPE = { "content-type": "application/json" };

/** How the upstream answers tools/call with the argument `garbage`. */
const GARBAGE: Record<string, (call: ToolCall, res: ServerResponse) => void> = {
  ok: (call) => call.reply({ result: { content: [{ type: "text", text: "fine" }] } }),
  "closed mid-body": (_call, res) => {
    res.writeHead(200, { ...JSON_TYPE, "content-length": "1000" });
    res.write('{"jsonrpc":"2.0","id":');
    setTimeout(() => res.socket?.destroy(), 20);
  },
  truncated: (call, res) => void res.writeHead(200, JSON_TYPE).end(`{"jsonrpc":"2.0","id":${call.id},"resu`),
  "not JSON": (_call, res) => void res.writeHead(200, JSON_TYPE).end("<html>Bad gateway</html>"),
  "wrong content type": (call, res) =>
    void res
      .writeHead(200, { "content-type": "text/html" })
      .end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result: { content: [] } })),
  "invalid UTF-8 in a string": (call, res) => {
    const [head, tail] = JSON.stringify({
      jsonrpc: "2.0",
      id: call.id,
      result: { content: [{ type: "text", text: "a|b" }] },
    }).split("|");
    res
      .writeHead(200, JSON_TYPE)
      .end(Buffer.concat([Buffer.from(head!), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(tail!)]));
  },
  "invalid UTF-8 outside strings": (_call, res) =>
    void res.writeHead(200, JSON_TYPE).end(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])),
  "endless comments": (_call, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const beat = setInterval(() => res.write(": still here\n\n"), 10);
    res.on("close", () => clearInterval(beat));
  },
};

let upstream: ScriptedUpstream;
let provider: McpProvider;
const agent = new Agent();
let breaker: CircuitBreaker;

before(async () => {
  upstream = await startScriptedUpstream((call, res) => {
    const garbage = String(call.params.arguments?.garbage ?? "ok");
    GARBAGE[garbage]!(call, res);
  });
  provider = new McpProvider(
    { id: "junk", kind: "mcp", url: upstream.url, era: "session" },
    {
      tenantId: "acme",
      store: new MemoryStore(),
      keys: createKeys("garbage"),
      log: Fastify({ logger: false }).log,
      outlet: { notify: async () => undefined, request: async () => ({}) },
      timeoutMs: TIMEOUT_MS,
      sessionTtlSeconds: 60,
      fetch: globalThis.fetch,
      dispatcher: agent,
      healthIntervalMs: 100,
      breaker: () => (breaker = new CircuitBreaker("junk", { failures: 100, openMs: 1000, maxOpenMs: 1000 })),
    },
  );
  await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
});

after(async () => {
  await provider.close();
  await upstream.close();
  await agent.close();
});

const ctx = (): CallContext => ({
  tenantId: "acme",
  sessionId: undefined,
  protocolVersion: "2025-11-25",
  clientCapabilities: {},
  logLevel: undefined,
  signal: new AbortController().signal,
  progress: () => undefined,
  log: () => undefined,
  request: () => Promise.reject(new Error("no client requests here")),
});

async function call(garbage: string) {
  const started = performance.now();
  const result = await provider.callTool("work", { garbage }, ctx());
  const text = (result.content[0] as { text?: string } | undefined)?.text ?? "";
  return { result, text, ms: performance.now() - started };
}

describe("garbage from an upstream", () => {
  const cases: Array<[string, RegExp, "up" | "down"]> = [
    ["truncated", /^Provider 'junk' is unavailable: the upstream's answer is not a JSON-RPC response$/, "up"],
    ["not JSON", /^Provider 'junk' is unavailable: the upstream's answer is not a JSON-RPC response$/, "up"],
    [
      "wrong content type",
      /^Provider 'junk' is unavailable: the upstream's answer is not a JSON-RPC response$/,
      "up",
    ],
    [
      "invalid UTF-8 outside strings",
      /^Provider 'junk' is unavailable: the upstream's answer is not a JSON-RPC response$/,
      "up",
    ],
    [
      "closed mid-body",
      /^Provider 'junk' is unavailable: (UND_ERR_SOCKET|ECONNRESET|terminated|other side closed)/,
      "down",
    ],
  ];
  for (const [garbage, says, counts] of cases)
    it(`${garbage}: the call fails in Portico's words, the next one works${counts === "down" ? "; it counts as a failure" : ""}`, async () => {
      const before = breaker.status().consecutiveFailures;
      const { result, text } = await call(garbage);
      assert.equal(result.isError, true);
      assert.match(text, says);
      // Portico's own failure result is serialized; the plain answer after it is passed through.
      assert.equal(textOf(result), undefined);
      assert.equal(breaker.status().consecutiveFailures, counts === "down" ? before + 1 : 0);
      const next = await call("ok");
      assert.equal(next.text, "fine");
      assert.equal(textOf(next.result), '{"content":[{"type":"text","text":"fine"}]}');
    });

  it("invalid UTF-8 inside a string is decoded with U+FFFD, never thrown", async () => {
    const { result, text } = await call("invalid UTF-8 in a string");
    assert.equal(result.isError, undefined);
    assert.equal(text, "a\ufffd\ufffd\ufffdb");
  });

  it("an endless stream of keep-alive comments with no data ends at the call's timeout", async () => {
    const used = process.memoryUsage().heapUsed;
    const { result, text, ms } = await call("endless comments");
    assert.equal(result.isError, true);
    assert.equal(text, "Provider 'junk' did not answer in time");
    assert.ok(ms >= TIMEOUT_MS - 50 && ms < 4 * TIMEOUT_MS, `ended after ${ms} ms`);
    assert.ok(process.memoryUsage().heapUsed - used < 32 * 1024 * 1024, "comments are not kept");
    assert.equal((await call("ok")).text, "fine");
  });
});
