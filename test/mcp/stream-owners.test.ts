// Request streams whose replica died (src/mcp/session/stream-owners.ts, docs/architecture.md §4): the owner
// marker a request stream's log starts with, and what a client resuming such a stream gets — the
// interrupted error at once when the owner is known dead, the owner's logged response if it got
// that far, and nothing again after a response it already had; a request a survivor ran again is
// marked as the survivor's, so a third replica never runs it a third time.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { RpcCode } from "../../src/protocol/codes.js";
import { parseOwner } from "../../src/mcp/session/stream-owners.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { MCP_HEADERS, openSession } from "../support/rpc.js";
import { readEvents, type SseEvent } from "../support/sse.js";

describe("owner markers", () => {
  it("name the replica and the request id, and a tools/call's params when it may run again", () => {
    assert.deepEqual(parseOwner('@abc_-1 "req 1"'), { replica: "abc_-1", requestId: "req 1" });
    assert.deepEqual(parseOwner("@abc 7"), { replica: "abc", requestId: 7 });
    assert.deepEqual(parseOwner('@abc {"id":7,"params":{"name":"t"}}'), {
      replica: "abc",
      requestId: 7,
      params: { name: "t" },
    });
    for (const junk of [
      undefined,
      "",
      '{"jsonrpc":"2.0"}',
      "@abc",
      "@abc {",
      "@abc null",
      '@abc {"id":7}',
      "@a b 7",
    ])
      assert.equal(parseOwner(junk), undefined, String(junk));
  });
});

describe("resuming a request stream whose replica is gone", () => {
  let portico: RunningPortico;
  let url: string;
  before(async () => {
    portico = await startPortico({ redis: true, tenants: [staticTenant("acme")] });
    url = portico.mcpUrl("acme");
  });
  after(() => portico.close());

  /** A request stream's log as a replica that then died would have left it; entry ids in order. */
  async function deadStream(sid: string, streamId: string, entries: string[]): Promise<string[]> {
    const key = portico.keys.eventLog("acme", sid, streamId);
    const ids: string[] = [];
    for (const data of entries)
      ids.push(await portico.store.streamAppend(key, data, { maxLen: 100, ttlSeconds: 60 }));
    return ids;
  }

  function resume(sid: string, lastEventId: string, signal?: AbortSignal) {
    return fetch(url, {
      headers: {
        ...MCP_HEADERS,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
        "last-event-id": lastEventId,
      },
      signal,
    });
  }

  const progress = JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 1, progress: 0 },
  });

  it("answers -32003 for the request at once, saying the work may or may not have completed", async () => {
    const sid = await openSession(url);
    const [, p] = await deadStream(sid, "s1", ["@gone1 5", progress]);
    const started = Date.now();
    const res = await resume(sid, `s1.${p}`);
    assert.equal(res.status, 200);
    const events = await readEvents(res, (e) => e.some((x) => x.data !== ""));
    const response = JSON.parse(events.find((e) => e.data !== "")!.data) as Record<string, any>;
    assert.equal(response.id, 5);
    assert.equal(response.error.code, RpcCode.RequestInterrupted);
    assert.match(response.error.message, /may or may not have completed/);
    assert.deepEqual(response.error.data, { interrupted: true, completed: "unknown" });
    assert.ok(Date.now() - started < 2000, "no wait for a replica never seen alive");
  });

  it("delivers the response the dead replica logged after the resume point, and nothing after one the client had", async () => {
    const sid = await openSession(url);
    const result = JSON.stringify({ jsonrpc: "2.0", id: 6, result: { content: [] } });
    const [, p, r] = await deadStream(sid, "s2", ["@gone2 6", progress, result]);
    const got = await readEvents(await resume(sid, `s2.${p}`), (e) => e.some((x) => x.data !== ""));
    assert.deepEqual(JSON.parse(got.find((e) => e.data !== "")!.data), JSON.parse(result));
    // Resumed after the response (SDK v1 does so after an error): nothing is sent again.
    const stop = new AbortController();
    const seen: SseEvent[] = [];
    const reading = resume(sid, `s2.${r}`, stop.signal).then((res) =>
      readEvents(res, (e) => (seen.push(...e.slice(seen.length)), false)),
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stop.abort();
    await reading.catch(() => undefined);
    assert.deepEqual(
      seen.filter((e) => e.data !== ""),
      [],
    );
  });
});

