// Virtual server records (docs/architecture.md §8): a tenant's extra MCP URLs, /mcp/{tenant}/{server},
// each a selection of its providers' tools, prompts and resources with per-entry renames and
// description, title and annotation overrides. Kept in the tenant record beside its providers. The
// schema is the record's one description (types, validation, the admin API's document);
// validate-server.ts adds what it cannot say.
import { Type, type Static } from "@sinclair/typebox";
import { jsonObject, keyed, named } from "./schema-kit.js";
import { EXPOSED_NAME, Slug } from "./names.js";

/** How clients find a tenant's or a virtual server's tools (src/mcp/tool-search.ts). */
export const ToolDiscovery = Type.Union([Type.Literal("list"), Type.Literal("search")], {
  description:
    'How clients find the tools: "list" (default) lists them all; "search" lists three tools instead — search_tools, describe_tool and call_tool — plus those with an MCP Apps user interface, and every tool stays callable by its name (docs/tool-search.md). A virtual server\'s own setting wins over its tenant\'s.',
});
export type ToolDiscoveryMode = Static<typeof ToolDiscovery>;

/** Guidance for models an admin writes for a tenant's URL or a virtual server's (src/mcp/instructions.ts). */
export const Instructions = Type.String({
  maxLength: 8192,
  description:
    "Guidance for the model, sent to clients as the server's `instructions` (initialize, server/discover), before what each provider's upstream MCP server gives (docs/tool-search.md#instructions).",
});

/** Segments under /mcp/{tenant} that are not servers: the HTTP+SSE transport's. */
export const RESERVED_SERVER_IDS: readonly string[] = ["sse", "messages"];

const title = Type.String({ description: "Replaces the entry's title.", maxLength: 4096 });
const description = Type.String({ description: "Replaces the entry's description.", maxLength: 4096 });

/** What a client sees changed of one entry on the server (a tool: every field). */
export const EntryOverride = named(
  "EntryOverride",
  Type.Object(
    {
      name: Type.Optional(
        Type.String({
          description:
            "The name the server lists it by instead of its exposed name. The entry is then reachable on this server under this name only.",
          pattern: EXPOSED_NAME.source,
          "x-message": "must be 1–64 characters of A–Z a–z 0–9 _ . -",
        }),
      ),
      title: Type.Optional(title),
      description: Type.Optional(description),
      annotations: Type.Optional(
        jsonObject(
          "Merged over the tool's own annotations (e.g. `readOnlyHint`); a member set to null is removed.",
        ),
      ),
    },
    { additionalProperties: false, description: "What a virtual server shows changed of one tool." },
  ),
);
export type EntryOverride = Static<typeof EntryOverride>;

export const PromptOverride = named(
  "PromptOverride",
  Type.Pick(EntryOverride, ["name", "title", "description"], {
    additionalProperties: false,
    description: "What a virtual server shows changed of one prompt.",
  }),
);
export const ResourceOverride = named(
  "ResourceOverride",
  Type.Pick(EntryOverride, ["title", "description"], {
    additionalProperties: false,
    description: "What a virtual server shows changed of one resource or resource template.",
  }),
);

/** `"*"`: every entry of the kind; a list: only those (names as the provider knows them, or URIs). */
const selection = (what: string) =>
  Type.Union(
    [
      Type.Literal("*"),
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 1000, uniqueItems: true }),
    ],
    {
      description: `${what}: "*" (the default) for every one, or a list of those to show.`,
      "x-message": 'must be "*" (every one) or an array of the names to show',
    },
  );
export type Selection = "*" | readonly string[];

/** One provider's part of a virtual server. */
export const ServerSelection = named(
  "ServerSelection",
  Type.Object(
    {
      provider: Slug,
      tools: Type.Optional(selection("Tools, by the names the provider knows them by (without its prefix)")),
      prompts: Type.Optional(
        selection("Prompts, by the names the provider knows them by (without its prefix)"),
      ),
      resources: Type.Optional(selection("Resources and resource templates, by URI and URI template")),
      overrides: Type.Optional(
        Type.Object(
          {
            tools: Type.Optional(
              keyed(EntryOverride, "Overrides of tools, keyed by the name the provider knows them by."),
            ),
            prompts: Type.Optional(
              keyed(PromptOverride, "Overrides of prompts, keyed by the name the provider knows them by."),
            ),
            resources: Type.Optional(
              keyed(
                ResourceOverride,
                "Overrides of resources and templates, keyed by their URI or URI template.",
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false, description: "What one provider contributes to a virtual server." },
  ),
);
export type ServerProviderSelection = Static<typeof ServerSelection>;

/** RFC 6749 §3.3 scope-token, short, and not one Portico grants itself. */
const SCOPE_TOKEN = /^(?!mcp:)(?!offline_access$)[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;

export const VirtualServer = named(
  "VirtualServer",
  Type.Object(
    {
      id: Type.Intersect(
        [
          Slug,
          Type.Not(Type.Union(RESERVED_SERVER_IDS.map((id) => Type.Literal(id))), {
            "x-message": "is reserved (the HTTP+SSE transport's path under every tenant)",
          }),
        ],
        {
          description:
            "The server's id: its MCP URL is `/mcp/{tenant}/{id}`. `sse` and `messages` are reserved.",
        },
      ),
      name: Type.Optional(
        Type.String({
          description: "Display name (serverInfo.title reads `Portico · {tenant} · {name}`).",
          maxLength: 200,
        }),
      ),
      scopes: Type.Optional(
        Type.Array(
          Type.String({
            pattern: SCOPE_TOKEN.source,
            description: "An RFC 6749 scope token other than mcp:* and offline_access.",
          }),
          {
            maxItems: 20,
            description:
              "Scopes a token must carry on this server besides `mcp:read` / `mcp:tools` (named in its Protected Resource Metadata and challenges).",
          },
        ),
      ),
      toolDiscovery: Type.Optional(ToolDiscovery),
      instructions: Type.Optional(Instructions),
      providers: Type.Array(ServerSelection, {
        minItems: 1,
        maxItems: 100,
        description: "The providers it shows, each whole or in part; earlier ones win a name both serve.",
        "x-message": "must select at least one provider",
      }),
    },
    {
      additionalProperties: false,
      description: "A virtual server: a selection of the tenant's providers' entries at its own MCP URL.",
    },
  ),
);
export type VirtualServerConfig = Static<typeof VirtualServer>;

/** A tenant's servers. */
export const VirtualServers = Type.Array(VirtualServer, { maxItems: 100 });
