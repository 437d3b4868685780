// The headers of every HTML page Portico serves (docs/security.md, "Page headers"): a strict CSP
// (no scripts, styles allowed by hash rather than 'unsafe-inline', no framing, no <base>), no
// MIME sniffing, no referrer, no caching. Pages build their CSP with pageCsp(); an onSend hook on
// every route outside /mcp fills in whatever a page's route did not set, so no page can forget.
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from "fastify";

/** Set on every HTML response unless its route set the header itself. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  // Login and consent pages carry CSRF tokens; no HTML page is worth a stale copy.
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
};

/** For an HTML response whose route set no CSP: nothing may load, submit or frame it. */
const FALLBACK_CSP = "default-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** The CSP source allowing one inline <style> element with exactly this text (CSP3 §8.2 hash-source). */
export function styleHash(css: string): string {
  return `'sha256-${createHash("sha256").update(css, "utf8").digest("base64")}'`;
}

export interface PageCspOptions {
  /** The text of each inline <style> element on the page. */
  readonly styles?: readonly string[];
  /** Form targets (CSP source expressions); none: the page has no forms. */
  readonly formAction?: readonly string[];
}

/** A page's Content-Security-Policy: nothing but its own styles, its form targets, and no framing. */
export function pageCsp(options: PageCspOptions = {}): string {
  const styles = options.styles ?? [];
  const forms = options.formAction ?? [];
  return [
    "default-src 'none'",
    ...(styles.length > 0 ? [`style-src ${styles.map(styleHash).join(" ")}`] : []),
    `form-action ${forms.length > 0 ? forms.join(" ") : "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** Directives every page's CSP has: a route's own CSP without them gets them added. */
const ALWAYS: ReadonlyArray<readonly [string, string, RegExp]> = [
  ["frame-ancestors", "'none'", /(?:^|;)\s*frame-ancestors\s/i],
  ["base-uri", "'none'", /(?:^|;)\s*base-uri\s/i],
];

/** onSend: an HTML response gets the page headers its route did not set, and a CSP that forbids framing and <base>. */
const onHtml: onSendHookHandler = (_req: FastifyRequest, reply: FastifyReply, payload, done) => {
  const type = reply.getHeader("content-type");
  if (typeof type !== "string" || !type.startsWith("text/html")) return done(null, payload);
  for (const [name, value] of Object.entries(PAGE_HEADERS))
    if (!reply.hasHeader(name)) reply.header(name, value);
  const csp = reply.getHeader("content-security-policy");
  if (typeof csp !== "string") reply.header("content-security-policy", FALLBACK_CSP);
  else {
    const missing = ALWAYS.filter(([, , present]) => !present.test(csp));
    if (missing.length > 0)
      reply.header("content-security-policy", [csp, ...missing.map(([n, v]) => `${n} ${v}`)].join("; "));
  }
  done(null, payload);
};

/**
 * Adds the page-headers hook to every route registered after this call, except /mcp (which never
 * serves HTML): decided once per route at startup, so the MCP hot path runs no extra hook.
 */
export function pageHeaders(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    if (route.url === "/mcp" || route.url.startsWith("/mcp/")) return;
    const own = route.onSend;
    route.onSend = own === undefined ? [onHtml] : [...(Array.isArray(own) ? own : [own]), onHtml];
  });
}
