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
// offered compare the JSON-RPC code only (MCP makes an unknown tool a protocol error, the SDK server
// an isError result: failureCode). Two more profiles (MORE_PROFILES) go through the same suite. Task-augmented calls (the task tools) are
// later work and not called; see CALLS in test/support/transparency.ts for the other tools left out.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { byName, COMBOS, connectPeer, lists, MORE_PROFILES, outcomeOf } from "../support/everything-peers.js";
import {
  startEverythingBehindPortico,
  type EverythingBehindPortico,
  type EverythingServer,
} from "../support/everything.js";
import type { RunningPortico } from "../support/portico.js";
import { describeTransparency } from "../support/transparency.js";

let everything: EverythingServer;
let portico: RunningPortico;

let setup: EverythingBehindPortico | undefined;

before(async () => {
  setup = await startEverythingBehindPortico();
  ({ everything, portico } = setup);
});
after(() => setup?.close());

it("harness: server-everything's tools differ by profile, as the comparison must see", async () => {
  const toolsOf = async (combo: (typeof COMBOS)[number]) => {
    const peer = await connectPeer(everything.url, combo);
    const names = (await lists.tools(peer.client)).map(byName);
    await peer.close();
    return names;
  };
  const [none, all, formOnly, tasks] = await Promise.all([
    toolsOf(COMBOS[0]!),
    toolsOf(COMBOS[7]!),
    toolsOf(MORE_PROFILES[0]!),
    toolsOf(MORE_PROFILES[1]!),
  ]);
  const gated = [
    "trigger-sampling-request",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "get-roots-list",
  ];
  for (const name of gated) assert.ok(!none.includes(name) && all.includes(name), `${name} is gated`);
  assert.ok(
    formOnly.includes("trigger-elicitation-request") && !formOnly.includes("trigger-url-elicitation"),
  );
  const async = ["trigger-sampling-request-async", "trigger-elicitation-request-async"];
  for (const name of async)
    assert.ok(!all.includes(name) && tasks.includes(name), `${name} is gated on tasks`);
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

describeTransparency(
  "harness: direct vs direct, more profiles",
  (combo) => connectPeer(everything.url, combo),
  (combo) => connectPeer(everything.url, combo),
  MORE_PROFILES,
);

describeTransparency(
  "direct vs through Portico (one replica), more profiles",
  (combo) => connectPeer(everything.url, combo),
  (combo) => connectPeer(portico.mcpUrl("acme"), combo),
  MORE_PROFILES,
);

it("two clients of different profiles at once, interleaved: each sees its own tools", async () => {
  const [none, all] = [COMBOS[0]!, COMBOS[7]!];
  const peers = await Promise.all([
    connectPeer(everything.url, none),
    connectPeer(everything.url, all),
    connectPeer(portico.mcpUrl("acme"), none),
    connectPeer(portico.mcpUrl("acme"), all),
  ]);
  const [, directAll, , throughAll] = peers;
  try {
    for (let round = 0; round < 3; round++) {
      const [a, b, c, d] = await Promise.all(
        peers.map(async (p) => (await lists.tools(p.client)).map(byName)),
      );
      assert.deepEqual(c, a, `round ${round}: declaring none`);
      assert.deepEqual(d, b, `round ${round}: declaring everything`);
    }
    const sampled = { name: "trigger-sampling-request", arguments: { prompt: "interleaved" } };
    const outcomes = await Promise.all(
      [directAll, throughAll].map((p) => outcomeOf(() => p.client.callTool(sampled))),
    );
    assert.deepEqual(outcomes[1], outcomes[0]);
  } finally {
    await Promise.allSettled(peers.map((p) => p.close()));
  }
});
