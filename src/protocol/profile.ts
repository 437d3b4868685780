// Capability profiles (docs/architecture.md §3): an upstream's lists may depend on what the client
// declared (a server registers some tools only for clients that can sample, elicit or list roots),
// so Portico lists each upstream once per profile, the part of a client's capabilities that can
// shape what a server offers, reduced to a bounded set of shapes: a client's spelling must not make
// Portico open one upstream session per variant.
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { isRecord } from "./jsonrpc.js";

/** The MCP Apps extension (SEP-1865): servers offer `ui://` resources to clients that declare it. */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";
/** The HTML profile of MCP Apps resources. */
export const MCP_APP_MIME_TYPE = "text/html;profile=mcp-app";

export interface CapabilityProfile {
  /** Canonical JSON of `capabilities` (and the era when it is 2026-07-28): equal keys, equal profiles. */
  readonly key: string;
  /** What Portico declares upstream for clients of this profile. */
  readonly capabilities: ClientCapabilities;
  /**
   * "stateless" for 2026-07-28 clients' lists: an upstream that speaks both eras may list
   * differently in each, so their catalogs are kept apart. Absent: the session era.
   */
  readonly era?: "stateless";
  /** The same capabilities without the era: what providers list and call under. */
  readonly base: CapabilityProfile;
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

/** `{name: {}}` for each of `names` present as an object in `from`. */
function flags(from: Record<string, unknown>, names: readonly string[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const name of names) if (objectOf(from[name])) out[name] = {};
  return out;
}

const cache = new Map<string, CapabilityProfile>();
const MAX_CACHED = 256;

/**
 * The profile of a client's capabilities: sampling (context, tools), elicitation (form, url),
 * roots (listChanged), tasks, and the MCP Apps extension (its known MIME types). Experimental
 * capabilities and other extensions are not passed upstream. The result is shared and frozen.
 */
export function profileOf(caps: ClientCapabilities | undefined): CapabilityProfile {
  const out: Record<string, unknown> = {};
  const sampling = objectOf(caps?.sampling);
  if (sampling) out.sampling = flags(sampling, ["context", "tools"]);
  const elicitation = objectOf(caps?.elicitation);
  if (elicitation) out.elicitation = flags(elicitation, ["form", "url"]);
  const roots = objectOf(caps?.roots);
  if (roots) out.roots = roots.listChanged === true ? { listChanged: true } : {};
  const tasks = objectOf((caps as Record<string, unknown> | undefined)?.tasks);
  if (tasks) out.tasks = tasksOf(tasks);
  const ui = objectOf(objectOf((caps as Record<string, unknown> | undefined)?.extensions)?.[UI_EXTENSION]);
  if (ui) {
    const mimeTypes = Array.isArray(ui.mimeTypes) && ui.mimeTypes.includes(MCP_APP_MIME_TYPE);
    out.extensions = { [UI_EXTENSION]: mimeTypes ? { mimeTypes: [MCP_APP_MIME_TYPE] } : {} };
  }
  const key = JSON.stringify(out);
  let profile = cache.get(key);
  if (!profile) {
    const made = { key, capabilities: deepFreeze(out) } as { base?: CapabilityProfile };
    made.base = made as CapabilityProfile;
    profile = Object.freeze(made) as CapabilityProfile;
    if (cache.size < MAX_CACHED) cache.set(key, profile);
  }
  return profile;
}

const statelessProfiles = new WeakMap<CapabilityProfile, CapabilityProfile>();

/** The profile of a 2026-07-28 client with `profile`'s capabilities (one object per profile). */
export function statelessProfile(profile: CapabilityProfile): CapabilityProfile {
  const base = profile.base;
  let stateless = statelessProfiles.get(base);
  if (!stateless) {
    stateless = Object.freeze({
      key: `2026-07-28 ${base.key}`,
      capabilities: base.capabilities,
      era: "stateless" as const,
      base,
    });
    statelessProfiles.set(base, stateless);
  }
  return stateless;
}

/**
 * The tasks capability (2025-11-25 basic/utilities/tasks) as far as it can shape a server's lists:
 * list, cancel, and which server-to-client requests the client runs as tasks.
 */
function tasksOf(tasks: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = flags(tasks, ["list", "cancel"]);
  const requests = objectOf(tasks.requests);
  const sampling = objectOf(requests?.sampling);
  const elicitation = objectOf(requests?.elicitation);
  const asked: Record<string, unknown> = {};
  if (objectOf(sampling?.createMessage)) asked.sampling = { createMessage: {} };
  if (objectOf(elicitation?.create)) asked.elicitation = { create: {} };
  if (Object.keys(asked).length > 0) out.requests = asked;
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** A client that declared nothing. */
export const NO_PROFILE: CapabilityProfile = profileOf({});

/** A client that declared everything a profile holds: what the admin catalog shows by default. */
export const FULL_PROFILE: CapabilityProfile = profileOf({
  sampling: { context: {}, tools: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
  tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
  extensions: { [UI_EXTENSION]: { mimeTypes: [MCP_APP_MIME_TYPE] } },
});
