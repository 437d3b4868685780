// The admin API's JSON Schemas (OpenAPI 3.1 = JSON Schema 2020-12), in one place: the OpenAPI
// document publishes them and the routes validate their input with them (validator.ts). Rules a
// schema cannot say (placeholders naming arguments, name collisions) are checked after, by
// records/validate.ts. Provider records are in provider-schemas.ts, the OAuth resources in
// oauth-schemas.ts.
import { Type, type Static } from "@sinclair/typebox";
import { ADMIN_TENANTS, PROVIDER_SCHEMAS } from "./provider-schemas.js";
import { SERVER_SCHEMAS } from "./server-schemas.js";
import { Slug } from "../../records/names.js";
import { described, named, Timestamp } from "../../records/schema-kit.js";
import { ApiKey } from "../api-keys.js";
import { TenantAuth, TenantLimits, TenantName } from "../../records/tenant.js";
import { components, jsonObject, list, obj, ref, str, type Schema } from "./schema-kit.js";

const { Tenant: TenantRecord } = ADMIN_TENANTS;

/** A tenant as POST /tenants takes it: its own fields and providers (identity, servers, policy have their routes). */
export const TenantInput = named(
  "TenantInput",
  Type.Object(
    {
      id: TenantRecord.properties.id,
      name: TenantRecord.properties.name,
      auth: Type.Optional({
        ...TenantAuth,
        description:
          '"oauth" (the default) guards the MCP URL with OAuth 2.1; "none" serves it without sign-in.',
        default: "oauth",
      }),
      limits: TenantRecord.properties.limits,
      pinning: TenantRecord.properties.pinning,
      providers: Type.Optional({
        ...TenantRecord.properties.providers,
        description: "Providers to create with the tenant.",
      }),
    },
    { additionalProperties: false },
  ),
);

/** A tenant as the API shows it: its own fields, where clients connect, how many providers it has. */
export const TenantView = named(
  "Tenant",
  Type.Object(
    {
      id: TenantRecord.properties.id,
      name: TenantRecord.properties.name,
      auth: TenantAuth,
      limits: Type.Optional(described(TenantLimits, "The limits set for this tenant; absent: the defaults.")),
      pinning: TenantRecord.properties.pinning,
      mcpUrl: Type.String({ description: "The URL MCP clients connect to.", format: "uri" }),
      providers: Type.Integer({ description: "How many providers the tenant has." }),
      createdAt: Timestamp,
      updatedAt: Timestamp,
    },
    { additionalProperties: false },
  ),
);

/** Each limit of a merge patch: the record's bounds, or null for the server default. */
const limitPatches: Record<string, Schema> = Object.fromEntries(
  Object.entries(TenantLimits.properties).map(([key, limit]) => [
    key,
    {
      type: ["integer", "null"],
      minimum: limit.minimum,
      maximum: limit.maximum,
      description: "See TenantLimits.",
    },
  ]),
);

const { name: keyName, expiresAt } = ApiKey.properties;
/** A key as POST …/api-keys takes it: what the record says of it. */
export const ApiKeyInput = named(
  "ApiKeyInput",
  Type.Object({ name: keyName, expiresAt }, { additionalProperties: false }),
);
export type ApiKeyInput = Static<typeof ApiKeyInput>;
export const ApiKeyCreated = named(
  "ApiKeyCreated",
  Type.Object(
    {
      ...ApiKey.properties,
      token: Type.String({ description: "The bearer key. Shown once: store it now." }),
    },
    { additionalProperties: false },
  ),
);

