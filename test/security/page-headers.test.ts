// Pages carry their headers (docs/security.md): every HTML page — login, consent, the error
// pages of each OAuth step, the admin docs page, and any HTML route added later — is served with
// nosniff, no-referrer, no-store, DENY framing and a strict CSP whose only allowances are the
// page's own <style> by hash and its form targets: no scripts, no 'unsafe-inline', no <base>. The
// admin console's page is the one with scripts: its own files only, nothing inline.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { RouteOptions } from "fastify";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import { CONSOLE_CSP } from "../../src/console/assets.js";
import { UserStore } from "../../src/oauth/users.js";
import { ADMIN_TOKEN } from "../support/admin.js";
import { launchBrowser } from "../support/browser.js";
import { formOf, TestOAuthClient } from "../support/oauth.js";
import { staticTenant, TEST_SECRET } from "../support/portico.js";
import { freePort } from "../support/redis.js";

let portico: Portico;
let issuer: string;
let client: TestOAuthClient;
const routes: RouteOptions[] = [];

before(async () => {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    PORT: String(port),
    PORTICO_PUBLIC_URL: issuer,
    PORTICO_LOG_LEVEL: "silent",
    PORTICO_SECRET_KEY: TEST_SECRET,
    PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
  });
  portico = await buildApp(config, {
    tenants: [
      { ...staticTenant("acme"), auth: "oauth" },
      { ...staticTenant("beta"), auth: "oauth" },
    ],
    logger: false,
    onRoute: (route) => void routes.push(route),
  });
  // A page added later, by any plugin, without a thought for its headers.
  await portico.app.register(async (child) => {
    child.get("/later/page", async (_req, reply) =>
      reply.type("text/html").send("<!doctype html><p>new</p>"),
    );
    child.get("/later/framed", async (_req, reply) =>
      reply
        .type("text/html; charset=utf-8")
        .header("content-security-policy", "default-src 'none'")
        .send("<p>x</p>"),
    );
  });
  await portico.app.listen({ port, host: "127.0.0.1" });
  assert.equal((portico.app.server.address() as AddressInfo).port, port);
  await new UserStore(portico.store, portico.keys).create("acme", {
    username: "ada",
    password: "correct horse battery",
  });
  client = await TestOAuthClient.register(issuer);
});
after(() => portico?.app.close());

/** The directives of a CSP, by name. */
function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!.toLowerCase(), values]),
  );
}

/** Asserts what a browser needs to render the page safely; returns the body. */
async function assertPage(res: Response, status: number, where: string): Promise<string> {
  const html = await res.text();
  assert.equal(res.status, status, `${where}: ${html.slice(0, 200)}`);
  const h = (name: string) => res.headers.get(name);
  assert.match(h("content-type") ?? "", /^text\/html/, where);
  assert.equal(h("x-content-type-options"), "nosniff", where);
  assert.equal(h("x-frame-options"), "DENY", where);
  assert.equal(h("referrer-policy"), "no-referrer", where);
  assert.equal(h("cache-control"), "no-store", where);
  const csp = h("content-security-policy") ?? "";
  const d = directives(csp);
  assert.deepEqual(d.get("default-src"), ["'none'"], `${where}: ${csp}`);
  assert.deepEqual(d.get("frame-ancestors"), ["'none'"], `${where}: ${csp}`);
  assert.deepEqual(d.get("base-uri"), ["'none'"], `${where}: ${csp}`);
  assert.ok(!d.has("script-src") && !/unsafe-|\*|data:|blob:/.test(csp), `${where}: ${csp}`);
  // Every inline style the page has is allowed by its hash; nothing else is inline.
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  const hashes = styles.map((s) => `'sha256-${createHash("sha256").update(s).digest("base64")}'`);
  assert.deepEqual(d.get("style-src") ?? [], hashes, `${where}: style hashes`);
  assert.doesNotMatch(html, /<script|\sstyle=|\son[a-z]+=/i, where);
  return html;
}

/** The console's single-page app (docs/console.md), not its sign-in pages, which are pages like the others. */
const isConsoleApp = (url: string) =>
  url.startsWith("/admin/console") && !url.startsWith("/admin/console/sign-in");

/**
 * The console's page is the one page with scripts: its own files only, under a CSP that allows
 * scripts and styles of its origin and nothing inline (docs/security.md, "Page headers").
 */
async function assertConsolePage(res: Response, where: string): Promise<void> {
  const html = await res.text();
  const h = (name: string) => res.headers.get(name);
  assert.equal(h("content-security-policy"), CONSOLE_CSP, where);
  assert.equal(h("x-content-type-options"), "nosniff", where);
  assert.equal(h("x-frame-options"), "DENY", where);
  assert.equal(h("referrer-policy"), "no-referrer", where);
  assert.equal(h("cache-control"), "no-cache", where);
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, where);
  for (const [tag] of html.matchAll(/<script[^>]*>/gi))
    assert.match(tag, /\ssrc="\/admin\/console\/assets\/[^"]+"/, `${where}: ${tag}`);
}

const authorizeUrl = async (tenant = "acme") => (await client.authorizationUrl(tenant)).url;

