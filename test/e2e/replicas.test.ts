// Two Portico replicas on one Redis serve one client whose requests alternate between them with no
// stickiness (docs/architecture.md §2): sessions, SSE streams, progress, and answers to server-to-client
// requests that arrive on the other replica.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startDynamicUpstream, type DynamicUpstream } from "../fixtures/dynamic-server.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { MCP_HEADERS, openSession, postRpc } from "../support/rpc.js";
import { readEvents } from "../support/sse.js";

let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let dynamic: DynamicUpstream;
let a: RunningPortico;
let b: RunningPortico;
const hits = { a: 0, b: 0 };

before(async () => {
  upstream = await startConformanceUpstream();
  dynamic = await startDynamicUpstream();
  const prefix = uniquePrefix();
  const tenants = [
    {
      id: "acme",
      auth: "none" as const,
      providers: [
        { id: "ref", kind: "mcp" as const, url: upstream.url },
        { id: "dyn", kind: "mcp" as const, url: dynamic.url, prefix: "dyn" },
      ],
    },
  ];
  a = await startPortico({ redisPrefix: prefix, tenants });
  b = await startPortico({ redisPrefix: prefix, tenants });
});
after(async () => {
  await Promise.all([a.close(), b.close()]);
  await upstream.close();
  await dynamic.close();
});

/** Every HTTP request of the client goes to the replica after the one before. */
function alternate() {
  let next = 0;
  const origins = [new URL(a.url), new URL(b.url)];
  return (url: URL) => {
    const target = origins[next++ % 2]!;
    if (target.port === new URL(a.url).port) hits.a++;
    else hits.b++;
    const routed = new URL(url);
    routed.port = target.port;
    return routed;
  };
}

it("serves one session across two replicas, request by request", async () => {
  const rc = await connectClient(a.mcpUrl("acme"), { route: alternate() });
  const { client } = rc;
  assert.ok((await client.listTools()).tools.some((t) => t.name === "test_sampling"));
  const progress: number[] = [];
  await client.callTool({ name: "test_tool_with_progress" }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  assert.deepEqual(progress, [0, 50, 100]);
  // The sampling request reaches the client on one replica's stream; its answer goes to the other.
  for (let i = 0; i < 4; i++) {
    const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: `question ${i}` } });
    assert.deepEqual(sampled.content, [{ type: "text", text: `LLM response: echo: question ${i}` }]);
  }
  const elicited = await client.callTool({ name: "test_elicitation", arguments: { message: "name?" } });
  assert.match(JSON.stringify(elicited.content), /ada/);
  await client.subscribeResource({ uri: "test://watched-resource" });
  await rc.waitFor("notifications/resources/updated", 8000);
  await client.close();
  assert.ok(hits.a >= 5 && hits.b >= 5, `both replicas served requests (a=${hits.a}, b=${hits.b})`);
});

it("a session deleted on one replica is gone on the other", async () => {
  const { client, transport } = await connectClient(a.mcpUrl("acme"));
  const sid = transport.sessionId!;
  await transport.terminateSession();
  const res = await postRpc(b.mcpUrl("acme"), { jsonrpc: "2.0", id: 1, method: "ping" }, sid);
  assert.equal(res.status, 404);
  await client.close();
});

it("a session both replicas served, deleted on one, is 404 on the other at once", async () => {
  // Each replica keeps the sessions it read in memory for a second (src/mcp/session-cache.ts).
  const sid = await openSession(a.mcpUrl("acme"));
  for (const replica of [a, b, a, b]) {
    const res = await postRpc(replica.mcpUrl("acme"), { jsonrpc: "2.0", id: 1, method: "ping" }, sid);
    assert.equal(res.status, 200);
  }
  const deleted = await fetch(a.mcpUrl("acme"), {
    method: "DELETE",
    headers: { "mcp-session-id": sid },
  });
  assert.equal(deleted.status, 204);
  const res = await postRpc(b.mcpUrl("acme"), { jsonrpc: "2.0", id: 2, method: "ping" }, sid);
  assert.equal(res.status, 404);
});

it("a cancellation sent to the other replica ends the call without a response", async () => {
  const sid = await openSession(a.mcpUrl("acme"));
  const call = await postRpc(
    a.mcpUrl("acme"),
    {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "dyn__slow", arguments: { ms: 10_000 }, _meta: { progressToken: 1 } },
    },
    sid,
  );
  // The first progress notification turns the reply into an SSE stream; the tool then waits 10 s.
  const events: string[] = [];
  const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
  while (!events.join("").includes("notifications/progress")) {
    const { value, done } = await reader.read();
    if (done) break;
    events.push(value);
  }
  const cancel = await postRpc(
    b.mcpUrl("acme"),
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "user gave up" } },
    sid,
  );
  assert.equal(cancel.status, 202);
  // Kept before it was published, for a replica whose subscription was down as it went by.
  assert.ok(
    (await b.store.get(b.keys.clientCancel("acme", sid, "7"))) !== null,
    "the cancellation is kept in the store",
  );
  const started = Date.now();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    events.push(value);
  }
  assert.ok(Date.now() - started < 5000, "the stream ended at the cancellation, not when the tool finished");
  assert.ok(!events.join("").includes('"id":7'), `no response after cancellation, got: ${events.join("")}`);
  for (let i = 0; i < 100 && !dynamic.events.some((e) => e.startsWith("cancelled:")); i++)
    await new Promise((r) => setTimeout(r, 30));
  assert.ok(
    dynamic.events.some((e) => e.startsWith("cancelled:")),
    `upstream saw: ${dynamic.events.join()}`,
  );
});

it("a request stream resumed on the other replica mid-call gets the rest of it live", async () => {
  const sid = await openSession(a.mcpUrl("acme"));
  const abort = new AbortController();
  const res = await fetch(a.mcpUrl("acme"), {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    signal: abort.signal,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "dyn__slow", arguments: { ms: 800 }, _meta: { progressToken: "p9" } },
    }),
  });
  const [, progress] = await readEvents(res, (events) => events.length === 2);
  abort.abort(); // the connection to A drops while A still runs the call
  const resumed = await fetch(b.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": progress!.id! },
  });
  assert.equal(resumed.status, 200);
  // B carries the stream now; A, finishing the call, hands it the response through the channel.
  const rest = await readEvents(resumed);
  assert.deepEqual(
    rest.map((e) => JSON.parse(e.data) as { id?: number; result?: unknown }),
    [{ jsonrpc: "2.0", id: 9, result: { content: [{ type: "text", text: "done" }] } }],
  );
});
