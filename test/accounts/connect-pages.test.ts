// The connect and accounts pages over HTTP, a cookie jar standing in for the browser: Portico's
// Client ID Metadata Document as an authorization server that knows clients only by such documents
// fetches it (client identity "auto" picks it), the flow's PKCE and resource indicator, and the
// pages a user sees when something goes wrong — the server says no, the token endpoint refuses,
// discovery fails — plus the hostile cases: no sign-in, a stolen callback, forms without their
// CSRF token, the upstream's own authorization pages never reached for those.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, type Server } from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { UserStore } from "../../src/oauth/users.js";
import { startCimdServer, type CimdServer } from "../fixtures/cimd-server.js";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { TEST_SECRET } from "../support/portico.js";
import { freePort, getTestRedis, uniquePrefix } from "../support/redis.js";
import { formOf } from "../support/oauth.js";

let portico: Portico;
/** Portico's log lines: what a failed flow logs, checked for secrets. */
const logged: string[] = [];
let as: CimdServer;
let idp: Server;
let idpIssuer: string;
let url: string;
let sub: string;
const UPSTREAM = "https://mcp.upstream.example/mcp";

before(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  as = await startCimdServer();
  await startIdp(url);
  const config = loadConfig({
    PORT: String(port),
    PORTICO_PUBLIC_URL: url,
    PORTICO_SECRET_KEY: TEST_SECRET,
    PORTICO_LOG_LEVEL: "info",
    PORTICO_REDIS_URL: (await getTestRedis()).url,
    PORTICO_REDIS_KEY_PREFIX: uniquePrefix(),
  });
  const tenants: TenantConfig[] = [
    {
      id: "acme",
      auth: "oauth",
      providers: [
        {
          id: "docs",
          kind: "mcp",
          url: UPSTREAM,
          auth: { type: "user_oauth", issuer: as.issuer, scope: "read" },
        },
        {
          id: "gone",
          kind: "mcp",
          url: UPSTREAM,
          auth: { type: "user_oauth", issuer: "http://127.0.0.1:9" },
        },
      ],
    },
    {
      id: "ext",
      auth: "oauth",
      identity: {
        type: "external",
        issuer: idpIssuer,
        jwksUrl: `${idpIssuer}/jwks`,
        login: { clientId: "portico-login", clientSecret: IDP_SECRET },
      },
      providers: [
        { id: "docs", kind: "mcp", url: UPSTREAM, auth: { type: "user_oauth", issuer: as.issuer } },
      ],
    },
  ];
  portico = await buildApp(config, { tenants, logStream: { write: (line) => void logged.push(line) } });
  await portico.app.listen({ port, host: "127.0.0.1" });
  sub = (await new UserStore(portico.store, portico.keys).create("acme", {
    username: "ada",
    password: "ada correct horse",
  }))!.sub;
});

after(async () => {
  await portico.app.close();
  await as.close();
  await new Promise((resolve) => idp.close(resolve));
});

const IDP_SECRET = "portico-login-secret-0123456789abcdef";

/** The external authorization server of tenant "ext", as an OpenID provider the pages sign in at. */
async function startIdp(porticoUrl: string): Promise<void> {
  const port = await freePort();
  idpIssuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const provider = new Provider(idpIssuer, {
    clients: [
      {
        client_id: "portico-login",
        client_secret: IDP_SECRET,
        redirect_uris: [`${porticoUrl}/accounts/signed-in/oidc`],
        response_types: ["code"],
        grant_types: ["authorization_code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email"] },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, email: `${id}@ext.example` }) }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["accounts-idp-cookie-key"] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "k1", alg: "RS256", use: "sig" }] },
  });
  idp = createServer(provider.callback());
  await new Promise<void>((resolve) => idp.listen(port, "127.0.0.1", resolve));
}

/** A browser's cookie jar, following no redirect by itself. */
class Jar {
  readonly #cookies = new Map<string, string>();
  async get(target: string | URL): Promise<Response> {
    return this.#send(target, { method: "GET" });
  }
  async post(target: string | URL, fields: Record<string, string>): Promise<Response> {
    return this.#send(target, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    });
  }
  async #send(target: string | URL, init: RequestInit): Promise<Response> {
    const cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(target, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as object), ...(cookie && { cookie }) },
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
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1]!;

/** Opens a connect link, signing in on Portico's login page: the connect page. */
async function openSignedIn(jar: Jar, provider: string): Promise<Response> {
  const link = await portico.accounts.connectUrl("acme", sub, provider, "e-1");
  const toLogin = await jar.get(link);
  assert.equal(toLogin.status, 303, "an unknown browser is sent to sign in first");
  const login = await jar.get(location(toLogin));
  const html = await login.text();
  assert.match(html, /Portico connected accounts/);
  const signedIn = await jar.post(`${url}/oauth/login`, {
    ...formOf(html),
    username: "ada",
    password: "ada correct horse",
  });
  assert.equal(signedIn.status, 303, "no consent page for the accounts pages' own sign-in");
  const back = await jar.get(location(signedIn));
  assert.equal(location(back).pathname, "/accounts/connect");
  return jar.get(location(back));
}

