// GET /: where things are on this server (docs/architecture.md §1) — an HTML page for browsers,
// JSON for everything else (Accept negotiation). It names the URL pattern of the tenants' MCP
// endpoints, never a tenant: their names are not public. No secrets, nothing per request.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { pageCsp } from "./html/page-headers.js";
import { PORTICO_VERSION } from "./protocol/version.js";

/** What the page says, as the JSON answer carries it. */
export interface HomeDocument {
  readonly name: "portico";
  readonly version: string;
  /** The tenants' MCP endpoint pattern: `{tenant}` stands for a tenant's id. */
  readonly mcp: string;
  readonly admin: { readonly console: string; readonly docs: string; readonly openapi: string };
  readonly health: { readonly live: string; readonly ready: string };
}

export function homeDocument(publicUrl: string): HomeDocument {
  return {
    name: "portico",
    version: PORTICO_VERSION,
    mcp: `${publicUrl}/mcp/{tenant}`,
    admin: {
      console: `${publicUrl}/admin/console/`,
      docs: `${publicUrl}/admin/docs`,
      openapi: `${publicUrl}/admin/v1/openapi.json`,
    },
    health: { live: `${publicUrl}/healthz`, ready: `${publicUrl}/readyz` },
  };
}

const CSS =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}" +
  "code{background:#f2f2f4;padding:.1rem .3rem;border-radius:4px}h1{font-size:1.6rem}";
const CSP = pageCsp({ styles: [CSS] });

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function renderHome(doc: HomeDocument): string {
  const link = (url: string) => `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Portico</title><style>${CSS}</style></head>
<body><h1>Portico ${escapeHtml(doc.version)}</h1>
<p>A gateway for the Model Context Protocol. Each tenant has its own MCP endpoint:</p>
<p><code id="mcp-url">${escapeHtml(doc.mcp)}</code></p>
<p>Give that URL, with your tenant's id in place of <code>{tenant}</code>, to your MCP client
(Streamable HTTP). Ask whoever runs this server for the tenant's id.</p>
<ul>
<li>Admin console (for tenant and platform admins): ${link(doc.admin.console)}</li>
<li>Admin API reference: ${link(doc.admin.docs)} (OpenAPI: ${link(doc.admin.openapi)})</li>
<li>Health: ${link(doc.health.live)} (process) and ${link(doc.health.ready)} (ready to serve)</li>
</ul></body></html>
`;
}

/** True when the client prefers HTML to JSON: browsers send `text/html` first in Accept. */
function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? "";
  const html = accept.indexOf("text/html");
  const json = accept.indexOf("application/json");
  return html >= 0 && (json < 0 || html < json);
}

/** Registers GET / (HEAD too); both bodies are built once at startup. */
export function homeRoute(app: FastifyInstance, publicUrl: string): void {
  const doc = homeDocument(publicUrl);
  const html = renderHome(doc);
  const json = JSON.stringify(doc);
  app.get("/", async (req, reply) => {
    void reply.header("vary", "accept");
    if (wantsHtml(req))
      return reply.type("text/html; charset=utf-8").header("content-security-policy", CSP).send(html);
    return reply.type("application/json").header("cache-control", "no-store").send(json);
  });
}
