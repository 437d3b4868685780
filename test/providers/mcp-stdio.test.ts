// `stdio` upstreams (docs/upstream-mcp.md "stdio upstreams"): a stdio server built with the official
// TypeScript SDK (test/fixtures/stdio-server.ts) behind Portico, compared with what the SDK's own
// StdioClientTransport sees of it directly; the child's clean environment, progress and log messages,
// a sampling request relayed while one call is in flight, roots from the configuration, a crashing
// child restarted and seen in health and metrics, a child flooding stderr and writing junk on stdout,
// a provider this replica's bootstrap file does not define, and the bootstrap file itself.
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { loadBootstrap } from "../../src/config/bootstrap.js";
import { launchKey, type StdioLaunch } from "../../src/config/stdio-launch.js";
import type { ChildExit } from "../../src/providers/mcp/stdio/child.js";
import { StdioSupervisor } from "../../src/providers/mcp/stdio/supervisor.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const FIXTURE = join(ROOT, "test/fixtures/stdio-server.ts");
const SECRET = "stdio-secret-value-0123456789";

/** The fixture run with tsx, as a bootstrap file would name it. */
function fixtureLaunch(env: Record<string, string> = {}): StdioLaunch {
  return {
    command: process.execPath,
    args: ["--import", "tsx", FIXTURE],
    cwd: ROOT,
    env: { STDIO_FIXTURE_SECRET: SECRET, ...env },
    path: process.env.PATH,
  };
}

