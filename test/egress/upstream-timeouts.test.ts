// The egress Agent's own timeouts (docs/upstream-mcp.md "Connections"): an upstream that accepts a
// connection and never answers is cut at PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS, whatever the caller
// waits; a body is never timed out for being quiet (bodyTimeout 0): an SSE answer waiting on the
// user, and a GET stream with nothing to say, stay open past it.
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import Fastify from "fastify";
import { egressDispatcher, egressFetch } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { McpProvider } from "../../src/providers/mcp/provider.js";
import type { CallContext } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { startScriptedUpstream } from "../support/scripted-upstream.js";

// Not shorter: a test process starved of CPU for a few hundred milliseconds (two test files and
// their servers on two cores) would see undici's timer fire before it reads headers already sent.
const HEADERS_TIMEOUT_MS = 1000;
const QUIET_MS = 1.5 * HEADERS_TIMEOUT_MS;
const dispatcher = egressDispatcher(new EgressPolicy(), {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  connectTimeoutMs: 2000,
});
after(() => dispatcher.close());
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server whose every request gets `answer`. */
async function serve(answer: (res: ServerResponse) => void) {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    held.push(res);
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const res of held) res.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("the egress Agent", () => {
  it("bodies are never timed out (bodyTimeout 0), headers are (PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS)", () => {
    const options = Object.getOwnPropertySymbols(dispatcher)
      .filter((s) => s.description === "options")
      .map(
        (s) =>
          (dispatcher as unknown as Record<symbol, { bodyTimeout?: number; headersTimeout?: number }>)[s],
      )[0];
    assert.equal(options?.bodyTimeout, 0);
    assert.equal(options?.headersTimeout, HEADERS_TIMEOUT_MS);
  });

  it("an upstream that accepts and never answers is cut at the headers timeout", async () => {
    const hung = await serve(() => undefined);
    try {
      const started = performance.now();
      await assert.rejects(
        dispatcher.request({ origin: hung.origin, path: "/mcp", method: "POST", body: "{}" }),
        { code: "UND_ERR_HEADERS_TIMEOUT" },
      );
      const ms = performance.now() - started;
      assert.ok(ms >= HEADERS_TIMEOUT_MS - 50 && ms < 5000, `cut after ${ms} ms`);
    } finally {
      await hung.close();
    }
  });

  it("a GET stream quiet for longer than the headers timeout stays open and delivers its next event", async () => {
    const quiet = await serve((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      setTimeout(() => res.end('data: {"jsonrpc":"2.0","method":"notifications/message"}\n\n'), QUIET_MS);
    });
    try {
      const answer = await dispatcher.request({ origin: quiet.origin, path: "/mcp", method: "GET" });
      assert.equal(answer.statusCode, 200);
      assert.match(await answer.body.text(), /notifications\/message/);
    } finally {
      await quiet.close();
    }
  });
});

describe("an SSE answer that waits on the user", () => {
  it("is not cut while the client takes longer than the headers timeout to answer an elicitation", async () => {
    const streams = new Map<string, { res: ServerResponse; id: number }>();
    const upstream = await startScriptedUpstream(
      (call, res) => {
        // The headers go at once, as an SSE server sends them; only the body is quiet.
        res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
        streams.set("q1", { res, id: call.id });
        const ask = {
          jsonrpc: "2.0",
          id: "q1",
          method: "elicitation/create",
          params: { message: "Sure?", requestedSchema: { type: "object", properties: {} } },
        };
        // Quiet first, then the question.
        setTimeout(() => res.write(`data: ${JSON.stringify(ask)}\n\n`), QUIET_MS);
      },
      (answer) => {
        const stream = streams.get(String(answer.id));
        const result = { content: [{ type: "text", text: `the user said ${answer.result?.action}` }] };
        stream?.res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: stream.id, result })}\n\n`);
      },
    );
    const provider = new McpProvider(
      { id: "slow", kind: "mcp", url: upstream.url, era: "session" },
      {
        tenantId: "acme",
        store: new MemoryStore(),
        keys: createKeys("timeouts"),
        log: Fastify({ logger: false }).log,
        outlet: { notify: async () => undefined, request: async () => ({}) },
        timeoutMs: 10_000,
        sessionTtlSeconds: 60,
        fetch: egressFetch(dispatcher),
        dispatcher,
      },
    );
    await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
    try {
      const asked: string[] = [];
      const ctx: CallContext = {
        tenantId: "acme",
        sessionId: undefined,
        protocolVersion: "2025-11-25",
        clientCapabilities: { elicitation: {} },
        logLevel: undefined,
        signal: new AbortController().signal,
        progress: () => undefined,
        log: () => undefined,
        request: async (method) => {
          asked.push(method);
          await wait(QUIET_MS);
          return { action: "accept", content: {} };
        },
      };
      const result = await provider.callTool("work", {}, ctx);
      assert.deepEqual(asked, ["elicitation/create"], JSON.stringify(result));
      assert.deepEqual(result.content, [{ type: "text", text: "the user said accept" }]);
    } finally {
      await provider.close();
      await upstream.close();
    }
  });
});
