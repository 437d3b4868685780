// Who is calling the admin API (docs/admin-api.md "Authentication"): the platform key
// (PORTICO_ADMIN_TOKEN), a platform API key or a tenant API key in `Authorization: Bearer`; or a
// console session, its cookie set by the console's sign-in (docs/admin-api.md "Console sessions"),
// whose writes must carry the session's CSRF header and Portico's own Origin. Anything else is 401
// with a Bearer challenge (RFC 6750).
import { fail } from "../protocol/errors.js";
import { bearerOf, macEquals, secretMatcher } from "../crypto/secrets.js";
import type { ApiKeyStore } from "./api-keys.js";

/** Who policy sees when an admin calls a tenant's MCP endpoint through the admin API (try it). */
export interface AdminCaller {
  /** The `sub` policy matches: a tenant admin's own, else one naming the admin's origin. */
  readonly sub: string;
  readonly username?: string;
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
}

export interface AdminPrincipal {
  /** The tenant a tenant key or tenant admin is scoped to; null for platform principals. */
  readonly tenant: string | null;
  /** Who, for the audit log. */
  readonly actor: string;
  /** How the request authenticated: a bearer key, or a console session's cookie. */
  readonly via?: "key" | "session";
  /** A short name for people (the console shows it). */
  readonly name?: string;
  /** The console session's CSRF token and when it ends (via a session only). */
  readonly session?: { readonly csrf: string; readonly expiresAt: string };
  /** Who the admin is to a tenant's policy. */
  readonly caller?: AdminCaller;
}

/**
 * The console's sessions as the admin API reads them (src/console/sessions.ts implements it; app.ts
 * wires it in): each use slides the session's idle expiry and checks again that its user is still
 * an admin.
 */
export interface ConsoleSessionSource {
  /** The cookie's name (`__Host-portico-console` on https, `portico-console` on http). */
  readonly cookieName: string;
  /** The principal of a cookie value; undefined when the session is gone, expired or no longer an admin's. */
  principal(cookie: string): Promise<AdminPrincipal | undefined>;
  /** Ends the session of a cookie value on the server. */
  end(cookie: string): Promise<void>;
  /** A Set-Cookie value that removes the cookie from the browser. */
  readonly clearCookie: string;
}

/** The parts of a request authentication reads. */
export interface AdminRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** The header a console session's write carries its CSRF token in. */
export const CSRF_HEADER = "x-portico-csrf";

const REASONS = {
  unknown: "The key is not known",
  revoked: "The key was revoked",
  expired: "The key has expired",
} as const;

const SAFE_METHODS = new Set(["GET", "HEAD"]);

export class AdminAuth {
  readonly #isPlatform: (token: string) => boolean;
  readonly #origin: string;

  constructor(
    platformToken: string,
    private readonly keys: ApiKeyStore,
    publicUrl: string,
    private readonly console?: ConsoleSessionSource,
  ) {
    this.#isPlatform = secretMatcher(platformToken);
    this.#origin = new URL(publicUrl).origin;
  }

  /** The principal of a request: its bearer key, else its console session; throws 401 or 403 otherwise. */
  async authenticate(req: AdminRequest): Promise<AdminPrincipal> {
    const header = header1(req.headers.authorization);
    const cookie = this.console && cookieOf(header1(req.headers.cookie), this.console.cookieName);
    // A key always wins: a script's request from a browser that also holds a session is the key's.
    if (header !== undefined || cookie === undefined) return this.#bearer(header);
    const principal = await this.console!.principal(cookie);
    if (!principal)
      throw fail(
        "PORTICO_ERR_ADMIN_UNAUTHENTICATED",
        "The console session has ended (signed out, expired, or no longer an admin): sign in again at /admin/console/sign-in",
        { presented: false },
      );
    if (!SAFE_METHODS.has(req.method)) this.#checkWrite(req, principal);
    return principal;
  }

  /** The cookie value of a console session, when the request carries one. */
  sessionCookie(req: AdminRequest): string | undefined {
    return this.console && cookieOf(header1(req.headers.cookie), this.console.cookieName);
  }

  /**
   * A cookie-authenticated write: not from another site, from Portico's own origin, with the
   * session's CSRF token (docs/admin-api.md "Console sessions"). A browser sends the cookie with
   * any request to Portico (SameSite=Strict keeps it off cross-site ones; this holds when it does not).
   */
  #checkWrite(req: AdminRequest, principal: AdminPrincipal): void {
    const site = header1(req.headers["sec-fetch-site"]);
    if (site !== undefined && site !== "same-origin")
      throw fail(
        "PORTICO_ERR_ADMIN_CSRF",
        `Forbidden: a console write must come from the console itself (Sec-Fetch-Site: ${site})`,
      );
    const origin = header1(req.headers.origin);
    if (origin !== this.#origin)
      throw fail(
        "PORTICO_ERR_ADMIN_CSRF",
        origin === undefined
          ? "Forbidden: a console write must carry an Origin header"
          : "Forbidden: a console write must come from Portico's own origin",
      );
    const token = header1(req.headers[CSRF_HEADER]);
    if (token === undefined || !macEquals(token, principal.session!.csrf))
      throw fail(
        "PORTICO_ERR_ADMIN_CSRF",
        "Forbidden: a console write must carry the session's X-Portico-CSRF header (GET /admin/v1/session gives it)",
      );
  }

  async #bearer(header: string | undefined): Promise<AdminPrincipal> {
    const token = bearerOf(header);
    if (token === undefined) {
      const detail = header
        ? "Malformed Authorization header: send `Authorization: Bearer <key>`"
        : "Authentication required: send `Authorization: Bearer <key>` with the platform key or an API key, or sign in to the console at /admin/console/sign-in";
      throw fail("PORTICO_ERR_ADMIN_UNAUTHENTICATED", detail, { presented: header !== undefined });
    }
    if (this.#isPlatform(token))
      return {
        tenant: null,
        actor: "platform token",
        via: "key",
        name: "platform token",
        caller: { sub: "admin:platform-token" },
      };
    const verdict = await this.keys.verify(token);
    if (!verdict.ok)
      throw fail("PORTICO_ERR_ADMIN_UNAUTHENTICATED", REASONS[verdict.reason], { presented: true });
    const { key } = verdict;
    return {
      tenant: key.tenant,
      actor: `api-key:${key.id} (${key.name})`,
      via: "key",
      name: key.name,
      caller: { sub: `admin:api-key:${key.id}` },
    };
  }
}

function header1(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A cookie's value in a Cookie header (RFC 6265 §5.4), when present and not empty. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(/; */)) {
    if (pair.startsWith(`${name}=`)) return pair.slice(name.length + 1) || undefined;
  }
  return undefined;
}
