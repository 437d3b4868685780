// The console's sessions (docs/admin-api.md "Console sessions"): created by the sign-in pages
// (sign-in.ts), kept in the store by the SHA-256 of the cookie (never the cookie itself) with a
// CSRF token, 30 minutes idle (each use slides it) and 8 hours at most. The cookie is HttpOnly,
// SameSite=Strict, Path=/, `__Host-`/Secure on https. Each use checks again that its user is an
// admin: a platform user that still exists (the same record, not one made again under the name), a
// tenant admin by their user record or the tenant's named admins (admin/tenant-admins.ts), so a
// removal counts at the next request.
import { createHash } from "node:crypto";
import type { FastifyReply } from "fastify";
import type { AdminPrincipal, ConsoleSessionSource } from "../admin/auth.js";
import type { PlatformUsers } from "../admin/platform-users.js";
import type { TenantAdmins } from "../admin/tenant-admins.js";
import { randomId } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

export const IDLE_SECONDS = 30 * 60;
export const ABSOLUTE_SECONDS = 8 * 3600;

/** Who signed in: a platform user, or a person of a tenant. */
export type ConsoleIdentity =
  | {
      readonly kind: "platform";
      readonly username: string;
      /** The user record's creation: a user deleted and made again under the name is someone new. */
      readonly createdAt: string;
    }
  | {
      readonly kind: "tenant";
      readonly tenant: string;
      readonly sub: string;
      /** A local user's username; absent for a user of the tenant's identity provider. */
      readonly username?: string;
      /** What the console shows: a username or e-mail, else the sub. */
      readonly name: string;
    };

interface StoredSession {
  readonly identity: ConsoleIdentity;
  readonly csrf: string;
  /** Unix ms after which the session is over, however recently used. */
  readonly endsAt: number;
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

export interface ConsoleSessionsDeps {
  readonly store: Store;
  readonly keys: Keys;
  readonly publicUrl: string;
  readonly platformUsers: PlatformUsers;
  readonly tenantAdmins: TenantAdmins;
  /** Whether a tenant exists (a deleted tenant's admins are admins of nothing). */
  readonly tenantExists: (tenant: string) => boolean;
  readonly now?: () => number;
}

export class ConsoleSessions implements ConsoleSessionSource {
  readonly cookieName: string;
  readonly clearCookie: string;
  readonly #secure: boolean;
  readonly #now: () => number;

  constructor(private readonly deps: ConsoleSessionsDeps) {
    this.#secure = deps.publicUrl.startsWith("https:");
    this.cookieName = this.#secure ? "__Host-portico-console" : "portico-console";
    this.clearCookie = this.#cookie("", 0);
    this.#now = deps.now ?? Date.now;
  }

  /** A new session for someone just signed in; sets its cookie on `reply`. */
  async create(reply: FastifyReply, identity: ConsoleIdentity): Promise<void> {
    const id = randomId(32);
    const record: StoredSession = {
      identity,
      csrf: randomId(24),
      endsAt: this.#now() + ABSOLUTE_SECONDS * 1000,
    };
    await this.deps.store.set(this.deps.keys.consoleSession(digest(id)), JSON.stringify(record), {
      ttlSeconds: IDLE_SECONDS,
    });
    // The cookie lives as long as the session can: the server's idle expiry is what ends it early.
    void reply.header("set-cookie", this.#cookie(id, ABSOLUTE_SECONDS));
  }

  async principal(cookie: string): Promise<AdminPrincipal | undefined> {
    const key = this.deps.keys.consoleSession(digest(cookie));
    const raw = await this.deps.store.getAndTouch(key, IDLE_SECONDS);
    if (raw === null) return undefined;
    const session = JSON.parse(raw) as StoredSession;
    const now = this.#now();
    const left = Math.floor((session.endsAt - now) / 1000);
    if (left <= 0) {
      await this.deps.store.del(key);
      return undefined;
    }
    if (left < IDLE_SECONDS) await this.deps.store.expire(key, left);
    const principal = await this.#standing(session, new Date(now + Math.min(left, IDLE_SECONDS) * 1000));
    // No longer an admin: the session is over, not merely refused.
    if (!principal) await this.deps.store.del(key);
    return principal;
  }

  async end(cookie: string): Promise<void> {
    await this.deps.store.del(this.deps.keys.consoleSession(digest(cookie)));
  }

  /** The principal a session stands for now, read from the user records; undefined when no longer an admin. */
  async #standing(session: StoredSession, expires: Date): Promise<AdminPrincipal | undefined> {
    const { identity, csrf } = session;
    const base = { via: "session" as const, session: { csrf, expiresAt: expires.toISOString() } };
    if (identity.kind === "platform") {
      const user = await this.deps.platformUsers.get(identity.username);
      if (user?.createdAt !== identity.createdAt) return undefined;
      return {
        ...base,
        tenant: null,
        actor: `console:platform ${identity.username}`,
        name: identity.username,
        caller: { sub: `admin:platform:${identity.username}` },
      };
    }
    if (!this.deps.tenantExists(identity.tenant)) return undefined;
    const standing = await this.deps.tenantAdmins.standing(identity.tenant, identity);
    if (!standing) return undefined;
    return {
      ...base,
      tenant: identity.tenant,
      actor: `console:user ${identity.name} (tenant ${identity.tenant})`,
      name: identity.name,
      caller: standing,
    };
  }

  #cookie(value: string, maxAge: number): string {
    return `${this.cookieName}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${this.#secure ? "; Secure" : ""}`;
  }
}