describe("the connect flow against a metadata-document server", () => {
  it("connects: the server fetches Portico's document; PKCE and the resource indicator are sent", async () => {
    const jar = new Jar();
    const page = await openSignedIn(jar, "docs");
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Connect your docs account/);
    assert.match(page.headers.get("content-security-policy")!, new RegExp(`form-action 'self' ${as.issuer}`));
    const toAs = await jar.post(`${url}/accounts/connect`, {
      link: hidden(html, "link"),
      csrf: hidden(html, "csrf"),
    });
    assert.equal(toAs.status, 303);
    const authorize = location(toAs);
    assert.equal(authorize.origin, as.issuer);
    assert.equal(authorize.searchParams.get("client_id"), `${url}/oauth/upstream-client`);
    assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
    assert.equal(authorize.searchParams.get("resource"), UPSTREAM);
    assert.equal(authorize.searchParams.get("scope"), "read");
    const callback = await jar.get(authorize);
    assert.equal(location(callback).pathname, "/accounts/callback");
    const done = await jar.get(location(callback));
    assert.equal(done.status, 200);
    assert.match(await done.text(), /Your <strong>docs<\/strong> account is connected/);
    const [fetched] = as.fetched;
    assert.equal(fetched?.url, `${url}/oauth/upstream-client`);
    assert.deepEqual(fetched?.document.redirect_uris, [`${url}/accounts/callback`]);
    assert.equal(fetched?.document.token_endpoint_auth_method, "none");
    const token = await portico.accounts.tokenFor("acme", sub, "docs");
    assert.deepEqual(as.issued.get(token!), { clientId: `${url}/oauth/upstream-client`, resource: UPSTREAM });
  });

  it("a callback replayed, or brought by another browser, connects nothing", async () => {
    const jar = new Jar();
    const html = await (await openSignedIn(jar, "docs")).text();
    const toAs = await jar.post(`${url}/accounts/connect`, {
      link: hidden(html, "link"),
      csrf: hidden(html, "csrf"),
    });
    const callback = location(await jar.get(location(toAs)));
    const stranger = await new Jar().get(callback);
    assert.equal(stranger.status, 400);
    assert.match(await stranger.text(), /no longer valid/);
    // The state was taken by the stranger's attempt: the real browser cannot use it either.
    assert.equal((await jar.get(callback)).status, 400);
  });

  it("the server saying no, and the token endpoint refusing, are pages that say so", async () => {
    const jar = new Jar();
    const html = await (await openSignedIn(jar, "docs")).text();
    const form = { link: hidden(html, "link"), csrf: hidden(html, "csrf") };
    as.deny = true;
    const denied = await jar.get(
      location(await jar.get(location(await jar.post(`${url}/accounts/connect`, form)))),
    );
    as.deny = false;
    assert.equal(denied.status, 400);
    assert.match(await denied.text(), /cancelled or refused at the provider/);
    as.refuseTokens = true;
    const callback = location(await jar.get(location(await jar.post(`${url}/accounts/connect`, form))));
    const refused = await jar.get(callback);
    as.refuseTokens = false;
    assert.equal(refused.status, 502);
    const text = await refused.text();
    assert.match(text, /did not work/);
    assert.doesNotMatch(text, /invalid_grant|code=/, "no protocol detail or code on the page");
    const code = callback.searchParams.get("code")!;
    const failure = logged.find((l) => l.includes("connect flow failed") && l.includes("invalid_grant"));
    assert.ok(failure, "the log says which step failed and why");
    assert.ok(!logged.join("").includes(code), "the log never holds the code");
  });

  it("discovery failure is a 502 page before anything is sent", async () => {
    const jar = new Jar();
    const page = await openSignedIn(jar, "gone");
    assert.equal(page.status, 502);
    assert.match(await page.text(), /cannot be reached right now/);
  });

  it("forms need the session's CSRF token; pages need a session", async () => {
    const jar = new Jar();
    const html = await (await openSignedIn(jar, "docs")).text();
    const forged = await jar.post(`${url}/accounts/connect`, {
      link: hidden(html, "link"),
      csrf: "x".repeat(22),
    });
    assert.equal(forged.status, 403);
    const disconnect = await jar.post(`${url}/accounts/tenant/acme/disconnect`, { provider: "docs" });
    assert.equal(disconnect.status, 403);
    assert.ok(await portico.accounts.tokenFor("acme", sub, "docs"), "still connected");
    const anonymous = await new Jar().get(`${url}/accounts/tenant/acme`);
    assert.equal(anonymous.status, 303, "the accounts page signs the browser in first");
    assert.equal(location(anonymous).pathname, "/oauth/authorize");
    // A sign-in return without the browser's sign-in cookie (login CSRF) is refused.
    const signedInElsewhere = await new Jar().get(
      `${url}/accounts/signed-in?code=acme.x&state=${"s".repeat(43)}`,
    );
    assert.equal(signedInElsewhere.status, 400);
  });

  it("the accounts pages' sign-in code is never exchanged for a token (no consent was asked)", async () => {
    const jar = new Jar();
    const toLogin = await jar.get(`${url}/accounts/tenant/acme`);
    const html = await (await jar.get(location(toLogin))).text();
    const signedIn = await jar.post(`${url}/oauth/login`, {
      ...formOf(html),
      username: "ada",
      password: "ada correct horse",
    });
    const code = location(signedIn).searchParams.get("code")!;
    const token = await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        client_id: `${url}/oauth/clients/portico-accounts.json`,
        redirect_uri: `${url}/accounts/signed-in`,
        code_verifier: "v".repeat(43),
      }),
    });
    assert.equal(token.status, 400);
    assert.equal(((await token.json()) as { error: string }).error, "unauthorized_client");
  });

  it("the accounts page lists the connection, never a token, and disconnects it", async () => {
    const jar = new Jar();
    await openSignedIn(jar, "docs");
    const token = await portico.accounts.tokenFor("acme", sub, "docs");
    const page = await jar.get(`${url}/accounts/tenant/acme`);
    const html = await page.text();
    assert.match(html, /<strong>docs<\/strong>/);
    assert.ok(!html.includes(token!));
    const done = await jar.post(`${url}/accounts/tenant/acme/disconnect`, {
      provider: "docs",
      csrf: hidden(html, "csrf"),
    });
    assert.match(await done.text(), /Disconnected docs\./);
    assert.equal(await portico.accounts.tokenFor("acme", sub, "docs"), undefined);
    const [entry] = await portico.store.streamReadBefore(portico.keys.tenantAudit("acme"), undefined, 1);
    const audited = JSON.parse(entry!.data) as Record<string, unknown>;
    assert.deepEqual(
      [audited.actor, audited.action, audited.target],
      [`user:${sub}`, "account.disconnect", `docs ${sub}`],
    );
    assert.deepEqual(audited.user, { sub, username: "ada" }, "the entry names the user by sub and username");
    assert.ok(!entry!.data.includes(token!), "the audit log holds no token");
  });
});

