// Redirect URI rules: which URIs a client may register (OAuth 2.1 §2.3 and §1.5, RFC 8252 §7,
// OIDC Registration §2 application_type) and how a presented URI is matched against them (exact
// string, RFC 9700 §4.1.3; loopback http may use any port, RFC 8252 §7.3). Pure functions.

export type ApplicationType = "web" | "native";
export type RedirectUriKind = "https" | "loopback" | "private-use";

/** A verdict on one URI; `reason` is safe to show a client (it never quotes the URI). */
export type RedirectUriCheck =
  { readonly ok: true; readonly kind: RedirectUriKind } | { readonly ok: false; readonly reason: string };

export const MAX_REDIRECT_URI_LENGTH = 2048;

/** RFC 3986 characters only: anything else (spaces, tabs, backslashes, non-ASCII) is refused,
 * because URL parsers silently drop or rewrite it and the registered string must be the real one. */
const URI_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s;
/** http to a loopback host spelled exactly so (RFC 8252 §7.3), optional port, no userinfo or fragment. */
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::(\d{1,5}))?([/?][^#]*)?$/;
/** Schemes that run code, read local data or are no place to send an authorization code. */
const REFUSED_SCHEMES = new Set([
  "javascript",
  "vbscript",
  "data",
  "file",
  "about",
  "blob",
  "filesystem",
  "view-source",
  "ws",
  "wss",
  "ftp",
  "mailto",
  "tel",
  "sms",
]);

const refuse = (reason: string): RedirectUriCheck => ({ ok: false, reason });

/**
 * Whether `uri` may be registered as a redirect URI. Without an application type any of the three
 * kinds is accepted (most MCP clients register loopback URIs through RFC 7591 without one);
 * "web" allows https to non-loopback hosts only; "native" allows all three kinds (RFC 8252 §7:
 * private-use schemes, claimed https URIs and loopback http).
 */
export function checkRedirectUri(uri: unknown, applicationType?: ApplicationType): RedirectUriCheck {
  if (typeof uri !== "string" || uri === "") return refuse("must be a non-empty string");
  if (uri.length > MAX_REDIRECT_URI_LENGTH)
    return refuse(`must be at most ${MAX_REDIRECT_URI_LENGTH} characters`);
  if (!URI_CHARS.test(uri))
    return refuse("must be an absolute URI of RFC 3986 characters (percent-encode anything else)");
  // OAuth 2.1 §2.3: the redirect URI MUST NOT include a fragment component.
  if (uri.includes("#")) return refuse("must not contain a fragment");
  const [, scheme = "", rest = ""] = SCHEME.exec(uri) ?? [];
  if (scheme === "") return refuse("must be an absolute URI with a scheme");
  if (scheme !== scheme.toLowerCase()) return refuse("must spell its scheme in lowercase");
  if (rest === "") return refuse("must have something after the scheme");
  if (!URL.canParse(uri)) return refuse("is not a valid URI");
  if (scheme === "https") return checkHttps(uri, applicationType);
  if (scheme === "http") return checkLoopback(uri, applicationType);
  if (REFUSED_SCHEMES.has(scheme)) return refuse(`must not use the ${scheme}: scheme`);
  if (applicationType === "web")
    return refuse("private-use schemes are for native clients (application_type web needs https)");
  return { ok: true, kind: "private-use" };
}

function checkHttps(uri: string, applicationType: ApplicationType | undefined): RedirectUriCheck {
  if (!uri.startsWith("https://")) return refuse("must be written https://host/path");
  const authority = uri.slice("https://".length).split(/[/?]/, 1)[0] ?? "";
  if (authority.includes("@")) return refuse("must not contain user information");
  const host = new URL(uri).hostname;
  if (host === "") return refuse("must name a host");
  // OIDC Registration §2: web clients MUST NOT use localhost as the hostname.
  if (applicationType === "web" && isLoopbackHost(host))
    return refuse("application_type web must not redirect to a loopback host");
  return { ok: true, kind: "https" };
}

function checkLoopback(uri: string, applicationType: ApplicationType | undefined): RedirectUriCheck {
  const m = LOOPBACK.exec(uri);
  // OAuth 2.1 §1.5 / MCP "Communication Security": redirect URIs are https or localhost.
  if (!m) return refuse("http is allowed only to a loopback host: exactly 127.0.0.1, [::1] or localhost");
  if (m[2] !== undefined && !isPort(m[2])) return refuse("has an invalid port");
  if (applicationType === "web")
    return refuse("loopback redirect URIs are for native clients (application_type web needs https)");
  return { ok: true, kind: "loopback" };
}

/**
 * Whether `presented` matches one of the registered URIs: exact string comparison (OAuth 2.1
 * §4.1.1), except that a loopback http URI may carry any port (RFC 8252 §7.3), since native apps
 * get an ephemeral port from the OS. Scheme, host, path and query must still match exactly.
 */
export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  const p = LOOPBACK.exec(presented);
  if (!p || (p[2] !== undefined && !isPort(p[2]))) return false;
  return registered.some((uri) => {
    const r = LOOPBACK.exec(uri);
    return r !== null && r[1] === p[1] && (r[3] ?? "") === (p[3] ?? "");
  });
}

/** 1–65535 written canonically (no leading zero), so one port has one spelling. */
function isPort(text: string): boolean {
  const port = Number(text);
  return port >= 1 && port <= 65535 && String(port) === text;
}

function isLoopbackHost(host: string): boolean {
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}
