// The admin console in headless Chromium (docs/console.md), against a real Portico and a real
// upstream (server-everything), every flow behind a real sign-in: a new platform admin (a seeded
// platform user) signs in with their password, creates a tenant and users, adds server-everything,
// sees its tools, calls one, finds the call in the audit log and the traffic view, creates and
// revokes a key and signs out, after which their old cookie is refused; a tenant admin signs in
// through their tenant's login page and does the same on their own tenant, and is refused every
// other; a user without the role is refused a session. Hostile cases with the browser's own cookie:
// a cross-site form POST, a same-site one from another origin, a write without the CSRF header.
// Every view and sign-in page is checked with axe-core (no serious or critical violation), must
// raise no CSP violation and no script error, and is photographed at desktop and phone widths into
// test-artifacts/console/.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { launchBrowser } from "../support/browser.js";
import { buildConsole } from "../support/console-build.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));
const WIDTHS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 375, height: 812 },
] as const;

/** The platform user the operator seeded (BuildOptions.platformUsers, as the bootstrap file's). */
const ROOT = { username: "root", password: "root correct horse battery" };
const ADA = { username: "ada", password: "ada correct horse battery" };
const BOB = { username: "bob", password: "bob correct horse battery" };
/** The session cookie's name on an http public URL (`__Host-portico-console` on https). */
const COOKIE = "portico-console";

let browser: Browser;
let everything: EverythingServer;
let portico: RunningPortico;
let admin: AdminClient;

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  everything = await startEverything();
  // Its public URL is where it listens: the console's writes carry that Origin.
  const port = await freePort();
  portico = await startPortico({
    tenants: [],
    redis: true,
    env: {
      PORT: String(port),
      PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
      PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
    },
    platformUsers: [ROOT],
    // The replica's traffic ring samples every 10 s by default: the call shows within the test.
    trafficSampleMs: 250,
  });
  admin = new AdminClient(portico.url);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await portico?.close();
  await everything?.stop();
});

interface Watched {
  readonly context: BrowserContext;
  readonly page: Page;
  /** CSP violations and script errors seen so far (console errors other than failed loads, page errors). */
  readonly problems: string[];
  /** Every admin API request the page made: method, path and its CSRF header. */
  readonly requests: { method: string; path: string; csrf: string | undefined }[];
}

/** A fresh browser context (no cookie, no key), watched for CSP violations and script errors. */
async function openBrowser(): Promise<Watched> {
  const context = await browser.newContext({ viewport: WIDTHS[0] });
  // Before any of the page's scripts: CSP violations are collected, and axe-core is there to run.
  await context.addInitScript(`
    window.cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      window.cspViolations.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline")));
  `);
  await context.addInitScript({ path: AXE });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  const requests: Watched["requests"] = [];
  // Chromium logs every 4xx answer as "Failed to load resource": the app shows those in words itself.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(m.text());
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith("/admin/v1/"))
      requests.push({ method: r.method(), path: url.pathname, csrf: r.headers()["x-portico-csrf"] });
  });
  return { context, page, problems, requests };
}

/** The page has settled: its heading shown, nothing loading. */
async function settled(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
  // A function, not a string: the page's CSP forbids evaluating strings (no 'unsafe-eval').
  type Body = { document: { body: { innerText: string } } };
  await page.waitForFunction(
    () => !(globalThis as unknown as Body).document.body.innerText.includes("Loading…"),
  );
}

/**
 * Checks the page as it is now: no serious or critical axe-core violation, no CSP violation or
 * script error; then photographs it at each width (the nav folds behind "Menu" on a phone).
 */