describe("OAuth pages and their error variants", () => {
  let cookie = "";
  let loginForm: Record<string, string> = {};
  const post = (path: string, fields: Record<string, string>, withCookie = true) =>
    fetch(`${issuer}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(withCookie ? { cookie } : {}) },
      body: new URLSearchParams(fields),
    });

  it("the login page, with a form-action that allows Portico and the client's redirect", async () => {
    const res = await fetch(await authorizeUrl(), { redirect: "manual" });
    cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const csp = res.headers.get("content-security-policy")!;
    const html = await assertPage(res, 200, "login");
    assert.deepEqual(directives(csp).get("form-action"), ["'self'", "http://127.0.0.1:9999"]);
    loginForm = formOf(html);
    assert.ok(loginForm.csrf, "the page carries a CSRF token: hence no-store");
  });
  it("the login page again after a wrong password (401)", async () => {
    await assertPage(
      await post("/oauth/login", { ...loginForm, username: "ada", password: "nope" }),
      401,
      "wrong password",
    );
  });
  it("the consent page", async () => {
    const res = await post("/oauth/login", {
      ...loginForm,
      username: "ada",
      password: "correct horse battery",
    });
    const html = await assertPage(res, 200, "consent");
    assert.match(html, /Allow access\?/);
  });
  it("the tenant chooser (no resource named)", async () => {
    const url = await authorizeUrl();
    url.searchParams.delete("resource");
    await assertPage(await fetch(url, { redirect: "manual" }), 200, "tenant chooser");
  });
  it("error pages: unknown client, unregistered redirect URI, hostile values in the request", async () => {
    const unknown = await authorizeUrl();
    unknown.searchParams.set("client_id", "no-such-client");
    await assertPage(await fetch(unknown, { redirect: "manual" }), 400, "unknown client");
    const redirect = await authorizeUrl();
    redirect.searchParams.set("redirect_uri", "https://evil.example/cb");
    await assertPage(await fetch(redirect, { redirect: "manual" }), 400, "unregistered redirect_uri");
    const hostile = await authorizeUrl();
    hostile.searchParams.set("client_id", `"><script>alert(1)</script><style>*{}</style>`);
    const html = await assertPage(await fetch(hostile, { redirect: "manual" }), 400, "hostile client_id");
    assert.doesNotMatch(html, /<script>alert/);
  });
  it("error pages: expired or forged forms, a callback nobody started", async () => {
    await assertPage(
      await post("/oauth/login", { flow: "forged", csrf: "forged", username: "a", password: "b" }),
      400,
      "forged login",
    );
    await assertPage(
      await post("/oauth/consent", { flow: "forged", csrf: "forged", decision: "allow" }),
      400,
      "forged consent",
    );
    await assertPage(await post("/oauth/login", loginForm, false), 400, "login without the flow cookie");
    await assertPage(await fetch(`${issuer}/oauth/callback?code=x&state=y`), 400, "callback without a flow");
  });
});

describe("the admin docs page", () => {
  it("is served with its stylesheet's hash and nothing else", async () => {
    const html = await assertPage(await fetch(`${issuer}/admin/docs`), 200, "/admin/docs");
    assert.match(html, /<style>/);
  });
});

describe("every page, present and future", () => {
  it("a page any plugin adds later gets the headers; a route's own CSP keeps its rules and gains frame-ancestors", async () => {
    await assertPage(await fetch(`${issuer}/later/page`), 200, "/later/page");
    const framed = await fetch(`${issuer}/later/framed`);
    await assertPage(framed, 200, "/later/framed");
  });
  it("the /mcp routes get no hook: the MCP hot path runs nothing extra", () => {
    const mcp = routes.filter((r) => r.url === "/mcp" || r.url.startsWith("/mcp/"));
    assert.ok(mcp.length > 0);
    for (const route of mcp) assert.deepEqual([route.onSend ?? []].flat(), [], route.url);
    const docs = routes.find((r) => r.url === "/admin/docs");
    assert.equal([docs?.onSend ?? []].flat().length, 1);
  });
  it("every GET route that answers HTML carries them", async () => {
    const gets = routes.filter((r) => [r.method].flat().includes("GET") && !r.url.startsWith("/mcp"));
    let pages = 0;
    for (const route of gets) {
      const path = route.url.replace(/:[A-Za-z]+/g, "acme").replace(/\*$/, "x");
      const res = await fetch(`${issuer}${path}`, { redirect: "manual" });
      if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) {
        await res.arrayBuffer();
        continue;
      }
      pages++;
      if (isConsoleApp(route.url)) await assertConsolePage(res, `GET ${route.url}`);
      else await assertPage(res, res.status, `GET ${route.url}`);
    }
    assert.ok(pages >= 2, `HTML routes found: ${pages}`);
  });
});

describe("in a real browser", () => {
  it("each page's own stylesheet applies under its CSP, and Chromium reports no violation", async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const refused: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
      });
      for (const url of [String(await authorizeUrl()), `${issuer}/admin/docs`]) {
        await page.goto(url);
        // Both stylesheets bound the body's width: "none" would mean the style was refused.
        assert.notEqual(await page.evaluate("getComputedStyle(document.body).maxWidth"), "none", url);
      }
      assert.deepEqual(refused, []);
    } finally {
      await browser.close();
    }
  });
});
