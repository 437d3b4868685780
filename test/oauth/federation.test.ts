// Federated login end to end: an MCP client (oauth4webapi) authorizes at Portico for a tenant whose
// users sign in at its own OpenID Connect provider — a real one (oidc-provider, with its development
// login and consent pages driven like a browser) — then Portico's consent, code, token and /mcp.
// The callback's state is single-use and bound to the browser's flow.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, it } from "node:test";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { Federation, FederationError, federatedSub, scopeOf } from "../../src/oauth/federation.js";
import { UserStore } from "../../src/oauth/users.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";
import { formOf, REDIRECT_URI, TestOAuthClient } from "../support/oauth.js";
import { initializeWithToken } from "../support/rpc.js";

const redirectUri = REDIRECT_URI;
let portico: RunningPortico;
let issuer: string;
let idp: Server;
let idpIssuer: string;
let oauthClient: TestOAuthClient;

async function startProvider(porticoIssuer: string): Promise<void> {
  const port = await freePort();
  idpIssuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const provider = new Provider(idpIssuer, {
    clients: [
      {
        client_id: "portico",
        client_secret: "portico-client-secret-0123456789",
        redirect_uris: [`${porticoIssuer}/oauth/callback`],
        token_endpoint_auth_method: "client_secret_basic",
        response_types: ["code"],
        grant_types: ["authorization_code"],
      },
    ],
    // Claims for the email scope reach the userinfo endpoint (ID tokens conform to OIDC by default).
    claims: { openid: ["sub"], email: ["email", "email_verified"], groups: ["groups", "realm_access"] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        email: `${id}@acme.example`,
        email_verified: true,
        // Only alice is in groups (a list) and has a role (nested, as Keycloak spells realm roles).
        ...(id === "alice" && { groups: ["eng", "oncall"], realm_access: { roles: ["tenant-admin"] } }),
      }),
    }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["oidc-provider-test-cookie-key"] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "k1", alg: "RS256", use: "sig" }] },
  });
  idp = createServer(provider.callback());
  await new Promise<void>((resolve) => idp.listen(port, "127.0.0.1", resolve));
}

before(async () => {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  await startProvider(issuer);
  const oidc = (over: Record<string, string> = {}) => ({
    type: "oidc" as const,
    issuer: idpIssuer,
    clientId: "portico",
    clientSecret: "portico-client-secret-0123456789",
    label: "Acme SSO",
    ...over,
  });
  const { label: _label, ...unlabelled } = oidc();
  portico = await startPortico({
    tenants: [
      { ...staticTenant("sso"), auth: "oauth", identity: oidc() },
      {
        ...staticTenant("sso-groups"),
        auth: "oauth",
        identity: { ...oidc(), scope: "groups", groupsClaim: "groups", rolesClaim: "realm_access.roles" },
        policy: {
          default: "deny",
          rules: [{ effect: "allow", subjects: { groups: ["eng"] }, prompts: ["*"] }],
        },
      },
      {
        ...staticTenant("nohost"),
        auth: "oauth",
        identity: { ...unlabelled, issuer: "http://127.0.0.1:9/" },
      },
    ],
    redis: true,
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer },
  });
  await new UserStore(portico.store, portico.keys).create("sso", {
    username: "local-ops",
    password: "correct horse battery",
  });
  oauthClient = await TestOAuthClient.register(issuer);
});
after(async () => {
  await portico.close();
  await new Promise((resolve) => idp.close(resolve));
});

/** A browser's cookies, for one host (enough for a provider on its own port). */
class Browser {
  readonly #cookies = new Map<string, string>();

  async get(url: string | URL): Promise<Response> {
    return this.#send(url, { method: "GET" });
  }

  async post(url: string | URL, fields: Record<string, string>): Promise<Response> {
    return this.#send(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    });
  }

  async #send(url: string | URL, init: RequestInit): Promise<Response> {
    const cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), ...(cookie && { cookie }) },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      this.#cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  }
}

const location = (res: Response) => new URL(res.headers.get("location")!, res.url);

