// Connected accounts through Portico's MCP endpoint (docs/upstream-auth.md), with real parts only:
// two replicas on one Redis, an oauth tenant with local users, a `user_oauth` provider in front of
// an SDK upstream behind its own authorization server (oidc-provider), official SDK v1 clients and
// raw 2026-07-28 requests with Portico tokens, and Chromium finishing each connect link the client
// was given. Then revocation (the accounts page, the admin API), one refresh for calls on both
// replicas at once, and the hostile cases (another user's link; the client's token never upstream).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { AccountStore } from "../../src/accounts/account-store.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { Secrets } from "../../src/crypto/secrets.js";
import {
  signInUpstream,
  startProtectedUpstream,
  UPSTREAM_SCOPE,
  type ProtectedUpstream,
} from "../fixtures/protected-upstream.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { launchBrowser } from "../support/browser.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startIssuer, startPortico, TEST_SECRET, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

const TENANT = "acme";
const VERSION = "2026-07-28";
const USERS = ["alice", "bob", "cy"].map((username) => ({ username, password: `${username} correct horse` }));
const CONNECT = "echo__connect_echo";
const WHOAMI = "echo__whoami";

let upstream: ProtectedUpstream;
let a: RunningPortico;
let b: RunningPortico;
let browser: Browser;
const tokens: Record<string, string> = {};
const subs: Record<string, string> = {};
const contexts: Record<string, BrowserContext> = {};
const clients: Record<string, RecordingClient> = {};

