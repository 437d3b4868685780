// The console's sign-in and its session as the admin API's second scheme (docs/admin-api.md "Console
// sessions"), over HTTP with a cookie jar standing in for the browser: platform users (bootstrap
// seeded; a wrong password; the login back-off), local tenant admins by their role (refused without
// it; the role removed ends the session at the next request), an oidc tenant's named admin through
// Portico's login and its provider, an external tenant's named admin signed in at its issuer; the
// cookie's flags; GET/DELETE /session; and the hostile cases — a write
// without the CSRF header, from another origin or site, a session used after sign-out, a tenant
// admin on another tenant's path or a platform route, no CORS headers.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import { MAX_NAMED_ADMINS } from "../../src/admin/tenant-admins.js";
import { federatedSub } from "../../src/oauth/federation.js";
import { UserStore } from "../../src/oauth/users.js";
import { launchBrowser } from "../support/browser.js";
import { formOf } from "../support/oauth.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import {
  ConsoleApi,
  csrfOf,
  Jar,
  localSignIn as signInLocal,
  location,
  platformSignIn as signInPlatform,
} from "../support/console.js";
import { TEST_SECRET, staticTenant } from "../support/portico.js";
import { freePort, getTestRedis, uniquePrefix } from "../support/redis.js";

let portico: Portico;
let url: string;
let admin: AdminClient;
let idp: Server;
let idpIssuer: string;
const IDP_SECRET = "console-login-secret-0123456789abcdef";
const OIDC_SECRET = "console-oidc-secret-0123456789abcdef";
const PLATFORM = { username: "root", password: "root correct horse" };

before(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  await startIdp(url);
  const config = loadConfig({
    PORT: String(port),
    PORTICO_PUBLIC_URL: url,
    PORTICO_SECRET_KEY: TEST_SECRET,
    PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
    PORTICO_LOG_LEVEL: "silent",
    PORTICO_REDIS_URL: (await getTestRedis()).url,
    PORTICO_REDIS_KEY_PREFIX: uniquePrefix(),
    PORTICO_LOGIN_THROTTLE_FAILURES: "3",
  });
  const tenants: TenantConfig[] = [
    { ...staticTenant("acme"), auth: "oauth" },
    { ...staticTenant("other"), auth: "oauth" },
    {
      ...staticTenant("corp"),
      auth: "oauth",
      identity: {
        type: "oidc",
        issuer: idpIssuer,
        clientId: "portico-oidc",
        clientSecret: OIDC_SECRET,
        label: "Corp SSO",
      },
    },
    {
      ...staticTenant("ext"),
      auth: "oauth",
      identity: {
        type: "external",
        issuer: idpIssuer,
        jwksUrl: `${idpIssuer}/jwks`,
        login: { clientId: "portico-login", clientSecret: IDP_SECRET },
      },
    },
  ];
  portico = await buildApp(config, { tenants, platformUsers: [PLATFORM], logger: false });
  await portico.app.listen({ port, host: "127.0.0.1" });
  admin = new AdminClient(url);
  const users = new UserStore(portico.store, portico.keys);
  await users.create("acme", { username: "ada", password: "ada correct horse", roles: ["tenant-admin"] });
  await users.create("acme", { username: "bob", password: "bob correct horse", roles: ["eng"] });
});

after(async () => {
  await portico.app.close();
  await new Promise((resolve) => idp.close(resolve));
});

/** The external issuer of tenant "ext", an OpenID provider that signs anyone in (devInteractions). */
async function startIdp(porticoUrl: string): Promise<void> {
  const port = await freePort();
  idpIssuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const provider = new Provider(idpIssuer, {
    clients: [
      {
        client_id: "portico-login",
        client_secret: IDP_SECRET,
        redirect_uris: [`${porticoUrl}/admin/console/sign-in/oidc`],
        response_types: ["code"],
        grant_types: ["authorization_code"],
      },
      {
        client_id: "portico-oidc",
        client_secret: OIDC_SECRET,
        redirect_uris: [`${porticoUrl}/oauth/callback`],
        response_types: ["code"],
        grant_types: ["authorization_code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email"] },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, email: `${id}@ext.example` }) }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["console-idp-cookie-key"] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "k1", alg: "RS256", use: "sig" }] },
  });
  idp = createServer(provider.callback());
  await new Promise<void>((resolve) => idp.listen(port, "127.0.0.1", resolve));
}

