// The catalogs of one tenant's users, for a tenant with per-user providers (docs/architecture.md §3):
// each user's lists are the tenant's providers with every per-user provider replaced by that user's
// own (Provider.forUser), one set of profile views per user. Bounded: at most MAX_USERS users per
// tenant on a replica, least recently used out (their providers are kept by their per-user
// provider, which bounds them too); a user's views are built again on their next request.
import type { Catalog } from "../providers/catalog.js";
import type { ListChangeKind, Provider } from "../providers/types.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import { ProfileViews } from "./profile-views.js";

/** Users whose catalogs a tenant keeps on one replica. */
export const MAX_USERS = 256;
/** Profiles kept per user (a user's clients are few). */
export const MAX_USER_PROFILES = 4;

interface UserEntry {
  /** The tenant's provider list the views were built from: a reload builds them again. */
  readonly from: readonly Provider[];
  /** The user's own providers in it, which may close (evicted, reconnected). */
  readonly own: readonly Provider[];
  readonly views: ProfileViews;
}

/** Entries a per-user provider says are closed (user-upstream.ts): the user's views are rebuilt. */
function isClosed(p: Provider): boolean {
  return (p as { closed?: boolean }).closed === true;
}

export class UserViews {
  readonly #users = new Map<string, UserEntry>();
  readonly #pending = new Map<string, Promise<UserEntry>>();

  /** `providers` gives the tenant's providers now; `built` sees each catalog built. */
  constructor(
    private readonly providers: () => readonly Provider[],
    private readonly built: (catalog: Catalog) => void,
  ) {}

  get size(): number {
    return this.#users.size;
  }

  /** The catalog of `user` under `profile`; at once when current. */
  get(user: string, profile: CapabilityProfile): Catalog | Promise<Catalog> {
    const entry = this.#users.get(user);
    if (entry && entry.from === this.providers() && !entry.own.some(isClosed)) {
      // Most recently used last: the first is the one to drop.
      this.#users.delete(user);
      this.#users.set(user, entry);
      return entry.views.get(profile);
    }
    return this.#resolve(user).then((e) => e.views.get(profile));
  }

  /** Rebuilds every user's views of `profile` (all without one): a shared provider's lists changed. */
  rebuild(profile?: CapabilityProfile): void {
    for (const entry of this.#users.values()) entry.views.rebuild(profile);
  }

  /** Catalogs built now for `user` (to tell what a change changed). */
  current(user: string): Catalog[] {
    return this.#users.get(user)?.views.current() ?? [];
  }

  /**
   * What `user` sees changed: their views are dropped and built again for the profiles they used;
   * resolves with the lists that differ (every list when none was built here).
   */
  async changed(user: string): Promise<ListChangeKind[]> {
    const before = this.current(user);
    this.#users.delete(user);
    if (before.length === 0) return ["tools", "prompts", "resources"];
    const kinds = new Set<ListChangeKind>();
    for (const old of before) {
      const now = await this.get(user, old.profile);
      if (JSON.stringify(now.tools) !== JSON.stringify(old.tools)) kinds.add("tools");
      if (JSON.stringify(now.prompts) !== JSON.stringify(old.prompts)) kinds.add("prompts");
      if (JSON.stringify([now.resources, now.templates]) !== JSON.stringify([old.resources, old.templates]))
        kinds.add("resources");
    }
    return [...kinds];
  }

  /** Builds a user's views: their own providers first (one resolution per user at a time). */
  #resolve(user: string): Promise<UserEntry> {
    let pending = this.#pending.get(user);
    if (pending) return pending;
    pending = this.#build(user).finally(() => this.#pending.delete(user));
    this.#pending.set(user, pending);
    return pending;
  }

  async #build(user: string): Promise<UserEntry> {
    const from = this.providers();
    const list = await Promise.all(from.map(async (p) => (p.forUser ? p.forUser(user) : p)));
    const own = list.filter((p, i) => p !== from[i]);
    const entry: UserEntry = {
      from,
      own,
      views: new ProfileViews(() => list, this.built, MAX_USER_PROFILES),
    };
    this.#users.delete(user);
    this.#users.set(user, entry);
    while (this.#users.size > MAX_USERS) this.#users.delete(this.#users.keys().next().value!);
    return entry;
  }
}
