// Connected accounts as the MCP client sees them (docs/upstream-auth.md "What the client sees"),
// against a real UserTokenSource written for the test (the connected-accounts layer's contract: a
// token per user, connect links bound to the user, changes seen by every replica). Two replicas on
// one Redis; official SDK v1 clients (with and without URL-mode elicitation), an official SDK v2
// client on 2026-07-28 and raw 2026-07-28 requests; the upstream (official SDK) checks each user's token and echoes its subject.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import type { AccountChange, UserTokenSource } from "../../src/providers/user-tokens.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startIssuer, startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { startSts, startSubjectUpstream, type Sts, type SubjectUpstream } from "../support/sts.js";

// Both replicas announce a user's change; a busy machine may hear the second copy well after the
// first, so their listen streams gather copies for a second (PORTICO_LISTEN_COALESCE_MS).
const COALESCE_MS = "1000";
const TENANT = "acme";
const USERS = [
  { username: "ada", password: "ada-password-123" },
  { username: "bob", password: "bob-password-123" },
  { username: "cy", password: "cy-password-1234" },
  { username: "dee", password: "dee-password-123" },
];
const VERSION = "2026-07-28";

/** Accounts held in memory: what a user connected, links asked for, changes told to every listener. */
class TestAccounts implements UserTokenSource {
  readonly tokens = new Map<string, string>();
  readonly links: Array<{ tenant: string; user: string; provider: string; elicitationId?: string }> = [];
  readonly #listeners = new Set<(change: AccountChange) => void>();

  async tokenFor(tenant: string, user: string, provider: string) {
    return this.tokens.get(`${tenant} ${user} ${provider}`);
  }

  async refused(tenant: string, user: string, provider: string) {
    this.tokens.delete(`${tenant} ${user} ${provider}`);
  }

  async connectUrl(tenant: string, user: string, provider: string, elicitationId?: string) {
    this.links.push({ tenant, user, provider, elicitationId });
    return `https://portico.example/connect/${provider}?e=${elicitationId ?? ""}`;
  }

  onChange(listener: (change: AccountChange) => void) {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** The user finished the connect page: a token, and the change every replica hears. */
  connect(user: string, token: string, elicitationIds?: string[]) {
    this.tokens.set(`${TENANT} ${user} notes`, token);
    for (const l of this.#listeners)
      l({ tenant: TENANT, user, provider: "notes", connected: true, elicitationIds });
  }
}

let sts: Sts;
let upstream: SubjectUpstream;
let a: RunningPortico;
let b: RunningPortico;
const accounts = new TestAccounts();
const tokens: string[] = [];
const subs: string[] = [];
const clients: RecordingClient[] = [];

before(async () => {
  sts = await startSts();
  upstream = await startSubjectUpstream(sts);
  const prefix = uniquePrefix();
  const userTokenSources = { user_oauth: accounts };
  const started = await startIssuer({
    tenant: TENANT,
    users: USERS,
    env: { PORTICO_REDIS_KEY_PREFIX: prefix, PORTICO_LISTEN_COALESCE_MS: COALESCE_MS },
    userTokenSources,
  });
  a = started.portico;
  // The provider kind the connected-accounts layer validates; this test serves it with its own source.
  const tenant = {
    id: TENANT,
    auth: "oauth",
    providers: [{ id: "notes", kind: "mcp", url: upstream.url, auth: { type: "user_oauth" } }],
  } as unknown as TenantConfig;
  await a.registry.seed(tenant);
  b = await startPortico({
    redisPrefix: prefix,
    tenants: [],
    env: { PORTICO_PUBLIC_URL: started.issuer, PORTICO_LISTEN_COALESCE_MS: COALESCE_MS },
    userTokenSources,
  });
  await b.registry.reload(TENANT);
  const oauth = await TestOAuthClient.register(started.issuer);
  for (const user of USERS) {
    const token = (await oauth.tokens(TENANT, user)).access_token;
    tokens.push(token);
    subs.push(decodeJwt(token).sub!);
  }
});

after(async () => {
  await Promise.allSettled(clients.map((c) => c.client.close()));
  await Promise.allSettled([a?.close(), b?.close()]);
  upstream?.close();
  sts?.close();
});

const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? "";

async function sdkClient(i: number, urlMode: boolean): Promise<RecordingClient> {
  const client = await connectClient(a.mcpUrl(TENANT), {
    headers: { authorization: `Bearer ${tokens[i]}` },
    clientCapabilities: urlMode ? { elicitation: { url: {} } } : { elicitation: {} },
  });
  clients.push(client);
  // Notifications outside a call go on its standalone stream: open before anything is asked.
  await client.streamOpen();
  return client;
}

/** A 2026-07-28 request of user `i` to a replica. */
async function call2026(
  on: RunningPortico,
  i: number,
  params: Record<string, unknown>,
  method = "tools/call",
) {
  const res = await fetch(on.mcpUrl(TENANT), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${tokens[i]}`,
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...(typeof params.name === "string" && { "mcp-name": params.name }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        },
      },
    }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string } };
}

/** A 2026-07-28 listen stream of user `i` for tools list changes; its messages are collected. */
async function listenTools(on: RunningPortico, i: number) {
  const abort = new AbortController();
  const res = await fetch(on.mcpUrl(TENANT), {
    method: "POST",
    signal: abort.signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${tokens[i]}`,
      "mcp-protocol-version": VERSION,
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: `listen-${i}`,
      method: "subscriptions/listen",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        },
        notifications: { toolsListChanged: true },
      },
    }),
  });
  assert.equal(res.status, 200);
  const methods: string[] = [];
  void (async () => {
    let text = "";
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      let at: number;
      while ((at = text.indexOf("\n\n")) >= 0) {
        const data = text
          .slice(0, at)
          .split("\n")
          .find((line) => line.startsWith("data:"));
        text = text.slice(at + 2);
        if (data) methods.push(String((JSON.parse(data.slice(5)) as { method?: string }).method));
      }
    }
  })().catch(() => undefined);
  while (methods.length === 0) await new Promise((r) => setTimeout(r, 20)); // acknowledged
  return { methods, close: () => abort.abort() };
}