async function checkView(w: Watched, name: string): Promise<void> {
  const { page } = w;
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    const results = await page.evaluate<{ id: string; impact: string; targets: string[] }[]>(`
      axe.run(document, { resultTypes: ["violations"] }).then((r) =>
        r.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          targets: v.nodes.map((n) => n.target.join(" ")).slice(0, 3),
        })))
    `);
    const bad = results.filter((v) => v.impact === "serious" || v.impact === "critical");
    assert.deepEqual(bad, [], `${name} at ${size.width}px: accessibility violations`);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${size.name}.png`), fullPage: true });
  }
  await page.setViewportSize(WIDTHS[0]);
  const csp = await page.evaluate<string[]>("window.cspViolations");
  assert.deepEqual(csp, [], `${name}: CSP violations`);
  // Reported once, by the view that had them.
  assert.deepEqual(w.problems.splice(0), [], `${name}: console errors`);
}

const url = (path: string) => `${portico.url}/admin/console${path}`;
const row = (page: Page, text: string | RegExp) => page.getByRole("row").filter({ hasText: text });
const pathOf = (page: Page) => new URL(page.url()).pathname;

/** What a request made by the page itself (its origin, its cookie) answers: the app's fetch, minus the app. */
interface Fetched {
  status: number;
  type: string | null;
  body: { code?: string; detail?: string } & Record<string, unknown>;
}
function fetchInPage(page: Page, path: string, init: Record<string, unknown> = {}): Promise<Fetched> {
  return page.evaluate<Fetched>(`
    fetch(${JSON.stringify(path)}, ${JSON.stringify({ credentials: "same-origin", ...init })}).then(async (r) => ({
      status: r.status,
      type: r.headers.get("content-type"),
      body: await r.json().catch(() => ({})),
    }))
  `);
}

/** The console session cookie the context holds now. */
async function sessionCookie(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies(portico.url)).find((c) => c.name === COOKIE);
  assert.ok(cookie, "the context holds the console session cookie");
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, "Strict");
  return cookie.value;
}

/** GET /admin/v1/session with a cookie value, outside any browser. */
const sessionWith = (cookie: string) =>
  fetch(`${portico.url}/admin/v1/session`, { headers: { cookie: `${COOKIE}=${cookie}` } });

/** Signs in on /admin/console/sign-in through a tenant: the tenant's login page, shown and checked. */
async function tenantSignIn(w: Watched, tenant: string, user: typeof ADA, shot?: string): Promise<void> {
  await w.page.goto(url("/sign-in"));
  await settled(w.page, "Sign in to the console");
  await w.page.getByLabel("Tenant", { exact: true }).fill(tenant);
  await w.page.getByRole("button", { name: "Continue" }).click();
  // Portico's own login page for the tenant, as its users see it.
  await w.page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
  assert.equal(pathOf(w.page), "/oauth/authorize");
  await w.page.getByText(`Tenant ${tenant}`).waitFor();
  if (shot) await checkView(w, shot);
  await w.page.getByLabel("Username").fill(user.username);
  await w.page.getByLabel("Password").fill(user.password);
  await w.page.getByRole("button", { name: "Sign in" }).click();
}

/** Every write the page made carried the session's CSRF token; no read did. */
async function assertCsrfOnWritesOnly(w: Watched): Promise<void> {
  const { csrf } = (await fetchInPage(w.page, "/admin/v1/session")).body as { csrf: string };
  assert.ok(csrf);
  const writes = w.requests.filter((r) => r.method !== "GET" && r.method !== "HEAD");
  const reads = w.requests.filter((r) => r.method === "GET");
  assert.ok(writes.length > 0 && reads.length > 0);
  assert.ok(
    writes.every((r) => r.csrf === csrf),
    JSON.stringify(writes),
  );
  assert.ok(
    reads.every((r) => r.csrf === undefined),
    JSON.stringify(reads),
  );
}

/** Calls server-everything's echo from the try-it panel and sees its result. */
async function callEcho(w: Watched, tenant: string, message: string, shot?: string): Promise<void> {
  await w.page.goto(url(`/t/${tenant}/try`));
  await settled(w.page, `Try it of ${tenant}`);
  await w.page.getByRole("button", { name: "List tools" }).click();
  await w.page
    .getByRole("status")
    .filter({ hasText: /\d+ tools listed/ })
    .waitFor();
  await w.page.getByRole("button", { name: "Call echo" }).click();
  await w.page.getByLabel(/^message/).fill(message);
  await w.page.getByRole("button", { name: "Call tool" }).click();
  await w.page.getByRole("status").filter({ hasText: "echo called" }).waitFor();
  await w.page.getByRole("region", { name: "Result of echo" }).getByText(`Echo: ${message}`).waitFor();
  if (shot) await checkView(w, shot);
}

/** Finds the try-it call in the tenant's audit log, filtered by its action and by who made it. */
async function findTryInAudit(w: Watched, tenant: string, actor: string, shot?: string): Promise<void> {
  await w.page.goto(url(`/t/${tenant}/audit`));
  await settled(w.page, `Audit log of ${tenant}`);
  await w.page.getByLabel("Action").fill("console.try");
  await w.page.getByLabel("Actor, target, user or client contains").fill(actor);
  const entry = row(w.page, "tools/call echo").filter({ hasText: actor });
  await entry.first().waitFor();
  assert.match(await entry.first().innerText(), /portico-admin/, "the client policy saw");
  assert.equal(await row(w.page, "provider.create").count(), 0, "filtered out");
  if (shot) await checkView(w, shot);
}

/** The traffic view: labelled with its source, drawn as charts, the tenant's provider in it. */
async function findCallInTraffic(w: Watched, tenant: string, calledAt: number, shot?: string): Promise<void> {
  // The series holds a request at or after the call (sampled every 250 ms here).
  const deadline = Date.now() + 10_000;
  for (;;) {
    const traffic = await fetchInPage(w.page, `/admin/v1/traffic?minutes=15&tenant=${tenant}`);
    assert.equal(traffic.status, 200);
    const series = (
      traffic.body.requests as { tenant: string; provider?: string; points: number[][] }[]
    ).find((s) => s.tenant === tenant && s.provider === "everything");
    if (series?.points.some(([t, v]) => t! * 1000 >= calledAt - 1000 && v! > 0)) break;
    assert.ok(
      Date.now() < deadline,
      `no request of ${tenant}/everything since the call: ${JSON.stringify(series)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await w.page.goto(url(`/t/${tenant}/traffic`));
  await settled(w.page, `Traffic of ${tenant}`);
  await w.page.getByText("This replica's own figures").waitFor();
  await w.page.getByRole("img", { name: /Requests per second, chart of \d+ series/ }).waitFor();
  await w.page.locator(".uplot canvas").first().waitFor();
  await w.page
    .getByRole("table", { name: "Requests per second: latest values" })
    .getByRole("row")
    .filter({ hasText: `${tenant} / everything` })
    .waitFor();
  if (shot) await checkView(w, shot);
}

/** Creates a key (its secret shown once, working), then revokes it (then refused). */
async function createAndRevokeKey(w: Watched, tenant: string, name: string, shot?: string): Promise<void> {
  await w.page.goto(url(`/t/${tenant}/keys`));
  await settled(w.page, `API keys of ${tenant}`);
  await w.page.getByLabel("Key name").fill(name);
  await w.page.getByRole("button", { name: "Create key" }).click();
  await w.page
    .getByRole("status")
    .filter({ hasText: `Key ${name} created` })
    .waitFor();
  const secret = await w.page.getByLabel("Secret").inputValue();
  assert.ok(secret.length > 20);
  const works = await admin.get(`/tenants/${tenant}/providers`, { token: secret });
  assert.equal(works.status, 200);
  if (shot) await checkView(w, shot);
  await w.page.getByRole("button", { name: "I have stored it" }).click();
  assert.equal(await w.page.getByLabel("Secret").count(), 0, "shown once: gone once dismissed");
  assert.ok(!(await w.page.content()).includes(secret));
  await w.page.getByRole("button", { name: `Revoke ${name}` }).click();
  await row(w.page, name).filter({ hasText: "Revoked" }).waitFor();
  const refused = await admin.get(`/tenants/${tenant}/providers`, { token: secret });
  assert.equal(refused.status, 401);
}

/** Signs out with the button: the sign-in page says so, the old cookie is refused, the console asks to sign in. */
async function signOut(w: Watched, shot?: string): Promise<void> {
  const cookie = await sessionCookie(w.context);
  assert.equal((await sessionWith(cookie)).status, 200, "the session works before");
  await w.page.getByRole("button", { name: "Sign out" }).click();
  await w.page.waitForURL((u) => u.pathname === "/admin/console/sign-in");
  await w.page.getByRole("status").filter({ hasText: "You have signed out." }).waitFor();
  if (shot) await checkView(w, shot);
  assert.equal((await w.context.cookies(portico.url)).filter((c) => c.name === COOKIE).length, 0, "cleared");
  // The session is over on the server: its cookie, replayed, is refused, reads and writes alike.
  const replayed = await sessionWith(cookie);
  assert.equal(replayed.status, 401);
  assert.match(((await replayed.json()) as { detail: string }).detail, /session has ended|sign in/i);
  const write = await fetch(`${portico.url}/admin/v1/tenants`, {
    method: "POST",
    headers: { cookie: `${COOKIE}=${cookie}`, origin: portico.url, "content-type": "application/json" },
    body: JSON.stringify({ id: "after-sign-out", auth: "none" }),
  });
  assert.equal(write.status, 401);
  assert.equal((await admin.get("/tenants/after-sign-out")).status, 404);
  // The console, opened again, goes to the sign-in page.
  await w.page.goto(url("/"));
  await w.page.waitForURL((u) => u.pathname === "/admin/console/sign-in");
  await settled(w.page, "Sign in to the console");
}

/** A page on another origin (its own port) whose form POSTs JSON as text/plain to /admin/v1/tenants. */
async function hostileSite(): Promise<Server> {
  const server = createServer((_req, res) => {
    const body = JSON.stringify({ id: "csrf-victim", auth: "none", pad: "" });
    // The classic JSON CSRF: name and value of one field rebuild a JSON body under text/plain.
    const name = body.slice(0, -2);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(`<!doctype html>
<html lang="en"><head><title>Win a prize</title></head><body>
<form method="post" action="${portico.url}/admin/v1/tenants" enctype="text/plain">
<input type="hidden" name='${name}' value='"}'></form>
<script>document.forms[0].submit();</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

describe("a new platform admin, signed in for real", () => {
  let w: Watched;
  before(async () => {
    w = await openBrowser();
  });
  after(() => w?.context.close());

  it("opening the console without a session goes to the sign-in page (accessible, linked to the home page)", async () => {
    const res = await w.page.goto(url(""));
    assert.equal(res?.status(), 200);
    await w.page.waitForURL((u) => u.pathname === "/admin/console/sign-in");
    await settled(w.page, "Sign in to the console");
    await w.page.getByRole("heading", { name: "Platform admin" }).waitFor();
    await w.page.getByRole("heading", { name: "Tenant admin" }).waitFor();
    assert.equal(await w.page.getByRole("link", { name: "Portico", exact: true }).getAttribute("href"), "/");
    await checkView(w, "sign-in");
  });

  it("a wrong password is refused in words, and no session is made", async () => {
    await w.page.getByLabel("Username").fill(ROOT.username);
    await w.page.getByLabel("Password").fill("not the password");
    await w.page.getByRole("button", { name: "Sign in" }).click();
    await w.page
      .getByRole("alert")
      .filter({ hasText: /did not work|incorrect|wrong/i })
      .waitFor();
    assert.equal(await w.page.getByLabel("Username").inputValue(), ROOT.username, "kept for another try");
    assert.equal((await w.context.cookies(portico.url)).filter((c) => c.name === COOKIE).length, 0);
    await checkView(w, "sign-in-refused");
  });

  it("signs in with username and password and lands on the tenants view, saying who is signed in", async () => {
    await w.page.getByLabel("Username").fill(ROOT.username);
    await w.page.getByLabel("Password").fill(ROOT.password);
    await w.page.getByRole("button", { name: "Sign in" }).click();
    await settled(w.page, "Tenants");
    assert.equal(pathOf(w.page), "/admin/console/tenants");
    await w.page.getByText("Signed in as root (platform admin)").waitFor();
    const me = await fetchInPage(w.page, "/admin/v1/session");
    assert.equal(me.status, 200);
    assert.deepEqual(
      { ...me.body, csrf: typeof me.body.csrf, expiresAt: typeof me.body.expiresAt },
      {
        via: "session",
        platform: true,
        tenant: null,
        name: "root",
        csrf: "string",
        expiresAt: "string",
      },
    );
    await sessionCookie(w.context);
    await checkView(w, "platform-tenants");
  });

  it("visiting the sign-in page while signed in goes back to the console", async () => {
    await w.page.goto(url("/sign-in"));
    await settled(w.page, "Tenants");
    assert.equal(pathOf(w.page), "/admin/console/tenants");
  });

  it("creates a tenant whose local users sign in, and lands on its providers", async () => {
    await w.page.getByLabel("Tenant id").fill("acme");
    await w.page.getByLabel("Display name").fill("Acme Corp");
    assert.equal(await w.page.getByLabel("Sign-in").inputValue(), "oauth");
    await w.page.getByRole("button", { name: "Create tenant" }).click();
    await settled(w.page, "Providers of acme");
    const acme = await admin.get("/tenants/acme");
    assert.equal(acme.body.auth, "oauth");
    // A second tenant, which acme's admin must never see.
    await w.page.goto(url("/tenants"));
    await settled(w.page, "Tenants");
    await w.page.getByLabel("Tenant id").fill("globex");
    await w.page.getByRole("button", { name: "Create tenant" }).click();
    await settled(w.page, "Providers of globex");
  });

  it("refuses a tenant that exists, with the API's words", async () => {
    await w.page.goto(url("/tenants"));
    await settled(w.page, "Tenants");
    await row(w.page, "Acme Corp").waitFor();
    await w.page.getByLabel("Tenant id").fill("acme");
    await w.page.getByRole("button", { name: "Create tenant" }).click();
    const alert = w.page.getByRole("alert").filter({ hasText: /acme/ });
    await alert.waitFor();
    assert.match(await alert.innerText(), /exists|already/i);
  });

  it("creates users of the tenant with their roles, and changes a role", async () => {
    await w.page.goto(url("/t/acme/users"));
    await settled(w.page, "Users of acme");
    for (const [user, roles] of [
      [ADA, "tenant-admin"],
      [BOB, "eng"],
    ] as const) {
      await w.page.getByLabel("Username").fill(user.username);
      await w.page.getByLabel("Password").fill(user.password);
      await w.page.getByLabel("Roles (comma-separated)").fill(roles);
      await w.page.getByRole("button", { name: "Create user" }).click();
      await row(w.page, user.username).waitFor();
    }
    const roles = w.page.getByLabel("Roles of bob", { exact: true });
    assert.equal(await roles.inputValue(), "eng");
    await roles.fill("eng, auditor");
    await w.page.getByRole("button", { name: "Save the roles of bob" }).click();
    await w.page.getByRole("status").filter({ hasText: "Roles of bob saved" }).waitFor();
    assert.deepEqual((await admin.get("/tenants/acme/users/bob")).body.roles, ["eng", "auditor"]);
    assert.deepEqual((await admin.get("/tenants/acme/users/ada")).body.roles, ["tenant-admin"]);
    await checkView(w, "tenant-users");
  });

  it("adds server-everything as a provider and shows it healthy, and since when", async () => {
    await w.page.goto(url("/t/acme/providers"));
    await settled(w.page, "Providers of acme");
    await w.page.getByLabel("Provider id").fill("everything");
    await w.page.getByLabel("MCP URL").fill(everything.url);
    await w.page.getByRole("button", { name: "Add provider" }).click();
    await w.page.getByRole("status").filter({ hasText: "Provider everything added" }).waitFor();
    const healthy = row(w.page, "everything").filter({ hasText: /Healthy since (\d+ \w+, )?\d\d:\d\d/ });
    await healthy.waitFor();
    // The exact moment in the time element, as the API said it.
    const since = (await admin.get("/tenants/acme/providers/everything/health")).body.since as string;
    const time = healthy.locator("time").first();
    assert.equal(await time.getAttribute("datetime"), since);
    assert.ok(await time.getAttribute("title"));
    await checkView(w, "tenant-providers");
  });

  it("shows the provider's health since when and its tools in its catalog", async () => {
    await w.page.getByRole("link", { name: "everything", exact: true }).click();
    await w.page.getByRole("heading", { name: "Provider everything" }).waitFor();
    await w.page
      .getByText(/Healthy since/)
      .first()
      .waitFor();
    await w.page.getByRole("table", { name: "Tools" }).getByText("echo", { exact: true }).waitFor();
    await checkView(w, "tenant-provider");
  });

  let calledAt = 0;
  it("calls a tool from the try-it panel and sees the result", async () => {
    calledAt = Date.now();
    await callEcho(w, "acme", "hello from the console", "tenant-try");
  });

  it("finds the call in the audit log, filtered, as the real entry says", async () => {
    await findTryInAudit(w, "acme", "console:platform root", "tenant-audit");
    const entries = (await admin.get("/tenants/acme/audit?limit=50")).body.items as Record<string, unknown>[];
    const call = entries.find((e) => e.action === "console.try" && e.target === "tools/call echo");
    assert.ok(call, JSON.stringify(entries.map((e) => e.action)));
    assert.equal(call.actor, "console:platform root");
    assert.deepEqual(call.user, { sub: "admin:platform:root" });
    assert.equal(call.client, "portico-admin");
    assert.deepEqual(call.after, { ok: true });
  });

  it("finds the call in the traffic view, labelled with its source, as charts", async () => {
    await findCallInTraffic(w, "acme", calledAt, "tenant-traffic");
  });

  it("creates an API key, shown once, and revokes it", async () => {
    await createAndRevokeKey(w, "acme", "ci deploy", "tenant-keys-created");
    await checkView(w, "tenant-keys");
  });

  it("passes every other view: accessible, no CSP violation, photographed", async () => {
    const views: [string, string | RegExp, string][] = [
      ["/t/acme/sessions", "Sessions of acme", "tenant-sessions"],
      ["/t/acme/oauth", "OAuth clients of acme", "tenant-oauth"],
      ["/t/acme/accounts", "Connected accounts of acme", "tenant-accounts"],
      ["/t/acme/servers", "Virtual servers of acme", "tenant-servers"],
      ["/t/acme/policy", "Policy of acme", "tenant-policy"],
      ["/t/acme/pins", "Pending tools of acme", "tenant-pins"],
      ["/t/acme/try", "Try it of acme", "tenant-try-empty"],
      ["/keys", "Platform API keys", "platform-keys"],
      ["/audit", "Platform audit log", "platform-audit"],
      ["/traffic", "Traffic", "platform-traffic"],
    ];
    for (const [path, heading, name] of views) {
      await w.page.goto(url(path));
      await settled(w.page, heading);
      await checkView(w, name);
    }
  });

  it("runs the policy's dry run and explain tools", async () => {
    await w.page.goto(url("/t/acme/policy"));
    await settled(w.page, "Policy of acme");
    const policy = { default: "allow", rules: [{ effect: "deny", tools: ["echo"] }] };
    await w.page.getByLabel("Policy (JSON)").fill(JSON.stringify(policy));
    await w.page.getByLabel(/Subjects to try/).fill('[{ "username": "bob" }]');
    await w.page.getByRole("button", { name: "Dry run" }).click();
    await w.page
      .getByRole("status")
      .filter({ hasText: /Dry run: \d+ entr/ })
      .waitFor();
    await w.page.getByLabel("Name or URI").fill("echo");
    await w.page.getByRole("button", { name: "Explain" }).click();
    await w.page
      .getByRole("status")
      .filter({ hasText: /echo: (allowed|denied)/ })
      .waitFor();
    await checkView(w, "tenant-policy-tools");
  });

  it("folds its navigation behind a Menu button on a phone", async () => {
    await w.page.setViewportSize(WIDTHS[1]);
    await w.page.goto(url("/t/acme/providers"));
    await settled(w.page, "Providers of acme");
    const menu = w.page.getByRole("button", { name: "Menu" });
    const nav = w.page.getByRole("navigation", { name: "Console" });
    assert.equal(await nav.isVisible(), false);
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    await menu.click();
    assert.equal(await nav.isVisible(), true);
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    await w.page.screenshot({ path: join(ARTIFACTS, "phone-menu-open.png") });
    await nav.getByRole("link", { name: "Users" }).click();
    await settled(w.page, "Users of acme");
    assert.equal(await nav.isVisible(), false, "closed again once a view is chosen");
    await w.page.setViewportSize(WIDTHS[0]);
  });

  it("holds no credential a script can read: nothing in storage, the cookie HttpOnly", async () => {
    const state = await w.page.evaluate<unknown>(
      "({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })",
    );
    assert.deepEqual(state, { local: 0, session: 0, cookie: "" });
    assert.ok(!(await w.page.content()).includes(await sessionCookie(w.context)));
  });

  it("sent the session's CSRF token on every write it made, and on no read", async () => {
    await assertCsrfOnWritesOnly(w);
  });

  it("hostile: a cookie request from the console's origin without the CSRF header is refused (403)", async () => {
    const forged = await fetchInPage(w.page, "/admin/v1/tenants", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "no-csrf", auth: "none" }),
    });
    assert.equal(forged.status, 403);
    assert.match(forged.type ?? "", /^application\/problem\+json/);
    assert.equal(forged.body.code, "PORTICO_ERR_ADMIN_CSRF");
    assert.match(forged.body.detail!, /X-Portico-CSRF/);
    assert.equal((await admin.get("/tenants/no-csrf")).status, 404, "not created");
    // The same request with the header is the console's own: it works.
    const { csrf } = (await fetchInPage(w.page, "/admin/v1/session")).body as { csrf: string };
    const own = await fetchInPage(w.page, "/admin/v1/tenants", {
      method: "POST",
      headers: { "content-type": "application/json", "x-portico-csrf": csrf },
      body: JSON.stringify({ id: "with-csrf", auth: "none" }),
    });
    assert.equal(own.status, 201);
  });

  it("hostile: a cross-site form POST carries no cookie (SameSite=Strict) and creates nothing", async () => {
    const site = await hostileSite();
    try {
      // localhost and 127.0.0.1 are different sites: Chromium sends no SameSite=Strict cookie.
      const { port } = site.address() as AddressInfo;
      const answer = w.page.waitForResponse((r) => r.url() === `${portico.url}/admin/v1/tenants`);
      await w.page.goto(`http://localhost:${port}/`);
      const res = await answer;
      assert.equal(res.status(), 401, "no session: the cookie was not sent");
      assert.equal((await res.request().allHeaders()).cookie, undefined);
      assert.equal((await admin.get("/tenants/csrf-victim")).status, 404, "not created");
    } finally {
      site.close();
    }
    w.problems.splice(0);
  });

  it("hostile: a same-site form POST from another origin (another port) is refused though the cookie goes along", async () => {
    const site = await hostileSite();
    try {
      const { port } = site.address() as AddressInfo;
      const answer = w.page.waitForResponse((r) => r.url() === `${portico.url}/admin/v1/tenants`);
      await w.page.goto(`http://127.0.0.1:${port}/`);
      const res = await answer;
      assert.match((await res.request().allHeaders()).cookie ?? "", /portico-console=/, "same site: sent");
      assert.equal(res.status(), 403);
      assert.equal(((await res.json()) as { code: string }).code, "PORTICO_ERR_ADMIN_CSRF");
      assert.equal((await admin.get("/tenants/csrf-victim")).status, 404, "not created");
    } finally {
      site.close();
    }
    w.problems.splice(0);
  });

  it("signs out with the button: the session ends on the server, its cookie is refused after", async () => {
    await w.page.goto(url("/tenants"));
    await settled(w.page, "Tenants");
    await signOut(w, "signed-out");
  });
});

