// `portico connect` end to end: an SDK v1 stdio client drives the bridge (src/cli.ts through tsx),
// which reaches tenant acme (auth oauth, server-everything upstream) on two Portico replicas
// behind a round-robin balancer, signs in (the "browser" posts Portico's login and consent forms:
// test/fixtures/connect-login.ts), caches the token (0600), reuses and refreshes it, and relays
// tools, progress notifications and sampling in both HTTP eras. Then the hostile cases.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  PromptListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { ClientStore, validateRegistration } from "../../src/oauth/clients.js";
import { UserStore } from "../../src/oauth/users.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startBalancer, type Balancer } from "../support/balancer.js";
import {
  BRIDGE_ARGS,
  bridgeEnv as homeEnv,
  newBridgeHome,
  ROOT,
  runRaw,
  waitFor,
  type BridgeHome,
} from "../support/connect.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort, uniquePrefix } from "../support/redis.js";

const USER = { username: "ada", password: "correct horse battery" };
const DOC_PROMPT = { name: "doc-review", messages: [{ role: "user" as const, text: "Review the doc." }] };
/** A user who never consented: Portico remembers Ada's consent to the bridge. */
const BOB = { username: "bob", password: "battery staple horse" };

/** A bridge's environment, its "browser" signing in as Ada unless `extra` says otherwise. */
function bridgeEnv(home: BridgeHome, extra: Record<string, string> = {}): Record<string, string> {
  return homeEnv(home, { CONNECT_TEST_USER: USER.username, CONNECT_TEST_PASSWORD: USER.password, ...extra });
}

const logins = (home: BridgeHome) => readFileSync(home.marker, "utf8").split("\n").filter(Boolean).length;

