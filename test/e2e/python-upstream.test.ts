// A server built with the official MCP Python SDK (test/fixtures/python/server.py, MCPServer over
// Streamable HTTP) as a tenant's upstream: an SDK v1 client sees through Portico what it sees from the
// Python server directly — the lists, call results (plain, structured, failing), a prompt, resource
// reads, progress and log notifications during a call, and the sampling and elicitation requests the
// Python server sends mid-call; and an SDK v2 client on 2026-07-28 the same way (the Python server
// speaks both eras: docs/upstream-mcp.md). Portico here: one replica on Redis, one `mcp` provider, no
// prefix.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { skipPython, startPythonServer, type PythonServer } from "../support/python.js";
import { freePort } from "../support/redis.js";

const byKey =
  <T extends Record<string, unknown>>(key: keyof T) =>
  (x: T, y: T) =>
    String(x[key]).localeCompare(String(y[key]));

describe("a Python SDK server behind Portico", { skip: skipPython }, () => {
  let python: PythonServer;
  let portico: RunningPortico;
  let direct: RecordingClient;
  let through: RecordingClient;

  before(async () => {
    python = await startPythonServer("server.py", await freePort());
    portico = await startPortico({
      redis: true,
      tenants: [{ id: "py", auth: "none", providers: [{ id: "python", kind: "mcp", url: python.url }] }],
    });
    direct = await connectClient(python.url);
    through = await connectClient(portico.mcpUrl("py"));
  });
  after(async () => {
    await direct?.client.close();
    await through?.client.close();
    await portico?.close();
    await python?.close();
  });

  /** The same request to both: [direct, through Portico]. */
  const both = <T>(ask: (client: Client) => Promise<T>) =>
    Promise.all([ask(direct.client), ask(through.client)]);

  it("the harness sees the Python server: its tools, by name", async () => {
    const { tools } = await direct.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["add", "ask_name", "count", "echo", "fail", "sample"]);
  });

  it("tools, prompts, resources and templates list the same", async () => {
    const [d, p] = await both((c) => c.listTools());
    assert.deepEqual(p.tools.sort(byKey("name")), d.tools.sort(byKey("name")));
    const [dp, pp] = await both((c) => c.listPrompts());
    assert.deepEqual(pp.prompts, dp.prompts);
    const [dr, pr] = await both((c) => c.listResources());
    assert.deepEqual(pr.resources, dr.resources);
    const [dt, pt] = await both((c) => c.listResourceTemplates());
    assert.deepEqual(pt.resourceTemplates, dt.resourceTemplates);
  });

  for (const [name, args] of [
    ["add", { a: 2, b: 40 }],
    ["echo", { message: "through the gateway" }],
    ["fail", {}],
    ["add", { a: "two", b: 40 }], // invalid arguments: the Python server's own error result
  ] as const) {
    it(`tools/call ${name} ${JSON.stringify(args)} answers the same`, async () => {
      const [d, p] = await both((c) => c.callTool({ name, arguments: args }));
      assert.deepEqual(p, d);
    });
  }

  it("a structured result and its text agree (add returns 42)", async () => {
    const result = await through.client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
    assert.deepEqual(result.structuredContent, { result: 42 });
  });

  it("prompts/get and resources/read (fixed and templated) answer the same", async () => {
    const [dg, pg] = await both((c) => c.getPrompt({ name: "greet", arguments: { name: "Ada" } }));
    assert.deepEqual(pg, dg);
    assert.match(JSON.stringify(pg), /Say hello to Ada, from Python/);
    for (const uri of ["data://readme", "data://items/7"]) {
      const [dr, pr] = await both((c) => c.readResource({ uri }));
      assert.deepEqual(pr, dr);
    }
  });

  it("progress and log notifications during a call arrive the same", async () => {
    const seen = (rc: RecordingClient) =>
      rc.notifications.filter((n) => n.method === "notifications/message").length;
    const before = [seen(direct), seen(through)];
    const runs = await Promise.all(
      [direct, through].map(async (rc) => {
        const steps: number[] = [];
        const result = await rc.client.callTool({ name: "count", arguments: {} }, undefined, {
          onprogress: (p) => steps.push(p.progress),
        });
        return { result, steps };
      }),
    );
    assert.deepEqual(runs[1]!.result, runs[0]!.result);
    assert.deepEqual(runs[0]!.steps, [1, 2, 3]);
    assert.deepEqual(runs[1]!.steps, runs[0]!.steps);
    const logs = (rc: RecordingClient, from: number) =>
      rc.notifications
        .filter((n) => n.method === "notifications/message")
        .slice(from)
        .map((n) => (n.params as { data: unknown }).data);
    assert.deepEqual(logs(direct, before[0]!), ["step 1", "step 2", "step 3"]);
    assert.deepEqual(logs(through, before[1]!), logs(direct, before[0]!));
  });

  it("the Python server's sampling and elicitation requests reach the client through Portico", async () => {
    const [ds, ps] = await both((c) =>
      c.callTool({ name: "sample", arguments: { prompt: "capital of France?" } }),
    );
    assert.deepEqual(ps, ds);
    assert.match(JSON.stringify(ps.content), /model said: echo: capital of France\?/);
    const [de, pe] = await both((c) => c.callTool({ name: "ask_name", arguments: {} }));
    assert.deepEqual(pe, de);
    assert.match(JSON.stringify(pe.content), /hello ada/);
  });
});

