// Admin API keys (docs/architecture.md §4: token-like values are stored hashed). A key is 256 random bits,
// shown once; the store holds only its SHA-256, under which its record is found when it is used.
// Platform keys may do anything; tenant keys only touch their own tenant.
import { createHash } from "node:crypto";
import { Type, type Static } from "@sinclair/typebox";
import { randomId } from "../crypto/secrets.js";
import { described, named, Timestamp } from "../records/schema-kit.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

/** A key as stored and shown; its token never is, after the answer that creates it. */
export const ApiKey = named(
  "ApiKey",
  Type.Object(
    {
      id: Type.String({ description: "Key id, used to revoke it." }),
      name: Type.String({
        description: "What the key is for, e.g. the script or person using it.",
        minLength: 1,
        maxLength: 200,
      }),
      tenant: Type.Union([Type.String(), Type.Null()], {
        description: "The tenant the key is scoped to; null for platform keys.",
      }),
      createdAt: Timestamp,
      createdBy: Type.String({ description: "Who created it." }),
      expiresAt: Type.Optional(described(Timestamp, "When the key stops working; absent: never.")),
      revokedAt: Type.Optional(Timestamp),
      lastUsedAt: Type.Optional(described(Timestamp, "Approximate (updated at most once a minute).")),
    },
    { additionalProperties: false },
  ),
);
export type ApiKeyRecord = Static<typeof ApiKey>;

export type Verdict =
  | { readonly ok: true; readonly key: ApiKeyRecord }
  | { readonly ok: false; readonly reason: "unknown" | "revoked" | "expired" };

/** Every key starts with this, so secret scanners and people can recognise one. */
export const KEY_PREFIX = "portico_";
const KEY_SHAPE = /^portico_[A-Za-z0-9_-]{43}$/;
/** lastUsedAt is approximate: written at most this often per key and replica. */
const LAST_USED_EVERY_MS = 60_000;

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * The index a scope's keys are listed in. A tenant may be named "platform", so the index is only
 * where to look: a record counts for a scope only when its own `tenant` says so (see #inScope).
 */
function scopeOf(tenant: string | null): string {
  return tenant ?? "platform";
}

export class ApiKeyStore {
  readonly #lastUsed = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Creates a key; the token is returned here and never again. */
  async create(
    tenant: string | null,
    input: { name: string; expiresAt?: string },
    createdBy: string,
  ): Promise<{ key: ApiKeyRecord; token: string }> {
    const token = KEY_PREFIX + randomId(32);
    const hash = hashOf(token);
    const key: ApiKeyRecord = {
      id: `key_${randomId(12)}`,
      name: input.name,
      tenant,
      createdAt: this.now().toISOString(),
      createdBy,
      ...(input.expiresAt ? { expiresAt: new Date(input.expiresAt).toISOString() } : {}),
    };
    await this.store.set(this.keys.apiKey(hash), JSON.stringify(key));
    await this.store.hashSet(this.keys.apiKeyIndex(scopeOf(tenant)), key.id, hash);
    return { key, token };
  }

  /** The scope's keys, newest first (revoked and expired ones included, marked). */
  async list(tenant: string | null): Promise<ApiKeyRecord[]> {
    const index = await this.store.hashGetAll(this.keys.apiKeyIndex(scopeOf(tenant)));
    const records = await Promise.all(Object.values(index).map((hash) => this.#read(hash, tenant)));
    return records
      .filter((k): k is ApiKeyRecord => k !== undefined)
      .sort((a, b) =>
        a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1,
      );
  }

  async get(tenant: string | null, id: string): Promise<ApiKeyRecord | undefined> {
    const hash = await this.store.hashGet(this.keys.apiKeyIndex(scopeOf(tenant)), id);
    return hash === null ? undefined : this.#read(hash, tenant);
  }

  /** Revokes a key at once on every replica; the record stays, marked, for the list and audit. */
  async revoke(tenant: string | null, id: string): Promise<ApiKeyRecord | undefined> {
    const hash = await this.store.hashGet(this.keys.apiKeyIndex(scopeOf(tenant)), id);
    const key = hash === null ? undefined : await this.#read(hash, tenant);
    if (!hash || !key) return undefined;
    if (key.revokedAt) return key;
    const revoked = { ...key, revokedAt: this.now().toISOString() };
    await this.store.set(this.keys.apiKey(hash), JSON.stringify(revoked));
    return revoked;
  }

  /** Forgets every key of a tenant (the tenant is being deleted). */
  async removeTenant(tenant: string): Promise<void> {
    const index = this.keys.apiKeyIndex(scopeOf(tenant));
    const entries = Object.entries(await this.store.hashGetAll(index));
    // Entries whose record is gone are dropped too; a key of another scope stays.
    const own = await Promise.all(
      entries.map(async ([, hash]) => {
        const key = await this.#read(hash);
        return key === undefined || key.tenant === tenant;
      }),
    );
    const mine = entries.filter((_, i) => own[i]);
    if (mine.length === entries.length) {
      await this.store.del(index, ...entries.map(([, h]) => this.keys.apiKey(h)));
      return;
    }
    // A tenant named "platform" shares the platform keys' index: only its own keys go.
    await Promise.all(mine.map(([id]) => this.store.hashDel(index, id)));
    if (mine.length > 0) await this.store.del(...mine.map(([, h]) => this.keys.apiKey(h)));
  }

  /** Checks a presented key: unknown, revoked, expired, or good. */
  async verify(token: string): Promise<Verdict> {
    if (!KEY_SHAPE.test(token)) return { ok: false, reason: "unknown" };
    const hash = hashOf(token);
    const key = await this.#read(hash);
    if (!key) return { ok: false, reason: "unknown" };
    if (key.revokedAt) return { ok: false, reason: "revoked" };
    if (key.expiresAt && Date.parse(key.expiresAt) <= this.now().getTime())
      return { ok: false, reason: "expired" };
    this.#touch(hash, key);
    return { ok: true, key };
  }

  #touch(hash: string, key: ApiKeyRecord): void {
    const now = this.now().getTime();
    if (now - (this.#lastUsed.get(hash) ?? 0) < LAST_USED_EVERY_MS) return;
    this.#lastUsed.set(hash, now);
    const used = JSON.stringify({ ...key, lastUsedAt: new Date(now).toISOString() });
    // Only over an unchanged record: a revocation written meanwhile must win.
    const key_ = this.keys.apiKey(hash);
    const write = async () => {
      const raw = await this.store.get(key_);
      if (raw !== null && !raw.includes('"revokedAt"')) await this.store.compareAndSet(key_, raw, used);
    };
    void write().catch(() => undefined);
  }

  /** The record of a hash; with a scope, only when the key belongs to it (null: a platform key). */
  async #read(hash: string, scope?: string | null): Promise<ApiKeyRecord | undefined> {
    const raw = await this.store.get(this.keys.apiKey(hash));
    const key = raw === null ? undefined : (JSON.parse(raw) as ApiKeyRecord);
    return key === undefined || (scope !== undefined && key.tenant !== scope) ? undefined : key;
  }
}
