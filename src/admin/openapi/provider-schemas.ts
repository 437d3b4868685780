// JSON Schemas of the admin API's provider records (docs/admin-api.md): the three kinds, their
// entries, upstream authentication and the secrets they hold. Rules a schema cannot say are
// checked after, by records/validate.ts.
import { ARGUMENT_NAME } from "../../records/provider-kinds.js";
import { PREFIX, SEPARATOR } from "../../records/tenant.js";
import { jsonObject, list, obj, ref, str, type Schema } from "./schema-kit.js";

const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

const meta = {
  name: str("The entry's name as the provider knows it; the prefix is added for clients."),
  title: str("Human-readable title."),
  description: str("What it is for; models read this."),
};

const providerBase = {
  id: ref("Slug"),
  prefix: str("Namespace for this provider's tool and prompt names: `{prefix}{separator}{name}`.", {
    pattern: PREFIX.source,
  }),
  separator: str('Between prefix and name; default "__".', { pattern: SEPARATOR.source }),
};

/** Component schemas of providers, by name, in the order the OpenAPI document lists them. */
export const PROVIDER_SCHEMAS: Record<string, Schema> = {
  SecretSet: obj({ set: { const: true } }, ["set"], {
    description:
      "Stands for a stored secret, which is never returned. Send it back unchanged to keep the stored value.",
  }),
  SecretValue: {
    description: 'A secret: a string to set it, or `{"set": true}` to keep the value already stored.',
    oneOf: [{ type: "string", minLength: 1, maxLength: 8192 }, ref("SecretSet")],
    "x-message": 'must be a string, or {"set": true} to keep the stored value',
  },
  Headers: {
    type: "object",
    description: "HTTP headers sent upstream. Values are secrets: stored encrypted, never returned.",
    propertyNames: { pattern: HEADER_NAME, maxLength: 256 },
    additionalProperties: ref("SecretValue"),
    maxProperties: 64,
  },
  UpstreamAuth: {
    type: "object",
    description: "How Portico authenticates to the upstream (never with the MCP client's own token).",
    oneOf: [ref("BearerAuth"), ref("ClientCredentialsAuth"), ref("TokenExchangeAuth"), ref("UserOAuthAuth")],
    discriminator: { propertyName: "type" },
  },
  BearerAuth: obj({ type: { const: "bearer" }, token: ref("SecretValue") }, ["type", "token"], {
    description: "A static bearer token: `Authorization: Bearer <token>`.",
  }),
  ClientCredentialsAuth: obj(
    {
      type: { const: "client_credentials" },
      tokenUrl: str("The authorization server's token endpoint.", { format: "uri" }),
      clientId: str("OAuth client id.", { minLength: 1 }),
      clientSecret: ref("SecretValue"),
      scope: str("Space-separated scopes to request."),
      resource: str("RFC 8707 resource indicator to request the token for.", { format: "uri" }),
      authMethod: { enum: ["client_secret_basic", "client_secret_post"], description: "Default basic." },
    },
    ["type", "tokenUrl", "clientId", "clientSecret"],
    { description: "OAuth 2.1 client credentials grant; tokens are cached until they expire." },
  ),
  TokenExchangeAuth: obj(
    {
      type: { const: "token_exchange" },
      tokenUrl: str("The security token service's token endpoint (RFC 8693).", { format: "uri" }),
      audience: str("RFC 8693 `audience` of the requested token (a logical name).", { maxLength: 2048 }),
      resource: str("RFC 8693 / RFC 8707 `resource` of the requested token.", { format: "uri" }),
      scope: str("Space-separated scopes to request."),
      clientId: str("How Portico is known to the STS.", { minLength: 1 }),
      clientSecret: ref("SecretValue"),
      authMethod: { enum: ["client_secret_basic", "client_secret_post"], description: "Default basic." },
    },
    ["type", "tokenUrl", "clientId", "clientSecret"],
    {
      description:
        "Per user (mcp and http providers): Portico signs a short-lived assertion of the MCP user and exchanges it at the STS for an upstream token (docs/upstream-auth.md).",
    },
  ),
  UserOAuthAuth: obj(
    {
      type: { const: "user_oauth" },
      issuer: str(
        "The upstream's authorization server. Absent: discovered from the upstream's 401 (RFC 9728 resource metadata, then RFC 8414 / OpenID Connect discovery).",
        { format: "uri" },
      ),
      scope: str("Space-separated scopes to ask each user for."),
      registration: {
        enum: ["auto", "metadata_document", "dynamic", "preregistered"],
        description:
          'How Portico is known to the upstream\'s authorization server: its Client ID Metadata Document, RFC 7591 dynamic registration, or the pre-registered `clientId`. Default "auto": the pre-registered client when `clientId` is set, else the first the server supports of metadata document and dynamic registration.',
      },
      clientId: str("A client id registered at the upstream's authorization server.", { minLength: 1 }),
      clientSecret: ref("SecretValue"),
    },
    ["type"],
    {
      description:
        "Each user connects their own account at the upstream (OAuth 2.1 authorization code with PKCE S256 and the RFC 8707 resource indicator); Portico calls the upstream with that user's token (docs/upstream-auth.md).",
    },
  ),
  PromptArgument: obj(
    {
      name: str("Argument name.", { pattern: ARGUMENT_NAME.source }),
      description: str("What to pass."),
      required: { type: "boolean" },
      values: list({ type: "string" }, "Completion values offered for this argument."),
    },
    ["name"],
  ),
  PromptMessage: obj(
    {
      role: { enum: ["user", "assistant"] },
      text: str("Message text with {{argument}} placeholders."),
    },
    ["role", "text"],
  ),
  StaticPrompt: obj(
    {
      ...meta,
      arguments: list(ref("PromptArgument"), "The prompt's arguments."),
      messages: { ...list(ref("PromptMessage"), "The messages the prompt returns."), minItems: 1 },
    },
    ["name", "messages"],
  ),
  StaticResource: obj(
    {
      uri: str("Absolute URI, unique within the tenant.", { pattern: "^[A-Za-z][A-Za-z0-9+.-]*:\\S*$" }),
      ...meta,
      mimeType: str("MIME type, e.g. text/plain."),
      text: str("Text content (set exactly one of text and blob)."),
      blob: str("Base64 content (set exactly one of text and blob).", { contentEncoding: "base64" }),
    },
    ["uri", "name"],
  ),
  StaticResourceTemplate: obj(
    {
      uriTemplate: str("RFC 6570 level-1 template, e.g. docs://pages/{page}."),
      ...meta,
      mimeType: str("MIME type of the expanded content."),
      text: str("Content with {variable} placeholders filled from the URI."),
      values: {
        type: "object",
        description: "Completion values per template variable.",
        additionalProperties: list({ type: "string" }, "Values."),
      },
    },
    ["uriTemplate", "name", "text"],
  ),
  HttpTool: obj(
    {
      ...meta,
      inputSchema: jsonObject("JSON Schema of the tool's arguments (an object schema)."),
      outputSchema: jsonObject("JSON Schema of the structured result."),
      annotations: jsonObject("MCP tool annotations (readOnlyHint, destructiveHint, ...)."),
      url: str("The endpoint the arguments are POSTed to (http or https).", { format: "uri" }),
      headers: ref("Headers"),
      timeoutMs: { type: "integer", minimum: 1, maximum: 600000, description: "Default 30000." },
    },
    ["name", "url"],
  ),
  StaticProvider: obj(
    {
      ...providerBase,
      kind: { const: "static" },
      prompts: list(ref("StaticPrompt"), "Prompts served as data."),
      resources: list(ref("StaticResource"), "Resources served as data."),
      resourceTemplates: list(ref("StaticResourceTemplate"), "Resource templates served as data."),
    },
    ["id", "kind"],
    { description: "Prompts, resources and resource templates held as data." },
  ),
  HttpProvider: obj(
    {
      ...providerBase,
      kind: { const: "http" },
      tools: { ...list(ref("HttpTool"), "The tools, each backed by an HTTP endpoint."), minItems: 1 },
      auth: ref("UpstreamAuth"),
    },
    ["id", "kind", "tools"],
    { description: "Tools backed by plain HTTP endpoints." },
  ),
  McpProvider: obj(
    {
      ...providerBase,
      kind: { const: "mcp" },
      url: str("The upstream's Streamable HTTP endpoint.", { format: "uri" }),
      headers: ref("Headers"),
      timeoutMs: { type: "integer", minimum: 1, maximum: 3600000, description: "Per-call timeout." },
      auth: ref("UpstreamAuth"),
      referenceUser: str(
        "Per-user providers only: the user (`sub`) whose tool list is pinned as the reference shown to users who have not connected; for upstreams whose lists are the same for every user.",
        { minLength: 1, maxLength: 255 },
      ),
      era: {
        enum: ["auto", "session", "stateless"],
        description:
          'The protocol era Portico speaks upstream. "auto" (default): 2026-07-28 when server/discover lists it, else the session era (initialize); "session" or "stateless" pins one.',
      },
    },
    ["id", "kind", "url"],
    { description: "An upstream MCP server reached over Streamable HTTP." },
  ),
  Provider: {
    type: "object",
    description:
      'A provider record. In responses every secret reads `{"set": true}`; the `ETag` header carries its version.',
    oneOf: [ref("StaticProvider"), ref("HttpProvider"), ref("McpProvider")],
    discriminator: {
      propertyName: "kind",
      mapping: {
        static: "#/components/schemas/StaticProvider",
        http: "#/components/schemas/HttpProvider",
        mcp: "#/components/schemas/McpProvider",
      },
    },
  },
  ProviderPatch: {
    type: "object",
    description:
      "JSON Merge Patch (RFC 7396) of a provider: members present replace, null removes; the result must be a valid provider. `id` and `kind` cannot change.",
  },
};

