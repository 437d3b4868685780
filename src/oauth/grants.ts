// What a user granted a client on a tenant, and the credentials that carry it (OAuth 2.1 §4.1,
// §4.3): single-use authorization codes, rotating refresh tokens with reuse detection, and
// remembered consent. Codes and refresh tokens are random, stored only as SHA-256 hashes, and
// name their tenant so the token endpoint finds them (`<tenant>.<random>`).
import { createHash, randomBytes } from "node:crypto";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

export interface Grant {
  readonly id: string;
  readonly tenant: string;
  readonly client_id: string;
  readonly sub: string;
  readonly scope: string;
  /** A local user's username: their current groups and roles are read at each token issuance. */
  readonly username?: string;
  /** A federated user's groups and roles, from the provider's claims at sign-in. */
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  readonly createdAt: string;
  readonly revokedAt?: string;
  /** Access tokens issued under the grant (jti → expiry, epoch s), to revoke them with it. */
  readonly tokens?: Readonly<Record<string, number>>;
}

export interface CodeRecord {
  readonly grantId: string;
  readonly client_id: string;
  readonly redirect_uri: string;
  readonly code_challenge: string;
  readonly scope: string;
  readonly resource: string;
  /**
   * Whether the code's exchange also issues a refresh token: the client's registered grant_types
   * included refresh_token at authorization time (RFC 7591 §2). Absent: no refresh token.
   */
  readonly refresh?: boolean;
  /** Set once redeemed: a second redemption is a replay. */
  readonly redeemed?: boolean;
}

export interface RefreshRecord {
  readonly grantId: string;
  readonly client_id: string;
  readonly scope: string;
  readonly resource: string;
  /** Set once rotated: presenting it again is reuse, and revokes the grant. */
  readonly rotated?: boolean;
}

export const CODE_TTL_SECONDS = 60;
export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;

function hash(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}

/** The tenant a code or refresh token names; undefined for anything malformed. */
export function tenantOfSecret(secret: string): string | undefined {
  const match = /^([a-z0-9][a-z0-9-]{0,62})\.[A-Za-z0-9_-]{43}$/.exec(secret);
  return match?.[1];
}

/** The field of a consent hash for a protected resource: the tenant's URL, or one virtual server's. */
function resourceField(server: string | undefined): string {
  return server === undefined ? "t" : `s:${server}`;
}

function newSecret(tenant: string): string {
  return `${tenant}.${randomBytes(32).toString("base64url")}`;
}

export type Redeemed<T> =
  { readonly ok: true; readonly record: T } | { readonly ok: false; readonly replay?: T };

export class GrantStore {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createGrant(input: Omit<Grant, "id" | "createdAt">): Promise<Grant> {
    const grant: Grant = {
      ...input,
      id: `g_${randomBytes(12).toString("base64url")}`,
      createdAt: this.now().toISOString(),
    };
    await this.store.set(this.keys.grant(grant.tenant, grant.id), JSON.stringify(grant));
    await this.store.setAdd(this.keys.grantIndex(grant.tenant), grant.id);
    return grant;
  }

  async grant(tenant: string, id: string): Promise<Grant | undefined> {
    const raw = await this.store.get(this.keys.grant(tenant, id));
    return raw === null ? undefined : (JSON.parse(raw) as Grant);
  }

  async grants(tenant: string): Promise<Grant[]> {
    const ids = await this.store.setMembers(this.keys.grantIndex(tenant));
    return (await Promise.all(ids.map((id) => this.grant(tenant, id)))).filter(
      (g): g is Grant => g !== undefined,
    );
  }

  /** Forgets a deleted tenant's grants (revoke them first: revocation is what stops their tokens). */
  async removeTenant(tenant: string): Promise<void> {
    const ids = await this.store.setMembers(this.keys.grantIndex(tenant));
    await this.store.del(this.keys.grantIndex(tenant), ...ids.map((id) => this.keys.grant(tenant, id)));
  }

