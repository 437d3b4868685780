// Transparency across replicas (issue 16): the suite of transparency.test.ts with Portico as two
// replicas on one Redis, each client's HTTP requests alternating between them with no stickiness
// (as test/e2e/replicas.test.ts does): lists, calls, the sampling / elicitation requests server-everything
// sends mid-call (their answers may reach the other replica) and progress are what the client sees
// directly. Task-augmented calls are later work; see test/e2e/transparency.test.ts for the rules.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { connectPeer } from "../support/everything-peers.js";
import { everythingTenant, startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { describeTransparency } from "../support/transparency.js";

let everything: EverythingServer;
let a: RunningPortico;
let b: RunningPortico;
const hits = { a: 0, b: 0 };

before(async () => {
  everything = await startEverything();
  const prefix = uniquePrefix();
  const tenants = [everythingTenant(everything.url)];
  a = await startPortico({ redisPrefix: prefix, tenants });
  b = await startPortico({ redisPrefix: prefix, tenants });
});
after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await everything?.stop();
});

/** Every HTTP request of one client goes to the replica after the one before. */
function alternate(): (url: URL) => URL {
  let next = 0;
  return (url) => {
    const target = new URL([a.url, b.url][next++ % 2]!);
    hits[target.port === new URL(a.url).port ? "a" : "b"]++;
    const routed = new URL(url);
    routed.port = target.port;
    return routed;
  };
}

describeTransparency(
  "direct vs through Portico (two replicas, requests alternating)",
  (combo) => connectPeer(everything.url, combo),
  (combo) => connectPeer(a.mcpUrl("acme"), combo, alternate()),
);

it("both replicas served the clients", () => {
  assert.ok(hits.a >= 50 && hits.b >= 50, `a=${hits.a}, b=${hits.b}`);
});
