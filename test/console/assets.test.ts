// Serving the admin console (src/console/assets.ts, docs/console.md) without a browser: the page at
// /admin/console/ and its client-side routes under a strict CSP, revalidated; hashed assets cached
// for good with their types; unknown assets, traversal and the sign-in pages' paths not served as
// the app; a checkout that was never built says how to build.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Fastify, { type FastifyInstance } from "fastify";
import { buildApp, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import { CONSOLE_CSP, consoleRoutes, readConsole } from "../../src/console/assets.js";
import { buildConsole } from "../support/console-build.js";

let portico: Portico;
let app: FastifyInstance;
before(async () => {
  await buildConsole();
  portico = await buildApp(loadConfig({}), { logger: false });
  app = portico.app;
});
after(() => app.close());

const get = (url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: "GET", url, headers });

/** The asset URLs the page names. */
async function assetUrls(): Promise<string[]> {
  const html = (await get("/admin/console/")).body;
  return [...html.matchAll(/(?:src|href)="(\/admin\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

describe("the console's page", () => {
  it("/admin/console redirects to /admin/console/, keeping the query", async () => {
    const res = await get("/admin/console?x=1");
    assert.equal(res.statusCode, 301);
    assert.equal(res.headers.location, "/admin/console/?x=1");
  });

  it("/admin/console/ and a client-side route answer the page with the strict CSP, revalidated", async () => {
    const first = await get("/admin/console/");
    for (const url of ["/admin/console/", "/admin/console/t/acme/providers", "/admin/console/tenants"]) {
      const res = await get(url);
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers["content-type"]), /^text\/html; charset=utf-8/);
      assert.equal(res.headers["content-security-policy"], CONSOLE_CSP);
      assert.equal(res.headers["x-content-type-options"], "nosniff");
      assert.equal(res.headers["referrer-policy"], "no-referrer");
      assert.equal(res.headers["cache-control"], "no-cache");
      assert.equal(res.body, first.body, `${url} is the same page`);
    }
    assert.equal(
      CONSOLE_CSP,
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    const etag = String(first.headers.etag);
    const again = await get("/admin/console/", { "if-none-match": etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, "");
    assert.equal((await get("/admin/console/", { "if-none-match": '"other"' })).statusCode, 200);
  });

  it("has no inline script or style, and loads one script and one stylesheet of its own", async () => {
    const html = (await get("/admin/console/")).body;
    assert.doesNotMatch(html, /<style|\sstyle=|<script(?![^>]*\ssrc=)/i);
    const urls = await assetUrls();
    assert.equal(urls.filter((u) => u.endsWith(".js")).length, 1, urls.join());
    assert.equal(urls.filter((u) => u.endsWith(".css")).length, 1, urls.join());
  });
});

describe("the console's assets", () => {
  it("are served with their type, hashed names and a year's immutable cache", async () => {
    for (const url of await assetUrls()) {
      assert.match(url, /-[A-Za-z0-9_-]{8,}\.(js|css)$/, "a content hash in the name");
      const res = await get(url);
      assert.equal(res.statusCode, 200, url);
      const type = url.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
      assert.equal(res.headers["content-type"], type);
      assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable");
      assert.equal(res.headers["x-content-type-options"], "nosniff");
      assert.ok(res.rawPayload.length > 1000, url);
    }
  });

  it("answer 404 for unknown names, traversal, files that are no route, and the assets folder itself", async () => {
    const [script] = await assetUrls();
    const name = script!.split("/").pop()!;
    for (const url of [
      "/admin/console/assets/index-00000000.js",
      "/admin/console/assets/",
      "/admin/console/assets/..%2F..%2F..%2Fpackage.json",
      "/admin/console/assets/%2e%2e/index.html",
      "/admin/console/assets/../../../package.json",
      `/admin/console/assets/x/${name}`,
      "/admin/console/index.html",
      "/admin/console/favicon.ico",
      "/admin/console/..%2F..%2Fpackage.json",
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, url);
      assert.doesNotMatch(res.body, /"name": "portico"|<div id="app">/, url);
    }
  });

  it("leaves /admin/console/sign-in to the sign-in pages: never the app's page", async () => {
    for (const url of ["/admin/console/sign-in", "/admin/console/sign-in/callback"]) {
      const res = await get(url);
      assert.doesNotMatch(res.body, /<div id="app">/, url);
    }
  });

  it("answer HEAD like GET, without a body", async () => {
    const [url] = await assetUrls();
    const res = await app.inject({ method: "HEAD", url: url! });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(res.body, "");
  });
});

describe("a checkout whose console was never built", () => {
  it("answers 503 at /admin/console/ naming `npm run build`, and serves no assets", async () => {
    const empty = mkdtempSync(join(tmpdir(), "portico-console-"));
    const bare = Fastify({ logger: false });
    try {
      consoleRoutes(bare, readConsole(empty));
      const res = await bare.inject({ method: "GET", url: "/admin/console/" });
      assert.equal(res.statusCode, 503);
      assert.match(res.body, /npm run build/);
      assert.equal(res.headers["content-security-policy"], CONSOLE_CSP);
      assert.equal(
        (await bare.inject({ method: "GET", url: "/admin/console/assets/index-abc.js" })).statusCode,
        404,
      );
    } finally {
      await bare.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
