// The JSON Schemas of virtual servers (docs/architecture.md §8, docs/admin-api.md "Virtual servers"):
// the record, one provider's selection, an entry's override, and a dry run's report. Rules a schema
// cannot say (the providers exist, overrides name selected entries, new names are unique) are
// checked after, by records/validate-server.ts.
import { EXPOSED_NAME } from "../../records/tenant.js";
import { jsonObject, list, obj, ref, str, type Schema } from "./schema-kit.js";

const SCOPE_TOKEN = "^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,128}$";

const selection = (what: string): Schema => ({
  description: `${what}: "*" (the default) for every one, or a list of those to show.`,
  oneOf: [
    { const: "*" },
    {
      type: "array",
      items: { type: "string", minLength: 1, maxLength: 2048 },
      maxItems: 1000,
      uniqueItems: true,
    },
  ],
});

const overrides = (what: string): Schema => ({
  type: "object",
  description: `Overrides of ${what}, keyed by the name the provider knows the entry by (a resource by its URI or URI template).`,
  additionalProperties: ref("EntryOverride"),
});

export const SERVER_SCHEMAS: Record<string, Schema> = {
  EntryOverride: obj(
    {
      name: str(
        "Tools and prompts: the name the server lists it by instead of its exposed name. The entry is then reachable on this server under this name only.",
        { pattern: EXPOSED_NAME.source },
      ),
      title: str("Replaces the entry's title.", { maxLength: 4096 }),
      description: str("Replaces the entry's description.", { maxLength: 4096 }),
      annotations: jsonObject(
        "Tools only: merged over the tool's own annotations (e.g. `readOnlyHint`); a member set to null is removed.",
      ),
    },
    [],
    { description: "What a virtual server shows changed of one entry." },
  ),
  ServerSelection: obj(
    {
      provider: ref("Slug"),
      tools: selection("Tools, by the names the provider knows them by (without its prefix)"),
      prompts: selection("Prompts, by the names the provider knows them by (without its prefix)"),
      resources: selection("Resources and resource templates, by URI and URI template"),
      overrides: obj({
        tools: overrides("tools"),
        prompts: overrides("prompts"),
        resources: overrides("resources and templates (title and description)"),
      }),
    },
    ["provider"],
    { description: "What one provider contributes to a virtual server." },
  ),
  VirtualServer: obj(
    {
      id: {
        ...ref("Slug"),
        description:
          "The server's id: its MCP URL is `/mcp/{tenant}/{id}`. `sse` and `messages` are reserved.",
        not: { enum: ["sse", "messages"] },
      },
      name: str("Display name (serverInfo.title reads `Portico · {tenant} · {name}`).", { maxLength: 200 }),
      scopes: {
        type: "array",
        items: { type: "string", pattern: SCOPE_TOKEN },
        maxItems: 20,
        description:
          "Scopes a token must carry on this server besides `mcp:read` / `mcp:tools` (named in its Protected Resource Metadata and challenges).",
      },
      providers: {
        type: "array",
        items: ref("ServerSelection"),
        minItems: 1,
        maxItems: 100,
        description: "The providers it shows, each whole or in part; earlier ones win a name both serve.",
      },
    },
    ["id", "providers"],
    { description: "A virtual server: a selection of the tenant's providers' entries at its own MCP URL." },
  ),
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
