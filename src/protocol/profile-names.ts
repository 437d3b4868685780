// Capability profiles written as words (docs/architecture.md §3): `sampling,elicitation.url,roots`,
// or `none`. The admin catalog takes a profile in this form and provider health names the profile
// of a conflict in it. One table both ways, so a label read back gives the same profile.
import { MCP_APP_MIME_TYPE, NO_PROFILE, profileOf, UI_EXTENSION, type CapabilityProfile } from "./profile.js";

type Caps = Record<string, Record<string, unknown>>;

/** Each name, what it adds to the capabilities, and whether a profile's capabilities hold it. */
const NAMES: ReadonlyArray<readonly [name: string, add: (c: Caps) => void, has: (c: Caps) => boolean]> = [
  ["sampling", (c) => void (c.sampling ??= {}), (c) => c.sampling !== undefined],
  ["sampling.context", (c) => void ((c.sampling ??= {}).context = {}), (c) => !!c.sampling?.context],
  ["sampling.tools", (c) => void ((c.sampling ??= {}).tools = {}), (c) => !!c.sampling?.tools],
  ["elicitation", (c) => void (c.elicitation ??= {}), (c) => c.elicitation !== undefined],
  ["elicitation.form", (c) => void ((c.elicitation ??= {}).form = {}), (c) => !!c.elicitation?.form],
  ["elicitation.url", (c) => void ((c.elicitation ??= {}).url = {}), (c) => !!c.elicitation?.url],
  ["roots", (c) => void (c.roots ??= {}), (c) => c.roots !== undefined],
  [
    "roots.listChanged",
    (c) => void ((c.roots ??= {}).listChanged = true),
    (c) => c.roots?.listChanged === true,
  ],
  ["tasks", (c) => void (c.tasks ??= {}), (c) => c.tasks !== undefined],
  ["tasks.list", (c) => void ((c.tasks ??= {}).list = {}), (c) => !!c.tasks?.list],
  ["tasks.cancel", (c) => void ((c.tasks ??= {}).cancel = {}), (c) => !!c.tasks?.cancel],
  [
    "tasks.sampling",
    (c) => void (taskRequests(c).sampling = { createMessage: {} }),
    (c) => !!(c.tasks?.requests as Caps | undefined)?.sampling,
  ],
  [
    "tasks.elicitation",
    (c) => void (taskRequests(c).elicitation = { create: {} }),
    (c) => !!(c.tasks?.requests as Caps | undefined)?.elicitation,
  ],
  // MCP Apps (SEP-1865): `ui` declares the extension with its HTML MIME type, as hosts do;
  // `ui.bare` declares it without one.
  [
    "ui",
    (c) => void ((c.extensions ??= {})[UI_EXTENSION] = { mimeTypes: [MCP_APP_MIME_TYPE] }),
    (c) => !!(c.extensions?.[UI_EXTENSION] as { mimeTypes?: unknown } | undefined)?.mimeTypes,
  ],
  [
    "ui.bare",
    (c) => void ((c.extensions ??= {})[UI_EXTENSION] ??= {}),
    (c) =>
      c.extensions?.[UI_EXTENSION] !== undefined &&
      !(c.extensions[UI_EXTENSION] as { mimeTypes?: unknown }).mimeTypes,
  ],
];

/** tasks.requests, made when absent. */
function taskRequests(c: Caps): Caps {
  return ((c.tasks ??= {}).requests ??= {}) as Caps;
}

/** The words `profileFromLabel` takes, for messages and the OpenAPI description. */
export const PROFILE_NAMES: readonly string[] = NAMES.map(([name]) => name);

/** The regular expression a label matches (the admin API's parameter schema). */
export const PROFILE_LABEL_PATTERN = `^(none|(${PROFILE_NAMES.map((n) => n.replace(".", "\\.")).join("|")})(,(${PROFILE_NAMES.map((n) => n.replace(".", "\\.")).join("|")})){0,15})$`;

/**
 * A profile as words: the most specific names that say it (`sampling.tools` rather than
 * `sampling,sampling.tools`), or `none`.
 */
export function profileLabel(profile: CapabilityProfile): string {
  const caps = profile.capabilities as Caps;
  const names = NAMES.filter(([name, , has]) => has(caps) && !implied(name, caps)).map(([name]) => name);
  return names.length === 0 ? "none" : names.join(",");
}

/** A bare name (`sampling`) is implied by any of its sub-names present. */
function implied(name: string, caps: Caps): boolean {
  if (name.includes(".")) return false;
  return NAMES.some(([other, , has]) => other.startsWith(`${name}.`) && other !== "ui.bare" && has(caps));
}

/** The profile a label names; undefined for a word that is not a profile name. */
export function profileFromLabel(label: string): CapabilityProfile | undefined {
  if (label === "none") return NO_PROFILE;
  const caps: Caps = {};
  for (const word of label.split(",")) {
    const entry = NAMES.find(([name]) => name === word);
    if (!entry) return undefined;
    entry[1](caps);
  }
  return profileOf(caps);
}
