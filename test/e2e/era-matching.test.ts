// Era matching (docs/protocol-eras.md): an upstream that speaks both eras on one URL
// (test/fixtures/dual-era-server.ts) is spoken to in each client's era when its provider says
// `era: "auto"`, so a client sees through Portico, on either of two replicas, what it sees
// directly: a session-era client the session leg's lists and its server-to-client sampling and
// elicitation requests, a 2026-07-28 client the modern leg's lists and its input_required rounds.
// A pinned era still bridges: the upstream then hears only that era.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  isInputRequiredResult,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { startDualEraUpstream, type DualEraUpstream, type Leg } from "../fixtures/dual-era-server.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

const CAPS = { sampling: {}, elicitation: {}, roots: {} };

let dual: DualEraUpstream;
let a: RunningPortico;
let b: RunningPortico;

before(async () => {
  dual = await startDualEraUpstream();
  const tenant = (id: string, era: "auto" | "session" | "stateless") => ({
    id,
    auth: "none" as const,
    providers: [{ id: "dual", kind: "mcp" as const, url: dual.url, prefix: "", era }],
  });
  const tenants = [
    tenant("auto", "auto"),
    tenant("pinned-session", "session"),
    tenant("pinned-modern", "stateless"),
  ];
  const prefix = uniquePrefix();
  a = await startPortico({ redisPrefix: prefix, tenants });
  b = await startPortico({ redisPrefix: prefix, tenants });
});
after(async () => {
  await Promise.all([a.close(), b.close()]);
  await dual.close();
});

/** A fetch that sends each request to the replica after the one before (none for the upstream itself). */
function alternating(): typeof fetch {
  let next = 0;
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.port !== new URL(dual.url).port)
      url.port = [new URL(a.url).port, new URL(b.url).port][next++ % 2]!;
    return fetch(url, init);
  };
}

/** An SDK v1 (session-era) client that records every server-to-client request it answers. */
async function sessionClient(url: string) {
  const asked: Array<{ method: string; params: unknown }> = [];
  const client = new V1Client({ name: "v1", version: "1.0.0" }, { capabilities: CAPS });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.push({ method: req.method, params: req.params });
    return { role: "assistant", model: "m", content: { type: "text", text: "Paris" } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push({ method: req.method, params: req.params });
    return { action: "accept", content: { username: "ada", email: "ada@example.com", name: "ada" } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async (req) => {
    asked.push({ method: req.method, params: req.params });
    return { roots: [{ uri: "file:///work", name: "work" }] };
  });
  await client.connect(new V1Transport(new URL(url), { fetch: alternating() }));
  return { client, asked };
}

/** An SDK v2 client on 2026-07-28; `manual` leaves input_required results to the caller. */
async function modernClient(url: string, manual = false) {
  const client = new V2Client(
    { name: "v2", version: "1.0.0" },
    {
      capabilities: CAPS,
      versionNegotiation: { mode: "auto" },
      ...(manual && { inputRequired: { autoFulfill: false } }),
    },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { username: "ada", email: "ada@example.com", name: "ada", color: "teal", ok: true },
  }));
  client.setRequestHandler("sampling/createMessage", async () => ({
    model: "m",
    role: "assistant",
    content: { type: "text", text: "Paris" },
  }));
  client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
  await client.connect(new V2Transport(new URL(url), { fetch: alternating() }));
  assert.equal(client.getProtocolEra(), "modern");
  return client;
}

/** Tools as a client compares them: name, description and input schema, sorted by name. */
function shapes(tools: ReadonlyArray<{ name: string; description?: string; inputSchema?: unknown }>) {
  return tools
    .map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))
    .sort((x, y) => x.name.localeCompare(y.name));
}

/** The legs that served the tools/call requests the upstream received from `from` on. */
function callLegs(from: number): Leg[] {
  return dual.served
    .slice(from)
    .filter((s) => s.method === "tools/call")
    .map((s) => s.leg);
}

const ASKING_CALLS = [
  { name: "test_sampling", arguments: { prompt: "Capital of France?" } },
  { name: "test_elicitation", arguments: { message: "Who are you?" } },
  { name: "test_elicitation_sep1034_defaults", arguments: {} },
  { name: "test_elicitation_sep1330_enums", arguments: {} },
];

