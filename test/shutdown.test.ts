// The drain before the graceful close (src/shutdown.ts drainThenClose, what main.ts runs on
// SIGTERM): during the delay /readyz answers 503 while /healthz and MCP requests are served, each
// answer closing its connection; then the app closes; an aborted delay (a second signal) closes
// at once. The process side (signals, exit) is test/e2e/rolling-restart.test.ts.
import assert from "node:assert/strict";
import { get, type IncomingHttpHeaders } from "node:http";
import { it } from "node:test";
import { drainThenClose } from "../src/shutdown.js";
import { startPortico, staticTenant } from "./support/portico.js";
import { openSession, postRpc } from "./support/rpc.js";

/** GET `url` with Node's client, which shows the Connection header. */
function getRaw(url: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on("error", reject);
  });
}

/** The head of a session's GET stream (Node's client shows the Connection header); the stream is then dropped. */
function streamHead(url: string, sid: string): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { accept: "text/event-stream", "mcp-session-id": sid } }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      req.destroy();
    });
    req.on("error", reject);
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

it("drains for the delay: not ready, still serving, connections closed after each answer; then closes", async () => {
  const portico = await startPortico({ tenants: [staticTenant("acme")] });
  assert.equal((await getRaw(`${portico.url}/readyz`)).status, 200);
  assert.notEqual((await getRaw(`${portico.url}/healthz`)).headers.connection, "close");

  let closingAt = 0;
  const started = Date.now();
  const closed = drainThenClose(
    portico,
    { delayMs: 600, deadlineMs: 2000 },
    new AbortController().signal,
    () => (closingAt = Date.now()),
  );
  const ready = await getRaw(`${portico.url}/readyz`);
  assert.equal(ready.status, 503);
  assert.deepEqual(JSON.parse(ready.body), {
    status: "unavailable",
    reason: "this replica is shutting down",
  });
  const live = await getRaw(`${portico.url}/healthz`);
  assert.equal(live.status, 200, "live while draining");
  assert.equal(live.headers.connection, "close", "the connection is not kept for more work");
  const mcp = await postRpc(portico.mcpUrl("acme"), initialize);
  assert.equal(mcp.status, 200, "MCP requests are still served");

  assert.deepEqual(await closed, { forced: false });
  assert.ok(closingAt - started >= 550, `closing began after the delay (${closingAt - started} ms)`);
});

it("a skipped delay (a second signal) closes at once", async () => {
  const portico = await startPortico({ tenants: [staticTenant("acme")] });
  const skip = new AbortController();
  const started = Date.now();
  const closed = drainThenClose(portico, { delayMs: 60_000, deadlineMs: 2000 }, skip.signal);
  assert.equal((await getRaw(`${portico.url}/readyz`)).status, 503);
  skip.abort();
  assert.deepEqual(await closed, { forced: false });
  assert.ok(Date.now() - started < 5000);
});

it("a stream opened while draining closes its connection too, though its writer asks to keep it", async () => {
  const portico = await startPortico({ tenants: [staticTenant("acme")] });
  const url = portico.mcpUrl("acme");
  const sid = await openSession(url);
  const before = await streamHead(url, sid);
  assert.equal(before.status, 200);
  assert.equal(before.headers.connection, "keep-alive", "a stream keeps its connection while serving");

  const skip = new AbortController();
  const closed = drainThenClose(portico, { delayMs: 60_000, deadlineMs: 2000 }, skip.signal);
  const during = await streamHead(url, sid);
  assert.equal(during.status, 200, "a stream is still served while draining");
  assert.equal(during.headers.connection, "close", "its connection is not kept for more work");
  skip.abort();
  assert.deepEqual(await closed, { forced: false });
});
