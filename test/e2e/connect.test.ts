// `portico connect` end to end: an SDK v1 stdio client drives the bridge (src/cli.ts through tsx),
// which reaches tenant acme (auth oauth, server-everything upstream) on two Portico replicas
// behind a round-robin balancer, signs in (the "browser" posts Portico's login and consent forms:
// test/fixtures/connect-login.ts), caches the token (0600), reuses and refreshes it, and relays
// tools, progress notifications and sampling in both HTTP eras. Then the hostile cases.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { UserStore } from "../../src/oauth/users.js";
import { startBalancer, type Balancer } from "../support/balancer.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort, uniquePrefix } from "../support/redis.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const USER = { username: "ada", password: "correct horse battery" };
const LOGIN = `"${process.execPath}" --import tsx "${join(ROOT, "test/fixtures/connect-login.ts")}"`;

interface Bridge {
  readonly configDir: string;
  readonly marker: string;
}

function newBridgeHome(): Bridge {
  const configDir = mkdtempSync(join(tmpdir(), "portico-connect-"));
  const marker = join(configDir, "logins.txt");
  writeFileSync(marker, "");
  return { configDir, marker };
}

function bridgeEnv(home: Bridge, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    PORTICO_CONNECT_CONFIG_DIR: home.configDir,
    PORTICO_CONNECT_BROWSER: LOGIN,
    CONNECT_TEST_USER: USER.username,
    CONNECT_TEST_PASSWORD: USER.password,
    CONNECT_TEST_MARKER: home.marker,
    ...extra,
  };
}

const logins = (home: Bridge) => readFileSync(home.marker, "utf8").split("\n").filter(Boolean).length;

function tokenFile(home: Bridge): string {
  const dir = join(home.configDir, "tokens");
  const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  assert.equal(files.length, 1, "one cached login per server URL");
  return join(dir, files[0]!);
}

/** An SDK v1 client on the bridge's stdio, declaring sampling, answering it deterministically. */
async function connectThroughBridge(url: string, home: Bridge, args: string[] = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "src/cli.ts", "connect", url, ...args],
    cwd: ROOT,
    env: bridgeEnv(home),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ name: "connect-e2e", version: "1.0.0" }, { capabilities: { sampling: {} } });
  const sampled: string[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const first = req.params.messages[0]?.content;
    const text = first && "text" in first ? String(first.text) : "";
    sampled.push(text);
    return { role: "assistant", model: "connect-model", content: { type: "text", text: `sampled: ${text}` } };
  });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`${String(err)}\nbridge stderr:\n${stderr}`, { cause: err });
  }
  return { client, sampled, stderr: () => stderr };
}

/** What a user does through the bridge: list, call, watch progress, answer a sampling request. */
async function useEverything(client: Client, sampled: string[]): Promise<void> {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ["echo", "trigger-long-running-operation", "trigger-sampling-request"])
    assert.ok(names.includes(name), `${name} listed (got ${names.join(", ")})`);
  const echoed = await client.callTool({ name: "echo", arguments: { message: "through the bridge" } });
  assert.deepEqual(echoed.content, [{ type: "text", text: "Echo: through the bridge" }]);

  const progress: number[] = [];
  const long = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  assert.equal(long.isError, undefined, JSON.stringify(long));
  assert.deepEqual(progress, [1, 2, 3], "progress notifications relayed to the stdio client");

  const before = sampled.length;
  const result = await client.callTool({
    name: "trigger-sampling-request",
    arguments: { prompt: "capital of France?", maxTokens: 20 },
  });
  assert.equal(sampled.length, before + 1, "the sampling request reached the stdio client");
  assert.match(JSON.stringify(result.content), /sampled: [^"]*capital of France\?/);
}

describe("portico connect: stdio bridge to a tenant on two replicas with OAuth", () => {
  let everything: EverythingServer;
  let balancer: Balancer;
  let replicas: RunningPortico[];
  let mcpUrl: string;

  before(async () => {
    everything = await startEverything();
    balancer = await startBalancer(await freePort());
    const redisPrefix = uniquePrefix();
    const tenants = [
      {
        id: "acme",
        auth: "oauth" as const,
        providers: [{ id: "everything", kind: "mcp" as const, url: everything.url }],
      },
    ];
    const env = { PORTICO_PUBLIC_URL: balancer.url };
    replicas = [
      await startPortico({ tenants, redisPrefix, env }),
      await startPortico({ tenants, redisPrefix, env }),
    ];
    balancer.use(replicas.map((r) => r.url));
    await new UserStore(replicas[0]!.store, replicas[0]!.keys).create("acme", USER);
    mcpUrl = `${balancer.url}/mcp/acme`;
  });
  after(async () => {
    for (const r of replicas ?? []) await r.close();
    await balancer?.close();
    await everything?.stop();
  });

  it("2026-07-28 over HTTP: signs in once, lists, calls, relays progress and sampling; the token is cached 0600", async () => {
    const home = newBridgeHome();
    try {
      const from = balancer.routed.length;
      const { client, sampled, stderr } = await connectThroughBridge(mcpUrl, home);
      assert.equal(logins(home), 1, "one sign-in");
      assert.match(stderr(), /sign in to .* in your browser: http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/);
      const login = readFileSync(home.marker, "utf8");
      assert.match(
        login,
        /client_id=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Foauth%2Fclients%2Fportico-connect\.json/,
      );
      assert.match(login, /code_challenge_method=S256/);
      assert.match(login, /redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback/);
      await useEverything(client, sampled);
      await client.close();

      const file = tokenFile(home);
      assert.equal(statSync(file).mode & 0o777, 0o600, "token file 0600");
      assert.equal(statSync(join(home.configDir, "tokens")).mode & 0o777, 0o700, "token directory 0700");
      const saved = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      assert.equal(saved.server, mcpUrl);
      assert.ok(saved.refreshToken, "a refresh token is kept");
      const mine = balancer.routed.slice(from).filter((r) => r.path === "/mcp/acme");
      assert.ok(
        mine.some((r) => r.backend === 0) && mine.some((r) => r.backend === 1),
        "both replicas served",
      );
      assert.ok(
        mine.every((r) => r.sessionId === undefined),
        "2026-07-28: no session",
      );
    } finally {
      rmSync(home.configDir, { recursive: true, force: true });
    }
  });

  it("session era over HTTP (--era session): the same, on one session across both replicas, DELETEd at the end", async () => {
    const home = newBridgeHome();
    try {
      const from = balancer.routed.length;
      const { client, sampled } = await connectThroughBridge(mcpUrl, home, ["--era", "session"]);
      await useEverything(client, sampled);
      await client.close();
      const mine = balancer.routed.slice(from).filter((r) => r.path === "/mcp/acme");
      const sessions = new Set(mine.map((r) => r.sessionId).filter(Boolean));
      assert.equal(sessions.size, 1, "one session");
      assert.ok(
        mine.some((r) => r.method === "GET"),
        "the standalone GET stream was opened",
      );
      assert.ok(
        mine.some((r) => r.backend === 0) && mine.some((r) => r.backend === 1),
        "both replicas served",
      );
      await waitFor(() =>
        mine.concat(balancer.routed.slice(from + mine.length)).some((r) => r.method === "DELETE"),
      );
    } finally {
      rmSync(home.configDir, { recursive: true, force: true });
    }
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) assert.fail("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