/** A provider's circuit breaker on one replica (providers/circuit-breaker.ts). */
PROVIDER_SCHEMAS.BreakerStatus = obj(
  {
    state: {
      enum: ["closed", "open", "half-open"],
      description:
        "`open`: calls fail fast until `retryAt`; `half-open`: one probe is out; `closed`: calls go upstream.",
    },
    consecutiveFailures: { type: "integer", minimum: 0, description: "Upstream failures in a row." },
    retryAt: { ...ref("Timestamp"), description: "When an open breaker lets its next probe through." },
    lastFailure: str("The last upstream failure (no connection, a timeout, HTTP 5xx)."),
  },
  ["state", "consecutiveFailures"],
  {
    description:
      "The provider's circuit breaker on this replica (`mcp` and `http` providers; PORTICO_UPSTREAM_BREAKER_*).",
  },
);

/** A provider's health as saves and the list report it (admin/routes/provider-health.ts). */
PROVIDER_SCHEMAS.ProviderStatus = obj(
  {
    status: { enum: ["healthy", "unhealthy"] },
    reason: str(
      "Why it is unhealthy (an upstream that cannot be reached, a failed ping, an open circuit breaker).",
    ),
    latencyMs: { type: "integer", description: "Round trip of a ping just now (mcp providers, on save)." },
    checkedAt: { ...ref("Timestamp"), description: "When it was checked (on save); absent in lists." },
    breaker: ref("BreakerStatus"),
  },
  ["status"],
  {
    description:
      "The provider's health on this replica: checked on save (at most a few seconds), last known in lists.",
  },
);

/**
 * What the API adds to a record it answers with: read-only, so a client may send back what it
 * read (a PUT of a GET's body) and the server drops them (admin/routes/providers.ts).
 */
for (const kind of ["StaticProvider", "HttpProvider", "McpProvider"]) {
  const record = PROVIDER_SCHEMAS[kind]!;
  record.properties = {
    ...(record.properties as Record<string, Schema>),
    health: { ...ref("ProviderStatus"), readOnly: true },
    warning: str("Present when a save found the provider unhealthy: what is wrong and what clients see.", {
      readOnly: true,
    }),
  };
}