function tokenFile(home: BridgeHome): string {
  const dir = join(home.configDir, "tokens");
  const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  assert.equal(files.length, 1, "one cached login per server URL");
  return join(dir, files[0]!);
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

/** An SDK v1 client on the bridge's stdio, declaring sampling, answering it deterministically. */
async function connectThroughBridge(url: string, home: BridgeHome, args: string[] = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...BRIDGE_ARGS, "connect", url, ...args],
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
  // The SDK client drops a progress notification that arrives in the same read as its result (its
  // notification handlers run a microtask later, after the result removed the progress handler):
  // the exact stream, last progress included, is checked on raw stdout in the EOF test below.
  assert.deepEqual(progress.slice(0, 2), [1, 2], "progress notifications relayed to the stdio client");

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
  /** Signed in by the first test, reused by the next ones. */
  const home = newBridgeHome();

  before(async () => {
    everything = await startEverything();
    balancer = await startBalancer(await freePort());
    const redisPrefix = uniquePrefix();
    const tenants = [
      {
        id: "acme",
        auth: "oauth" as const,
        providers: [
          { id: "everything", kind: "mcp" as const, url: everything.url },
          { id: "docs", kind: "static" as const, prompts: [DOC_PROMPT] },
        ],
      },
    ];
    const env = { PORTICO_PUBLIC_URL: balancer.url, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN };
    replicas = [
      await startPortico({ tenants, redisPrefix, env }),
      await startPortico({ tenants, redisPrefix, env }),
    ];
    balancer.use(replicas.map((r) => r.url));
    const users = new UserStore(replicas[0]!.store, replicas[0]!.keys);
    await users.create("acme", USER);
    await users.create("acme", BOB);
    mcpUrl = `${balancer.url}/mcp/acme`;
  });
  after(async () => {
    for (const r of replicas ?? []) await r.close();
    await balancer?.close();
    await everything?.stop();
    rmSync(home.configDir, { recursive: true, force: true });
  });

  it("2026-07-28 over HTTP: signs in once, lists, calls, relays progress and sampling; the token is cached 0600", async () => {
    const from = balancer.routed.length;
    const { client, sampled, stderr } = await connectThroughBridge(mcpUrl, home);
    assert.equal(logins(home), 1, "one sign-in");
    assert.match(stderr(), /sign in to .* in your browser: http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/);
    const login = readFileSync(home.marker, "utf8");
    assert.match(
      login,
      /client_id=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Foauth%2Fclients%2Fportico-connect\.json/,
      "the bridge identifies itself by Portico's metadata document",
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
    assert.ok(mine.some((r) => r.backend === 0) && mine.some((r) => r.backend === 1), "both replicas served");
    assert.ok(
      mine.every((r) => r.sessionId === undefined),
      "2026-07-28: no session",
    );
  });

  it("session era over HTTP (--era session): one session across both replicas, the cached token reused", async () => {
    const from = balancer.routed.length;
    const { client, sampled } = await connectThroughBridge(mcpUrl, home, ["--era", "session"]);
    await useEverything(client, sampled);
    await client.close();
    assert.equal(logins(home), 1, "no new sign-in: the cached token was used");
    const mine = balancer.routed.slice(from).filter((r) => r.path === "/mcp/acme");
    const sessions = new Set(mine.map((r) => r.sessionId).filter(Boolean));
    assert.equal(sessions.size, 1, "one session");
    assert.ok(
      mine.some((r) => r.method === "GET"),
      "the standalone GET stream was opened",
    );
    assert.ok(mine.some((r) => r.backend === 0) && mine.some((r) => r.backend === 1), "both replicas served");
  });

  for (const era of ["2026-07-28", "session"])
    it(`an admin change on the other replica reaches the stdio client as prompts/list_changed (${era})`, async () => {
      const from = balancer.routed.length;
      const { client } = await connectThroughBridge(mcpUrl, home, ["--era", era]);
      let changed = 0;
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changed++);
      assert.ok((await client.listPrompts()).prompts.some((p) => p.name === "doc-review"));
      // The bridge listens (2026-07-28) or opens its GET stream (session) from notifications/initialized
      // on, at a moment a busy machine delays: the change must wait until that stream answered
      // (Portico answers a listen once subscribed, and attaches a GET stream before answering it).
      await waitFor(
        () =>
          balancer.routed
            .slice(from)
            .some(
              (r) =>
                r.path === "/mcp/acme" &&
                r.status === 200 &&
                (r.method === "GET" || r.mcpMethod === "subscriptions/listen"),
            ),
        10_000,
      );
      const admin = new AdminClient(replicas[1]!.url);
      const emptied = await admin.patch("/tenants/acme/providers/docs", { prompts: [] });
      assert.equal(emptied.status, 200);
      await waitFor(() => changed > 0, 8000);
      assert.ok(!(await client.listPrompts()).prompts.some((p) => p.name === "doc-review"));
      await client.close();
      const restored = await admin.patch("/tenants/acme/providers/docs", { prompts: [DOC_PROMPT] });
      assert.equal(restored.status, 200);
    });

  it("an expired or refused access token is refreshed with the refresh token, without a sign-in", async () => {
    const file = tokenFile(home);
    for (const change of [{ expiresAtMs: Date.now() - 1000 }, { accessToken: "not-a-valid-token" }]) {
      const before = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...before, ...change }), { mode: 0o600 });
      const { client } = await connectThroughBridge(mcpUrl, home);
      const { tools } = await client.listTools();
      assert.ok(tools.length > 0);
      await client.close();
      const after = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      assert.notEqual(
        after.accessToken,
        before.accessToken,
        `a new access token (${Object.keys(change)[0]})`,
      );
      assert.notEqual(after.refreshToken, before.refreshToken, "the refresh token rotated");
      assert.equal(statSync(file).mode & 0o777, 0o600);
    }
    assert.equal(logins(home), 1, "still the one sign-in");
  });

  it("two bridges sharing the cache: the one refused after the other refreshed takes the new token, never the rotated refresh token", async () => {
    const file = tokenFile(home);
    const read = () => JSON.parse(readFileSync(file, "utf8")) as Record<string, string | number>;
    const b = await connectThroughBridge(mcpUrl, home);
    await b.client.listTools();
    const first = read();
    // B's access token is revoked; A starts with that token expired, so A refreshes (rotating).
    const revoked = await fetch(`${balancer.url}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: String(first.accessToken), client_id: String(first.clientId) }),
    });
    assert.equal(revoked.status, 200);
    writeFileSync(file, JSON.stringify({ ...first, expiresAtMs: Date.now() - 1000 }), { mode: 0o600 });
    const a = await connectThroughBridge(mcpUrl, home);
    await a.client.listTools();
    const refreshed = read();
    assert.notEqual(refreshed.refreshToken, first.refreshToken, "A refreshed");
    // B's next request is refused (401): it reads the cache instead of reusing the rotated token,
    // which Portico would answer by revoking the grant for both.
    await b.client.listTools();
    assert.deepEqual(read(), refreshed, "B did not refresh again");
    await a.client.listTools();
    assert.equal(logins(home), 1, "nobody had to sign in again");
    await a.client.close();
    await b.client.close();
  });

  it("stdin EOF ends the bridge: the session is DELETEd and it exits 0, stdout holding only protocol lines", async () => {
    const from = balancer.routed.length;
    const run = await runRaw(["connect", mcpUrl, "--era", "session"], bridgeEnv(home), [
      INITIALIZE,
      INITIALIZED,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: {
          name: "trigger-long-running-operation",
          arguments: { duration: 0.3, steps: 3 },
          _meta: { progressToken: "p" },
        },
      },
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    const lines = run.stdout.trim().split("\n");
    const messages = lines.map((l) => JSON.parse(l) as { id?: unknown; params?: { progress?: number } });
    assert.deepEqual(
      messages.map((m) => m.id ?? `progress ${m.params?.progress}`),
      [1, 2, "progress 1", "progress 2", "progress 3", 3],
    );
    const deleted = balancer.routed.slice(from).filter((r) => r.method === "DELETE");
    assert.equal(deleted.length, 1, "one DELETE");
    assert.ok(deleted[0]!.sessionId, "of the session");
    assert.equal(deleted[0]!.status, 204);
  });

  it("a 2026-07-28 local client is relayed as is; a line that is not JSON gets a parse error", async () => {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "raw-2026", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const run = await runRaw(["connect", mcpUrl], bridgeEnv(home), [
      "this is not json",
      { jsonrpc: "2.0", id: "d", method: "server/discover", params: { _meta: meta } },
      {
        jsonrpc: "2.0",
        id: "c",
        method: "tools/call",
        params: { name: "echo", arguments: { message: "modern" }, _meta: meta },
      },
    ]);
    assert.equal(run.code, 0, run.stderr);
    const [parse, discover, call] = run.stdout
      .trim()
      .split("\n")
      .map(
        (l) => JSON.parse(l) as { id?: unknown; result?: Record<string, unknown>; error?: { code: number } },
      );
    assert.equal(parse?.id, null);
    assert.equal(parse?.error?.code, -32700);
    assert.equal(discover?.id, "d");
    assert.ok((discover?.result?.supportedVersions as string[]).includes("2026-07-28"));
    assert.equal(discover?.result?.resultType, "complete", "2026-07-28 fields kept for a 2026-07-28 client");
    assert.equal(call?.id, "c");
    assert.deepEqual(call?.result?.content, [{ type: "text", text: "Echo: modern" }]);
    assert.equal(logins(home), 1, "the cached sign-in");
  });

  for (const era of ["2026-07-28", "session"])
    it(`a cancelled call (${era}) gets no answer, the bridge goes on, and stdin EOF ends it at once`, async () => {
      const started = Date.now();
      const long = {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "trigger-long-running-operation", arguments: { duration: 20, steps: 2 } },
      };
      const cancel = {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 5, reason: "user pressed stop" },
      };
      const run = await runRaw(["connect", mcpUrl, "--era", era], bridgeEnv(home), [
        INITIALIZE,
        INITIALIZED,
        { noWait: long },
        cancel,
        {
          jsonrpc: "2.0",
          id: 6,
          method: "tools/call",
          params: { name: "echo", arguments: { message: "after" } },
        },
      ]);
      assert.equal(run.code, 0, run.stderr);
      const ids = run.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { id?: unknown }).id);
      assert.deepEqual(ids, [1, 6], "no answer to the cancelled call");
      assert.ok(Date.now() - started < 15_000, "the 20 s call did not hold the bridge open");
    });

  it("stdin EOF with a call still running: cancelled after a short grace, the session DELETEd, exit 0", async () => {
    const from = balancer.routed.length;
    const started = Date.now();
    const run = await runRaw(["connect", mcpUrl, "--era", "session"], bridgeEnv(home), [
      INITIALIZE,
      INITIALIZED,
      {
        noWait: {
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "trigger-long-running-operation", arguments: { duration: 30, steps: 2 } },
        },
      },
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(Date.now() - started < 12_000, "the 30 s call did not hold the bridge open");
    assert.ok(balancer.routed.slice(from).some((r) => r.method === "DELETE" && r.status === 204));
  });

  it("a session the server ended (404) is started again with the client's initialize, and the call goes through", async () => {
    const { client, stderr } = await connectThroughBridge(mcpUrl, home, ["--era", "session"]);
    const echo = (message: string) => client.callTool({ name: "echo", arguments: { message } });
    assert.deepEqual((await echo("before")).content, [{ type: "text", text: "Echo: before" }]);
    const session = balancer.routed.findLast((r) => r.sessionId !== undefined)!.sessionId!;
    const token = (JSON.parse(readFileSync(tokenFile(home), "utf8")) as { accessToken: string }).accessToken;
    const ended = await fetch(mcpUrl, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}`, "mcp-session-id": session },
    });
    assert.equal(ended.status, 204);
    assert.deepEqual((await echo("after")).content, [{ type: "text", text: "Echo: after" }]);
    assert.match(stderr(), /the server ended the session; starting a new one/);
    const later = balancer.routed.findLast((r) => r.sessionId !== undefined)!.sessionId!;
    assert.notEqual(later, session, "a new session");
    await client.close();
  });

  it("a server without metadata documents: the bridge registers dynamically, or uses --client-id", async () => {
    const metadataPath = "/.well-known/oauth-authorization-server";
    balancer.rewrite(metadataPath, (body) => {
      const { client_id_metadata_document_supported: _cimd, ...rest } = JSON.parse(body) as Record<
        string,
        unknown
      >;
      return JSON.stringify(rest);
    });
    const registered = newBridgeHome();
    const preRegistered = newBridgeHome();
    try {
      const { client } = await connectThroughBridge(mcpUrl, registered);
      assert.ok((await client.listTools()).tools.length > 0);
      await client.close();
      const dynamic = new URL(readFileSync(registered.marker, "utf8").trim()).searchParams.get("client_id");
      assert.match(dynamic ?? "", /^[A-Za-z0-9_-]{22}$/, "a dynamically registered client id");
      const saved = JSON.parse(readFileSync(tokenFile(registered), "utf8")) as { clientId: string };
      assert.equal(saved.clientId, dynamic);

      const own = await new ClientStore(replicas[0]!.store, replicas[0]!.keys).register(
        validateRegistration({
          client_name: "our bridge",
          redirect_uris: ["http://127.0.0.1/callback"],
          grant_types: ["authorization_code", "refresh_token"],
          token_endpoint_auth_method: "none",
        }),
      );
      const pinned = await connectThroughBridge(mcpUrl, preRegistered, ["--client-id", own.client_id]);
      assert.ok((await pinned.client.listTools()).tools.length > 0);
      await pinned.client.close();
      const used = new URL(readFileSync(preRegistered.marker, "utf8").trim()).searchParams.get("client_id");
      assert.equal(used, own.client_id);
    } finally {
      balancer.rewrite(metadataPath, undefined);
      rmSync(registered.configDir, { recursive: true, force: true });
      rmSync(preRegistered.configDir, { recursive: true, force: true });
    }
  });

  it("a refused sign-in: one line on stderr, nothing on stdout, exit 1", async () => {
    const other = newBridgeHome();
    try {
      const run = await runRaw(
        ["connect", mcpUrl],
        bridgeEnv(other, {
          CONNECT_TEST_DECISION: "deny",
          CONNECT_TEST_USER: BOB.username,
          CONNECT_TEST_PASSWORD: BOB.password,
        }),
      );
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stdout, "");
      const lines = run.stderr.trim().split("\n");
      assert.match(lines.at(-1)!, /^portico connect: sign-in refused: access_denied/);
      assert.match(lines[0]!, /^portico connect: sign in to /);
      assert.match(
        lines[1]!,
        /^portico connect: waiting for the sign-in, [45]:\d\d left \(Ctrl-C cancels\)$/,
      );
      assert.equal(lines.length, 3, run.stderr);
    } finally {
      rmSync(other.configDir, { recursive: true, force: true });
    }
  });

  it("a tenant that is not there (lost in a restart of the embedded store, or misspelt): the 404 says so, exit 1", async () => {
    const run = await runRaw(["connect", `${balancer.url}/mcp/acme-gone`], bridgeEnv(home));
    assert.equal(run.code, 1);
    assert.equal(run.stdout, "");
    assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
    assert.match(
      run.stderr,
      /^portico connect: http:\/\/\S+\/mcp\/acme-gone answered HTTP 404: no tenant acme-gone here\. It may have been lost when a Portico on the embedded store restarted \(create it again\), or the URL is misspelt\n$/,
    );
  });

  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)
    it(`${signal} while the user has not signed in: the bridge exits at once with ${code}, its loopback listener closed`, async () => {
      const idle = newBridgeHome();
      try {
        // A "browser" that never signs in: the user skipped the browser step.
        const child = spawn(process.execPath, [...BRIDGE_ARGS, "connect", mcpUrl], {
          cwd: ROOT,
          env: { ...bridgeEnv(idle), PORTICO_CONNECT_BROWSER: "true" },
          stdio: ["pipe", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        const exited = new Promise<number | null>((done) => child.on("exit", (c) => done(c)));
        await waitFor(() => /waiting for the sign-in/.test(stderr), 20_000);
        const lines = stderr.trim().split("\n");
        assert.match(
          lines[0]!,
          /^portico connect: sign in to \S+ in your browser: http:\/\/\S+\/oauth\/authorize\?/,
        );
        assert.match(
          lines[1]!,
          /^portico connect: waiting for the sign-in, (5:00|4:\d\d) left \(Ctrl-C cancels\)$/,
        );
        const authorize = new URL(/in your browser: (\S+)/.exec(lines[0]!)![1]!);
        const callback = authorize.searchParams.get("redirect_uri")!;
        assert.equal(
          (await fetch(`${callback}-not`)).status,
          404,
          "the loopback listener is up while it waits",
        );

        const sent = Date.now();
        child.kill(signal);
        assert.equal(await exited, code, stderr);
        assert.ok(Date.now() - sent < 3000, `exited within 3 s (took ${Date.now() - sent} ms)`);
        assert.equal(stdout, "");
        assert.match(stderr.trim().split("\n").at(-1)!, /^portico connect: (sign-in )?cancelled$/);
        await assert.rejects(fetch(callback), "the loopback listener is closed");
        assert.throws(() => tokenFile(idle), "nothing cached");
      } finally {
        rmSync(idle.configDir, { recursive: true, force: true });
      }
    });
});

describe("portico connect: other servers and bad input", () => {
  const home = newBridgeHome();
  after(() => rmSync(home.configDir, { recursive: true, force: true }));

  it("auto picks the session era for a server without 2026-07-28 (server-everything, no auth)", async () => {
    const direct = await startEverything();
    try {
      const { client, sampled } = await connectThroughBridge(direct.url, home);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === "echo"));
      await useEverything(client, sampled);
      await client.close();
      assert.equal(logins(home), 0, "no sign-in where none is asked");
    } finally {
      await direct.stop();
    }
  });

  for (const [label, args, code, line] of [
    ["not a URL", ["connect", "not a url"], 1, /^portico connect: not a URL: "not a url"/],
    [
      "not http(s)",
      ["connect", "ftp://127.0.0.1/mcp/acme"],
      1,
      /^portico connect: not an http\(s\) URL: ftp:/,
    ],
    ["credentials in the URL", ["connect", "http://u:p@127.0.0.1/mcp/acme"], 1, /must not carry credentials/],
    ["no URL", ["connect"], 2, /^portico connect: connect needs the server URL/],
    ["an unknown option", ["connect", "http://127.0.0.1/mcp/a", "--nope"], 2, /unknown option --nope/],
    ["a bad --era", ["connect", "http://127.0.0.1/mcp/a", "--era", "1999"], 2, /--era must be one of/],
  ] as const) {
    it(`${label}: one line on stderr, nothing on stdout, exit ${code}`, async () => {
      const run = await runRaw([...args], bridgeEnv(home));
      assert.equal(run.code, code);
      assert.equal(run.stdout, "");
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
      assert.match(run.stderr, line);
    });
  }

  it("an unreachable server: one line on stderr naming it, exit 1", async () => {
    const port = await freePort();
    const run = await runRaw(["connect", `http://127.0.0.1:${port}/mcp/acme`], bridgeEnv(home));
    assert.equal(run.code, 1);
    assert.equal(run.stdout, "");
    assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`^portico connect: cannot reach http://127\\.0\\.0\\.1:${port}/mcp/acme: .*ECONNREFUSED`),
    );
  });
});