  /** Records an access token issued under a grant, so revoking the grant revokes it too. */
  async noteToken(tenant: string, grantId: string, jti: string, expiresAt: number): Promise<void> {
    await this.#update(tenant, grantId, (g) => {
      const now = Math.floor(this.now().getTime() / 1000);
      const live = Object.fromEntries(Object.entries(g.tokens ?? {}).filter(([, exp]) => exp > now));
      return { ...g, tokens: { ...live, [jti]: expiresAt } };
    });
  }

  /** Marks a grant revoked; returns it (with the access tokens to revoke) when it was live. */
  /**
   * Revokes a grant; the user's remembered consent to its client on the tenant goes with it, so
   * a sign-in after a revocation asks again. Undefined when it was revoked already.
   */
  async revokeGrant(tenant: string, grantId: string): Promise<Grant | undefined> {
    let revoked: Grant | undefined;
    await this.#update(tenant, grantId, (g) => {
      if (g.revokedAt) return undefined;
      revoked = { ...g, revokedAt: this.now().toISOString() };
      return revoked;
    });
    if (revoked) await this.store.del(this.keys.consents(tenant, revoked.sub, hash(revoked.client_id)));
    return revoked;
  }

  async issueCode(tenant: string, record: CodeRecord): Promise<string> {
    const code = newSecret(tenant);
    await this.store.set(this.keys.authCode(tenant, hash(code)), JSON.stringify(record), {
      ttlSeconds: CODE_TTL_SECONDS,
    });
    return code;
  }

  /** A code's record, read without redeeming it (whoever presents it is checked first). */
  async peekCode(code: string): Promise<CodeRecord | undefined> {
    const tenant = tenantOfSecret(code);
    if (!tenant) return undefined;
    const raw = await this.store.get(this.keys.authCode(tenant, hash(code)));
    return raw === null ? undefined : (JSON.parse(raw) as CodeRecord);
  }

  /** Redeems a code once; a second attempt reports the replay (the caller revokes its grant). */
  async redeemCode(code: string): Promise<Redeemed<CodeRecord>> {
    const tenant = tenantOfSecret(code);
    if (!tenant) return { ok: false };
    return this.#redeem<CodeRecord>(
      this.keys.authCode(tenant, hash(code)),
      CODE_TTL_SECONDS,
      (r) => ({
        ...r,
        redeemed: true,
      }),
      (r) => r.redeemed === true,
    );
  }

  async issueRefresh(tenant: string, record: RefreshRecord): Promise<string> {
    const token = newSecret(tenant);
    await this.store.set(this.keys.refreshToken(tenant, hash(token)), JSON.stringify(record), {
      ttlSeconds: REFRESH_TTL_SECONDS,
    });
    // The client drops its old token for this one: with the rotation mark and the grant written
    // before it, it must outlive a failover (docs/storage.md "Replication"). Unconfirmed, the token
    // is still given: an error would make the client retry with the old one, which counts as reuse.
    await this.store.waitForReplica(this.keys.replicationProbe()).catch(() => false);
    return token;
  }

  /** A refresh token's record, read without using it (revocation and client checks come first). */
  async peekRefresh(token: string): Promise<RefreshRecord | undefined> {
    const tenant = tenantOfSecret(token);
    if (!tenant) return undefined;
    const raw = await this.store.get(this.keys.refreshToken(tenant, hash(token)));
    return raw === null ? undefined : (JSON.parse(raw) as RefreshRecord);
  }

  /** Uses a refresh token once (rotation); presenting a rotated one again reports the reuse. */
  async useRefresh(token: string): Promise<Redeemed<RefreshRecord>> {
    const tenant = tenantOfSecret(token);
    if (!tenant) return { ok: false };
    return this.#redeem<RefreshRecord>(
      this.keys.refreshToken(tenant, hash(token)),
      REFRESH_TTL_SECONDS,
      (r) => ({
        ...r,
        rotated: true,
      }),
      (r) => r.rotated === true,
    );
  }

  /**
   * Scopes a user already consented to for a client on one protected resource of a tenant: its
   * URL, or virtual server `server`'s (docs/oauth.md "Consent"). Consent on one is not consent on another.
   */
  async consented(tenant: string, sub: string, clientId: string, server?: string): Promise<string[]> {
    const raw = await this.store.hashGet(
      this.keys.consents(tenant, sub, hash(clientId)),
      resourceField(server),
    );
    if (raw === null) return [];
    // Each resource's consent lasts its own 30 days: consent given later on another does not extend it.
    const { scopes, until } = JSON.parse(raw) as { scopes: string[]; until: number };
    return until > this.now().getTime() ? scopes : [];
  }

  async rememberConsent(
    tenant: string,
    sub: string,
    clientId: string,
    server: string | undefined,
    scopes: readonly string[],
  ): Promise<void> {
    const merged = [...new Set([...(await this.consented(tenant, sub, clientId, server)), ...scopes])];
    const key = this.keys.consents(tenant, sub, hash(clientId));
    const value = { scopes: merged, until: this.now().getTime() + REFRESH_TTL_SECONDS * 1000 };
    await this.store.hashSet(key, resourceField(server), JSON.stringify(value), REFRESH_TTL_SECONDS);
  }

  async #redeem<T>(
    key: string,
    ttlSeconds: number,
    mark: (r: T) => T,
    used: (r: T) => boolean,
  ): Promise<Redeemed<T>> {
    const raw = await this.store.get(key);
    if (raw === null) return { ok: false };
    const record = JSON.parse(raw) as T;
    if (used(record)) return { ok: false, replay: record };
    // Compare-and-set: of two concurrent redemptions exactly one wins; the other sees a replay.
    if (!(await this.store.compareAndSet(key, raw, JSON.stringify(mark(record)))))
      return { ok: false, replay: record };
    await this.store.expire(key, ttlSeconds);
    return { ok: true, record };
  }

  async #update(tenant: string, id: string, change: (g: Grant) => Grant | undefined): Promise<void> {
    const key = this.keys.grant(tenant, id);
    for (let attempt = 0; attempt < 10; attempt++) {
      const raw = await this.store.get(key);
      if (raw === null) return;
      const next = change(JSON.parse(raw) as Grant);
      if (!next) return;
      if (await this.store.compareAndSet(key, raw, JSON.stringify(next))) {
        await this.store.waitForReplica(this.keys.replicationProbe()).catch(() => false); // a revoked grant must not come back with a failover
        return;
      }
    }
  }
}
