// Who administers a tenant in the console (docs/admin-api.md "Console sessions"): a local user
// whose record has the role `tenant-admin`, or a subject (`sub`) named through the admin API — how
// `oidc` and `external` tenants' admins are named, since a role in an IdP's token is not enough.
// Both are read on every admin request a console session makes, so a removal counts at once.
import type { UserStore } from "../oauth/users.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

/** The role a local user's record carries to administer its tenant (docs/policy.md "Roles Portico knows"). */
export const TENANT_ADMIN_ROLE = "tenant-admin";

/** How many subjects a tenant may name admins: every list is bounded (docs/admin-api.md "Console sessions"). */
export const MAX_NAMED_ADMINS = 1000;

/** A person signed in to a tenant: their `sub`, and their username when they are a local user. */
export interface TenantPerson {
  readonly sub: string;
  readonly username?: string | undefined;
}

/** What an admin is, as policy and the audit log see them (their groups and roles as a token would carry). */
export interface TenantAdminStanding {
  readonly sub: string;
  readonly username?: string;
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
}

export class TenantAdmins {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly users: UserStore,
  ) {}

  /** The subjects named admins of a tenant, sorted. */
  async named(tenant: string): Promise<string[]> {
    return (await this.store.setMembers(this.keys.tenantAdmins(tenant))).sort();
  }

  async add(tenant: string, sub: string): Promise<void> {
    await this.store.setAdd(this.keys.tenantAdmins(tenant), sub);
  }

  /** False when the subject was not named. */
  async remove(tenant: string, sub: string): Promise<boolean> {
    const before = await this.named(tenant);
    if (!before.includes(sub)) return false;
    await this.store.setRemove(this.keys.tenantAdmins(tenant), sub);
    return true;
  }

  async removeTenant(tenant: string): Promise<void> {
    await this.store.del(this.keys.tenantAdmins(tenant));
  }

  /**
   * Whether `person` administers `tenant` now: a local user (still the same `sub`) with the role,
   * or a named subject. Undefined when not.
   */
  async standing(tenant: string, person: TenantPerson): Promise<TenantAdminStanding | undefined> {
    if (person.username !== undefined) {
      const user = await this.users.get(tenant, person.username);
      if (user?.sub === person.sub && user.roles?.includes(TENANT_ADMIN_ROLE))
        return {
          sub: user.sub,
          username: user.username,
          ...(user.groups && { groups: user.groups }),
          roles: user.roles,
        };
    }
    const named = await this.store.setMembers(this.keys.tenantAdmins(tenant));
    if (!named.includes(person.sub)) return undefined;
    return { sub: person.sub, ...(person.username !== undefined && { username: person.username }) };
  }
}
