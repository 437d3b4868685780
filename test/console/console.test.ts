// The admin console in headless Chromium (docs/console.md), against a real Portico and a real
// upstream (server-everything): a platform admin creates a tenant, a user and a provider, sees its
// tools, calls one, finds it in the audit log and the traffic view, creates and revokes keys; a
// tenant admin sees only their tenant, and the API refuses them another. Every view is checked
// with axe-core (no serious or critical violation) and photographed at desktop and phone widths
// into test-artifacts/console/; no CSP violation and no script error may happen on any of them.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { OPERATIONS } from "../../src/admin/openapi/operations.js";
import { ADMIN_TOKEN } from "../support/admin.js";
import { launchBrowser } from "../support/browser.js";
import { buildConsole } from "../support/console-build.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url));
const WIDTHS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 375, height: 812 },
] as const;

/** Whether the admin API has this operation in this checkout (some land with the console-api work). */
const has = (method: string, path: string) =>
  OPERATIONS.some((op) => op.method === method && op.path === path);
const PENDING_TRY =
  !has("post", "/tenants/{tenant}/try") && "INTEGRATOR: runs once POST /admin/v1/tenants/{tenant}/try lands";
const PENDING_TRAFFIC = !has("get", "/traffic") && "INTEGRATOR: runs once GET /admin/v1/traffic lands";
const PENDING_SESSION =
  !has("get", "/session") && "INTEGRATOR: runs once the console session (GET/DELETE /admin/v1/session) lands";

type Who = { via: "key" | "session"; platform: boolean; tenant: string | null; name: string; csrf?: string };

let browser: Browser;
let everything: EverythingServer;
let portico: RunningPortico;

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  everything = await startEverything();
  portico = await startPortico({ tenants: [], redis: true, env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } });
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

/**
 * A browser context that holds `bearer` as the Authorization header of its requests (the SPA never
 * sees it) and, until the console session lands, answers GET /admin/v1/session with `who`.
 */
async function openConsole(bearer: string | undefined, who: Who | undefined): Promise<Watched> {
  const context = await browser.newContext({ viewport: WIDTHS[0] });
  if (bearer) await context.setExtraHTTPHeaders({ authorization: `Bearer ${bearer}` });
  // TEMPORARY until GET /admin/v1/session lands: the contract's answer for a key (docs/console.md).
  if (who && !has("get", "/session"))
    await context.route("**/admin/v1/session", (route) =>
      route.request().method() === "GET"
        ? route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(who) })
        : route.fallback(),
    );
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
 * Checks the view as it is now: no serious or critical axe-core violation, no CSP violation or
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

