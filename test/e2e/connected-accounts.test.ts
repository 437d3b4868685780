// Connected accounts end to end (docs/upstream-auth.md): two users of one tenant each sign in to
// Portico in Chromium, open their own connect link, sign in at the upstream's authorization server
// (oidc-provider) and come back connected; ConnectedAccounts.tokenFor then gives each a token the
// upstream (an SDK server) accepts for that user, as its echoed subject shows. Then the hostile and
// lifecycle cases: another user's link is refused before the upstream is reached, a user's
// Disconnect leaves the other working, two replicas refreshing at once send one refresh, and an
// invalid_grant drops the account. Dynamic registration and a pre-registered client are both used.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { AccountStore } from "../../src/accounts/account-store.js";
import { accountsSurface } from "../../src/accounts/surface.js";
import type { AccountChange } from "../../src/providers/user-tokens.js";
import { loadConfig } from "../../src/config/env.js";
import { egressFetch } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { UserStore } from "../../src/oauth/users.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import {
  PREREGISTERED,
  signInUpstream,
  startProtectedUpstream,
  UPSTREAM_SCOPE,
  type ProtectedUpstream,
} from "../fixtures/protected-upstream.js";
import { launchBrowser } from "../support/browser.js";
import { startPortico, TEST_SECRET, type RunningPortico } from "../support/portico.js";
import { freePort, getTestRedis } from "../support/redis.js";

let portico: RunningPortico;
let upstream: ProtectedUpstream;
let browser: Browser;
const subs: Record<string, string> = {};
const contexts: Record<string, BrowserContext> = {};
const changes: AccountChange[] = [];
const stores: Store[] = [];

before(async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  upstream = await startProtectedUpstream(url);
  portico = await startPortico({
    redis: true,
    env: { PORT: String(port), PORTICO_PUBLIC_URL: url },
    tenants: [
      {
        id: "acme",
        auth: "oauth",
        providers: [
          {
            id: "echo",
            kind: "mcp",
            url: upstream.url,
            auth: { type: "user_oauth", scope: UPSTREAM_SCOPE, registration: "dynamic" },
          },
          {
            id: "echo-pre",
            kind: "mcp",
            url: upstream.url,
            auth: { type: "user_oauth", issuer: upstream.issuer, scope: UPSTREAM_SCOPE, ...PREREGISTERED },
          },
        ],
      },
    ],
  });
  portico.accounts.onChange((change) => changes.push(change));
  const users = new UserStore(portico.store, portico.keys);
  for (const username of ["alice", "bob"]) {
    const user = await users.create("acme", { username, password: `${username} correct horse` });
    subs[username] = user!.sub;
  }
  browser = await launchBrowser();
  for (const username of ["alice", "bob"]) contexts[username] = await browser.newContext();
});

after(async () => {
  await browser?.close();
  await portico?.close();
  await upstream?.close();
  for (const store of stores) await store.close();
});

async function newPage(username: string): Promise<Page> {
  const page = await contexts[username]!.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

/** Portico's login page (the accounts pages' sign-in), as `username`. */
async function signInToPortico(page: Page, username: string) {
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(`${username} correct horse`);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Opens the user's connect link, signing in to Portico first when the browser has no session. */
async function connect(username: string, provider: string, account: string) {
  const page = await newPage(username);
  const link = await portico.accounts.connectUrl("acme", subs[username]!, provider, `elicit-${username}`);
  await page.goto(link);
  if (
    await page
      .getByRole("heading", { name: "Sign in" })
      .isVisible()
      .catch(() => false)
  )
    await signInToPortico(page, username);
  else if (!page.url().includes("/accounts/connect")) await signInToPortico(page, username);
  await page.getByRole("button", { name: `Connect ${provider}` }).click();
  await signInUpstream(page, upstream.issuer, account);
  await page.getByRole("heading", { name: "Connected" }).waitFor();
  await page.close();
}

/** Calls the upstream with a token through the SDK client: the subject it echoes. */
async function whoami(token: string): Promise<string> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(upstream.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: "whoami" });
    return (result.content as { text: string }[])[0]!.text;
  } finally {
    await client.close();
  }
}

