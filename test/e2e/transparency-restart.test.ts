// server-everything restarted (test/support/everything.ts restart(): a new process on the same port,
// every session gone). Directly, an open session then gets HTTP 400 "No valid session ID provided"
// (not 404) and only a new session works. Through Portico, an open client session must keep working
// (issue 16, healing): Portico re-initializes its upstream session and the client sees the same call
// results as a client that connected directly after the restart.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { COMBOS, connectPeer, outcomeOf } from "../support/everything-peers.js";
import {
  startEverythingBehindPortico,
  type EverythingBehindPortico,
  type EverythingServer,
} from "../support/everything.js";
import type { RunningPortico } from "../support/portico.js";

let everything: EverythingServer;
let portico: RunningPortico;
const NONE = COMBOS[0]!;
const ECHO = { name: "echo", arguments: { message: "after the restart" } };

let setup: EverythingBehindPortico | undefined;

before(async () => {
  setup = await startEverythingBehindPortico();
  ({ everything, portico } = setup);
});
after(() => setup?.close());

it("directly: after a restart an open session gets HTTP 400, a new one works", async () => {
  const before = await connectPeer(everything.url, NONE);
  await before.client.callTool(ECHO);
  await everything.restart();
  await assert.rejects(before.client.callTool(ECHO), (err: { code?: unknown; message: string }) => {
    assert.equal(err.code, 400); // the SDK transport's StreamableHTTPError carries the HTTP status
    assert.match(err.message, /No valid session ID provided/);
    return true;
  });
  const fresh = await connectPeer(everything.url, NONE);
  assert.deepEqual(await fresh.client.callTool(ECHO), {
    content: [{ type: "text", text: "Echo: after the restart" }],
  });
  await Promise.allSettled([before.close(), fresh.close()]);
});

it("through Portico: an open session keeps working across the restart", async () => {
  const through = await connectPeer(portico.mcpUrl("acme"), NONE);
  await through.client.callTool(ECHO);
  await everything.restart();
  const direct = await connectPeer(everything.url, NONE);
  const expected = await outcomeOf(() => direct.client.callTool(ECHO));
  assert.deepEqual(await outcomeOf(() => through.client.callTool(ECHO)), expected);
  await Promise.allSettled([through.close(), direct.close()]);
});
