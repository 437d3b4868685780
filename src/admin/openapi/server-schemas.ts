// The JSON Schemas of virtual servers (docs/architecture.md §8, docs/admin-api.md "Virtual servers"):
// the record's own (records/server.ts), its merge patch and a dry run's report. Rules a schema
// cannot say (the providers exist, overrides name selected entries, new names are unique) are
// checked after, by records/validate-server.ts.
import {
  EntryOverride,
  PromptOverride,
  ResourceOverride,
  ServerSelection,
  VirtualServer,
} from "../../records/server.js";
import { components, list, obj, ref, type Schema } from "./schema-kit.js";

export const SERVER_SCHEMAS: Record<string, Schema> = {
  ...components(EntryOverride, PromptOverride, ResourceOverride, ServerSelection, VirtualServer),
  ServerPatch: {
    type: "object",
    description:
      "JSON Merge Patch (RFC 7396) of a virtual server: members present replace, null removes; the result must be a valid server. `id` cannot change.",
  },
  ServerDryRun: obj(
    {
      valid: { const: true },
      server: ref("VirtualServer"),
      catalog: ref("Catalog"),
      conflicts: list(
        { type: "string" },
        "Names two selected entries would both be listed by (saving is refused).",
      ),
      missing: list(
        { type: "string" },
        "Listed entries their provider does not serve now (an upstream not reachable, or a typo); saving is allowed.",
      ),
    },
    ["valid", "server", "catalog", "conflicts", "missing"],
    {
      description:
        "The outcome of ?dryRun=true: the server's lists as a client declaring every capability would see them; nothing was saved.",
    },
  ),
};