/** Signs the bootstrap platform user in (or with another password). */
const platformSignIn = (jar: Jar, password = PLATFORM.password) =>
  signInPlatform(url, jar, { username: PLATFORM.username, password });
const localSignIn = (jar: Jar, tenant: string, username: string, password: string) =>
  signInLocal(url, jar, tenant, username, password);
const api = (
  jar: Jar,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
) => new ConsoleApi(url, jar).call(method, path, opts);
const write = (jar: Jar, method: string, path: string, body?: unknown) =>
  new ConsoleApi(url, jar).write(method, path, body);

describe("a platform admin", () => {
  it("signs in with the bootstrap file's password: the cookie, then /session names them", async () => {
    const jar = new Jar();
    const res = await platformSignIn(jar);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/admin/console/");
    const cookie = jar.setCookies.find((c) => c.startsWith("portico-console="))!;
    assert.match(cookie, /; Path=\/;/);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.doesNotMatch(cookie, /Secure/, "plain http: no Secure flag");
    const session = await api(jar, "GET", "/session");
    assert.equal(session.status, 200);
    assert.equal(session.body.via, "session");
    assert.equal(session.body.platform, true);
    assert.equal(session.body.tenant, null);
    assert.equal(session.body.name, "root");
    assert.match(session.body.csrf, /^[A-Za-z0-9_-]{20,}$/);
    const left = Date.parse(session.body.expiresAt) - Date.now();
    assert.ok(left > 29 * 60_000 && left <= 30 * 60_000, `idle expiry of 30 minutes, got ${left} ms`);
    // Acts as the platform key: a platform route, and the audit log names them.
    assert.equal((await api(jar, "GET", "/tenants")).status, 200);
    const created = await write(jar, "POST", "/tenants", { id: "made-by-root", auth: "none" });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const audit = await admin.get("/audit?limit=5");
    const entry = audit.body.items.find((e: { target: string }) => e.target === "made-by-root");
    assert.equal(entry.actor, "console:platform root");
  });

  it("the bootstrap file's user was created and audited as the bootstrap actor", async () => {
    const audit = await admin.get("/audit?limit=50");
    const seeded = audit.body.items.find(
      (e: { action: string; target: string }) => e.action === "platform-user.create" && e.target === "root",
    );
    assert.equal(seeded?.actor, "bootstrap");
    assert.doesNotMatch(JSON.stringify(audit.body), /root correct horse|scrypt\$/, "no password, no hash");
  });

  it("a key's GET /session says via key, without CSRF token or expiry", async () => {
    const res = await admin.get("/session");
    assert.deepEqual(res.body, { via: "key", platform: true, tenant: null, name: "platform token" });
  });

  it("a wrong password gets the login page again with one message, no cookie", async () => {
    const jar = new Jar();
    const res = await platformSignIn(jar, "not the password");
    assert.equal(res.status, 401);
    assert.match(await res.text(), /Wrong username or password, or too many attempts/);
    assert.equal(jar.cookies.get("portico-console"), undefined);
  });

  it("is throttled after repeated failures: even the right password waits", async () => {
    const jar = new Jar();
    for (let i = 0; i < 3; i++) assert.equal((await platformSignIn(jar, `wrong ${i} password`)).status, 401);
    const right = await platformSignIn(jar);
    assert.equal(right.status, 401, "in back-off: refused before the password is checked");
    assert.equal(jar.cookies.get("portico-console"), undefined);
    await portico.store.del(...(await throttleKeys()));
    assert.equal((await platformSignIn(jar)).status, 303, "once the back-off is over it works");
  });

  it("a form without its form cookie's token is refused", async () => {
    const jar = new Jar();
    await jar.get(`${url}/admin/console/sign-in`);
    const res = await jar.post(`${url}/admin/console/sign-in/platform`, {
      csrf: "forged-token-forged-token",
      ...PLATFORM,
    });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /Form expired/);
  });

  it("deleting the platform user ends their session at the next request", async () => {
    assert.equal(
      (await admin.post("/platform-users", { username: "temp", password: "temp correct horse" })).status,
      201,
    );
    const jar = new Jar();
    const html = await (await jar.get(`${url}/admin/console/sign-in`)).text();
    const res = await jar.post(`${url}/admin/console/sign-in/platform`, {
      csrf: csrfOf(html),
      username: "temp",
      password: "temp correct horse",
    });
    assert.equal(res.status, 303);
    assert.equal((await api(jar, "GET", "/tenants")).status, 200);
    assert.equal((await admin.delete("/platform-users/temp")).status, 204);
    const after = await api(jar, "GET", "/tenants");
    assert.equal(after.status, 401);
    assert.equal(after.body.code, "PORTICO_ERR_ADMIN_UNAUTHENTICATED");
  });

  it("a user deleted and made again under the same name is someone new: the old session stays ended", async () => {
    const create = (password: string) => admin.post("/platform-users", { username: "again", password });
    assert.equal((await create("first correct horse")).status, 201);
    const jar = new Jar();
    const html = await (await jar.get(`${url}/admin/console/sign-in`)).text();
    const res = await jar.post(`${url}/admin/console/sign-in/platform`, {
      csrf: csrfOf(html),
      username: "again",
      password: "first correct horse",
    });
    assert.equal(res.status, 303);
    assert.equal((await api(jar, "GET", "/tenants")).status, 200);
    // Deleted to end its sessions (docs/admin-api.md), and made again before the old one is used.
    assert.equal((await admin.delete("/platform-users/again")).status, 204);
    assert.equal((await create("second correct horse")).status, 201);
    assert.equal((await api(jar, "GET", "/tenants")).status, 401);
    assert.equal((await admin.delete("/platform-users/again")).status, 204);
  });
});