before(async () => {
  const prefix = uniquePrefix();
  const env = { PORTICO_REDIS_KEY_PREFIX: prefix, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN };
  const started = await startIssuer({ tenant: TENANT, users: USERS, env });
  a = started.portico;
  upstream = await startProtectedUpstream(started.issuer);
  const tenant = {
    id: TENANT,
    auth: "oauth",
    providers: [
      {
        id: "echo",
        kind: "mcp",
        url: upstream.url,
        prefix: "echo",
        auth: { type: "user_oauth", scope: UPSTREAM_SCOPE, registration: "dynamic" },
      },
    ],
  } as unknown as TenantConfig;
  await a.registry.seed(tenant);
  b = await startPortico({
    redisPrefix: prefix,
    tenants: [],
    env: { PORTICO_PUBLIC_URL: started.issuer, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  await b.registry.reload(TENANT);
  const oauth = await TestOAuthClient.register(started.issuer);
  for (const user of USERS) {
    tokens[user.username] = (await oauth.tokens(TENANT, user)).access_token;
    subs[user.username] = decodeJwt(tokens[user.username]!).sub!;
  }
  browser = await launchBrowser();
  for (const user of USERS) contexts[user.username] = await browser.newContext();
});

after(async () => {
  await Promise.allSettled(Object.values(clients).map((c) => c.client.close()));
  await browser?.close();
  await Promise.allSettled([a?.close(), b?.close()]);
  await upstream?.close();
});

const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? "";
const names = async (c: RecordingClient) => (await c.client.listTools()).tools.map((t) => t.name).sort();

/** An SDK v1 client of `user` on a replica, once that replica listens on its session's channel. */
async function sdkClient(on: RunningPortico, user: string, urlMode: boolean): Promise<RecordingClient> {
  const client = await connectClient(on.mcpUrl(TENANT), {
    headers: { authorization: `Bearer ${tokens[user]}` },
    clientCapabilities: urlMode ? { elicitation: { url: {} } } : { elicitation: {} },
  });
  clients[user] = client;
  // Notifications outside a call go on its standalone stream: open before anything is asked.
  await client.streamOpen();
  return client;
}

/** Resolves with the next notification of `method` after the ones `client` already received. */
function next(client: RecordingClient, method: string, timeoutMs = 10_000): Promise<void> {
  const seen = client.notifications.filter((n) => n.method === method).length;
  return (async () => {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
      if (client.notifications.filter((n) => n.method === method).length > seen) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no new ${method} within ${timeoutMs} ms`);
  })();
}

/** A URL-mode elicitation the SDK client was asked for (-32042). */
async function urlElicitation(client: RecordingClient, tool: string) {
  const err = await client.client.callTool({ name: tool, arguments: {} }).then(
    (r) => assert.fail(`expected -32042, got ${JSON.stringify(r)}`),
    (e: McpError) => e,
  );
  assert.equal(err.code, -32042, String(err));
  const [elicitation] = (err.data as { elicitations: Array<Record<string, string>> }).elicitations;
  assert.equal(elicitation!.mode, "url");
  return elicitation as { elicitationId: string; url: string; message: string };
}

/** A 2026-07-28 request of `user` to a replica. */
async function call2026(on: RunningPortico, user: string, params: Record<string, unknown>) {
  const res = await fetch(on.mcpUrl(TENANT), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${tokens[user]}`,
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
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

async function newPage(user: string): Promise<Page> {
  const page = await contexts[user]!.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

/** Opens a connect link in `user`'s browser: Portico's sign-in if needed, then the upstream's. */
async function finishLink(user: string, link: string, account = `${user}-upstream`) {
  const page = await newPage(user);
  await page.goto(link);
  if (await page.getByRole("heading", { name: "Sign in" }).isVisible()) {
    await page.getByLabel("Username").fill(user);
    await page.getByLabel("Password").fill(`${user} correct horse`);
    await page.getByRole("button", { name: "Sign in" }).click();
  }
  await page.getByRole("button", { name: "Connect echo" }).click();
  await signInUpstream(page, upstream.issuer, account);
  await page.getByRole("heading", { name: "Connected" }).waitFor();
  await page.close();
}

/** A 2026-07-28 call of the tool once the replica heard that the user's account went. */
async function callWhenGone(on: RunningPortico, user: string) {
  for (let i = 0; ; i++) {
    const answer = await call2026(on, user, { name: WHOAMI, arguments: {} });
    if (answer.result?.resultType === "input_required" || i === 50) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("connected accounts through the MCP endpoint", () => {
  it("alice (URL elicitation) connects from her -32042 link and gets her own upstream subject", async () => {
    const alice = await sdkClient(a, "alice", true);
    assert.deepEqual(await names(alice), [CONNECT]);
    const elicitation = await urlElicitation(alice, CONNECT);
    assert.ok(elicitation.url.startsWith(`${a.url}/accounts/`), elicitation.url);
    const listChanged = next(alice, "notifications/tools/list_changed");
    await finishLink("alice", elicitation.url);
    const complete = await alice.waitFor("notifications/elicitation/complete");
    assert.deepEqual(complete.params, { elicitationId: elicitation.elicitationId });
    await listChanged;
    assert.deepEqual(await names(alice), [WHOAMI]);
    assert.equal(text(await alice.client.callTool({ name: WHOAMI, arguments: {} })), "alice-upstream");
    const completions = alice.notifications.filter((n) => n.method === "notifications/elicitation/complete");
    assert.equal(completions.length, 1, "told once, though both replicas heard the change");
  });

  it("bob (no URL elicitation, on the other replica) still sees the connect tool, gets the link as text, connects", async () => {
    const bob = await sdkClient(b, "bob", false);
    assert.deepEqual(await names(bob), [CONNECT]);
    const prompt = await bob.client.callTool({ name: CONNECT, arguments: {} });
    assert.equal(prompt.isError, true);
    const link = /open (\S+) , then call the tool again/.exec(text(prompt))?.[1];
    assert.ok(link?.startsWith(`${a.url}/accounts/`), text(prompt));
    const listChanged = next(bob, "notifications/tools/list_changed");
    await finishLink("bob", link!);
    await listChanged;
    assert.deepEqual(await names(bob), [WHOAMI]);
    assert.equal(text(await bob.client.callTool({ name: WHOAMI, arguments: {} })), "bob-upstream");
    assert.equal(
      text(await clients.alice!.client.callTool({ name: WHOAMI, arguments: {} })),
      "alice-upstream",
    );
  });

  it("cy (2026-07-28) gets input_required; after connecting, the retry on the other replica completes", async () => {
    const first = await call2026(a, "cy", { name: CONNECT, arguments: {} });
    assert.equal(first.result?.resultType, "input_required", JSON.stringify(first));
    const request = first.result.inputRequests.connect;
    assert.equal(request.method, "elicitation/create");
    assert.equal(request.params.mode, "url");
    await finishLink("cy", request.params.url);
    const done = await call2026(b, "cy", {
      name: CONNECT,
      arguments: {},
      inputResponses: { connect: { action: "accept" } },
      requestState: first.result.requestState,
    });
    assert.equal(done.result?.resultType, "complete", JSON.stringify(done));
    assert.equal(done.result?.isError, undefined, JSON.stringify(done));
    const who = await call2026(b, "cy", { name: WHOAMI, arguments: {} });
    assert.equal(who.result?.content[0].text, "cy-upstream", JSON.stringify(who));
  });

  it("calls on both replicas at once, with the token due, send one refresh and both succeed", async () => {
    const records = new AccountStore(a.store, a.keys, new Secrets(TEST_SECRET));
    const tokensNow = await records.get(TENANT, subs.cy!, "echo");
    assert.ok(tokensNow?.refreshToken);
    // Within the refresh-ahead window (60 s) of expiry: the next use refreshes.
    await records.put(TENANT, subs.cy!, "echo", { ...tokensNow, expiresAt: Date.now() + 5_000 });
    const refreshes = upstream.grants.refresh_token ?? 0;
    const sent = upstream.bearers.length;
    upstream.tokenDelayMs = 300; // the second replica's call arrives while the first refreshes
    const [one, two] = await Promise.all([
      call2026(a, "cy", { name: WHOAMI, arguments: {} }),
      call2026(b, "cy", { name: WHOAMI, arguments: {} }),
    ]);
    assert.equal(one.result?.content[0].text, "cy-upstream", JSON.stringify(one));
    assert.equal(two.result?.content[0].text, "cy-upstream", JSON.stringify(two));
    upstream.tokenDelayMs = 0;
    assert.equal(
      upstream.grants.refresh_token,
      refreshes + 1,
      "one refresh reached the authorization server",
    );
    const refreshed = await records.get(TENANT, subs.cy!, "echo");
    assert.notEqual(refreshed?.accessToken, tokensNow.accessToken);
    // Less the unauthenticated probe of discovery (RFC 9728), on a replica refreshing for the first time.
    const since = new Set(upstream.bearers.slice(sent).filter((header) => header !== ""));
    assert.deepEqual([...since], [`Bearer ${refreshed!.accessToken}`], "both replicas sent the new token");
  });

  it("alice disconnects on the accounts page: she is asked to connect again, bob keeps working", async () => {
    const alice = clients.alice!;
    const listChanged = next(alice, "notifications/tools/list_changed");
    const page = await newPage("alice");
    await page.goto(`${a.url}/accounts/tenant/${TENANT}`);
    await page.getByRole("heading", { name: "Connected accounts" }).waitFor();
    await page.getByRole("row", { name: /echo/ }).getByRole("button", { name: "Disconnect" }).click();
    await page.getByRole("status").filter({ hasText: "Disconnected echo." }).waitFor();
    await page.close();
    await listChanged;
    // A call from the list she had asks her to connect again (not "Unknown tool").
    const elicitation = await urlElicitation(alice, WHOAMI);
    assert.deepEqual(await names(alice), [CONNECT]);
    assert.ok(elicitation.url.startsWith(`${a.url}/accounts/`));
    assert.equal(text(await clients.bob!.client.callTool({ name: WHOAMI, arguments: {} })), "bob-upstream");

    // Bob opening alice's link is refused, and nothing reaches the upstream's server.
    const [authorizations, requests] = [upstream.authorizations, upstream.requests];
    const hostile = await newPage("bob");
    const response = await hostile.goto(elicitation.url);
    if (await hostile.getByRole("heading", { name: "Sign in" }).isVisible()) {
      await hostile.getByLabel("Username").fill("bob");
      await hostile.getByLabel("Password").fill("bob correct horse");
      const [answer] = await Promise.all([
        hostile.waitForResponse((r) => r.url().includes("/accounts/") && r.status() === 403),
        hostile.getByRole("button", { name: "Sign in" }).click(),
      ]);
      assert.equal(answer.status(), 403);
    } else assert.equal(response?.status(), 403);
    await hostile.getByRole("heading", { name: "Not your link" }).waitFor();
    await hostile.close();
    assert.equal(upstream.authorizations, authorizations);
    assert.equal(upstream.requests, requests, "nothing reached the upstream's authorization server");
  });

  it("an admin revokes bob: he is asked to connect again; cy keeps working", async () => {
    const bob = clients.bob!;
    const listChanged = next(bob, "notifications/tools/list_changed");
    const admin = new AdminClient(a.url);
    const revocations = upstream.revocations;
    const revoked = await admin.delete(
      `/tenants/${TENANT}/subjects/${encodeURIComponent(subs.bob!)}/accounts/echo`,
    );
    assert.equal(revoked.status, 204);
    await listChanged;
    assert.deepEqual(await names(bob), [CONNECT]);
    const prompt = await bob.client.callTool({ name: WHOAMI, arguments: {} });
    assert.equal(prompt.isError, true);
    assert.match(text(prompt), /Connect your echo account to use its tools: open http/);
    const who = await call2026(b, "cy", { name: WHOAMI, arguments: {} });
    assert.equal(who.result?.content[0].text, "cy-upstream");
    for (let i = 0; i < 50 && upstream.revocations === revocations; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.ok(upstream.revocations > revocations, "revoked at the upstream's server (RFC 7009)");
  });

  it("cy (2026-07-28), revoked, calls the tool: input_required; the retry on the other replica runs it", async () => {
    const admin = new AdminClient(b.url);
    const path = `/tenants/${TENANT}/subjects/${encodeURIComponent(subs.cy!)}/accounts/echo`;
    assert.equal((await admin.delete(path)).status, 204);
    const first = await callWhenGone(a, "cy");
    assert.equal(first.result?.resultType, "input_required", JSON.stringify(first));
    const request = first.result.inputRequests.connect;
    assert.equal(request.params.mode, "url");
    await finishLink("cy", request.params.url);
    const done = await call2026(b, "cy", {
      name: WHOAMI,
      arguments: {},
      inputResponses: { connect: { action: "accept" } },
      requestState: first.result.requestState,
    });
    assert.equal(done.result?.resultType, "complete", JSON.stringify(done));
    assert.equal(done.result?.content[0].text, "cy-upstream", JSON.stringify(done));
  });

  it("the MCP clients' own Portico tokens never reached the upstream", () => {
    assert.ok(upstream.bearers.length > 0);
    for (const header of upstream.bearers)
      for (const [user, token] of Object.entries(tokens))
        assert.ok(!header.includes(token), `${user}'s Portico token was sent upstream`);
  });
});