describe("the console as a platform admin", () => {
  let w: Watched;
  let tenantKey = "";
  before(async () => {
    w = await openConsole(ADMIN_TOKEN, { via: "key", platform: true, tenant: null, name: "platform key" });
  });
  after(() => w?.context.close());

  it("opens at /admin/console on the tenants view, saying who is signed in", async () => {
    const res = await w.page.goto(url(""));
    assert.equal(res?.status(), 200);
    await settled(w.page, "Tenants");
    assert.equal(new URL(w.page.url()).pathname, "/admin/console/tenants");
    await w.page.getByText("Signed in as platform key").waitFor();
    await checkView(w, "platform-tenants");
  });

  it("creates a tenant, and lands on its providers", async () => {
    await w.page.getByLabel("Tenant id").fill("acme");
    await w.page.getByLabel("Display name").fill("Acme Corp");
    await w.page.getByRole("button", { name: "Create tenant" }).click();
    await settled(w.page, "Providers of acme");
    // A second tenant, which acme's admin must never see.
    const other = await w.page.request.post(`${portico.url}/admin/v1/tenants`, { data: { id: "globex" } });
    assert.equal(other.status(), 201);
  });

  it("refuses a bad tenant id with the API's words", async () => {
    await w.page.goto(url("/tenants"));
    await settled(w.page, "Tenants");
    await w.page.getByLabel("Tenant id").fill("acme");
    await w.page.getByRole("button", { name: "Create tenant" }).click();
    const alert = w.page.getByRole("alert").filter({ hasText: /acme/ });
    await alert.waitFor();
    assert.match(await alert.innerText(), /exists|already/i);
  });

  it("creates a user with a role, then changes the role", async () => {
    await w.page.goto(url("/t/acme/users"));
    await settled(w.page, "Users of acme");
    await w.page.getByLabel("Username").fill("alice");
    await w.page.getByLabel("Password").fill("correct horse battery staple");
    await w.page.getByLabel("Roles (comma-separated)").fill("admin");
    await w.page.getByRole("button", { name: "Create user" }).click();
    await row(w.page, "alice").waitFor();
    const roles = w.page.getByLabel("Roles of alice", { exact: true });
    assert.equal(await roles.inputValue(), "admin");
    await roles.fill("admin, auditor");
    await w.page.getByRole("button", { name: "Save the roles of alice" }).click();
    await w.page.getByRole("status").filter({ hasText: "Roles of alice saved" }).waitFor();
    const user = await w.page.request.get(`${portico.url}/admin/v1/tenants/acme/users/alice`);
    assert.deepEqual((await user.json()).roles, ["admin", "auditor"]);
    await checkView(w, "tenant-users");
  });

  it("adds server-everything as a provider and shows it healthy", async () => {
    await w.page.goto(url("/t/acme/providers"));
    await settled(w.page, "Providers of acme");
    await w.page.getByLabel("Provider id").fill("everything");
    await w.page.getByLabel("MCP URL").fill(everything.url);
    await w.page.getByRole("button", { name: "Add provider" }).click();
    await w.page.getByRole("status").filter({ hasText: "Provider everything added" }).waitFor();
    await row(w.page, "everything").filter({ hasText: "Healthy" }).waitFor();
    await checkView(w, "tenant-providers");
  });

  it("shows the provider's tools in its catalog", async () => {
    await w.page.getByRole("link", { name: "everything", exact: true }).click();
    await w.page.getByRole("heading", { name: "Provider everything" }).waitFor();
    await w.page.getByRole("table", { name: "Tools" }).getByText("echo", { exact: true }).waitFor();
    await checkView(w, "tenant-provider");
  });

  it("calls a tool from the try-it panel", { skip: PENDING_TRY }, async () => {
    await w.page.goto(url("/t/acme/try"));
    await settled(w.page, "Try it of acme");
    await w.page.getByRole("button", { name: "List tools" }).click();
    await w.page.getByRole("button", { name: "Call echo" }).click();
    await w.page.getByLabel(/^message/).fill("hello from the console");
    await w.page.getByRole("button", { name: "Call tool" }).click();
    await w.page.getByRole("status").filter({ hasText: "echo called" }).waitFor();
    await w.page.getByText("hello from the console").last().waitFor();
    await checkView(w, "tenant-try");
  });

  it("finds the call in the audit log", { skip: PENDING_TRY }, async () => {
    await w.page.goto(url("/t/acme/audit"));
    await settled(w.page, "Audit log of acme");
    await row(w.page, /echo|try/)
      .first()
      .waitFor();
  });

  it("shows the traffic, labelled with its source, as charts", { skip: PENDING_TRAFFIC }, async () => {
    await w.page.goto(url("/t/acme/traffic"));
    await settled(w.page, "Traffic of acme");
    await w.page.getByText(/This replica's own figures|from Prometheus/).waitFor();
    await w.page.locator(".uplot canvas").first().waitFor();
    await checkView(w, "tenant-traffic");
  });

  it("creates a tenant key once-shown, and revokes another (which then stops working)", async () => {
    await w.page.goto(url("/t/acme/keys"));
    await settled(w.page, "API keys of acme");
    for (const name of ["acme admin", "doomed"]) {
      await w.page.getByLabel("Key name").fill(name);
      await w.page.getByRole("button", { name: "Create key" }).click();
      await w.page
        .getByRole("status")
        .filter({ hasText: `Key ${name} created` })
        .waitFor();
      const secret = await w.page.getByLabel("Secret").inputValue();
      assert.ok(secret.length > 20);
      if (name === "acme admin") tenantKey = secret;
      else {
        const works = await fetch(`${portico.url}/admin/v1/tenants/acme/providers`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        assert.equal(works.status, 200);
        await checkView(w, "tenant-keys-created");
        await w.page.getByRole("button", { name: "I have stored it" }).click();
        assert.equal(await w.page.getByLabel("Secret").count(), 0, "shown once: gone once dismissed");
        await w.page.getByRole("button", { name: "Revoke doomed" }).click();
        await row(w.page, "doomed").filter({ hasText: "Revoked" }).waitFor();
        const refused = await fetch(`${portico.url}/admin/v1/tenants/acme/providers`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        assert.equal(refused.status, 401);
      }
    }
  });

  it("finds the writes in the tenant's audit log, filtered by action", async () => {
    await w.page.goto(url("/t/acme/audit"));
    await settled(w.page, "Audit log of acme");
    await w.page.getByLabel("Action").fill("api-key.revoke");
    await row(w.page, "api-key.revoke").waitFor();
    assert.equal(await row(w.page, "provider.create").count(), 0, "filtered out");
    await w.page.getByLabel("Action").fill("");
    await row(w.page, "provider.create").waitFor();
    await checkView(w, "tenant-audit");
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
      ["/t/acme/traffic", "Traffic of acme", "tenant-traffic-view"],
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
    await w.page.getByLabel(/Subjects to try/).fill('[{ "username": "alice" }]');
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

  it("holds no key: nothing in storage, cookies or the page names the platform token", async () => {
    const state = await w.page.evaluate<unknown>(
      "({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })",
    );
    assert.deepEqual(state, { local: 0, session: 0, cookie: "" });
    assert.ok(!(await w.page.content()).includes(ADMIN_TOKEN));
    assert.ok(!(await w.page.content()).includes(tenantKey));
  });

  it("every admin API request went to /admin/v1 (the typed client), writes without a session carry no CSRF header", () => {
    assert.ok(w.requests.some((r) => r.method === "POST"));
    assert.ok(w.requests.every((r) => r.csrf === undefined));
  });

  describe("as acme's tenant admin (acme's key)", () => {
    let t: Watched;
    before(async () => {
      assert.ok(tenantKey, "created above");
      t = await openConsole(tenantKey, { via: "key", platform: false, tenant: "acme", name: "acme admin" });
    });
    after(() => t?.context.close());

    it("lands on acme's providers and sees no other tenant", async () => {
      await t.page.goto(url(""));
      await settled(t.page, "Providers of acme");
      assert.equal(new URL(t.page.url()).pathname, "/admin/console/t/acme/providers");
      const nav = t.page.getByRole("navigation", { name: "Console" });
      assert.equal(await nav.getByRole("link", { name: "Tenants" }).count(), 0);
      assert.equal(await nav.getByRole("link", { name: "Platform API keys" }).count(), 0);
      await row(t.page, "everything").waitFor();
      await checkView(t, "tenant-admin-providers");
      await t.page.goto(url("/tenants"));
      await settled(t.page, "Tenants");
      await t.page.getByRole("table", { name: "Your tenant" }).getByRole("link", { name: "acme" }).waitFor();
      assert.equal(await row(t.page, "globex").count(), 0);
      assert.ok(!(await t.page.content()).includes("globex"));
      await checkView(t, "tenant-admin-tenants");
    });

    it("is refused another tenant, in words", async () => {
      await t.page.goto(url("/t/globex/providers"));
      await settled(t.page, "Providers of globex");
      await t.page
        .getByRole("alert")
        .filter({ hasText: /not found|no tenant|unknown/i })
        .first()
        .waitFor();
      const api = await t.page.request.get(`${portico.url}/admin/v1/tenants/globex/providers`);
      assert.equal(api.status(), 404);
      const platform = await t.page.request.get(`${portico.url}/admin/v1/tenants`);
      assert.equal(platform.status(), 403);
    });
  });
});

describe("the console's session (the contract with the sign-in pages)", () => {
  it("sends the browser to the sign-in page when the API answers 401", async () => {
    // No key: the admin API itself answers 401 (TEMPORARY: GET /admin/v1/session still answered here).
    const w = await openConsole(undefined, { via: "key", platform: true, tenant: null, name: "gone" });
    try {
      await w.page.goto(url("/tenants"));
      await w.page.waitForURL((u) => u.pathname === "/admin/console/sign-in", { waitUntil: "commit" });
    } finally {
      await w.context.close();
    }
  });

  it("sends the session's CSRF token on writes, never on reads", async () => {
    // TEMPORARY until GET /admin/v1/session lands: a session's answer, the key still doing the work.
    const w = await openConsole(ADMIN_TOKEN, {
      via: "session",
      platform: true,
      tenant: null,
      name: "root",
      csrf: "csrf-token-from-the-session",
    });
    try {
      await w.page.goto(url("/t/acme/keys"));
      await settled(w.page, "API keys of acme");
      await w.page.getByRole("button", { name: "Sign out" }).waitFor();
      await w.page.getByLabel("Key name").fill("with csrf");
      await w.page.getByRole("button", { name: "Create key" }).click();
      await w.page.getByRole("status").filter({ hasText: "Key with csrf created" }).waitFor();
      const writes = w.requests.filter((r) => r.method !== "GET");
      const reads = w.requests.filter((r) => r.method === "GET");
      assert.ok(writes.length > 0 && reads.length > 0);
      assert.ok(
        writes.every((r) => r.csrf === "csrf-token-from-the-session"),
        JSON.stringify(writes),
      );
      assert.ok(reads.every((r) => r.csrf === undefined));
    } finally {
      await w.context.close();
    }
  });

  it("signs out: DELETE /admin/v1/session, then the sign-in page", { skip: PENDING_SESSION }, async () => {
    // Needs a real console session, from the sign-in pages: the integrator signs in here as a
    // platform user (docs/console.md) instead of the bearer header.
    assert.fail("write the sign-in steps once the sign-in pages are merged");
  });
});
