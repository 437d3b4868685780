// A tenant's catalogs, one per capability profile in use on this replica (docs/architecture.md §3).
// A profile's catalog is built once every provider that lists per profile (Provider.prepare) has
// listed under it, one preparation at a time per profile, and rebuilt when a provider's entries
// change. Profiles are few in practice; the cache is bounded anyway (least recently used out), so
// however many ways clients spell their capabilities, the views stay within MAX_PROFILES.
import { Catalog } from "../providers/catalog.js";
import type { Provider } from "../providers/types.js";
import { NO_PROFILE, type CapabilityProfile } from "../protocol/profile.js";

/** Profiles whose catalog a tenant keeps on one replica (the no-capabilities one is always kept). */
export const MAX_PROFILES = 32;

interface View {
  readonly profile: CapabilityProfile;
  /** Current when set; unset until the providers prepared this profile. */
  catalog: Catalog | undefined;
  /** Providers whose prepare(profile) settled (an unreachable upstream counts: it lists nothing). */
  readonly prepared: WeakSet<Provider>;
  pending: Promise<Catalog> | undefined;
  /** When it was last asked for (a counter): the least recent goes first when one is too many. */
  used: number;
}

export class ProfileViews {
  readonly #views = new Map<string, View>();
  #tick = 0;

  /**
   * `providers` gives the tenant's providers now; `built` sees each catalog built (to log and
   * report what it left out).
   */
  constructor(
    private readonly providers: () => readonly Provider[],
    private readonly built: (catalog: Catalog) => void,
    private readonly max = MAX_PROFILES,
  ) {
    this.#views.set(NO_PROFILE.key, this.#view(NO_PROFILE));
  }

  get size(): number {
    return this.#views.size;
  }

  /** The catalog of clients that declared nothing, as it stands. */
  get base(): Catalog {
    // Unprepared (a provider added a moment ago): its entries as they are, not kept.
    return this.#views.get(NO_PROFILE.key)!.catalog ?? new Catalog(this.providers(), NO_PROFILE);
  }

  /** Every catalog built now, by profile key. */
  current(): Catalog[] {
    return [...this.#views.values()].flatMap((v) => (v.catalog ? [v.catalog] : []));
  }

  profiles(): CapabilityProfile[] {
    return [...this.#views.values()].map((v) => v.profile);
  }

  /**
   * The catalog of `profile`: at once when it is current (the hot path allocates nothing), else
   * once every provider prepared the profile. Concurrent first uses share one preparation.
   */
  get(profile: CapabilityProfile): Catalog | Promise<Catalog> {
    let view = this.#views.get(profile.key);
    if (view) {
      view.used = ++this.#tick;
      if (view.catalog) return view.catalog;
    } else {
      view = this.#view(profile);
      this.#views.set(profile.key, view);
      this.#evict();
    }
    return this.#start(view);
  }

  /** Rebuilds the views of `profile` (every view without one) from the providers' entries now. */
  rebuild(profile?: CapabilityProfile): void {
    for (const view of this.#views.values())
      if (profile === undefined || view.profile.base.key === profile.base.key) this.#refresh(view);
  }

  /** Brings every view up to date with the providers now, preparing the ones new to a profile. */
  async settle(): Promise<void> {
    for (const view of this.#views.values()) this.#refresh(view);
    const stale = [...this.#views.values()].filter((v) => !v.catalog);
    // Not a use: a reload leaves the order in which profiles were last asked for as it was.
    await Promise.all(stale.map(async (v) => this.#start(v)));
  }

  #view(profile: CapabilityProfile): View {
    return { profile, catalog: undefined, prepared: new WeakSet(), pending: undefined, used: ++this.#tick };
  }

  /** A view's catalog again when its providers are all prepared; otherwise unset until used. */
  #refresh(view: View): void {
    const ready = this.providers().every((p) => !p.prepare || view.prepared.has(p));
    view.catalog = ready ? this.#build(view.profile) : undefined;
  }

  /** The view's preparation under way, or a new one (one at a time per view). */
  #start(view: View): Promise<Catalog> {
    if (view.pending) return view.pending;
    const pending = this.#prepare(view);
    // Cleared once settled, from outside: #prepare may settle before it could be stored.
    view.pending = pending;
    const clear = () => {
      if (view.pending === pending) view.pending = undefined;
    };
    pending.then(clear, clear);
    return pending;
  }

  async #prepare(view: View): Promise<Catalog> {
    for (;;) {
      const missing = this.providers().filter((p) => p.prepare && !view.prepared.has(p));
      if (missing.length === 0) break;
      await Promise.all(
        missing.map(async (p) => {
          try {
            await p.prepare!(view.profile.base);
          } catch {
            // prepare() never throws by contract; one that does lists nothing for this profile.
          }
          view.prepared.add(p);
        }),
      );
    }
    view.catalog = this.#build(view.profile);
    return view.catalog;
  }

  #build(profile: CapabilityProfile): Catalog {
    const catalog = new Catalog(this.providers(), profile);
    this.built(catalog);
    return catalog;
  }

  /** Drops the least recently used views beyond the maximum (MAX_PROFILES) (rare: a scan of a few dozen). */
  #evict(): void {
    while (this.#views.size > this.max) {
      let oldest: View | undefined;
      for (const view of this.#views.values())
        if (view.profile.key !== NO_PROFILE.key && (!oldest || view.used < oldest.used)) oldest = view;
      if (!oldest) return;
      this.#views.delete(oldest.profile.key);
    }
  }
}