describe("a request run again by a survivor", () => {
  let portico: RunningPortico;
  let url: string;
  let backend: Server;
  let calls = 0;

  before(async () => {
    backend = createServer((req, res) => {
      calls++;
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
    });
    await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
    const port = (backend.address() as AddressInfo).port;
    portico = await startPortico({
      redis: true,
      env: { PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS: "true" },
      tenants: [
        {
          id: "acme",
          auth: "none",
          providers: [
            {
              id: "api",
              kind: "http",
              tools: [
                { name: "look", annotations: { readOnlyHint: true }, url: `http://127.0.0.1:${port}/look` },
              ],
            },
          ],
        },
      ],
    });
    url = portico.mcpUrl("acme");
  });

  after(async () => {
    await portico.close();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
  });

  const call = (id: number) => `{"id":${id},"params":{"name":"look","arguments":{}}}`;
  const progress = JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 1, progress: 0 },
  });

  async function resumeDead(sid: string, streamId: string, entries: string[]) {
    const key = portico.keys.eventLog("acme", sid, streamId);
    let last = "";
    for (const data of entries)
      last = await portico.store.streamAppend(key, data, { maxLen: 100, ttlSeconds: 60 });
    const res = await fetch(url, {
      headers: {
        ...MCP_HEADERS,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
        "last-event-id": `${streamId}.${last}`,
      },
    });
    const events = await readEvents(res, (e) => e.some((x) => x.data !== ""));
    return JSON.parse(events.find((e) => e.data !== "")!.data) as Record<string, any>;
  }

  it("is run here once, and marked as this replica's", async () => {
    const sid = await openSession(url);
    const before = calls;
    const response = await resumeDead(sid, "r1", [`@goneA ${call(8)}`, progress]);
    assert.equal(response.id, 8);
    assert.equal(response.result.isError, undefined, JSON.stringify(response));
    assert.equal(calls, before + 1);
    const rows = await portico.store.streamReadAfter(portico.keys.eventLog("acme", sid, "r1"), "0-0", 100);
    const markers = rows.map((r) => r.data).filter((d) => d.startsWith("@"));
    assert.equal(markers.length, 2);
    assert.match(markers[1]!, /^@[A-Za-z0-9_-]+ 8$/, "the survivor's own marker, without params");
    assert.notEqual(parseOwner(markers[1])!.replica, "goneA");
  });

  it("is run by one replica only when two resumed the stream at once: the other's claim stands", async () => {
    const sid = await openSession(url);
    const before = calls;
    await portico.store.set(portico.keys.rerunClaim("acme", sid, "r3"), "@other 10", { ttlSeconds: 60 });
    const key = portico.keys.eventLog("acme", sid, "r3");
    await portico.store.streamAppend(key, `@goneA ${call(10)}`, { maxLen: 100, ttlSeconds: 60 });
    const last = await portico.store.streamAppend(key, progress, { maxLen: 100, ttlSeconds: 60 });
    const stop = new AbortController();
    const res = await fetch(url, {
      headers: {
        ...MCP_HEADERS,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
        "last-event-id": `r3.${last}`,
      },
      signal: stop.signal,
    });
    assert.equal(res.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stop.abort();
    assert.equal(calls, before, "the replica holding the claim runs it, not this one");
  });

  it("whose survivor died too is answered -32003 on a third replica, never run a third time", async () => {
    const sid = await openSession(url);
    const before = calls;
    const response = await resumeDead(sid, "r2", [`@goneA ${call(9)}`, progress, "@goneB 9", progress]);
    assert.equal(response.id, 9);
    assert.equal(response.error.code, RpcCode.RequestInterrupted);
    assert.equal(calls, before, "not run again");
  });
});
