// Transparency (issue 16): an SDK v1 client sees through Portico exactly what it sees directly from
// server-everything (@modelcontextprotocol/server-everything, a real upstream whose tool list depends on
// the client's declared capabilities), for each of the 8 combinations of sampling / elicitation /
// roots: every list compared field by field, call results, the sampling / elicitation requests the
// upstream sends mid-call (same params), progress, reads and prompts. Portico here: one replica on
// Redis, a tenant with `auth: "none"` and one `mcp` provider with no prefix.
//
// The harness proves itself first: the same suite with two direct clients passes, and it tells two
// capability profiles apart. Lists are compared sorted by their key (an aggregate's order is not the
// upstream's); server-everything's nondeterminism (resource timestamps, random elicitation ids) is
// replaced by placeholders in test/support/everything-peers.ts. Calls of tools the client was not
// offered compare the outcome's kind and JSON-RPC code only. Task-augmented calls (the task tools) are
// later work and not called; see CALLS in test/support/transparency.ts for the other tools left out.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { byName, COMBOS, connectPeer, lists } from "../support/everything-peers.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { describeTransparency } from "../support/transparency.js";

let everything: EverythingServer;
let portico: RunningPortico;

before(async () => {
  everything = await startEverything();
  portico = await startPortico({
    redis: true,
    tenants: [
      { id: "acme", auth: "none", providers: [{ id: "everything", kind: "mcp", url: everything.url }] },
    ],
  });
});
after(async () => {
  await portico?.close();
  await everything?.stop();
});

it("harness: the comparison tells a client declaring nothing from one declaring everything", async () => {
  const none = await connectPeer(everything.url, COMBOS[0]!);
  const all = await connectPeer(everything.url, COMBOS[7]!);
  const names = async (p: typeof none) => (await lists.tools(p.client)).map(byName);
  const [without, withAll] = [await names(none), await names(all)];
  await Promise.all([none.close(), all.close()]);
  assert.notDeepEqual(without, withAll);
  for (const gated of [
    "trigger-sampling-request",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "get-roots-list",
  ]) {
    assert.ok(!without.includes(gated) && withAll.includes(gated), `${gated} is gated on a capability`);
  }
});

describeTransparency(
  "harness: direct vs direct",
  (combo) => connectPeer(everything.url, combo),
  (combo) => connectPeer(everything.url, combo),
);

describeTransparency(
  "direct vs through Portico (one replica)",
  (combo) => connectPeer(everything.url, combo),
  (combo) => connectPeer(portico.mcpUrl("acme"), combo),
);