/** Starts an authorization at Portico for a tenant: its login page, and the client's PKCE values. */
async function startAuthorization(browser: Browser, tenant: string) {
  const { url, verifier, state } = await oauthClient.authorizationUrl(tenant);
  const page = await browser.get(url);
  assert.equal(page.status, 200);
  return { html: await page.text(), verifier, state, csp: page.headers.get("content-security-policy")! };
}

/** The federated button, then the provider's login and consent pages: the callback URL it sends back. */
async function signInAtProvider(browser: Browser, loginHtml: string, account = "alice") {
  const toProvider = await browser.post(`${issuer}/oauth/login`, { ...formOf(loginHtml), federated: "1" });
  assert.equal(toProvider.status, 303);
  let next = location(toProvider);
  assert.equal(next.origin, idpIssuer);
  for (let hop = 0; hop < 10; hop++) {
    if (next.origin === issuer) return next;
    const res = await browser.get(next);
    if (res.status === 200) {
      const html = await res.text();
      const action = /action="([^"]+)"/.exec(html)![1]!;
      const prompt = /name="prompt" value="(\w+)"/.exec(html)![1]!;
      const fields: Record<string, string> =
        prompt === "login" ? { prompt, login: account, password: "any" } : { prompt };
      next = location(await browser.post(new URL(action, next), fields));
    } else {
      assert.ok(
        res.status >= 300 && res.status < 400,
        `provider answered ${res.status}: ${await res.text()}`,
      );
      next = location(res);
    }
  }
  throw new Error("the provider never sent the browser back");
}

async function exchange(back: Response, verifier: string, state: string) {
  assert.equal(back.status, 303);
  return oauthClient.exchange(location(back), verifier, state);
}

function initialize(tenant: string, token: string) {
  return initializeWithToken(`${issuer}/mcp/${tenant}`, token);
}