describe('era: "auto" in front of a dual-era upstream', () => {
  it("a session-era client lists what it lists directly", async () => {
    const direct = await sessionClient(dual.url);
    const through = await sessionClient(a.mcpUrl("auto"));
    assert.deepEqual(
      shapes((await through.client.listTools()).tools),
      shapes((await direct.client.listTools()).tools),
    );
    const prompts = async (c: V1Client) => (await c.listPrompts()).prompts.map((p) => p.name).sort();
    assert.deepEqual(await prompts(through.client), await prompts(direct.client));
    await Promise.all([direct.client.close(), through.client.close()]);
  });

  it("a session-era client gets sampling and elicitation as server-to-client requests, exactly as directly", async () => {
    const direct = await sessionClient(dual.url);
    const through = await sessionClient(a.mcpUrl("auto"));
    for (const call of ASKING_CALLS) {
      const from = dual.served.length;
      const expected = await direct.client.callTool(call);
      const askedDirectly = direct.asked.splice(0);
      const got = await through.client.callTool(call);
      assert.deepEqual(got.content, expected.content, `${call.name}: the result`);
      assert.deepEqual(through.asked.splice(0), askedDirectly, `${call.name}: what the client was asked`);
      assert.deepEqual(callLegs(from), ["session", "session"], `${call.name}: Portico spoke the session era`);
    }
    await Promise.all([direct.client.close(), through.client.close()]);
  });

  it("a 2026-07-28 client lists what it lists directly", async () => {
    const direct = await modernClient(dual.url);
    const through = await modernClient(b.mcpUrl("auto"));
    assert.deepEqual(shapes((await through.listTools()).tools), shapes((await direct.listTools()).tools));
    await Promise.all([direct.close(), through.close()]);
  });

  it("a 2026-07-28 client gets the upstream's input_required rounds natively", async () => {
    const direct = await modernClient(dual.url, true);
    const through = await modernClient(b.mcpUrl("auto"), true);
    const call = { name: "test_input_required_result_elicitation" };
    const from = dual.served.length;
    const expected = await direct.callTool(call, { allowInputRequired: true });
    const got = await through.callTool(call, { allowInputRequired: true });
    assert.ok(isInputRequiredResult(expected) && isInputRequiredResult(got), JSON.stringify(got));
    assert.deepEqual(got.inputRequests, expected.inputRequests, "the upstream's own questions");
    assert.deepEqual(callLegs(from), ["modern", "modern"], "Portico spoke 2026-07-28 to the upstream");

    const auto = await modernClient(b.mcpUrl("auto"));
    const rounds = await auto.callTool({ name: "test_input_required_result_multi_round" });
    assert.deepEqual(rounds.content, [{ type: "text", text: "Multi-round complete: ada likes teal" }]);
    await Promise.all([direct.close(), through.close(), auto.close()]);
  });
});

describe("a pinned era still bridges", () => {
  it('era: "session": a session-era client sees the session leg as directly (the comparison above is fair)', async () => {
    const direct = await sessionClient(dual.url);
    const through = await sessionClient(b.mcpUrl("pinned-session"));
    assert.deepEqual(
      shapes((await through.client.listTools()).tools),
      shapes((await direct.client.listTools()).tools),
    );
    for (const call of ASKING_CALLS) {
      const expected = await direct.client.callTool(call);
      const got = await through.client.callTool(call);
      assert.deepEqual(got.content, expected.content, call.name);
      assert.deepEqual(
        through.asked.splice(0),
        direct.asked.splice(0),
        `${call.name}: what the client was asked`,
      );
    }
    await Promise.all([direct.client.close(), through.client.close()]);
  });

  it('era: "session": a 2026-07-28 client gets sampling and elicitation as input_required rounds', async () => {
    const client = await modernClient(a.mcpUrl("pinned-session"));
    const from = dual.served.length;
    const sampled = await client.callTool(ASKING_CALLS[0]!);
    assert.deepEqual(sampled.content, [{ type: "text", text: "LLM response: Paris" }]);
    const elicited = await client.callTool(ASKING_CALLS[1]!);
    assert.match(JSON.stringify(elicited.content), /action=accept.*ada@example\.com/);
    assert.deepEqual(callLegs(from), ["session", "session"], "the upstream heard only the session era");
    await client.close();
  });

  it('era: "stateless": a session-era client is asked with server-to-client requests for the modern rounds', async () => {
    const { client, asked } = await sessionClient(b.mcpUrl("pinned-modern"));
    const from = dual.served.length;
    const hello = await client.callTool({ name: "test_input_required_result_elicitation" });
    assert.deepEqual(hello.content, [{ type: "text", text: "Hello, ada!" }]);
    assert.deepEqual(
      asked.map((q) => q.method),
      ["elicitation/create"],
    );
    const legs = callLegs(from);
    assert.ok(legs.length >= 2, "the call and its retry with the answers");
    assert.deepEqual(
      legs,
      legs.map(() => "modern"),
      "the upstream heard only 2026-07-28",
    );
    await client.close();
  });
});
