// Serves the console, the admin single-page app (docs/console.md): its page at /admin/console/ and
// at every client-side route below it, under a CSP that allows nothing but its own files; its
// hashed assets at /admin/console/assets/, cached for good. Files are read once, at boot, from
// dist/console/app/ (`npm run build`). /admin/console/sign-in* belongs to the sign-in pages.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

export const CONSOLE_PATH = "/admin/console";

/** Where `npm run build` puts the app: this module is two folders below the package root, in src/ or dist/. */
export const CONSOLE_DIST = fileURLToPath(new URL("../../dist/console/app/", import.meta.url));

/** The page's policy: scripts, styles, images and requests of its own origin; nothing inline, no framing. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // The page names the current hashed assets: always revalidated, so a new build is picked up.
  "cache-control": "no-cache",
};

/** Asset names carry their content's hash (Vite): a name is never reused for other content. */
const IMMUTABLE = "public, max-age=31536000, immutable";

const TYPES: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

export interface ConsoleFiles {
  /** index.html, with its entity tag; undefined when the console was not built. */
  readonly page?: { readonly body: Buffer; readonly etag: string };
  /** The hashed assets by file name. */
  readonly assets: ReadonlyMap<string, Asset>;
}

/** Reads the built console once; a missing build is not an error (the page then says how to build it). */
export function readConsole(dir: string = CONSOLE_DIST): ConsoleFiles {
  let body: Buffer;
  try {
    body = readFileSync(join(dir, "index.html"));
  } catch {
    return { assets: new Map() };
  }
  const assets = new Map<string, Asset>();
  const assetDir = join(dir, "assets");
  for (const name of statSync(assetDir, { throwIfNoEntry: false })?.isDirectory()
    ? readdirSync(assetDir)
    : []) {
    const type = TYPES[extname(name)];
    if (type !== undefined) assets.set(name, { body: readFileSync(join(assetDir, name)), type });
  }
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  return { page: { body, etag }, assets };
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The console is not built</h1>
<p>This Portico runs from a checkout whose console was never built. Run <code>npm run build</code>
(or <code>npm start</code>, which builds what changed), then restart.</p>
<p>The admin API works without it: <a href="/admin/docs">/admin/docs</a>.</p></body></html>
`;

/** The first segment and what is below it: `sign-in` (the sign-in pages', docs/console.md), `assets`. */
const under = (rest: string, segment: string) => rest === segment || rest.startsWith(`${segment}/`);

/** Registers the console's routes (GET, and HEAD with it). */
export function consoleRoutes(app: FastifyInstance, files: ConsoleFiles = readConsole()): void {
  const page = (req: FastifyRequest, reply: FastifyReply) => {
    if (!files.page)
      return reply.code(503).type("text/html; charset=utf-8").headers(PAGE_HEADERS).send(NOT_BUILT);
    void reply.type("text/html; charset=utf-8").headers(PAGE_HEADERS).header("etag", files.page.etag);
    if (req.headers["if-none-match"] === files.page.etag) return reply.code(304).send();
    return reply.send(files.page.body);
  };

  // The router ignores a trailing slash, so both spellings reach this route: only the slash-less
  // one is redirected, so relative URLs resolve below the console.
  app.get(CONSOLE_PATH, async (req, reply) => {
    const [path, query] = splitUrl(req.url);
    if (!path.endsWith("/"))
      return reply
        .code(301)
        .header("location", `${CONSOLE_PATH}/${query}`)
        .header("cache-control", "no-store")
        .send();
    return page(req, reply);
  });

  app.get(`${CONSOLE_PATH}/assets/:name`, async (req, reply) => {
    const asset = files.assets.get((req.params as { name: string }).name);
    if (!asset) return reply.callNotFound();
    return reply
      .type(asset.type)
      .header("cache-control", IMMUTABLE)
      .header("x-content-type-options", "nosniff")
      .send(asset.body);
  });

  // Client-side routes: the same page, which reads its path. A last segment with a dot is a file
  // that does not exist, not a route.
  app.get(`${CONSOLE_PATH}/*`, async (req, reply) => {
    const rest = (req.params as { "*": string })["*"];
    if (under(rest, "sign-in") || under(rest, "assets") || /\.[^/]*$/.test(rest)) return reply.callNotFound();
    return page(req, reply);
  });
}

function splitUrl(url: string): [string, string] {
  const at = url.indexOf("?");
  return at < 0 ? [url, ""] : [url.slice(0, at), url.slice(at)];
}