describe("a per-user provider before and after the user connects", () => {
  it("an unconnected user sees exactly the connect tool", async () => {
    const client = await sdkClient(0, false);
    const { tools } = await client.client.listTools();
    assert.deepEqual(
      tools.map((t) => [t.name, t.description]),
      [["connect_notes", "Connect your notes account to use its tools"]],
    );
  });

  it("a client without URL-mode elicitation gets an error result with the link", async () => {
    const client = clients[0]!.client;
    const result = await client.callTool({ name: "connect_notes", arguments: {} });
    assert.equal(result.isError, true);
    assert.match(
      text(result),
      /Connect your notes account to use its tools: open https:\/\/portico\.example\/connect\/notes\?e=/,
    );
    const link = accounts.links.at(-1)!;
    assert.deepEqual([link.tenant, link.user, link.provider], [TENANT, subs[0], "notes"]);
  });

  it("a 2025-11-25 client with URL-mode elicitation gets -32042, then elicitation/complete and its tools", async () => {
    const bob = await sdkClient(1, true);
    const ada = clients[0]!;
    const err = await bob.client.callTool({ name: "connect_notes", arguments: {} }).then(
      () => assert.fail("expected -32042"),
      (e: McpError) => e,
    );
    assert.equal(err.code, -32042);
    const [elicitation] = (err.data as { elicitations: Array<Record<string, string>> }).elicitations;
    assert.equal(elicitation!.mode, "url");
    assert.match(elicitation!.url!, /^https:\/\/portico\.example\/connect\/notes\?e=/);
    assert.equal(accounts.links.at(-1)!.user, subs[1]);
    assert.equal(accounts.links.at(-1)!.elicitationId, elicitation!.elicitationId);

    accounts.connect(subs[1]!, await sts.issue(subs[1]!), [elicitation!.elicitationId!]);
    const complete = await bob.waitFor("notifications/elicitation/complete");
    assert.deepEqual(complete.params, { elicitationId: elicitation!.elicitationId });
    // Both replicas heard the change; one of them told the session.
    await bob.waitFor("notifications/tools/list_changed");
    const names = (await bob.client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, [`notes_of_${subs[1]}`, "whoami"].sort());
    assert.equal(text(await bob.client.callTool({ name: "whoami", arguments: {} })), `subject: ${subs[1]}`);

    // Another user's connection changes nothing for ada: no notification, still the connect tool.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(
      bob.notifications.filter((n) => n.method === "notifications/elicitation/complete").length,
      1,
    );
    assert.ok(!ada.notifications.some((n) => n.method === "notifications/tools/list_changed"));
    assert.deepEqual(
      (await ada.client.listTools()).tools.map((t) => t.name),
      ["connect_notes"],
    );
    assert.ok(!upstream.authorizations.some((h) => tokens.some((t) => h.includes(t))));
  });

  it("a 2026-07-28 client gets input_required; retries on the other replica ask again until connected", async () => {
    const first = await call2026(a, 2, { name: "connect_notes", arguments: {} });
    assert.equal(first.result?.resultType, "input_required", JSON.stringify(first));
    const request = first.result.inputRequests.connect;
    assert.equal(request.method, "elicitation/create");
    assert.equal(request.params.mode, "url");
    assert.match(request.params.url, /^https:\/\/portico\.example\/connect\/notes/);
    assert.equal(accounts.links.at(-1)!.user, subs[2]);
    const retry = (state: string) =>
      call2026(b, 2, {
        name: "connect_notes",
        arguments: {},
        inputResponses: { connect: { action: "accept" } },
        requestState: state,
      });

    const again = await retry(first.result.requestState);
    assert.equal(again.result?.resultType, "input_required", JSON.stringify(again));

    const cyListens = await listenTools(b, 2);
    const adaListens = await listenTools(b, 0);
    accounts.connect(subs[2]!, await sts.issue(subs[2]!));
    const deadline = Date.now() + 5000;
    while (!cyListens.methods.includes("notifications/tools/list_changed") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1.5 * Number(COALESCE_MS))); // past the coalescing window
    assert.deepEqual(
      cyListens.methods.filter((m) => m === "notifications/tools/list_changed"),
      ["notifications/tools/list_changed"],
      "cy's listen stream hears their change once",
    );
    assert.ok(!adaListens.methods.includes("notifications/tools/list_changed"), "ada's does not");
    cyListens.close();
    adaListens.close();
    const done = await retry(again.result.requestState);
    assert.equal(done.result?.resultType, "complete", JSON.stringify(done));
    assert.equal(done.result?.isError, undefined);
    const listed = await call2026(b, 2, {}, "tools/list");
    assert.deepEqual(
      listed.result!.tools.map((t: { name: string }) => t.name).sort(),
      [`notes_of_${subs[2]}`, "whoami"].sort(),
    );
    const who = await call2026(a, 2, { name: "whoami", arguments: {} });
    assert.equal(who.result!.content[0].text, `subject: ${subs[2]}`);
  });

  it("an SDK v2 client on 2026-07-28 gets the link in its elicitation handler; its retry on the other replica runs", async () => {
    // The v2 client fulfils input_required itself (inputRequired.autoFulfill, on by default): it
    // hands the URL-mode request to its elicitation/create handler, then retries the call with the
    // answer and the requestState. Its fetch sends that retry to replica B, everything else to A.
    const sent: Array<{ replica: "a" | "b"; method: string; retry: boolean }> = [];
    const portB = new URL(b.url).port;
    const route: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const body =
        typeof init?.body === "string" ? (JSON.parse(init.body) as Record<string, any>) : undefined;
      const retry = body?.method === "tools/call" && typeof body.params?.requestState === "string";
      if (retry) url.port = portB;
      if (body?.method) sent.push({ replica: retry ? "b" : "a", method: body.method, retry });
      return fetch(url, init);
    };
    const client = new V2Client(
      { name: "v2-connect", version: "1.0.0" },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: VERSION } } },
    );
    const asked: Array<Record<string, unknown>> = [];
    client.setRequestHandler("elicitation/create", async (req) => {
      asked.push(req.params);
      // The user opens the link and finishes the connect page.
      accounts.connect(subs[3]!, await sts.issue(subs[3]!));
      return { action: "accept" };
    });
    await client.connect(
      new V2Transport(new URL(a.mcpUrl(TENANT)), {
        fetch: route,
        requestInit: { headers: { authorization: `Bearer ${tokens[3]}` } },
      }),
    );
    try {
      assert.equal(client.getProtocolEra(), "modern");
      assert.deepEqual(
        (await client.listTools()).tools.map((t) => t.name),
        ["connect_notes"],
      );
      const result = await client.callTool({ name: "connect_notes", arguments: {} });

      assert.equal(asked.length, 1, "the handler is asked once");
      assert.equal(asked[0]!.mode, "url");
      assert.match(String(asked[0]!.url), /^https:\/\/portico\.example\/connect\/notes/);
      assert.match(String(asked[0]!.message), /notes/);
      assert.equal(accounts.links.at(-1)!.user, subs[3]);
      assert.deepEqual(result.content, [
        { type: "text", text: "Your notes account is connected: its tools are listed." },
      ]);
      assert.notEqual(result.isError, true);
      assert.deepEqual(
        sent.filter((s) => s.method === "tools/call").map((s) => [s.replica, s.retry]),
        [
          ["a", false],
          ["b", true],
        ],
        "the first call on A, the retry on B",
      );
      // A list with a per-user provider is stale at once (ttlMs 0): the client asks again and gets
      // the upstream's own answer, with this user's token, without listening for list changes.
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, [`notes_of_${subs[3]}`, "whoami"].sort());
      const who = await client.callTool({ name: "whoami", arguments: {} });
      assert.deepEqual(who.content, [{ type: "text", text: `subject: ${subs[3]}` }]);
    } finally {
      await client.close();
    }
  });

  it("a retry whose client declined gets an error result, not another prompt", async () => {
    const first = await call2026(a, 0, { name: "connect_notes", arguments: {} });
    assert.equal(first.result?.resultType, "input_required");
    const declined = await call2026(b, 0, {
      name: "connect_notes",
      arguments: {},
      inputResponses: { connect: { action: "decline" } },
      requestState: first.result.requestState,
    });
    assert.equal(declined.result?.resultType, "complete");
    assert.equal(declined.result?.isError, true);
    assert.match(declined.result.content[0].text, /not connected: the link was declined/);
  });

  it("a revoked token (the upstream answers 401 twice) is dropped and the user is asked again", async () => {
    const bob = clients[1]!.client;
    accounts.tokens.set(`${TENANT} ${subs[1]} notes`, "revoked-token-not-a-jwt");
    const err = await bob.callTool({ name: "whoami", arguments: {} }).then(
      () => assert.fail("expected -32042"),
      (e: McpError) => e,
    );
    assert.equal(err.code, -32042);
    assert.equal(accounts.tokens.has(`${TENANT} ${subs[1]} notes`), false, "the source was told");
    // Connected again: their tools come back.
    accounts.connect(subs[1]!, await sts.issue(subs[1]!));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(text(await bob.callTool({ name: "whoami", arguments: {} })), `subject: ${subs[1]}`);
  });

  it("with a pinned reference listing, users who have not connected see its tools, and calling one asks to connect", async () => {
    const pinned = {
      id: TENANT,
      auth: "oauth",
      providers: [
        { id: "notes", kind: "mcp", url: upstream.url, auth: { type: "user_oauth" }, referenceUser: subs[1] },
      ],
    } as unknown as TenantConfig;
    await a.registry.seed(pinned);
    const ada = clients[0]!.client;
    const names = (await ada.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names.sort(), [`notes_of_${subs[1]}`, "connect_notes", "whoami"].sort());
    const result = await ada.callTool({ name: "whoami", arguments: {} });
    assert.equal(result.isError, true);
    assert.match(
      text(result),
      /Connect your notes account to use its tools: open https:\/\/portico\.example/,
    );
    assert.ok(!JSON.stringify(result).includes(`subject: ${subs[1]}`), "never the reference user's answer");
    // A connected user still sees their own list.
    const bob = clients[1]!.client;
    assert.equal(text(await bob.callTool({ name: "whoami", arguments: {} })), `subject: ${subs[1]}`);
  });
});
