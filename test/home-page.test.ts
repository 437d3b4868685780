// GET / (src/home-page.ts) and GET /admin: what a person or a script finds at the server's root —
// JSON for scripts, an HTML page for browsers (loaded in headless Chromium), never a tenant's name.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { launchBrowser } from "./support/browser.js";
import { buildConsole } from "./support/console-build.js";
import { startPortico, staticTenant, type RunningPortico } from "./support/portico.js";

let portico: RunningPortico;
before(async () => {
  // The page links the console, which must be built for the link to lead somewhere.
  await buildConsole();
  portico = await startPortico({ tenants: [staticTenant("secret-tenant-name")] });
});
after(() => portico.close());

describe("GET /", () => {
  it("answers scripts with JSON: the MCP URL pattern, the admin reference, health and version", async () => {
    for (const accept of [undefined, "*/*", "application/json"]) {
      const res = await fetch(`${portico.url}/`, { headers: accept ? { accept } : {} });
      assert.equal(res.status, 200, accept);
      assert.match(res.headers.get("content-type")!, /^application\/json/);
      assert.equal(res.headers.get("vary"), "accept");
      const doc = (await res.json()) as Record<string, any>;
      assert.equal(doc.name, "portico");
      assert.match(doc.version, /^\d+\.\d+\.\d+/);
      assert.equal(doc.mcp, "http://localhost:0/mcp/{tenant}");
      assert.equal(doc.admin.console, "http://localhost:0/admin/console/");
      assert.equal(doc.admin.docs, "http://localhost:0/admin/docs");
      assert.deepEqual(doc.health, {
        live: "http://localhost:0/healthz",
        ready: "http://localhost:0/readyz",
      });
    }
  });

  it("answers browsers with a page under the page headers, naming no tenant", async () => {
    const res = await fetch(`${portico.url}/`, {
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^text\/html/);
    assert.equal(res.headers.get("x-frame-options"), "DENY");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    const csp = res.headers.get("content-security-policy")!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /style-src 'sha256-/);
    assert.match(csp, /frame-ancestors 'none'/);
    const html = await res.text();
    assert.match(html, /http:\/\/localhost:0\/mcp\/\{tenant\}/);
    for (const res of [html, JSON.stringify(await (await fetch(`${portico.url}/`)).json())])
      assert.doesNotMatch(res, /secret-tenant-name|portico-test-secret/);
  });

  it("renders in Chromium with its style allowed by the CSP, and its links lead somewhere", async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      const res = await page.goto(`${portico.url}/`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.title(), "Portico");
      assert.equal(await page.textContent("#mcp-url"), "http://localhost:0/mcp/{tenant}");
      // The inline <style> applied: the body's font is the page's own, not the browser default.
      const font = await page.evaluate<string>("getComputedStyle(document.body).fontFamily");
      assert.match(font, /system-ui/);
      assert.deepEqual(violations, []);
      const links = await page.$$eval("a", (as) => as.map((a) => a.getAttribute("href")));
      assert.deepEqual(links, [
        "http://localhost:0/admin/console/",
        "http://localhost:0/admin/docs",
        "http://localhost:0/admin/v1/openapi.json",
        "http://localhost:0/healthz",
        "http://localhost:0/readyz",
      ]);
      // Followed on this server (the public URL of the test config is not where it listens).
      for (const href of links) {
        const path = new URL(href).pathname;
        assert.equal((await fetch(`${portico.url}${path}`)).status, 200, path);
      }
    } finally {
      await browser.close();
    }
  });
});

describe("GET /admin", () => {
  it("redirects to the reference page, and says where it is in the body for scripts", async () => {
    for (const path of ["/admin", "/admin/"]) {
      const res = await fetch(`${portico.url}${path}`, { redirect: "manual" });
      assert.equal(res.status, 302, path);
      assert.equal(res.headers.get("location"), "/admin/docs");
      assert.deepEqual(await res.json(), { docs: "/admin/docs", openapi: "/admin/v1/openapi.json" });
    }
    const followed = await fetch(`${portico.url}/admin`);
    assert.equal(followed.status, 200);
    assert.match(followed.headers.get("content-type")!, /^text\/html/);
  });

  it("other methods on /admin are still the admin API's 404", async () => {
    const res = await fetch(`${portico.url}/admin`, { method: "POST" });
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: string }).code, "PORTICO_ERR_ADMIN_NOT_FOUND");
  });
});
