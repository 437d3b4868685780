// Real stdio servers as `stdio` upstreams (docs/upstream-mcp.md "stdio upstreams"): a server built
// with the official Python SDK (test/fixtures/python/server.py, run with "stdio") and the reference
// server-everything in stdio mode, each behind Portico and compared with what the TypeScript SDK's
// StdioClientTransport sees of it directly (declaring what Portico declares to a shared child:
// sampling and elicitation): the lists, calls, a prompt, resource reads, and a sampling request of
// the one call in flight. Then one provider of a bootstrap file on two replicas, a client's requests
// alternating between them: each replica runs its own child, and the client sees what it sees directly.
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { loadBootstrap } from "../../src/config/bootstrap.js";
import { launchKey, type StdioLaunch } from "../../src/config/stdio-launch.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { PYTHON_FIXTURES, skipPython, venvPython } from "../support/python.js";
import { uniquePrefix } from "../support/redis.js";

const EVERYTHING = fileURLToPath(
  import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"),
);

/** What a shared child is told at initialize (providers/mcp/stdio/stdio-part.ts): the direct client too. */
const DECLARED = { sampling: {}, elicitation: { form: {}, url: {} } };

async function direct(launch: StdioLaunch): Promise<Client> {
  const client = new Client({ name: "direct", version: "1.0.0" }, { capabilities: DECLARED });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const first = req.params.messages[0]?.content;
    const text = first && "text" in first ? String(first.text) : "";
    return { role: "assistant", model: "test-model", content: { type: "text", text: `echo: ${text}` } };
  });
  const env = { ...launch.env, ...(launch.path !== undefined && { PATH: launch.path }) };
  await client.connect(
    new StdioClientTransport({ command: launch.command, args: [...launch.args], env, stderr: "ignore" }),
  );
  return client;
}

const byName = <T extends { name?: string; uri?: string; uriTemplate?: string }>(xs: readonly T[]) =>
  [...xs].sort((a, b) => String(a.name ?? a.uri).localeCompare(String(b.name ?? b.uri)));

/** The comparisons every stdio server gets: lists, `calls` answered the same, prompts and reads. */
function sameThroughPortico(
  name: string,
  launch: () => Promise<StdioLaunch>,
  calls: ReadonlyArray<readonly [string, Record<string, unknown>]>,
  options: { skip?: string | false; prompt?: [string, Record<string, string>]; reads?: string[] } = {},
) {
  describe(`${name} as a stdio upstream`, { skip: options.skip ?? false }, () => {
    let portico: RunningPortico;
    let plain: Client;
    let through: RecordingClient;

    before(async () => {
      const started = await launch();
      portico = await startPortico({
        redis: true,
        tenants: [{ id: "s", auth: "none", providers: [{ id: "up", kind: "mcp", transport: "stdio" }] }],
        stdioLaunches: new Map([[launchKey("s", "up"), started]]),
      });
      plain = await direct(started);
      through = await connectClient(portico.mcpUrl("s"), { clientCapabilities: DECLARED });
    });
    after(async () => {
      await plain?.close();
      await through?.client.close();
      await portico?.close();
    });

    it("is healthy, its instructions passed on", async () => {
      const provider = portico.registry.get("s")!.catalog.providers.find((p) => p.id === "up")!;
      assert.equal(provider.healthy, true, provider.healthReason);
      // Under the provider's heading, as every upstream's (docs/upstream-mcp.md).
      assert.equal(
        through.client.getInstructions(),
        `From the MCP server behind provider up:\n${plain.getInstructions()?.trim()}`,
      );
    });

    it("lists the same tools, prompts, resources and templates", async () => {
      assert.deepEqual(
        byName((await through.client.listTools()).tools),
        byName((await plain.listTools()).tools),
      );
      assert.deepEqual(
        byName((await through.client.listPrompts()).prompts),
        byName((await plain.listPrompts()).prompts),
      );
      assert.deepEqual(
        byName((await through.client.listResources()).resources),
        byName((await plain.listResources()).resources),
      );
      assert.deepEqual(
        (await through.client.listResourceTemplates()).resourceTemplates,
        (await plain.listResourceTemplates()).resourceTemplates,
      );
    });

    for (const [tool, args] of calls)
      it(`tools/call ${tool} ${JSON.stringify(args)} answers the same`, async () => {
        const [d, p] = await Promise.all([
          plain.callTool({ name: tool, arguments: args }),
          through.client.callTool({ name: tool, arguments: args }),
        ]);
        assert.deepEqual(p, d);
      });

    if (options.prompt)
      it(`prompts/get ${options.prompt[0]} answers the same`, async () => {
        const [prompt, args] = options.prompt!;
        assert.deepEqual(
          await through.client.getPrompt({ name: prompt, arguments: args }),
          await plain.getPrompt({ name: prompt, arguments: args }),
        );
      });

    for (const uri of options.reads ?? [])
      it(`resources/read ${uri} answers the same`, async () => {
        assert.deepEqual(await through.client.readResource({ uri }), await plain.readResource({ uri }));
      });
  });
}

sameThroughPortico(
  "a Python SDK server",
  async () => ({
    command: await venvPython(),
    args: [join(PYTHON_FIXTURES, "server.py"), "stdio"],
    env: {},
  }),
  [
    ["add", { a: 2, b: 40 }],
    ["echo", { message: "through the gateway" }],
    ["fail", {}],
    ["add", { a: "two", b: 40 }],
    ["count", {}],
    ["sample", { prompt: "hello" }],
  ],
  { skip: skipPython, prompt: ["greet", { name: "Ada" }], reads: ["data://readme", "data://items/7"] },
);