describe("connected accounts", () => {
  it("each user connects their own account, and gets a token the upstream accepts as them", async () => {
    assert.equal(await portico.accounts.tokenFor("acme", subs.alice!, "echo"), undefined);
    await connect("alice", "echo", "alice-upstream");
    await connect("bob", "echo", "bob-upstream");
    assert.equal(upstream.registrations, 1, "one RFC 7591 registration serves every user of the provider");
    const alice = await portico.accounts.tokenFor("acme", subs.alice!, "echo");
    const bob = await portico.accounts.tokenFor("acme", subs.bob!, "echo");
    assert.ok(alice && bob && alice !== bob);
    assert.equal(await whoami(alice), "alice-upstream");
    assert.equal(await whoami(bob), "bob-upstream");
    const done = changes.filter((c) => c.connected && c.provider === "echo");
    assert.deepEqual(
      done.map((c) => [c.user, c.elicitationIds]),
      [
        [subs.alice, ["elicit-alice"]],
        [subs.bob, ["elicit-bob"]],
      ],
    );
  });

  it("connects through a pre-registered client at a configured issuer", async () => {
    // Bob still has a session at the upstream's server: he only consents for Portico's other client.
    await connect("bob", "echo-pre", "bob-upstream");
    const token = await portico.accounts.tokenFor("acme", subs.bob!, "echo-pre");
    assert.equal(await whoami(token!), "bob-upstream");
    assert.notEqual(token, await portico.accounts.tokenFor("acme", subs.bob!, "echo"));
    const [view] = (await portico.accounts.list("acme", subs.bob!)).filter((a) => a.provider === "echo-pre");
    assert.equal(view?.issuer, upstream.issuer);
    assert.ok(!JSON.stringify(view).includes(token!), "views never hold tokens");
  });

  it("refuses another user's link: 403, and the upstream is never asked", async () => {
    const page = await newPage("bob");
    const before = upstream.authorizations;
    const link = await portico.accounts.connectUrl("acme", subs.alice!, "echo");
    const response = await page.goto(link);
    assert.equal(response?.status(), 403);
    await page.getByRole("heading", { name: "Not your link" }).waitFor();
    assert.equal(upstream.authorizations, before);
    // A forged or altered link is not a link at all.
    const forged = link.replace(/link=([^.]+)/, (_m, p: string) => `link=${p.slice(0, -2)}AA`);
    assert.equal((await page.goto(forged))?.status(), 400);
    await page.close();
  });

  it("a user who disconnects on the accounts page loses the token; the other keeps theirs", async () => {
    const page = await newPage("alice");
    await page.goto(`${portico.url}/accounts/tenant/acme`);
    await page.getByRole("heading", { name: "Connected accounts" }).waitFor();
    const revocations = upstream.revocations;
    await page.getByRole("row", { name: /echo/ }).getByRole("button", { name: "Disconnect" }).click();
    await page.getByRole("status").filter({ hasText: "Disconnected echo." }).waitFor();
    await page.close();
    assert.equal(await portico.accounts.tokenFor("acme", subs.alice!, "echo"), undefined);
    const bob = await portico.accounts.tokenFor("acme", subs.bob!, "echo");
    assert.equal(await whoami(bob!), "bob-upstream");
    for (let i = 0; i < 50 && upstream.revocations === revocations; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      upstream.revocations > revocations,
      "the tokens were revoked at the upstream's server (RFC 7009)",
    );
    assert.ok(changes.some((c) => !c.connected && c.user === subs.alice && c.provider === "echo"));
  });

  it("two replicas refreshing at once send one refresh; both get the new token", async () => {
    const replica = async () => {
      const store = await createStore({ redisUrl: (await getTestRedis()).url });
      stores.push(store);
      const config = loadConfig({ PORTICO_PUBLIC_URL: portico.url, PORTICO_SECRET_KEY: TEST_SECRET });
      const surface = accountsSurface({
        publicUrl: config.publicUrl,
        store,
        keys: portico.keys,
        secrets: new Secrets(TEST_SECRET),
        tenant: (id) => portico.registry.get(id)?.config,
        fetch: egressFetch(new EgressPolicy({})),
        log: portico.app.log,
        // Every token is due for refresh.
        refreshAheadMs: 10 * 365 * 86_400_000,
      });
      return surface.accounts;
    };
    const [one, two] = [await replica(), await replica()];
    const old = await portico.accounts.tokenFor("acme", subs.bob!, "echo");
    const refreshes = upstream.grants.refresh_token ?? 0;
    const [a, b] = await Promise.all([
      one.tokenFor("acme", subs.bob!, "echo"),
      two.tokenFor("acme", subs.bob!, "echo"),
    ]);
    assert.equal(
      upstream.grants.refresh_token,
      refreshes + 1,
      "one refresh reached the authorization server",
    );
    assert.ok(a && a === b && a !== old);
    assert.equal(await whoami(a), "bob-upstream");
    assert.equal(await portico.accounts.tokenFor("acme", subs.bob!, "echo"), a);
  });

  it("a refresh refused with invalid_grant drops the account", async () => {
    const records = new AccountStore(portico.store, portico.keys, new Secrets(TEST_SECRET));
    const tokens = await records.get("acme", subs.bob!, "echo");
    const refreshToken = await upstream.provider.RefreshToken.find(tokens!.refreshToken!);
    await refreshToken!.destroy();
    const store = await createStore({ redisUrl: (await getTestRedis()).url });
    stores.push(store);
    const due = accountsSurface({
      publicUrl: portico.url,
      store,
      keys: portico.keys,
      secrets: new Secrets(TEST_SECRET),
      tenant: (id) => portico.registry.get(id)?.config,
      fetch: egressFetch(new EgressPolicy({})),
      log: portico.app.log,
      refreshAheadMs: 10 * 365 * 86_400_000,
    }).accounts;
    const heard = changes.length;
    assert.equal(await due.tokenFor("acme", subs.bob!, "echo"), undefined);
    // Dropped by another replica: this one hears it on the channel.
    for (let i = 0; i < 50 && changes.length === heard; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(changes.slice(heard), [
      { tenant: "acme", user: subs.bob, provider: "echo", connected: false },
    ]);
    assert.equal(await portico.accounts.tokenFor("acme", subs.bob!, "echo"), undefined);
    assert.deepEqual(
      (await portico.accounts.list("acme", subs.bob!)).map((a) => a.provider),
      ["echo-pre"],
    );
  });
});
