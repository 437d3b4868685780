// Resumable SSE (basic/transports "Resumability and Redelivery"): a dropped request stream is
// resumed with GET + Last-Event-ID and yields the rest of that stream only, from the event log.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { MCP_HEADERS, openSession } from "../support/rpc.js";
import { readEvents } from "../support/sse.js";

let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let portico: RunningPortico;
const BASE = MCP_HEADERS;

before(async () => {
  upstream = await startConformanceUpstream();
  portico = await startPortico({
    redis: true,
    tenants: [{ id: "acme", auth: "none", providers: [{ id: "ref", kind: "mcp", url: upstream.url }] }],
  });
});
after(async () => {
  await portico.close();
  await upstream.close();
});

it("replays the rest of a dropped request stream, and that stream only", async () => {
  const sid = await openSession(portico.mcpUrl("acme"));
  const headers = { ...BASE, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
  const abort = new AbortController();
  const res = await fetch(portico.mcpUrl("acme"), {
    method: "POST",
    headers,
    signal: abort.signal,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "test_tool_with_progress", _meta: { progressToken: "p1" } },
    }),
  });
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  // Priming event, then the first progress notification; then the connection drops.
  const first = await readEvents(res, (events) => events.length === 2);
  abort.abort();
  const [priming, progress] = first;
  assert.equal(priming!.data, "");
  assert.ok(priming!.id && priming!.retry !== undefined, "priming event has an id and a retry");
  assert.equal(JSON.parse(progress!.data).params.progress, 0);

  const resumed = await fetch(portico.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": progress!.id! },
  });
  assert.equal(resumed.status, 200);
  const rest = await readEvents(resumed);
  const messages = rest.map(
    (e) => JSON.parse(e.data) as { id?: number; params?: { progress: number }; result?: unknown },
  );
  assert.deepEqual(
    messages.filter((m) => m.params).map((m) => m.params!.progress),
    [50, 100],
  );
  assert.equal(messages.at(-1)!.id, 7, "the stream ends with the response to request 7");
  assert.ok(
    rest.every((e) => e.id!.split(".")[0] === progress!.id!.split(".")[0]),
    "every event comes from the same stream",
  );
});

it("a 2024-11-05 session's request stream starts with its first message, no priming event, and resumes", async () => {
  const sid = await openSession(portico.mcpUrl("acme"), "2024-11-05");
  const abort = new AbortController();
  const res = await fetch(portico.mcpUrl("acme"), {
    method: "POST",
    headers: { ...BASE, "mcp-session-id": sid },
    signal: abort.signal,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "test_tool_with_progress", _meta: { progressToken: "p2" } },
    }),
  });
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  // Older clients cannot parse an event without data (docs/protocol-eras.md "Older revisions").
  const [first] = await readEvents(res, (events) => events.length === 1);
  abort.abort();
  assert.equal(JSON.parse(first!.data).params.progress, 0);
  assert.ok(first!.id, "its events still carry ids to resume from");
  const resumed = await fetch(portico.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": first!.id },
  });
  const rest = (await readEvents(resumed)).map((e) => JSON.parse(e.data) as { id?: number; params?: object });
  assert.equal(rest.filter((m) => m.params).length, 2);
  assert.equal(rest.at(-1)!.id, 8);
});

it("a standalone stream resumed with Last-Event-ID gets what was sent while it was down", async () => {
  const sid = await openSession(portico.mcpUrl("acme"));
  const headers = { ...BASE, "mcp-session-id": sid };
  await fetch(portico.mcpUrl("acme"), {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "resources/subscribe",
      params: { uri: "test://watched-resource" },
    }),
  });
  const abort = new AbortController();
  const get = await fetch(portico.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid },
    signal: abort.signal,
  });
  const [priming] = await readEvents(get, (events) => events.length === 1);
  abort.abort();
  // Wait until an update was logged for the standalone stream while no connection carried it.
  const log = portico.keys.eventLog("acme", sid, "g");
  const after = priming!.id!.split(".")[1]!;
  for (let i = 0; i < 200 && (await portico.store.streamReadAfter(log, after, 10)).length === 0; i++)
    await new Promise((r) => setTimeout(r, 50));
  const resumed = new AbortController();
  const again = await fetch(portico.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": priming!.id! },
    signal: resumed.signal,
  });
  const events = await readEvents(again, (evs) => evs.length >= 1);
  resumed.abort();
  assert.equal(JSON.parse(events[0]!.data).method, "notifications/resources/updated");
});

it("answers 400 for a request stream whose events are gone, instead of waiting forever", async () => {
  const sid = await openSession(portico.mcpUrl("acme"));
  const res = await fetch(portico.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": "nosuchstr.1-0" },
  });
  assert.equal(res.status, 400);
  assert.match(
    ((await res.json()) as { error: { message: string } }).error.message,
    /send the request again/,
  );
});

it("rejects a Last-Event-ID that is not Portico's", async () => {
  const sid = await openSession(portico.mcpUrl("acme"));
  const res = await fetch(portico.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "last-event-id": "../../etc" },
  });
  assert.equal(res.status, 400);
});