sameThroughPortico(
  "server-everything",
  async () => ({ command: process.execPath, args: [EVERYTHING, "stdio"], env: {}, path: process.env.PATH }),
  [
    ["echo", { message: "through the gateway" }],
    ["get-sum", { a: 2, b: 40 }],
    ["get-structured-content", { location: "New York" }],
    ["get-annotated-message", { messageType: "error", includeImage: false }],
    ["trigger-sampling-request", { prompt: "hello", maxTokens: 20 }],
  ],
  {
    prompt: ["simple-prompt", {}],
    reads: ["demo://resource/static/document/architecture.md"],
  },
);

describe("a bootstrap file's stdio provider on two replicas, a client's requests alternating", () => {
  const root = resolve(fileURLToPath(import.meta.url), "../../..");
  const launch: StdioLaunch = {
    command: process.execPath,
    args: ["--import", "tsx", join(root, "test/fixtures/stdio-server.ts")],
    cwd: root,
    env: {},
    path: process.env.PATH,
  };
  let a: RunningPortico;
  let b: RunningPortico;
  let plain: Client;
  let through: RecordingClient;
  const hits = { a: 0, b: 0 };

  /** Every HTTP request of the client goes to the replica after the one before. */
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

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), "portico-stdio-"));
    const file = join(dir, "portico.json");
    const { path: _path, ...entry } = launch;
    const provider = { id: "ts", kind: "mcp", transport: "stdio", ...entry };
    await writeFile(file, JSON.stringify({ tenants: [{ id: "two", auth: "none", providers: [provider] }] }));
    // Each replica reads its own copy of the bootstrap file, as main.ts does.
    const replica = async (prefix: string) => {
      const { tenants, stdio } = await loadBootstrap(file);
      return startPortico({ redisPrefix: prefix, tenants, stdioLaunches: stdio });
    };
    const prefix = uniquePrefix();
    a = await replica(prefix);
    b = await replica(prefix);
    plain = await direct(launch);
    through = await connectClient(a.mcpUrl("two"), { clientCapabilities: DECLARED, route: alternate() });
  });
  after(async () => {
    await plain?.close();
    await through?.client.close();
    await Promise.all([a?.close(), b?.close()]);
  });

  it("runs a child on each replica, the requests served by both", async () => {
    const pids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const result = await through.client.callTool({ name: "pid", arguments: {} });
      pids.push((result.content as Array<{ text: string }>)[0]!.text);
    }
    assert.equal(new Set(pids).size, 2, `pids: ${pids.join(",")}`);
    assert.equal(pids[0], pids[2]);
    assert.equal(pids[1], pids[3]);
    for (const replica of [a, b])
      assert.match(
        await replica.metrics.scrape(),
        /portico_stdio_children_started_total\{tenant="two",provider="ts"\} 1\n/,
      );
  });

  it("lists the same on either replica as directly", async () => {
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(
        byName((await through.client.listTools()).tools),
        byName((await plain.listTools()).tools),
      );
      assert.deepEqual((await through.client.listPrompts()).prompts, (await plain.listPrompts()).prompts);
      assert.deepEqual(
        byName((await through.client.listResources()).resources),
        byName((await plain.listResources()).resources),
      );
      assert.deepEqual(
        (await through.client.listResourceTemplates()).resourceTemplates,
        (await plain.listResourceTemplates()).resourceTemplates,
      );
    }
  });

  for (const [tool, args] of [
    ["add", { a: 2, b: 40 }],
    ["echo", { message: "through two replicas" }],
    ["fail", {}],
    ["add", { a: "two", b: 40 }],
    ["sample", { prompt: "hello" }],
  ] as const)
    it(`tools/call ${tool} ${JSON.stringify(args)} answers the same on either replica`, async () => {
      for (let i = 0; i < 2; i++)
        assert.deepEqual(
          await through.client.callTool({ name: tool, arguments: args }),
          await plain.callTool({ name: tool, arguments: args }),
        );
    });

  it("relays progress whichever replica runs the call", async () => {
    for (let i = 0; i < 2; i++) {
      const progress: number[] = [];
      const result = await through.client.callTool({ name: "count", arguments: {} }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      assert.deepEqual(result.content, [{ type: "text", text: "counted to 3" }]);
      assert.deepEqual(progress, [1, 2, 3]);
    }
  });

  it("filters the child's log messages by the level the session set, whichever replica set it", async () => {
    const heard = () => through.notifications.filter((n) => n.method === "notifications/message").length;
    const count = async () =>
      assert.deepEqual((await through.client.callTool({ name: "count", arguments: {} })).content, [
        { type: "text", text: "counted to 3" },
      ]);
    await through.client.setLoggingLevel("error");
    const before = heard();
    await count();
    await count();
    assert.equal(heard(), before, "an info message reached a session that asked for errors only");
    await through.client.setLoggingLevel("info");
    await count();
    await count();
    assert.equal(heard(), before + 2, "each replica's child's info message reached the session");
  });

  it("prompts/get and resources/read answer the same on either replica", async () => {
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(
        await through.client.getPrompt({ name: "greet", arguments: { name: "Ada" } }),
        await plain.getPrompt({ name: "greet", arguments: { name: "Ada" } }),
      );
      for (const uri of ["data://readme", "data://items/7"])
        assert.deepEqual(await through.client.readResource({ uri }), await plain.readResource({ uri }));
    }
  });

  it("both replicas served the client", () => {
    assert.ok(hits.a >= 10 && hits.b >= 10, `a=${hits.a}, b=${hits.b}`);
  });
});