/** The login back-off's keys of the platform user (the whole throttle of the pseudo-tenant). */
async function throttleKeys(): Promise<string[]> {
  const { createHash } = await import("node:crypto");
  const account = createHash("sha256").update(PLATFORM.username).digest("base64url").slice(0, 22);
  const k = portico.keys;
  return [
    k.loginFailures("_platform", account),
    k.loginFailures("_platform", account, "ip:127.0.0.1"),
    k.loginBlock("_platform", account, "ip:127.0.0.1"),
    k.loginBlock("_platform", account),
  ];
}

describe("the cookie-authenticated write", () => {
  let jar: Jar;
  let csrf: string;
  before(async () => {
    jar = new Jar();
    assert.equal((await platformSignIn(jar)).status, 303);
    csrf = (await api(jar, "GET", "/session")).body.csrf;
  });
  const body = { id: "never-made", auth: "none" };

  it("without the CSRF header: 403, nothing done", async () => {
    const res = await api(jar, "POST", "/tenants", { body, headers: { origin: url } });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, "PORTICO_ERR_ADMIN_CSRF");
    assert.equal((await admin.get("/tenants/never-made")).status, 404);
  });

  it("with a wrong CSRF header: 403", async () => {
    const res = await api(jar, "POST", "/tenants", {
      body,
      headers: { origin: url, "x-portico-csrf": "x".repeat(32) },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, "PORTICO_ERR_ADMIN_CSRF");
  });

  it("from another origin (a cross-site POST): 403 even with the token", async () => {
    const res = await api(jar, "POST", "/tenants", {
      body,
      headers: { origin: "https://evil.example", "x-portico-csrf": csrf },
    });
    assert.equal(res.status, 403);
    assert.match(res.body.detail, /Portico's own origin/);
  });

  it("from an opaque origin (Origin: null: a sandboxed frame, a data: page): 403 even with the token", async () => {
    const res = await api(jar, "POST", "/tenants", {
      body,
      headers: { origin: "null", "x-portico-csrf": csrf },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, "PORTICO_ERR_ADMIN_CSRF");
  });

  it("without an Origin: 403", async () => {
    const res = await api(jar, "DELETE", "/tenants/acme", { headers: { "x-portico-csrf": csrf } });
    assert.equal(res.status, 403);
    assert.equal((await admin.get("/tenants/acme")).status, 200);
  });

  it("Sec-Fetch-Site: cross-site is refused whatever it carries", async () => {
    const res = await api(jar, "POST", "/tenants", {
      body,
      headers: { origin: url, "x-portico-csrf": csrf, "sec-fetch-site": "cross-site" },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, "PORTICO_ERR_ADMIN_CSRF");
  });

  it("a form post of another site (text/plain, no token) is refused", async () => {
    const res = await fetch(`${url}/admin/v1/tenants`, {
      method: "POST",
      headers: { cookie: jar.header, origin: "https://evil.example", "content-type": "text/plain" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 403);
  });

  it("reads need no CSRF header; no Access-Control-Allow-* header anywhere, even to a preflight", async () => {
    const read = await fetch(`${url}/admin/v1/tenants`, {
      headers: { cookie: jar.header, origin: "https://evil.example" },
    });
    assert.equal(read.status, 200);
    const preflight = await fetch(`${url}/admin/v1/tenants`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    for (const res of [read, preflight])
      for (const name of res.headers.keys()) assert.doesNotMatch(name, /^access-control-/, name);
  });

  it("with the header and the origin it works", async () => {
    const res = await api(jar, "POST", "/tenants", {
      body: { id: "made-with-token", auth: "none" },
      headers: { origin: url, "x-portico-csrf": csrf },
    });
    assert.equal(res.status, 201);
  });
});

describe("signing out", () => {
  it("DELETE /session ends the session on the server and clears the cookie; the old cookie is 401", async () => {
    const jar = new Jar();
    assert.equal((await platformSignIn(jar)).status, 303);
    const stolen = jar.header;
    const out = await write(jar, "DELETE", "/session");
    assert.equal(out.status, 204);
    assert.match(out.headers.get("set-cookie") ?? "", /^portico-console=; .*Max-Age=0/);
    const replay = await admin.get("/session", { token: null, headers: { cookie: stolen } });
    assert.equal(replay.status, 401);
    assert.match(replay.body.detail, /sign in again/);
  });

  it("the sign-in page sends a signed-in browser to the console, and shows the form once the session ended", async () => {
    const jar = new Jar();
    assert.equal((await platformSignIn(jar)).status, 303);
    const stolen = jar.header;
    const signedIn = await jar.get(`${url}/admin/console/sign-in`);
    assert.equal(signedIn.status, 303);
    assert.equal(location(signedIn).pathname, "/admin/console/");
    assert.equal((await write(jar, "DELETE", "/session")).status, 204);
    // The ended session's cookie, replayed: the form (no loop between the console and this page).
    const after = await fetch(`${url}/admin/console/sign-in?signed-out`, { headers: { cookie: stolen } });
    assert.equal(after.status, 200);
    const html = await after.text();
    assert.match(html, /<p role="status">You have signed out\.<\/p>/);
    assert.match(html, /name="username"/);
  });

  it("needs the CSRF header too (a cross-site page cannot sign you out)", async () => {
    const jar = new Jar();
    assert.equal((await platformSignIn(jar)).status, 303);
    assert.equal((await api(jar, "DELETE", "/session", { headers: { origin: url } })).status, 403);
    assert.equal((await api(jar, "GET", "/session")).status, 200);
  });
});

describe("a local tenant admin", () => {
  it("signs in through the tenant's login page and sees only their tenant", async () => {
    const jar = new Jar();
    const back = await localSignIn(jar, "acme", "ada", "ada correct horse");
    assert.equal(back.status, 303, await back.text());
    assert.equal(back.headers.get("location"), "/admin/console/");
    const session = await api(jar, "GET", "/session");
    assert.deepEqual(
      { ...session.body, csrf: undefined, expiresAt: undefined },
      { via: "session", platform: false, tenant: "acme", name: "ada", csrf: undefined, expiresAt: undefined },
    );
    assert.equal((await api(jar, "GET", "/tenants/acme/providers")).status, 200);
    // Another tenant's path: the 404 of a tenant that does not exist.
    const foreign = await api(jar, "GET", "/tenants/other/providers");
    const ghost = await api(jar, "GET", "/tenants/no-such-tenant/providers");
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body.code, ghost.body.code);
    // A platform route: 403.
    const platform = await api(jar, "GET", "/tenants");
    assert.equal(platform.status, 403);
    assert.equal(platform.body.code, "PORTICO_ERR_ADMIN_FORBIDDEN");
    // Writes are audited under their name.
    const created = await write(jar, "POST", "/tenants/acme/api-keys", { name: "ada's key" });
    assert.equal(created.status, 201);
    const audit = await admin.get("/tenants/acme/audit?limit=1");
    assert.equal(audit.body.items[0].actor, "console:user ada (tenant acme)");
  });

  it("a user without the role signs in at the tenant but gets no session", async () => {
    const jar = new Jar();
    const back = await localSignIn(jar, "acme", "bob", "bob correct horse");
    assert.equal(back.status, 403);
    assert.match(await back.text(), /bob, who is not an admin of tenant &#34;acme&#34;/);
    assert.equal(jar.cookies.get("portico-console"), undefined);
  });

  it("the role removed: the next request is 401; given back, a new sign-in works", async () => {
    const users = new UserStore(portico.store, portico.keys);
    await users.create("acme", { username: "cy", password: "cy correct horse", roles: ["tenant-admin"] });
    const jar = new Jar();
    assert.equal((await localSignIn(jar, "acme", "cy", "cy correct horse")).status, 303);
    assert.equal((await api(jar, "GET", "/tenants/acme/providers")).status, 200);
    assert.equal((await admin.patch("/tenants/acme/users/cy", { roles: [] })).status, 200);
    const refused = await api(jar, "GET", "/tenants/acme/providers");
    assert.equal(refused.status, 401);
    assert.equal((await admin.patch("/tenants/acme/users/cy", { roles: ["tenant-admin"] })).status, 200);
    assert.equal((await api(jar, "GET", "/tenants/acme/providers")).status, 401, "that session stays ended");
  });

  it("an unknown tenant or one without sign-in is named on the page, nothing started", async () => {
    const jar = new Jar();
    const html = await (await jar.get(`${url}/admin/console/sign-in`)).text();
    const res = await jar.post(`${url}/admin/console/sign-in/tenant`, { csrf: csrfOf(html), tenant: "nope" });
    assert.equal(res.status, 404);
    assert.match(await res.text(), /No tenant &#34;nope&#34; whose admins sign in here/);
  });
});

/** Walks the issuer's devInteractions pages as `account` from `next` until the browser is back at Portico. */
async function atIssuer(jar: Jar, next: URL, account: string): Promise<URL> {
  for (let hop = 0; hop < 10; hop++) {
    if (next.origin === url) return next;
    const res = await jar.get(next);
    if (res.status === 200) {
      const page = await res.text();
      const action = /action="([^"]+)"/.exec(page)![1]!;
      const prompt = /name="prompt" value="(\w+)"/.exec(page)![1]!;
      const fields: Record<string, string> =
        prompt === "login" ? { prompt, login: account, password: "any" } : { prompt };
      next = location(await jar.post(new URL(action, next), fields));
    } else next = location(res);
  }
  throw new Error("the issuer never sent the browser back");
}

describe("an oidc tenant's admin", () => {
  /** Portico's login page, its "Sign in with Corp SSO" button, the issuer: the console's answer. */
  async function oidcSignIn(jar: Jar, account: string): Promise<Response> {
    const html = await (await jar.get(`${url}/admin/console/sign-in`)).text();
    const toLogin = await jar.post(`${url}/admin/console/sign-in/tenant`, {
      csrf: csrfOf(html),
      tenant: "corp",
    });
    const loginHtml = await (await jar.get(location(toLogin))).text();
    assert.match(loginHtml, /Sign in with Corp SSO/);
    const toIssuer = await jar.post(`${url}/oauth/login`, { ...formOf(loginHtml), federated: "1" });
    assert.equal(location(toIssuer).origin, idpIssuer);
    // The issuer sends the browser to Portico's callback, which sends it on to the console's return.
    const callback = await jar.get(await atIssuer(jar, location(toIssuer), account));
    assert.equal(callback.status, 303, await callback.text());
    assert.equal(location(callback).pathname, "/admin/console/sign-in/done");
    return jar.get(location(callback));
  }

  it("is admitted once their Portico subject is named, whatever roles the provider gives", async () => {
    const refused = await oidcSignIn(new Jar(), "olga");
    assert.equal(refused.status, 403);
    const sub = federatedSub(idpIssuer, "olga");
    assert.equal((await admin.put(`/tenants/corp/admins/${sub}`, undefined)).status, 204);
    const jar = new Jar();
    assert.equal((await oidcSignIn(jar, "olga")).status, 303);
    const session = await api(jar, "GET", "/session");
    assert.equal(session.body.tenant, "corp");
    assert.equal(
      session.body.name,
      sub,
      "a federated user's grant names no username: the console shows the sub",
    );
    assert.equal((await api(jar, "GET", "/tenants/corp/providers")).status, 200);
    assert.equal((await api(jar, "GET", "/tenants/acme/providers")).status, 404);
  });
});

describe("an external tenant's admin", () => {
  /** Signs in at the tenant's issuer as `account`: the console's answer at its return. */
  async function externalSignIn(jar: Jar, account: string): Promise<Response> {
    const html = await (await jar.get(`${url}/admin/console/sign-in`)).text();
    // First a page naming the issuer, whose form may lead there (its CSP form-action says so).
    const named = await jar.post(`${url}/admin/console/sign-in/tenant`, {
      csrf: csrfOf(html),
      tenant: "ext",
    });
    assert.equal(named.status, 200);
    const host = new URL(idpIssuer).host;
    assert.match(
      named.headers.get("content-security-policy")!,
      new RegExp(`form-action 'self' ${idpIssuer}[;]`),
    );
    const onward = await named.text();
    assert.match(onward, new RegExp(`Continue to ${host}`));
    const fields = Object.fromEntries(
      [...onward.matchAll(/type="hidden" name="(\w+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    assert.deepEqual(Object.keys(fields), ["csrf", "tenant", "issuer"]);
    let next = location(await jar.post(`${url}/admin/console/sign-in/tenant`, fields));
    assert.equal(next.origin, idpIssuer);
    for (let hop = 0; hop < 10; hop++) {
      if (next.origin === url) return jar.get(next);
      const res = await jar.get(next);
      if (res.status === 200) {
        const page = await res.text();
        const action = /action="([^"]+)"/.exec(page)![1]!;
        const prompt = /name="prompt" value="(\w+)"/.exec(page)![1]!;
        const fields: Record<string, string> =
          prompt === "login" ? { prompt, login: account, password: "any" } : { prompt };
        next = location(await jar.post(new URL(action, next), fields));
      } else next = location(res);
    }
    throw new Error("the issuer never sent the browser back");
  }

  it("is admitted only once named through the admin API (a role at the issuer is not enough)", async () => {
    const refused = await externalSignIn(new Jar(), "erin");
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /not an admin of tenant &#34;ext&#34;/);

    assert.equal((await admin.put("/tenants/ext/admins/erin", undefined)).status, 204);
    assert.deepEqual((await admin.get("/tenants/ext/admins")).body, { items: ["erin"] });
    const jar = new Jar();
    const back = await externalSignIn(jar, "erin");
    assert.equal(back.status, 303);
    const session = await api(jar, "GET", "/session");
    assert.equal(session.body.tenant, "ext");
    assert.equal((await api(jar, "GET", "/tenants/ext/providers")).status, 200);

    assert.equal((await admin.delete("/tenants/ext/admins/erin")).status, 204);
    assert.equal((await api(jar, "GET", "/tenants/ext/providers")).status, 401, "removed: the next request");
  });

  it("names at most MAX_NAMED_ADMINS subjects: one more is a 409, naming one already named is still a 204", async () => {
    const key = portico.keys.tenantAdmins("ext");
    for (let i = 0; i < MAX_NAMED_ADMINS; i++) await portico.store.setAdd(key, `filler-${i}`);
    try {
      const over = await admin.put("/tenants/ext/admins/one-too-many", undefined);
      assert.equal(over.status, 409);
      assert.match(JSON.stringify(over.body), /already names 1000 admins/);
      assert.equal((await admin.put("/tenants/ext/admins/filler-7", undefined)).status, 204);
      assert.equal((await admin.get("/tenants/ext/admins")).body.items.length, MAX_NAMED_ADMINS);
    } finally {
      await portico.store.del(key);
    }
  });
});

describe("in Chromium", () => {
  it("an external tenant's admin gets from the sign-in page to the issuer (CSP form-action lets each redirect through)", async () => {
    const browser = await launchBrowser();
    const lines: string[] = [];
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      page.on("console", (message) => lines.push(message.text()));
      await page.goto(`${url}/admin/console/sign-in`);
      await page.locator("#tenant").fill("ext");
      await page.getByRole("button", { name: "Continue", exact: true }).click();
      await page.getByRole("button", { name: `Continue to ${new URL(idpIssuer).host}` }).click();
      await page.waitForURL((at) => at.origin === idpIssuer, { waitUntil: "commit" });
      assert.deepEqual(
        lines.filter((line) => /Content Security Policy/.test(line)),
        [],
      );
    } catch (err) {
      throw new Error(`${String(err).split("\n")[0]}; browser console: ${lines.join(" | ")}`, { cause: err });
    } finally {
      await browser.close();
    }
  });
});

describe("on an https public URL", () => {
  it("the cookie is __Host-, Secure, HttpOnly, SameSite=Strict, Path=/", async () => {
    const config = loadConfig({
      PORT: "0",
      PORTICO_PUBLIC_URL: "https://portico.example",
      PORTICO_SECRET_KEY: TEST_SECRET,
      PORTICO_LOG_LEVEL: "silent",
    });
    const app = await buildApp(config, { tenants: [], platformUsers: [PLATFORM], logger: false });
    try {
      const page = await app.app.inject({ method: "GET", url: "/admin/console/sign-in" });
      const form = String(page.headers["set-cookie"]);
      assert.match(
        form,
        /^__Host-portico-console-form=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/,
      );
      const signedIn = await app.app.inject({
        method: "POST",
        url: "/admin/console/sign-in/platform",
        headers: { cookie: form.split(";")[0]!, "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams({ csrf: csrfOf(page.body), ...PLATFORM }).toString(),
      });
      assert.equal(signedIn.statusCode, 303);
      const cookie = String(signedIn.headers["set-cookie"]);
      assert.match(
        cookie,
        /^__Host-portico-console=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=28800; Secure$/,
      );
      const who = await app.app.inject({
        method: "GET",
        url: "/admin/v1/session",
        headers: { cookie: cookie.split(";")[0]! },
      });
      assert.equal(who.json().name, "root");
      // The same cookie under the http name is no session.
      const renamed = cookie.split(";")[0]!.replace("__Host-", "");
      const other = await app.app.inject({
        method: "GET",
        url: "/admin/v1/session",
        headers: { cookie: renamed },
      });
      assert.equal(other.statusCode, 401);
    } finally {
      await app.app.close();
    }
  });
});
