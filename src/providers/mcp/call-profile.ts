// The capability profile of a request (src/protocol/profile.ts), remembered per capabilities
// object so a session's calls do not canonicalize the same capabilities again.
import { profileOf, type CapabilityProfile } from "../../protocol/profile.js";
import type { CallContext } from "../types.js";

const profiles = new WeakMap<object, CapabilityProfile>();

/** The profile of a request's capabilities, remembered per capabilities object. */
export function profileFor(ctx: CallContext): CapabilityProfile {
  if (ctx.profile) return ctx.profile.base;
  const caps = ctx.clientCapabilities;
  let profile = profiles.get(caps);
  if (!profile) profiles.set(caps, (profile = profileOf(caps)));
  return profile;
}

/**
 * The most capability profiles a provider lists apart, per era (each costs an upstream session or
 * listen stream and its lists). A client cycling capability spellings past it gets the provider's
 * own lists and session once every slot was used in the last PROFILE_EVICT_IDLE_MS
 * (docs/security.md "Hostile upstreams").
 */
export const MAX_PROFILES = 32;
/** A profile's catalog unused this long may give its slot to a new profile. */
export const PROFILE_EVICT_IDLE_MS = 60_000;

/** The least recently used key of `used` idle since `before`, if any. */
export function evictable(
  used: Iterable<[string, { readonly lastUsed: number }]>,
  before: number,
): string | undefined {
  let oldest: string | undefined;
  let at = before;
  for (const [key, { lastUsed }] of used)
    if (lastUsed < at) {
      oldest = key;
      at = lastUsed;
    }
  return oldest;
}