describe("a Python SDK server behind Portico, to a 2026-07-28 client (SDK v2)", { skip: skipPython }, () => {
  let python: PythonServer;
  let portico: RunningPortico;
  let direct: V2Client;
  let through: V2Client;

  /** An SDK v2 client pinned to 2026-07-28, answering sampling and elicitation. */
  const connectModern = async (url: string) => {
    const client = new V2Client(
      { name: "python-upstream-v2", version: "1.0.0" },
      {
        capabilities: { sampling: {}, elicitation: {} },
        versionNegotiation: { mode: { pin: "2026-07-28" } },
      },
    );
    client.setRequestHandler("sampling/createMessage", async (req) => {
      const first = req.params.messages[0]?.content;
      const text = first && "text" in first ? String(first.text) : "";
      return { role: "assistant", model: "v2-model", content: { type: "text", text: `v2: ${text}` } };
    });
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { username: "grace" },
    }));
    await client.connect(new V2Transport(new URL(url)));
    assert.equal(client.getProtocolEra(), "modern");
    return client;
  };

  before(async () => {
    python = await startPythonServer("server.py", await freePort());
    portico = await startPortico({
      redis: true,
      tenants: [{ id: "py", auth: "none", providers: [{ id: "python", kind: "mcp", url: python.url }] }],
    });
    direct = await connectModern(python.url);
    through = await connectModern(portico.mcpUrl("py"));
  });
  after(async () => {
    await direct?.close();
    await through?.close();
    await portico?.close();
    await python?.close();
  });

  const both = <T>(ask: (client: V2Client) => Promise<T>) => Promise.all([ask(direct), ask(through)]);
  /** The parts of a call result both sides must agree on (result `_meta` names each side's server). */
  const shown = (r: Record<string, unknown>) => ({
    content: r.content,
    structuredContent: r.structuredContent,
    isError: r.isError ?? false,
  });

  it("lists the same tools", async () => {
    const [d, p] = await both((c) => c.listTools());
    const names = (r: typeof d) => r.tools.map((t) => t.name).sort();
    assert.deepEqual(names(p), names(d));
    assert.deepEqual(
      p.tools.sort(byKey("name")).map((t) => [t.name, t.inputSchema, t.outputSchema]),
      d.tools.sort(byKey("name")).map((t) => [t.name, t.inputSchema, t.outputSchema]),
    );
  });

  for (const [name, args, expected] of [
    ["add", { a: 2, b: 40 }, /42/],
    ["fail", {}, /Error executing tool fail/],
    ["sample", { prompt: "capital of Italy?" }, /model said: v2: capital of Italy\?/],
    ["ask_name", {}, /hello grace/],
  ] as const) {
    it(`tools/call ${name} answers the same (input requests answered by the client's handlers)`, async () => {
      const [d, p] = await both((c) => c.callTool({ name, arguments: args }));
      assert.deepEqual(shown(p), shown(d));
      assert.match(JSON.stringify(p.content), expected);
    });
  }

  it("prompts/get and resources/read answer the same", async () => {
    const [dg, pg] = await both((c) => c.getPrompt({ name: "greet", arguments: { name: "Ada" } }));
    assert.deepEqual(pg.messages, dg.messages);
    const [dr, pr] = await both((c) => c.readResource({ uri: "data://items/7" }));
    assert.deepEqual(pr.contents, dr.contents);
  });
});