describe("a tenant that trusts an external authorization server", () => {
  /** oidc-provider's development login and consent forms, until the browser is back at Portico. */
  async function signInAtIdp(jar: Jar, start: URL, account: string): Promise<URL> {
    let next = start;
    for (let hop = 0; hop < 10; hop++) {
      if (next.origin === url) return next;
      const res = await jar.get(next);
      if (res.status !== 200) {
        next = location(res);
        continue;
      }
      const html = await res.text();
      const action = /action="([^"]+)"/.exec(html)![1]!;
      const prompt = /name="prompt" value="(\w+)"/.exec(html)![1]!;
      const fields: Record<string, string> =
        prompt === "login" ? { prompt, login: account, password: "any" } : { prompt };
      next = location(await jar.post(new URL(action, next), fields));
    }
    throw new Error("the issuer never sent the browser back");
  }

  it("signs the user in at that issuer and compares its sub: the link's user connects, another is refused", async () => {
    const jar = new Jar();
    const link = await portico.accounts.connectUrl("ext", "ext-ada", "docs");
    const toIdp = await jar.get(link);
    assert.equal(toIdp.status, 303);
    assert.equal(location(toIdp).origin, idpIssuer, "signed in at the tenant's own issuer");
    const back = await signInAtIdp(jar, location(toIdp), "ext-ada");
    assert.equal(back.pathname, "/accounts/signed-in/oidc");
    const toConnect = await jar.get(back);
    assert.equal(location(toConnect).pathname, "/accounts/connect");
    const page = await jar.get(location(toConnect));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Connect your docs account/);
    const other = await jar.get(await portico.accounts.connectUrl("ext", "ext-bob", "docs"));
    assert.equal(other.status, 403);
    assert.match(await other.text(), /Not your link/);
  });
});

it("nothing Portico logged holds a token, a code or a client secret", () => {
  const all = logged.join("");
  assert.ok(logged.length > 0);
  for (const token of as.issued.keys()) assert.ok(!all.includes(token), "an access token was logged");
  assert.ok(!all.includes(IDP_SECRET), "the login client's secret was logged");
});

it("counts what happened in portico_connected_account_events_total", async () => {
  const text = await (await fetch(`${url}/metrics`)).text();
  const count = (event: string) =>
    Number(
      new RegExp(`^portico_connected_account_events_total\\{event="${event}"\\} (\\d+)$`, "m").exec(
        text,
      )?.[1] ?? 0,
    );
  assert.ok(count("connected") >= 1);
  assert.ok(count("connect_failed") >= 3, "access_denied, the token endpoint, discovery");
  assert.ok(count("disconnected") >= 1);
});
