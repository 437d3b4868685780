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
