// Connected accounts at rest (docs/storage.md "Connected accounts"): one sealed record per
// (tenant, user, provider) holding the user's tokens at that upstream, two indexes (a user's
// providers, a provider's users), the refresh lock that makes refreshes single-flight across
// replicas, and the channel that tells every replica of each change.
import { createHash } from "node:crypto";
import type { Secrets } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store, Unsubscribe } from "../store/store.js";
import { openSealed, resealStored, seal, type ResealTally } from "../tenants/sealed.js";
import type { ClientMode } from "./client-identity.js";
import type { AccountChange } from "../providers/user-tokens.js";

/** One user's grant at one provider's upstream, as stored (sealed as a whole). */
export interface AccountTokens {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Epoch milliseconds; absent when the server gave no `expires_in`. */
  readonly expiresAt?: number;
  readonly scope?: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly mode: ClientMode;
  readonly connectedAt: string;
  readonly refreshedAt?: string;
  /**
   * Where the provider sent its requests when the user connected (its `url`, or each http tool's):
   * the token is used only while the provider's requests stay there (connected-accounts.ts).
   */
  readonly destinations: readonly string[];
}

/** What anyone may see of an account: never a token. */
export interface AccountView {
  readonly provider: string;
  readonly user: string;
  readonly issuer: string;
  readonly scope?: string;
  readonly connectedAt: string;
  readonly refreshedAt?: string;
  readonly expiresAt?: string;
}

export function viewOf(provider: string, user: string, t: AccountTokens): AccountView {
  return {
    provider,
    user,
    issuer: t.issuer,
    ...(t.scope !== undefined && { scope: t.scope }),
    connectedAt: t.connectedAt,
    ...(t.refreshedAt !== undefined && { refreshedAt: t.refreshedAt }),
    ...(t.expiresAt !== undefined && { expiresAt: new Date(t.expiresAt).toISOString() }),
  };
}

/** A user's `sub` as it appears in keys: a digest, so any subject spelling makes a safe key. */
export function userKey(user: string): string {
  return createHash("sha256").update(user).digest("base64url").slice(0, 22);
}

export const REFRESH_LOCK_SECONDS = 15;

export class AccountStore {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly secrets: Secrets,
  ) {}

  /** The sealed record as stored (compare it to tell whether another replica changed it). */
  async raw(tenant: string, user: string, provider: string): Promise<string | null> {
    return this.store.get(this.keys.account(tenant, userKey(user), provider));
  }

  /** The record, opened; undefined when absent or when no key opens it (then it is dropped). */
  async get(tenant: string, user: string, provider: string): Promise<AccountTokens | undefined> {
    const raw = await this.raw(tenant, user, provider);
    return raw === null ? undefined : this.open(raw);
  }

  open(raw: string): AccountTokens | undefined {
    const opened = openSealed(this.secrets, raw, "accounts");
    return opened && (JSON.parse(opened.plaintext) as AccountTokens);
  }

  async put(tenant: string, user: string, provider: string, tokens: AccountTokens): Promise<void> {
    const key = this.keys.account(tenant, userKey(user), provider);
    await this.store.set(key, seal(this.secrets, JSON.stringify(tokens), "accounts"));
    await this.store.setAdd(this.keys.accountProviders(tenant, userKey(user)), provider);
    await this.store.setAdd(this.keys.accountUsers(tenant, provider), user);
  }

  /**
   * Removes the record if it is still `expected` (the refresh that failed read it), or whatever it
   * is when `expected` is undefined; returns the removed tokens (to revoke them upstream).
   */
  async remove(
    tenant: string,
    user: string,
    provider: string,
    expected?: string,
  ): Promise<AccountTokens | undefined> {
    const key = this.keys.account(tenant, userKey(user), provider);
    const raw = expected ?? (await this.store.get(key));
    if (raw === null || !(await this.store.compareAndSet(key, raw, null))) return undefined;
    await this.store.setRemove(this.keys.accountProviders(tenant, userKey(user)), provider);
    await this.store.setRemove(this.keys.accountUsers(tenant, provider), user);
    return this.open(raw);
  }

  /** Seals every account at a provider again under the current key (a key rotation). */
  async reseal(tenant: string, provider: string, tally: ResealTally): Promise<void> {
    for (const user of await this.usersOf(tenant, provider)) {
      const key = this.keys.account(tenant, userKey(user), provider);
      await resealStored(this.store, key, this.secrets, "accounts", tally, () => ({
        tenant,
        pointer: `/accounts/${provider}/${user.replaceAll("~", "~0").replaceAll("/", "~1")}`,
      }));
    }
  }

  /** The providers a user connected (ids). */
  async providersOf(tenant: string, user: string): Promise<string[]> {
    return (await this.store.setMembers(this.keys.accountProviders(tenant, userKey(user)))).sort();
  }

  /** The users connected to a provider (their `sub`). */
  async usersOf(tenant: string, provider: string): Promise<string[]> {
    return (await this.store.setMembers(this.keys.accountUsers(tenant, provider))).sort();
  }

  /** Takes the refresh lock for `owner`; false when another replica holds it. */
  async lock(tenant: string, user: string, provider: string, owner: string): Promise<boolean> {
    const key = this.keys.accountRefreshLock(tenant, userKey(user), provider);
    return this.store.set(key, owner, { onlyIfAbsent: true, ttlSeconds: REFRESH_LOCK_SECONDS });
  }

  async locked(tenant: string, user: string, provider: string): Promise<boolean> {
    return (await this.store.get(this.keys.accountRefreshLock(tenant, userKey(user), provider))) !== null;
  }

  async unlock(tenant: string, user: string, provider: string, owner: string): Promise<void> {
    await this.store.compareAndSet(
      this.keys.accountRefreshLock(tenant, userKey(user), provider),
      owner,
      null,
    );
  }

  async publish(change: AccountChange): Promise<void> {
    await this.store.publish(this.keys.accountsChannel(), JSON.stringify(change));
  }

  /** Every change, from any replica (this one included). */
  async follow(listener: (change: AccountChange) => void): Promise<Unsubscribe> {
    return this.store.subscribe(this.keys.accountsChannel(), (raw) => {
      let change: AccountChange;
      try {
        change = JSON.parse(raw) as AccountChange;
      } catch {
        return; // not ours
      }
      listener(change);
    });
  }
}
