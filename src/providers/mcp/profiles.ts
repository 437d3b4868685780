// Capability profiles in the upstream MCP client (src/protocol/profile.ts, docs/upstream-mcp.md
// "Capability profiles"): a request's profile (remembered per capabilities object, so a session's
// calls do not canonicalize the same capabilities again), whether an upstream's lists vary by
// profile, and the bounded set of profiles each era lists apart.
import { FULL_PROFILE, NO_PROFILE, profileOf, type CapabilityProfile } from "../../protocol/profile.js";
import type { CallContext, Provider } from "../types.js";

const profiles = new WeakMap<object, CapabilityProfile>();

/** The profile of a request's capabilities, remembered per capabilities object. */
export function profileFor(ctx: CallContext): CapabilityProfile {
  if (ctx.profile) return ctx.profile.base;
  const caps = ctx.clientCapabilities;
  let profile = profiles.get(caps);
  if (!profile) profiles.set(caps, (profile = profileOf(caps)));
  return profile;
}

/** The parts of an `mcp` provider that list per profile, and whether they listed one yet. */
interface ProfileLists {
  has(profile: CapabilityProfile): boolean;
}

/**
 * Whether an upstream's lists depend on the client's capabilities: a client declaring every
 * capability compared with one declaring none, in each era. Unknown, so true, until the parts
 * listed the full profile, which this starts.
 */
export function listsVary(
  provider: Pick<Provider, "entries" | "prepare">,
  ...parts: ReadonlyArray<ProfileLists | undefined>
): boolean {
  if (!parts.every((part) => !part || part.has(FULL_PROFILE))) {
    void provider.prepare?.(FULL_PROFILE);
    return true;
  }
  return (["session", "stateless"] as const).some(
    (era) =>
      JSON.stringify(provider.entries(FULL_PROFILE, era)) !==
      JSON.stringify(provider.entries(NO_PROFILE, era)),
  );
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