async function direct(launch: StdioLaunch): Promise<Client> {
  const client = new Client({ name: "direct", version: "1.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const first = req.params.messages[0]?.content;
    const text = first && "text" in first ? String(first.text) : "";
    return { role: "assistant", model: "test-model", content: { type: "text", text: `echo: ${text}` } };
  });
  await client.connect(
    new StdioClientTransport({
      command: launch.command,
      args: [...launch.args],
      cwd: launch.cwd,
      env: { ...launch.env, PATH: launch.path ?? "" },
      stderr: "ignore",
    }),
  );
  return client;
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a stdio upstream (TypeScript SDK) behind Portico", () => {
  let portico: RunningPortico;
  let plain: Client;
  let through: RecordingClient;
  const logs: Record<string, unknown>[] = [];

  before(async () => {
    portico = await startPortico({
      redis: true,
      env: { PORTICO_LOG_LEVEL: "info" },
      logStream: { write: (line) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
      tenants: [
        {
          id: "local",
          auth: "none",
          providers: [
            {
              id: "ts",
              kind: "mcp",
              transport: "stdio",
              roots: [{ uri: "file:///srv/project", name: "project" }],
            },
            { id: "missing", kind: "mcp", transport: "stdio", prefix: "missing" },
            { id: "broken", kind: "mcp", transport: "stdio", prefix: "broken" },
          ],
        },
      ],
      stdioLaunches: new Map([
        [launchKey("local", "ts"), fixtureLaunch({ STDIO_FIXTURE_LONG: String(17 * 1024 * 1024) })],
        [launchKey("local", "broken"), { command: "/nonexistent/mcp-server", args: [], env: {} }],
      ]),
    });
    plain = await direct(fixtureLaunch());
    through = await connectClient(portico.mcpUrl("local"));
  });
  after(async () => {
    await plain?.close();
    await through?.client.close();
    await portico?.close();
  });

  it("lists the same tools, prompts, resources and templates as the SDK's stdio client", async () => {
    const sort = <T extends { name?: string; uri?: string }>(xs: T[]) =>
      [...xs].sort((a, b) => String(a.name ?? a.uri).localeCompare(String(b.name ?? b.uri)));
    assert.deepEqual(sort((await through.client.listTools()).tools), sort((await plain.listTools()).tools));
    assert.deepEqual((await through.client.listPrompts()).prompts, (await plain.listPrompts()).prompts);
    assert.deepEqual(
      (await through.client.listResources()).resources,
      (await plain.listResources()).resources,
    );
    assert.deepEqual(
      (await through.client.listResourceTemplates()).resourceTemplates,
      (await plain.listResourceTemplates()).resourceTemplates,
    );
  });

  for (const [name, args] of [
    ["add", { a: 2, b: 40 }],
    ["echo", { message: "through the gateway" }],
    ["fail", {}],
    ["add", { a: "two", b: 40 }],
  ] as const)
    it(`tools/call ${name} ${JSON.stringify(args)} answers the same`, async () => {
      const [d, p] = await Promise.all([
        plain.callTool({ name, arguments: args }),
        through.client.callTool({ name, arguments: args }),
      ]);
      assert.deepEqual(p, d);
    });

  it("prompts/get and resources/read (a resource and a template's) answer the same", async () => {
    const args = { name: "Ada" };
    assert.deepEqual(
      await through.client.getPrompt({ name: "greet", arguments: args }),
      await plain.getPrompt({ name: "greet", arguments: args }),
    );
    for (const uri of ["data://readme", "data://items/7"])
      assert.deepEqual(await through.client.readResource({ uri }), await plain.readResource({ uri }));
  });

  it("relays progress and the log message of the one call in flight", async () => {
    const progress: number[] = [];
    const result = await through.client.callTool({ name: "count", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.deepEqual(result.content, [{ type: "text", text: "counted to 3" }]);
    assert.deepEqual(progress, [1, 2, 3]);
    await until(
      () => through.notifications.some((n) => n.method === "notifications/message"),
      "the log message",
    );
  });

  it("relays the child's sampling request to the client whose call is the only one in flight", async () => {
    const result = await through.client.callTool({ name: "sample", arguments: { prompt: "hi" } });
    assert.deepEqual(result.content, [{ type: "text", text: "model said: echo: hi" }]);
  });

  it("refuses the child's sampling request when two client calls are in flight (stdio cannot say whose)", async () => {
    const other = await connectClient(portico.mcpUrl("local"));
    try {
      const slow = other.client.callTool({ name: "slow", arguments: { ms: 1500 } });
      await new Promise((r) => setTimeout(r, 300));
      const asked = await through.client.callTool({ name: "sample", arguments: { prompt: "hi" } });
      assert.equal(asked.isError, true);
      assert.match(JSON.stringify(asked.content), /2 client calls are in flight/);
      assert.deepEqual((await slow).content, [{ type: "text", text: "slept 1500" }]);
    } finally {
      await other.client.close();
    }
  });

  it("sends a log message no single call owns to the sessions whose level it passes", async () => {
    const listener = await connectClient(portico.mcpUrl("local"));
    const deaf = await connectClient(portico.mcpUrl("local"));
    try {
      await listener.client.setLoggingLevel("info");
      await deaf.client.setLoggingLevel("error");
      await listener.streamOpen();
      // Two calls in flight: the child's log message belongs to neither, as far as stdio says.
      const slow = through.client.callTool({ name: "slow", arguments: { ms: 1500 } });
      await new Promise((r) => setTimeout(r, 300));
      await deaf.client.callTool({ name: "count", arguments: {} });
      await slow;
      const heard = await listener.waitFor("notifications/message", 5000);
      assert.deepEqual(heard.params, { level: "info", data: "counted" });
      assert.ok(
        !deaf.notifications.some((n) => n.method === "notifications/message"),
        "an error-level session hears no info",
      );
    } finally {
      await listener.client.close();
      await deaf.client.close();
    }
  });

  it("subscribes the child once per URI and sends its updates to every session subscribed", async () => {
    const first = await connectClient(portico.mcpUrl("local"));
    const second = await connectClient(portico.mcpUrl("local"));
    const bystander = await connectClient(portico.mcpUrl("local"));
    try {
      await Promise.all([first.streamOpen(), second.streamOpen(), bystander.streamOpen()]);
      await first.client.subscribeResource({ uri: "data://readme" });
      await second.client.subscribeResource({ uri: "data://readme" });
      const touched = await bystander.client.callTool({ name: "touch", arguments: { uri: "data://readme" } });
      assert.deepEqual(touched.content, [{ type: "text", text: "1" }], "the child was subscribed once");
      for (const c of [first, second])
        assert.deepEqual((await c.waitFor("notifications/resources/updated", 5000)).params, {
          uri: "data://readme",
        });
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(!bystander.notifications.some((n) => n.method === "notifications/resources/updated"));
    } finally {
      for (const c of [first, second, bystander]) await c.client.close();
    }
  });

  it("answers the child's roots/list from the provider's configuration", async () => {
    const result = await through.client.callTool({ name: "roots", arguments: {} });
    assert.deepEqual(JSON.parse((result.content as Array<{ text: string }>)[0]!.text), [
      { uri: "file:///srv/project", name: "project" },
    ]);
  });

  it("gives the child only its env and PATH, nothing of Portico's environment", async () => {
    const result = await through.client.callTool({ name: "env", arguments: {} });
    const names = (result.content as Array<{ text: string }>)[0]!.text.split(",");
    assert.deepEqual(names, ["PATH", "STDIO_FIXTURE_LONG", "STDIO_FIXTURE_SECRET"]);
  });

  it("logs the child's stderr under the provider's name, env values redacted", async () => {
    await until(() => logs.some((l) => l.msg === "stdio server stderr"), "a stderr line");
    const line = logs.find((l) => l.msg === "stdio server stderr")!;
    assert.equal(line.provider, "ts");
    assert.equal(line.tenant, "local");
    assert.equal(line.stderr, "starting with key [redacted]");
    assert.ok(!JSON.stringify(logs).includes(SECRET));
  });

  it("survives a child that floods stderr and writes junk and an over-long line on stdout", async () => {
    const result = await through.client.callTool({ name: "noise", arguments: { lines: 20_000 } });
    assert.deepEqual(result.content, [{ type: "text", text: "noisy" }]);
    const stderrLines = logs.filter((l) => l.msg === "stdio server stderr").length;
    assert.ok(stderrLines < 1000, `${stderrLines} stderr lines logged: the rate bound did not hold`);
    assert.ok(logs.some((l) => /not JSON was ignored/.test(String(l.msg))));
    await until(
      () => logs.some((l) => /a stdout line of \d+ bytes \(over 16777216\) was dropped/.test(String(l.msg))),
      "the over-long line's log",
    );
    assert.deepEqual(
      (await through.client.callTool({ name: "add", arguments: { a: 1, b: 1 } })).structuredContent,
      {
        sum: 2,
      },
    );
  });

  it("restarts a child that crashed, and says so in health and metrics meanwhile", async () => {
    const crashed = await through.client.callTool({ name: "crash", arguments: {} });
    assert.deepEqual(crashed.content, [{ type: "text", text: "crashing" }]);
    const provider = () => portico.registry.get("local")!.catalog.providers.find((p) => p.id === "ts")!;
    await until(() => !provider().healthy, "the provider to be unhealthy");
    assert.match(provider().healthReason ?? "", /the stdio server exited \(code 3\); restarting in \d+ s/);
    const metrics = await portico.metrics.scrape();
    assert.match(metrics, /portico_stdio_child_exits_total\{tenant="local",provider="ts"\} 1/);
    await until(() => provider().healthy, "the provider to be healthy again");
    assert.match(
      await portico.metrics.scrape(),
      /portico_stdio_children_started_total\{tenant="local",provider="ts"\} 2/,
    );
    const again = await through.client.callTool({ name: "echo", arguments: { message: "back" } });
    assert.deepEqual(again.content, [{ type: "text", text: "stdio echo: back" }]);
  });

  it("a program that cannot be started leaves its provider unhealthy, saying why", async () => {
    const broken = portico.registry.get("local")!.catalog.providers.find((p) => p.id === "broken")!;
    assert.equal(broken.healthy, false);
    assert.match(broken.healthReason ?? "", /the stdio server could not be started \(ENOENT\)/);
  });

  it("a provider this replica's bootstrap file does not define starts nothing and says why", async () => {
    const missing = portico.registry.get("local")!.catalog.providers.find((p) => p.id === "missing")!;
    assert.equal(missing.healthy, false);
    assert.match(missing.healthReason ?? "", /bootstrap file does not define this stdio provider/);
  });
});

describe("the bootstrap file's stdio providers", () => {
  const write = async (doc: unknown) => {
    const dir = await mkdtemp(join(tmpdir(), "portico-stdio-"));
    const path = join(dir, "portico.json");
    await writeFile(path, JSON.stringify(doc));
    return path;
  };

  it("keeps command, args, cwd, env and limits out of the record, as this replica's launch", async () => {
    const path = await write({
      tenants: [
        {
          id: "t",
          auth: "none",
          providers: [
            {
              id: "fs",
              kind: "mcp",
              transport: "stdio",
              command: "npx",
              args: ["-y", "some-server"],
              cwd: "/srv",
              env: { API_KEY: "k-123" },
              limits: { memoryMiB: 512, cpuSeconds: 60 },
            },
          ],
        },
      ],
    });
    const { tenants, stdio } = await loadBootstrap(path);
    assert.deepEqual(tenants[0]!.providers[0], { id: "fs", kind: "mcp", transport: "stdio" });
    const launch = stdio.get(launchKey("t", "fs"))!;
    assert.equal(launch.command, "npx");
    assert.deepEqual(launch.args, ["-y", "some-server"]);
    assert.deepEqual(launch.env, { API_KEY: "k-123" });
    assert.deepEqual(launch.limits, { memoryMiB: 512, cpuSeconds: 60 });
    assert.equal(launch.path, process.env.PATH);
  });

  for (const [what, provider, message] of [
    [
      "a stdio provider without a command",
      { transport: "stdio" },
      /providers\[0\]\.command: the program to run/,
    ],
    [
      "a command on an http provider",
      { url: "https://x.example/mcp", command: "sh" },
      /providers\[0\]\.command: only a stdio provider/,
    ],
    [
      "a url on a stdio provider",
      { transport: "stdio", command: "x", url: "https://x.example/mcp" },
      /providers\[0\]\.url: does not apply to a stdio provider/,
    ],
    [
      "an env value that is not a string",
      { transport: "stdio", command: "x", env: { A: 1 } },
      /providers\[0\]\.env\.A: must be a string/,
    ],
    [
      "an unknown limit",
      { transport: "stdio", command: "x", limits: { disk: 1 } },
      /providers\[0\]\.limits\.disk: unknown limit/,
    ],
  ] as const)
    it(`refuses ${what}, naming where`, async () => {
      const path = await write({
        tenants: [{ id: "t", auth: "none", providers: [{ id: "p", kind: "mcp", ...provider }] }],
      });
      await assert.rejects(loadBootstrap(path), (err: Error) => {
        assert.match(err.message, message);
        assert.ok(err.message.startsWith(path));
        return true;
      });
    });
});

describe("the admin API and stdio providers", () => {
  let portico: RunningPortico;
  let admin: AdminClient;

  before(async () => {
    // As main.ts does: the bootstrap file read, its records seeded, its launches kept in memory.
    const dir = await mkdtemp(join(tmpdir(), "portico-stdio-"));
    const { path: _path, ...launch } = fixtureLaunch();
    const file = join(dir, "portico.json");
    const local = { id: "local", kind: "mcp", transport: "stdio", start: "first-use", ...launch };
    await writeFile(file, JSON.stringify({ tenants: [{ id: "ops", auth: "none", providers: [local] }] }));
    const { tenants, stdio } = await loadBootstrap(file);
    portico = await startPortico({
      redis: true,
      env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
      tenants,
      stdioLaunches: stdio,
    });
    admin = new AdminClient(portico.url);
  });
  after(() => portico?.close());

  const refused = (res: { status: number; body: { code?: string; detail?: string } }, pointer: string) => {
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, "PORTICO_ERR_ADMIN_OPERATOR_ONLY");
    assert.ok(
      res.body.detail?.startsWith(`${pointer}: stdio providers are defined in the bootstrap file`),
      res.body.detail,
    );
  };

  it('starts a "first-use" child at the first client that reaches it, and lists it then', async () => {
    const local = portico.registry.get("ops")!.catalog.providers.find((p) => p.id === "local")!;
    assert.equal(local.healthy, true, "waiting for its first use is not a failure");
    assert.doesNotMatch(await portico.metrics.scrape(), /portico_stdio_children_started_total\{tenant="ops"/);
    const client = await connectClient(portico.mcpUrl("ops"));
    try {
      const { tools } = await client.client.listTools();
      assert.ok(
        tools.some((t) => t.name === "add"),
        tools.map((t) => t.name).join(","),
      );
      assert.match(
        await portico.metrics.scrape(),
        /portico_stdio_children_started_total\{tenant="ops",provider="local"\} 1/,
      );
      const plainClient = await connectClient(portico.mcpUrl("ops"), { capabilities: false });
      await until(
        async () => (await plainClient.client.listTools()).tools.some((t) => t.name === "add"),
        "the lists",
      );
      await plainClient.client.close();
    } finally {
      await client.client.close();
    }
  });

  it("refuses to create one with the platform key, naming the bootstrap file", async () => {
    refused(
      await admin.post("/tenants/ops/providers", { id: "sh", kind: "mcp", transport: "stdio" }),
      "/transport",
    );
    refused(
      await admin.post("/tenants/ops/providers", {
        id: "sh",
        kind: "mcp",
        transport: "stdio",
        command: "sh",
        args: ["-c", "id"],
      }),
      "/transport",
    );
    refused(
      await admin.post("/tenants/ops/providers?dryRun=true", { id: "sh", kind: "mcp", command: "sh" }),
      "/command",
    );
    refused(
      await admin.post("/tenants", {
        id: "new",
        auth: "none",
        providers: [{ id: "sh", kind: "mcp", transport: "stdio" }],
      }),
      "/providers/0/transport",
    );
    assert.equal((await admin.get("/tenants/new")).status, 404);
    assert.deepEqual(
      portico.registry.get("ops")!.config.providers.map((p) => p.id),
      ["local"],
    );
  });

  it("refuses to turn an http provider into one, or to change the bootstrap file's", async () => {
    const created = await admin.post("/tenants/ops/providers", {
      id: "web",
      kind: "mcp",
      url: "https://mcp.example.com/mcp",
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    refused(await admin.patch("/tenants/ops/providers/web", { transport: "stdio", url: null }), "/transport");
    refused(await admin.patch("/tenants/ops/providers/web", { env: { A: "b" } }), "/env");
    const local = await admin.get("/tenants/ops/providers/local");
    assert.equal(local.status, 200);
    assert.deepEqual(local.body, {
      id: "local",
      kind: "mcp",
      transport: "stdio",
      start: "first-use",
      ...pick(local.body),
    });
    const patched = await admin.patch("/tenants/ops/providers/local", { prefix: "x" });
    assert.equal(patched.status, 400);
    assert.equal(patched.body.code, "PORTICO_ERR_ADMIN_OPERATOR_ONLY");
    assert.match(patched.body.detail, /This provider is a stdio provider/);
  });

  it("stores no command: the stored record is the bootstrap entry without its launch", async () => {
    const stored = await portico.store.get(portico.keys.tenant("ops"));
    assert.ok(stored && stored.includes('"transport":"stdio"'), "the record is stored");
    for (const secret of ["stdio-server.ts", "--import", SECRET, "STDIO_FIXTURE_SECRET"])
      assert.ok(!stored.includes(secret), `${secret} is in the store`);
  });
});

/** The members the API adds to a provider (health), kept as they are. */
function pick(body: Record<string, unknown>): Record<string, unknown> {
  const { id: _i, kind: _k, transport: _t, start: _s, ...rest } = body;
  return rest;
}

/** The child's process id, as its `pid` tool says. */
async function pidOf(client: RecordingClient): Promise<number> {
  const result = await client.client.callTool({ name: "pid", arguments: {} });
  return Number((result.content as Array<{ text: string }>)[0]!.text);
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('stdio children per client ("serverRequests": "child-per-client") and shutdown', () => {
  let portico: RunningPortico;
  const clients: RecordingClient[] = [];

  before(async () => {
    portico = await startPortico({
      redis: true,
      tenants: [
        {
          id: "own",
          auth: "none",
          providers: [{ id: "ts", kind: "mcp", transport: "stdio", serverRequests: "child-per-client" }],
        },
      ],
      stdioLaunches: new Map([[launchKey("own", "ts"), fixtureLaunch()]]),
    });
  });
  after(async () => {
    for (const c of clients) await c.client.close().catch(() => undefined);
    await portico?.close();
  });

  it("gives each client that can be asked a child of its own, and the others the shared one", async () => {
    const a = await connectClient(portico.mcpUrl("own"));
    const b = await connectClient(portico.mcpUrl("own"));
    const plainClient = await connectClient(portico.mcpUrl("own"), { capabilities: false });
    clients.push(a, b, plainClient);
    const [pa, pb, pp] = [await pidOf(a), await pidOf(b), await pidOf(plainClient)];
    assert.notEqual(pa, pb);
    assert.notEqual(pa, pp);
    assert.notEqual(pb, pp);
    assert.equal(await pidOf(a), pa, "a client keeps its child");
  });

  it("relays a client's sampling request whatever else is in flight", async () => {
    const [a, b] = clients;
    const slow = a!.client.callTool({ name: "slow", arguments: { ms: 1500 } });
    await new Promise((r) => setTimeout(r, 300));
    const asked = await b!.client.callTool({ name: "sample", arguments: { prompt: "hi" } });
    assert.deepEqual(asked.content, [{ type: "text", text: "model said: echo: hi" }]);
    await slow;
  });

  it("replaces a client's own child that crashed, leaving the others alone", async () => {
    const [a, b] = clients;
    const [before, other] = [await pidOf(a!), await pidOf(b!)];
    await a!.client.callTool({ name: "crash", arguments: {} });
    await until(() => !running(before), "the child to exit");
    await until(async () => {
      const result = await a!.client.callTool({ name: "pid", arguments: {} });
      return result.isError !== true;
    }, "a new child");
    assert.notEqual(await pidOf(a!), before);
    assert.equal(await pidOf(b!), other);
  });

  it("stops every child when Portico closes (stdin closed, then signals)", async () => {
    const pids = await Promise.all(clients.map(pidOf));
    assert.ok(pids.every(running));
    for (const c of clients.splice(0)) await c.client.close();
    await portico.close();
    await until(() => !pids.some(running), "every child to be gone", 10_000);
  });
});

/**
 * A stdio server that starts and answers `initialize` wrongly: with protocol version 1999-01-01
 * (STDIO_BAD_INIT=version) or with a JSON-RPC error (STDIO_BAD_INIT=error).
 */
const BAD_INIT = `
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method !== "initialize") return;
  const answer = process.env.STDIO_BAD_INIT === "error"
    ? { error: { code: -32602, message: "Unsupported protocol version" } }
    : { result: { protocolVersion: "1999-01-01", capabilities: {}, serverInfo: { name: "old", version: "1" } } };
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, ...answer }) + "\\n");
});`;

function badInitLaunch(mode: "version" | "error"): StdioLaunch {
  return { command: process.execPath, args: ["-e", BAD_INIT], env: { STDIO_BAD_INIT: mode } };
}

describe("a stdio child that starts but fails initialize is a crash", () => {
  it("is restarted after the back-off, doubling, each failure counted with its reason", async () => {
    const exits: Array<{ exit: ChildExit; restartMs: number | undefined }> = [];
    const opened: number[] = [];
    const supervisor = new StdioSupervisor({
      launch: badInitLaunch("version"),
      log: pino({ level: "silent" }),
      fields: { tenant: "t", provider: "old" },
      events: {
        started: () => void opened.push(Date.now()),
        exited: (exit, _shared, restartMs) => void exits.push({ exit, restartMs }),
      },
      initTimeoutMs: 10_000,
    });
    const handlers = { notification: () => undefined, request: () => Promise.resolve({}) };
    // The back-off's timer does not hold the process open (a server's listener does): this does.
    const alive = setInterval(() => undefined, 1000);
    try {
      for (const restartMs of [1000, 2000, 4000]) {
        await assert.rejects(
          supervisor.openShared({}, handlers, AbortSignal.timeout(20_000)),
          (err: Error) => {
            assert.equal(
              err.message,
              `the stdio server failed to initialize: it answered initialize with protocol version "1999-01-01", which Portico does not speak; restarting in ${restartMs / 1000} s`,
            );
            return true;
          },
        );
        assert.equal(exits.at(-1)?.restartMs, restartMs);
      }
      assert.equal(exits.length, 3, "each failed initialize counted once (not again when it is stopped)");
      assert.equal(opened.length, 3);
      // The second child waited out 1 s after the first failed, the third 2 s after the second.
      assert.ok(opened[1]! - opened[0]! >= 1000, `${opened[1]! - opened[0]!} ms`);
      assert.ok(opened[2]! - opened[1]! >= 2000, `${opened[2]! - opened[1]!} ms`);
      assert.match(exits[0]!.exit.reason, /^the stdio server failed to initialize: /);
    } finally {
      clearInterval(alive);
      await supervisor.close();
    }
  });

  it("is unhealthy through Portico, saying why, and counted in the metrics", async () => {
    const portico = await startPortico({
      redis: true,
      tenants: [
        {
          id: "bad",
          auth: "none",
          providers: [
            { id: "old", kind: "mcp", transport: "stdio", prefix: "old" },
            { id: "err", kind: "mcp", transport: "stdio", prefix: "err" },
          ],
        },
      ],
      stdioLaunches: new Map([
        [launchKey("bad", "old"), badInitLaunch("version")],
        [launchKey("bad", "err"), badInitLaunch("error")],
      ]),
    });
    try {
      const provider = (id: string) =>
        portico.registry.get("bad")!.catalog.providers.find((p) => p.id === id)!;
      assert.equal(provider("old").healthy, false);
      assert.match(
        provider("old").healthReason ?? "",
        /^the stdio server failed to initialize: it answered initialize with protocol version "1999-01-01", which Portico does not speak; restarting in 1 s$/,
      );
      assert.match(
        provider("err").healthReason ?? "",
        /^the stdio server failed to initialize: it answered with error -32602; restarting in 1 s$/,
      );
      const metrics = await portico.metrics.scrape();
      for (const id of ["old", "err"])
        assert.match(
          metrics,
          new RegExp(`portico_stdio_child_exits_total\\{tenant="bad",provider="${id}"\\} 1\n`),
        );
    } finally {
      await portico.close();
    }
  });
});

describe("a stdio child that stops reading its stdin", () => {
  let portico: RunningPortico;
  let client: RecordingClient;

  before(async () => {
    portico = await startPortico({
      redis: true,
      tenants: [{ id: "deaf", auth: "none", providers: [{ id: "ts", kind: "mcp", transport: "stdio" }] }],
      stdioLaunches: new Map([[launchKey("deaf", "ts"), fixtureLaunch()]]),
    });
    client = await connectClient(portico.mcpUrl("deaf"));
  });
  after(async () => {
    await client?.client.close();
    await portico?.close();
  });

  it("gets no more requests past the bound: they fail at once, health says why, a new child follows", async () => {
    const provider = () => portico.registry.get("deaf")!.catalog.providers.find((p) => p.id === "ts")!;
    const reasons: string[] = [];
    const watch = setInterval(() => {
      const reason = provider().healthReason;
      if (reason !== undefined && reasons.at(-1) !== reason) reasons.push(reason);
    }, 20);
    try {
      const before = await pidOf(client);
      assert.deepEqual((await client.client.callTool({ name: "deaf", arguments: {} })).content, [
        { type: "text", text: "deaf" },
      ]);
      // 24 calls of 256 KiB each: 6 MiB the child never reads, past the 4 MiB bound.
      const message = "x".repeat(256 * 1024);
      const results = await Promise.allSettled(
        Array.from({ length: 24 }, () => client.client.callTool({ name: "echo", arguments: { message } })),
      );
      const refused = results.filter(
        (r) =>
          r.status === "fulfilled" &&
          r.value.isError === true &&
          /is not reading its input \(\d+(\.\d)? MiB waiting, over 4 MiB\): request refused/.test(
            JSON.stringify(r.value.content),
          ),
      );
      assert.ok(refused.length >= 4, `${refused.length} refused: ${JSON.stringify(results).slice(0, 600)}`);
      assert.ok(
        reasons.some((r) => /the stdio server is not reading its input/.test(r)),
        `health said: ${JSON.stringify(reasons)}`,
      );
      await until(() => provider().healthy, "a new child");
      // The refusals counted as failures: the circuit breaker lets calls through again after its wait.
      await until(async () => {
        const again = await client.client.callTool({ name: "echo", arguments: { message: "back" } });
        return JSON.stringify(again.content) === JSON.stringify([{ type: "text", text: "stdio echo: back" }]);
      }, "a call answered by the new child");
      assert.notEqual(await pidOf(client), before);
    } finally {
      clearInterval(watch);
    }
  });
});