it("signs in at the tenant's provider, then consent, code, token and /mcp", async () => {
  const browser = new Browser();
  const { html, verifier, state, csp } = await startAuthorization(browser, "sso");
  assert.match(html, /Sign in with Acme SSO/);
  // Browsers check form-action on each redirect after a submission: the provider, or the client.
  assert.match(csp, new RegExp(`form-action 'self' http://127\\.0\\.0\\.1:9999 ${idpIssuer}(;|$)`));
  assert.match(html, /autocomplete="current-password"/, "local users keep their password form");

  const toProvider = await browser.post(`${issuer}/oauth/login`, { ...formOf(html), federated: "1" });
  const authorize = location(toProvider);
  assert.equal(`${authorize.origin}${authorize.pathname}`, `${idpIssuer}/auth`);
  const q = authorize.searchParams;
  assert.equal(q.get("client_id"), "portico");
  assert.equal(q.get("redirect_uri"), `${issuer}/oauth/callback`);
  assert.equal(q.get("response_type"), "code");
  assert.equal(q.get("scope"), "openid email");
  assert.equal(q.get("code_challenge_method"), "S256");
  assert.match(q.get("code_challenge")!, /^[A-Za-z0-9_-]{43}$/);
  assert.match(q.get("state")!, /^[A-Za-z0-9_-]{43}$/);
  assert.match(q.get("nonce")!, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(q.get("state"), state, "the client's state never reaches the provider");

  const callback = await signInAtProvider(browser, html);
  assert.equal(callback.pathname, "/oauth/callback");
  const consent = await browser.get(callback);
  assert.equal(consent.status, 200);
  const consentHtml = await consent.text();
  assert.match(consentHtml, /Allow access\?/);
  assert.match(consentHtml, /alice@acme\.example/, "the user is shown by the email the provider gave");
  assert.match(
    consent.headers.get("content-security-policy")!,
    /form-action 'self' http:\/\/127\.0\.0\.1:9999;/,
  );
  const back = await browser.post(`${issuer}/oauth/consent`, { ...formOf(consentHtml), decision: "allow" });
  const tokens = await exchange(back, verifier, state);

  const claims = JSON.parse(Buffer.from(tokens.access_token.split(".")[1]!, "base64url").toString()) as {
    sub: string;
  };
  assert.equal(claims.sub, federatedSub(idpIssuer, "alice"));
  assert.match(claims.sub, /^oidc_[A-Za-z0-9_-]{22}$/);
  assert.equal((await initialize("sso", tokens.access_token)).status, 200);

  const replay = await browser.get(callback);
  assert.equal(replay.status, 400, "the callback's state is single-use");
  assert.equal(replay.headers.get("location"), null);
  assert.match(await replay.text(), /Sign-in failed/);
});

it("the same provider user gets the same subject again; consent is remembered", async () => {
  const browser = new Browser();
  const { html, verifier, state } = await startAuthorization(browser, "sso");
  const back = await browser.get(await signInAtProvider(browser, html));
  const tokens = await exchange(back, verifier, state);
  const sub = (
    JSON.parse(Buffer.from(tokens.access_token.split(".")[1]!, "base64url").toString()) as {
      sub: string;
    }
  ).sub;
  assert.equal(sub, federatedSub(idpIssuer, "alice"));
});

it("a tampered state, or a callback without the browser's flow cookie, is refused with a page", async () => {
  const browser = new Browser();
  const { html, verifier, state } = await startAuthorization(browser, "sso");
  const callback = await signInAtProvider(browser, html, "bob");
  const tampered = new URL(callback);
  tampered.searchParams.set("state", `${callback.searchParams.get("state")!.slice(0, -2)}AA`);
  const refused = await browser.get(tampered);
  assert.equal(refused.status, 400);
  assert.equal(refused.headers.get("location"), null);
  assert.match(await refused.text(), /Sign-in failed/);

  const noCookie = await fetch(callback, { redirect: "manual" });
  assert.equal(noCookie.status, 400);
  assert.equal(noCookie.headers.get("location"), null);

  // Neither burned the real answer: the browser that started the sign-in still finishes it.
  const consent = await browser.get(callback);
  assert.equal(consent.status, 200);
  const consentHtml = await consent.text();
  assert.match(consentHtml, /bob@acme\.example/);
  const back = await browser.post(`${issuer}/oauth/consent`, { ...formOf(consentHtml), decision: "allow" });
  await exchange(back, verifier, state);
});

it("two callbacks racing with one state: exactly one wins", async () => {
  const browser = new Browser();
  const { html } = await startAuthorization(browser, "sso");
  const callback = await signInAtProvider(browser, html, "dave");
  const statuses = (await Promise.all([browser.get(callback), browser.get(callback)])).map((r) => r.status);
  assert.deepEqual(statuses.sort(), [200, 400]);
});

it("another browser's flow cookie cannot take this sign-in's state", async () => {
  const victim = new Browser();
  const { html } = await startAuthorization(victim, "sso");
  const callback = await signInAtProvider(victim, html, "carol");
  const attacker = new Browser();
  await startAuthorization(attacker, "sso");
  const res = await attacker.get(callback);
  assert.equal(res.status, 400);
  assert.match(await res.text(), /Sign-in failed/);
});

it("cancelling at the provider sends access_denied back to the verified client", async () => {
  const browser = new Browser();
  const { html, state } = await startAuthorization(browser, "sso");
  let next = location(await browser.post(`${issuer}/oauth/login`, { ...formOf(html), federated: "1" }));
  while (!next.pathname.startsWith("/interaction/")) next = location(await browser.get(next));
  next = location(await browser.get(`${next.href.replace(/\/$/, "")}/abort`));
  while (next.origin !== issuer) next = location(await browser.get(next));
  const back = await browser.get(next);
  assert.equal(back.status, 303);
  const to = location(back);
  assert.equal(`${to.origin}${to.pathname}`, redirectUri);
  assert.equal(to.searchParams.get("error"), "access_denied");
  assert.equal(to.searchParams.get("state"), state);
  assert.equal(to.searchParams.get("iss"), issuer);
});

it("local users of an oidc tenant still sign in with a password", async () => {
  const browser = new Browser();
  const { html, verifier, state } = await startAuthorization(browser, "sso");
  const consent = await browser.post(`${issuer}/oauth/login`, {
    ...formOf(html),
    username: "local-ops",
    password: "correct horse battery",
  });
  assert.equal(consent.status, 200);
  const consentHtml = await consent.text();
  const back = await browser.post(`${issuer}/oauth/consent`, { ...formOf(consentHtml), decision: "allow" });
  const tokens = await exchange(back, verifier, state);
  assert.equal((await initialize("sso", tokens.access_token)).status, 200);
});

it("an unreachable provider leaves the user on the login page with an error", async () => {
  const browser = new Browser();
  const { html } = await startAuthorization(browser, "nohost");
  assert.match(html, /Sign in with 127\.0\.0\.1:9/, "without a label, the button names the issuer's host");
  const res = await browser.post(`${issuer}/oauth/login`, { ...formOf(html), federated: "1" });
  assert.equal(res.status, 502);
  assert.match(await res.text(), /Single sign-on is unavailable right now/);
});

it("a pending sign-in expires: its callback is refused before anything is fetched", async () => {
  let fetched = 0;
  const federation = new Federation({
    redirectUri: `${issuer}/oauth/callback`,
    fetch: async () => {
      fetched += 1;
      throw new Error("no network in this test");
    },
  });
  const identity = { type: "oidc" as const, issuer: idpIssuer, clientId: "portico", clientSecret: "x" };
  const pending = { issuer: idpIssuer, state: "s", nonce: "n", codeVerifier: "v", expiresAt: Date.now() - 1 };
  await assert.rejects(
    federation.complete(identity, pending, new URL(`${issuer}/oauth/callback?code=c&state=s`)),
    (err: unknown) => err instanceof FederationError && err.kind === "failed" && /too long/.test(err.message),
  );
  assert.equal(fetched, 0);
});

it("subjects are stable per (issuer, sub) and differ across providers; scopes always hold openid email", () => {
  assert.equal(federatedSub("https://a.example", "42"), federatedSub("https://a.example", "42"));
  assert.notEqual(federatedSub("https://a.example", "42"), federatedSub("https://b.example", "42"));
  const base = { type: "oidc" as const, issuer: "https://a.example", clientId: "c", clientSecret: "s" };
  assert.equal(scopeOf(base), "openid email");
  assert.equal(scopeOf({ ...base, scope: "profile  email groups" }), "openid email profile groups");
});

it("groups and roles come from the claims the identity settings name, reach the token, and the policy applies", async () => {
  const signIn = async (account: string) => {
    const browser = new Browser();
    const { html, verifier, state } = await startAuthorization(browser, "sso-groups");
    const consent = await browser.get(await signInAtProvider(browser, html, account));
    const back =
      consent.status === 200
        ? await browser.post(`${issuer}/oauth/consent`, {
            ...formOf(await consent.text()),
            decision: "allow",
          })
        : consent;
    return (await exchange(back, verifier, state)).access_token;
  };
  const claimsOf = (token: string) =>
    JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
  const prompts = async (token: string) => {
    const init = await initialize("sso-groups", token);
    const sid = init.headers.get("mcp-session-id")!;
    const res = await fetch(`${issuer}/mcp/sso-groups`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "prompts/list", params: {} }),
    });
    return ((await res.json()) as { result: { prompts: Array<{ name: string }> } }).result.prompts.map(
      (p) => p.name,
    );
  };

  const alice = await signIn("alice");
  assert.deepEqual(claimsOf(alice).groups, ["eng", "oncall"]);
  assert.deepEqual(claimsOf(alice).roles, ["tenant-admin"]);
  assert.deepEqual(await prompts(alice), ["code-review"]);

  const bob = await signIn("bob");
  assert.equal(claimsOf(bob).groups, undefined, "a user in no group has no groups claim");
  assert.deepEqual(await prompts(bob), [], "and gets the tenant's default");
});
