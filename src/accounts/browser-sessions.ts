// Who is at the browser on the accounts pages (docs/upstream-auth.md "Signing in"): a session
// created by signing in (sign-in.ts), kept in the store by the SHA-256 of its cookie, bound to one
// tenant and one user `sub`, with a CSRF token for its forms; an hour long. Cookies are HttpOnly,
// SameSite=Lax, limited to /accounts, and `__Host-`/Secure on https deployments.
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { macEquals, randomId } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

export const SESSION_TTL_SECONDS = 3600;

export interface BrowserSession {
  readonly tenant: string;
  readonly sub: string;
  /** What the pages show: a username or e-mail, else the sub. */
  readonly name: string;
  readonly csrf: string;
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

export class BrowserSessions {
  readonly #secure: boolean;
  readonly sessionCookie: string;
  readonly signInCookie: string;

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    publicUrl: string,
  ) {
    this.#secure = publicUrl.startsWith("https:");
    // `__Host-` needs Path=/ : the session cookie is scoped by name, not by path, on https.
    this.sessionCookie = this.#secure ? "__Host-portico-accounts" : "portico-accounts";
    this.signInCookie = this.#secure ? "__Host-portico-accounts-signin" : "portico-accounts-signin";
  }

  /** A new session for a signed-in user; sets its cookie. */
  async create(reply: FastifyReply, session: Omit<BrowserSession, "csrf">): Promise<void> {
    const id = randomId(32);
    const record: BrowserSession = { ...session, csrf: randomId() };
    await this.store.set(this.keys.accountSession(digest(id)), JSON.stringify(record), {
      ttlSeconds: SESSION_TTL_SECONDS,
    });
    this.#setCookie(reply, this.sessionCookie, id, SESSION_TTL_SECONDS);
  }

  /** The browser's session, when it has one and it is for `tenant`. */
  async of(req: FastifyRequest, tenant: string): Promise<BrowserSession | undefined> {
    const id = cookieOf(req, this.sessionCookie);
    if (!id) return undefined;
    const raw = await this.store.get(this.keys.accountSession(digest(id)));
    const session = raw === null ? undefined : (JSON.parse(raw) as BrowserSession);
    return session?.tenant === tenant ? session : undefined;
  }

  /** What binds a flow to this browser: the digest of its session cookie. */
  binding(req: FastifyRequest): string | undefined {
    const id = cookieOf(req, this.sessionCookie);
    return id ? digest(id) : undefined;
  }

  /** True when a form's CSRF token is the session's. */
  csrfMatches(session: BrowserSession, token: unknown): boolean {
    return typeof token === "string" && macEquals(token, session.csrf);
  }

  /** Marks the browser that starts a sign-in (its `state`), so only it can finish it. */
  startSignIn(reply: FastifyReply, state: string): void {
    this.#setCookie(reply, this.signInCookie, state, 600);
  }

  /** True when the browser finishing a sign-in is the one that started it. */
  signInMatches(req: FastifyRequest, state: string | null): boolean {
    const cookie = cookieOf(req, this.signInCookie);
    return state !== null && cookie !== undefined && cookie === state;
  }

  #setCookie(reply: FastifyReply, name: string, value: string, maxAge: number): void {
    const path = this.#secure ? "/" : "/accounts";
    const cookie = `${name}=${value}; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${this.#secure ? "; Secure" : ""}`;
    const previous = reply.getHeader("set-cookie");
    const list = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
    void reply.header("set-cookie", [...list, cookie]);
  }
}

export function cookieOf(req: FastifyRequest, name: string): string | undefined {
  return (req.headers.cookie ?? "")
    .split(/; */)
    .find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1);
}