describe("a tenant admin, signed in for real through their tenant's login page", () => {
  let w: Watched;
  before(async () => {
    assert.equal(
      (await admin.get("/tenants/acme/users/ada")).status,
      200,
      "created by the platform admin above",
    );
    w = await openBrowser();
  });
  after(() => w?.context.close());

  it("signs in: the console's page, the tenant, Portico's login page, then the console", async () => {
    await tenantSignIn(w, "acme", ADA, "tenant-login");
    await settled(w.page, "Providers of acme");
    assert.equal(pathOf(w.page), "/admin/console/t/acme/providers");
    await w.page.getByText("Signed in as ada (admin of acme)").waitFor();
    await row(w.page, "everything").filter({ hasText: "Healthy" }).waitFor();
    await checkView(w, "tenant-admin-providers");
  });

  it("sees their tenant only, with its settings, and no platform view", async () => {
    const nav = w.page.getByRole("navigation", { name: "Console" });
    assert.equal(await nav.getByRole("link", { name: "Tenants" }).count(), 0);
    assert.equal(await nav.getByRole("link", { name: "Platform API keys" }).count(), 0);
    assert.equal(await nav.getByRole("link", { name: "Platform audit log" }).count(), 0);
    await nav.getByRole("link", { name: "Your tenant" }).click();
    await settled(w.page, "Tenants");
    const own = w.page.getByRole("table", { name: "Your tenant" });
    await own.getByRole("row").filter({ hasText: "Acme Corp" }).filter({ hasText: "oauth" }).waitFor();
    assert.ok(!(await w.page.content()).includes("globex"));
    await checkView(w, "tenant-admin-tenants");
    // A platform view's path is not offered: the page says so, and the API refuses it anyway.
    await w.page.goto(url("/keys"));
    await settled(w.page, "Platform API keys");
    await w.page.getByText("Only platform admins see this page.").waitFor();
    assert.equal(await w.page.getByLabel("Key name").count(), 0);
    const platform = await fetchInPage(w.page, "/admin/v1/api-keys");
    assert.equal(platform.status, 403);
  });

  it("is refused another tenant, in words (the API's 404)", async () => {
    await w.page.goto(url("/t/globex/providers"));
    await settled(w.page, "Providers of globex");
    await w.page
      .getByRole("alert")
      .filter({ hasText: /globex/ })
      .first()
      .waitFor();
    assert.equal(await row(w.page, "everything").count(), 0);
    for (const path of ["/admin/v1/tenants/globex", "/admin/v1/tenants/globex/providers"]) {
      const refused = await fetchInPage(w.page, path);
      assert.equal(refused.status, 404, path);
      assert.match(refused.type ?? "", /^application\/problem\+json/);
    }
    assert.equal((await fetchInPage(w.page, "/admin/v1/tenants")).status, 403);
    await checkView(w, "tenant-admin-refused");
  });

  it("creates a user and adds a provider on their own tenant", async () => {
    await w.page.goto(url("/t/acme/users"));
    await settled(w.page, "Users of acme");
    await w.page.getByLabel("Username").fill("carol");
    await w.page.getByLabel("Password").fill("carol correct horse battery");
    await w.page.getByRole("button", { name: "Create user" }).click();
    await row(w.page, "carol").waitFor();
    await w.page.goto(url("/t/acme/providers"));
    await settled(w.page, "Providers of acme");
    await w.page.getByText("Any kind, as JSON").click();
    const docs = {
      id: "docs",
      kind: "static",
      resources: [{ uri: "docs://readme", name: "readme", text: "hi" }],
    };
    await w.page.getByLabel("Provider (JSON, as the admin API takes it)").fill(JSON.stringify(docs));
    await w.page.getByRole("button", { name: "Add provider from JSON" }).click();
    await row(w.page, "docs").filter({ hasText: "Healthy" }).waitFor();
    const audit = (await admin.get("/tenants/acme/audit?limit=20")).body.items as Record<string, unknown>[];
    const created = audit.find((e) => e.action === "provider.create" && e.target === "docs");
    assert.equal(created?.actor, "console:user ada (tenant acme)");
  });

  let calledAt = 0;
  it("calls a tool as themselves and finds the call in the audit log and the traffic view", async () => {
    calledAt = Date.now();
    await callEcho(w, "acme", "hello from ada", "tenant-admin-try");
    await findTryInAudit(w, "acme", "console:user ada (tenant acme)", "tenant-admin-audit");
    const entries = (await admin.get("/tenants/acme/audit?limit=50")).body.items as Record<string, unknown>[];
    const call = entries.find(
      (e) => e.action === "console.try" && e.actor === "console:user ada (tenant acme)",
    );
    assert.ok(call);
    // Policy and the log see the signed-in user, not an admin key.
    assert.equal((call.user as { username?: string }).username, "ada");
    await findCallInTraffic(w, "acme", calledAt, "tenant-admin-traffic");
  });

  it("creates a key and revokes it", async () => {
    await createAndRevokeKey(w, "acme", "ada's key");
  });

  it("sent the session's CSRF token on every write it made, and on no read", async () => {
    await assertCsrfOnWritesOnly(w);
  });

  it("signs out: the session ends on the server, its cookie is refused after", async () => {
    await w.page.goto(url("/t/acme/providers"));
    await settled(w.page, "Providers of acme");
    await signOut(w);
  });
});

describe("a tenant user without the admin role", () => {
  it("signs in at their tenant but is refused a session, with a page that says why", async () => {
    const w = await openBrowser();
    try {
      await tenantSignIn(w, "acme", BOB);
      await w.page.getByRole("heading", { level: 1, name: "Not an admin" }).waitFor();
      await w.page.getByText(/You signed in as bob, who is not an admin of tenant "acme"/).waitFor();
      assert.equal((await w.context.cookies(portico.url)).filter((c) => c.name === COOKIE).length, 0);
      await checkView(w, "sign-in-not-an-admin");
      await w.page.getByRole("link", { name: "Back to sign-in" }).click();
      await settled(w.page, "Sign in to the console");
      // Still no session: the console sends the browser back to sign in.
      await w.page.goto(url("/t/acme/providers"));
      await w.page.waitForURL((u) => u.pathname === "/admin/console/sign-in");
    } finally {
      await w.context.close();
    }
  });
});