/** Component schemas, by name. */
export const SCHEMAS: Record<string, Schema> = {
  ...components(Slug, Timestamp),
  ...PROVIDER_SCHEMAS,
  ...SERVER_SCHEMAS,
  ...components(TenantLimits, TenantInput),
  TenantPatch: obj(
    {
      name: {
        type: ["string", "null"],
        maxLength: TenantName.maxLength,
        description: "Display name; null removes it.",
      },
      auth: { enum: TenantAuth.anyOf.map((branch) => branch.const) },
      limits: {
        type: ["object", "null"],
        description:
          "Merged into the tenant's limits: a member set to null returns to the server default; null returns them all.",
        properties: limitPatches,
        additionalProperties: false,
      },
      pinning: {
        enum: ["off", "warn", "block", null],
        description: "The default `pinning` of the tenant's mcp providers; null removes it (off).",
      },
    },
    [],
    { description: "JSON Merge Patch (RFC 7396) of a tenant's own fields.", minProperties: 1 },
  ),
  ...components(TenantView),
  ...components(ApiKeyInput, ApiKey, ApiKeyCreated),
  Session: obj(
    {
      id: str("Mcp-Session-Id."),
      clientName: str("clientInfo.name from initialize."),
      clientVersion: str("clientInfo.version from initialize."),
      protocolVersion: str('Negotiated MCP revision ("" for an HTTP+SSE session not yet initialized).'),
      server: {
        ...ref("Slug"),
        description:
          "The virtual server the session was opened on (`/mcp/{tenant}/{server}`); absent for the tenant's own URL.",
      },
      transport: {
        enum: ["streamable-http", "sse"],
        description:
          "How the client connects: Streamable HTTP at /mcp/{tenant}, or the deprecated HTTP+SSE transport (/mcp/{tenant}/sse), whose session lives while its stream is open.",
      },
      principal: str('Who the session belongs to ("" for tenants without authentication).'),
      createdAt: ref("Timestamp"),
      lastSeenAt: { ...ref("Timestamp"), description: "Last request, to the second." },
      expiresAt: { ...ref("Timestamp"), description: "When it ends unless used again." },
    },
    [
      "id",
      "clientName",
      "clientVersion",
      "protocolVersion",
      "transport",
      "principal",
      "createdAt",
      "lastSeenAt",
      "expiresAt",
    ],
  ),
  Health: obj(
    {
      provider: ref("Slug"),
      kind: { enum: ["static", "http", "mcp"] },
      status: { enum: ["healthy", "unhealthy"] },
      reason: str("Why it is unhealthy."),
      latencyMs: { type: "integer", description: "Round trip of a ping just now (mcp providers)." },
      breaker: ref("BreakerStatus"),
      conflicts: list(
        obj(
          {
            kind: { enum: ["tool", "prompt", "resource"] },
            name: str("The exposed name or URI."),
            heldBy: ref("Slug"),
            profile: str("The capability profile it appears under (as the catalog's `profile` parameter)."),
          },
          ["kind", "name", "heldBy", "profile"],
        ),
        "Entries of this provider hidden at run time because another provider serves the same exposed name under a client capability profile (save-time checks see only what every profile lists).",
      ),
      pins: obj(
        {
          pinning: { enum: ["warn", "block"] },
          pending: list(
            { type: "string" },
            "Tools whose served definition no approval covers, and `#instructions` when the upstream's instructions are not approved (GET …/pins shows each with its diff).",
          ),
        },
        ["pinning", "pending"],
        { description: "Pinned providers: tool definitions (and instructions) awaiting approval." },
      ),
      checkedAt: ref("Timestamp"),
      since: {
        ...ref("Timestamp"),
        description:
          "When the current status began, as this replica saw it: the provider's last health change (its start when it never changed), or the first report that saw its circuit breaker change it.",
      },
    },
    ["provider", "kind", "status", "checkedAt"],
    { description: "This replica's view of the provider, checked when asked." },
  ),
  CatalogEntry: {
    type: "object",
    properties: {
      provider: ref("Slug"),
      health: { enum: ["healthy", "unhealthy"] },
      entry: jsonObject("The tool, prompt, resource or template exactly as MCP clients see it."),
    },
    required: ["provider", "health", "entry"],
    additionalProperties: false,
  },
  Catalog: obj(
    {
      tools: list(ref("CatalogEntry"), "tools/list."),
      prompts: list(ref("CatalogEntry"), "prompts/list."),
      resources: list(ref("CatalogEntry"), "resources/list."),
      resourceTemplates: list(ref("CatalogEntry"), "resources/templates/list."),
      profile: str("The capability profile shown, in the `profile` parameter's words."),
    },
    ["tools", "prompts", "resources", "resourceTemplates", "profile"],
  ),
  DryRun: obj(
    {
      valid: { const: true },
      provider: ref("Provider"),
      connection: obj(
        { ok: { type: "boolean" }, error: { type: "string" }, latencyMs: { type: "integer" } },
        ["ok"],
        { description: "mcp providers: the result of connecting to the upstream." },
      ),
      catalog: obj(
        {
          tools: list({ type: "string" }, "Tool names as clients would see them."),
          prompts: list({ type: "string" }, "Prompt names as clients would see them."),
          resources: list({ type: "string" }, "Resource URIs."),
          resourceTemplates: list({ type: "string" }, "URI templates."),
        },
        ["tools", "prompts", "resources", "resourceTemplates"],
        { description: "What saving the provider would add to the tenant's catalog." },
      ),
      conflicts: list(
        { type: "string" },
        "Names the provider would expose that another provider already serves.",
      ),
    },
    ["valid", "provider", "conflicts"],
    { description: "The outcome of ?dryRun=true: nothing was saved." },
  ),
  Refreshed: obj(
    {
      provider: ref("Slug"),
      tools: { type: "integer" },
      prompts: { type: "integer" },
      resources: { type: "integer" },
      resourceTemplates: { type: "integer" },
      disabled: {
        type: "array",
        items: { type: "string" },
        description:
          "An `openapi` provider's operations (tool names) that the refreshed document calls at a server the provider's credentials were not bound to when saved: off until the provider is saved again with its secrets.",
      },
    },
    ["provider", "tools", "prompts", "resources", "resourceTemplates"],
    { description: "How many entries the upstream serves after re-reading its catalog." },
  ),
  ToolDefinition: jsonObject(
    "A tool's pinned members: name, title, description, inputSchema, outputSchema and annotations (those it has). The upstream's instructions are the definition named `#instructions`, their text its description.",
  ),
  Pins: obj(
    {
      provider: ref("Slug"),
      pinning: { enum: ["off", "warn", "block"] },
      approvedAt: ref("Timestamp"),
      approved: list(
        obj(
          {
            name: str("The tool's name as the upstream gives it, or `#instructions` for its instructions."),
            digest: str("SHA-256 (base64url) of the canonical JSON of its pinned members."),
            contract: str(
              "SHA-256 (base64url) of its schemas and annotations: block mode serves this definition's wording over a changed one with the same contract.",
            ),
            approvedAt: ref("Timestamp"),
            approvedBy: str("Who approved it (an actor, as the audit log names them)."),
            definition: ref("ToolDefinition"),
          },
          ["name", "digest", "approvedAt", "approvedBy", "definition"],
        ),
        "Approved definitions (a name may have several, the newest last: each is served as approved).",
      ),
      pending: list(
        obj(
          {
            name: str("The tool's name as the upstream gives it, or `#instructions` for its instructions."),
            digest: str("SHA-256 (base64url) of the canonical JSON of its pinned members."),
            contract: str("SHA-256 (base64url) of its schemas and annotations."),
            change: {
              enum: ["changed", "new"],
              description: '"changed": the name has an approved definition.',
            },
            diff: list(
              obj({ path: str("JSON Pointer into the definition."), before: {}, after: {} }, ["path"]),
              "Against the name's newest approved definition: each member that differs (at most 50).",
            ),
            seenAt: ref("Timestamp"),
            definition: ref("ToolDefinition"),
          },
          ["name", "digest", "contract", "change", "diff", "seenAt", "definition"],
        ),
        "Definitions the upstream served that no approval covers (the newest per name): warn served them, block holds them back.",
      ),
    },
    ["provider", "pinning", "approved", "pending"],
  ),
  PinApproval: obj(
    {
      tools: {
        ...list(
          {
            oneOf: [
              {
                type: "string",
                maxLength: 1024,
                description: "A tool's name as the upstream gives it, or `#instructions`.",
              },
              obj(
                {
                  name: {
                    type: "string",
                    maxLength: 1024,
                    description: "A tool's name as the upstream gives it, or `#instructions`.",
                  },
                  digest: str(
                    "The digest of the pending definition reviewed (GET …/pins): 409 if it changed since.",
                  ),
                },
                ["name", "digest"],
              ),
            ],
          },
          "The tools whose pending definitions to approve (by name, or by name and the digest reviewed); absent: all.",
        ),
        minItems: 1,
        maxItems: 1000,
      },
    },
    [],
  ),
  PinsApproved: obj(
    {
      approved: list(ref("ToolDefinition"), "The definitions approved."),
      pending: { type: "integer", description: "Definitions still pending." },
    },
    ["approved", "pending"],
  ),
  AuditEntry: obj(
    {
      id: str("Entry id (increasing)."),
      at: ref("Timestamp"),
      actor: str(
        'Who: "platform token", "api-key:<id> (<name>)", "bootstrap", or "portico" (provider.conflict).',
      ),
      action: str("What, e.g. provider.create, provider.update, tenant.delete, api-key.revoke."),
      tenant: { type: ["string", "null"] },
      target: str("The id of what was written."),
      before: { description: "The record before (secrets redacted); absent on create." },
      after: { description: "The record after (secrets redacted); absent on delete." },
      seq: {
        type: "integer",
        description:
          "Its place in its log's chain (1 for the first entry); absent on entries written before the chain.",
      },
      user: obj({ sub: str("The user's `sub`."), username: str("A local user's username.") }, ["sub"], {
        description: "The user whose action it was (a policy denial, a disconnection).",
      }),
      client: str("The OAuth client the user acted through."),
      server: str("The virtual server it happened on."),
      mac: str("The chain's MAC over this entry and the one before it (base64url)."),
      changes: list(
        obj({ path: str("JSON Pointer into the definition."), before: {}, after: {} }, ["path"]),
        "tool.changed: the definition's members that differ from the approved one.",
      ),
      pinning: {
        enum: ["off", "warn", "block"],
        description: "tool.changed and tool.added: the provider's pinning.",
      },
      secrets: obj(
        {
          kept: list({ type: "string" }, 'Secrets kept with {"set": true} (JSON Pointers in `after`).'),
          set: list({ type: "string" }, "Secrets the write sent (JSON Pointers in `after`)."),
          removed: list({ type: "string" }, "Secrets the write dropped (JSON Pointers in `before`)."),
        },
        ["kept", "set", "removed"],
        { description: "Which secrets the write kept, set or removed; never their values." },
      ),
    },
    ["id", "at", "actor", "action", "tenant", "target"],
  ),
  AuditVerification: obj(
    {
      ok: { type: "boolean", description: "True when nothing breaks the chain." },
      verified: { type: "integer", description: "Entries whose MAC was checked." },
      first: { type: "integer", description: "The first sequence number checked." },
      last: { type: "integer", description: "The last sequence number checked." },
      head: { type: "integer", description: "The sequence number the stored head names." },
      anchor: {
        type: "integer",
        description: "The sequence number of the last entry trimmed off the old end.",
      },
      unchained: { type: "integer", description: "Entries older than the chain, not checked." },
      broken: obj(
        {
          seq: { type: "integer", description: "The sequence number where the chain breaks." },
          id: str("The entry found there, if any."),
          reason: str("What is wrong: an edited entry, or entries deleted in the middle or at either end."),
        },
        ["seq", "reason"],
        { description: "The first break." },
      ),
    },
    ["ok", "verified", "unchained"],
    { description: "What verifying an audit log's chain found." },
  ),
  ResealReport: obj(
    {
      resealed: {
        type: "integer",
        description: "Values sealed under a previous key, now sealed under the current one.",
      },
      alreadyCurrent: { type: "integer", description: "Values already sealed under the current key." },
      failed: list(
        obj(
          {
            tenant: { type: ["string", "null"], description: "The tenant; null for the OAuth signing keys." },
            pointer: str(
              "Where the value sits (JSON Pointer): in the tenant record or the signing keys, or `/accounts/<provider>/<user>` and `/registrations/<provider>/<issuer digest>` for connected accounts.",
            ),
          },
          ["tenant", "pointer"],
        ),
        "Values no configured key opens, left as they are: their key is missing from PORTICO_SECRET_KEY_PREVIOUS.",
      ),
    },
    ["resealed", "alreadyCurrent", "failed"],
  ),
  Problem: {
    type: "object",
    description: "RFC 9457 problem details.",
    properties: {
      type: str("Identifies the problem type (a URN per error code).", { format: "uri" }),
      title: str("Short summary of the problem type."),
      status: { type: "integer" },
      detail: str("What went wrong here, and how to fix it."),
      code: str("Portico error code (docs/errors.md)."),
      pointer: str("JSON Pointer (RFC 6901) to the offending member of the request body."),
      errors: list(
        obj({ pointer: { type: "string" }, detail: { type: "string" } }, ["pointer", "detail"]),
        "Each invalid member.",
      ),
    },
    required: ["type", "title", "status", "detail", "code"],
  },
};

/** A page of items with the cursor of the next page. */
export function pageOf(item: Schema): Schema {
  return obj(
    {
      items: { type: "array", items: item },
      nextCursor: str("Pass as ?cursor= for the next page; absent on the last page."),
    },
    ["items"],
  );
}
