// Provider and tenant records as configured (bootstrap file, admin API), and the naming rules they
// share. The schemas are the records' one description (types, validation, the admin API's
// document); validate.ts adds what they cannot say: a record that passes validateTenant() is safe
// to build providers from.
import { Type, type Static, type TObject, type TSchema, type TUnion } from "@sinclair/typebox";
import { Slug } from "./names.js";
import { jsonObject, keyed, named } from "./schema-kit.js";
import { Instructions, ToolDiscovery, VirtualServers } from "./server.js";
import { Policy } from "./policy.js";
import { ProviderTasks } from "./task-marks.js";

/** A provider's `prefix` and `separator`. */
/** Whether an mcp provider's tool definitions are pinned to the approved ones (providers/pin-book.ts). */
const Pinning = (description: string) =>
  Type.Union([Type.Literal("off"), Type.Literal("warn"), Type.Literal("block")], { description });

export const PREFIX = /^[A-Za-z0-9_.-]{0,32}$/;
export const SEPARATOR = /^[A-Za-z0-9_.-]{0,8}$/;
export const DEFAULT_SEPARATOR = "__";
export const ARGUMENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const NAME_RULE = "must be 1–64 characters of A–Z a–z 0–9 _ . -";
const URI_SCHEME = "^[A-Za-z][A-Za-z0-9+.-]*:\\S*$";
const MIME_TYPE = "^[\\w.+-]+/[\\w.+-]+(?:\\s*;.*)?$";
const BASE64 = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$";
/** RFC 6749 §3.3: space-delimited scope-tokens of %x21 / %x23-5B / %x5D-7E. */
const SCOPE = "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+(?: [\\x21\\x23-\\x5B\\x5D-\\x7E]+)*$";
const RESOURCE = { format: "uri", "x-message": "must be an absolute URI without a fragment (RFC 8707 §2)" };
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

const text = (description: string, options: object = {}) =>
  Type.Optional(Type.String({ description, ...options }));
const closed = { additionalProperties: false } as const;
/** An http(s) URL; records/validate.ts refuses other schemes, credentials and refused addresses. */
const httpUrl = (description: string) =>
  Type.String({ format: "uri", description, "x-message": "must be an http(s) URL" });
const scope = (description: string) =>
  text(description, { pattern: SCOPE, "x-message": "must be space-separated scope tokens (RFC 6749 §3.3)" });
const authMethod = Type.Optional(
  Type.Union([Type.Literal("client_secret_basic"), Type.Literal("client_secret_post")], {
    description: "How Portico authenticates at the token endpoint; default client_secret_basic.",
  }),
);
/** A JSON Schema of type object (a tool's input or output). */
const objectSchema = (description: string) =>
  Type.Unsafe<Record<string, unknown>>({
    type: "object",
    description,
    required: ["type"],
    properties: { type: { const: "object" } },
  });
/** A discriminated union Ajv checks by its tag alone (one branch's findings, not every branch's). */
const tagged = <T extends TObject[]>(tag: string, branches: [...T], options: object) =>
  Type.Unsafe<Static<TUnion<T>>>({ ...options, oneOf: branches, discriminator: { propertyName: tag } });

const meta = {
  name: Type.String({
    minLength: 1,
    description: "The entry's name as the provider knows it; the prefix is added for clients.",
  }),
  title: text("Human-readable title."),
  description: text("What it is for; models read this."),
};

const PromptArgument = named(
  "PromptArgument",
  Type.Object(
    {
      name: Type.String({
        description: "Argument name.",
        pattern: ARGUMENT_NAME.source,
        "x-message": NAME_RULE,
      }),
      description: text("What to pass."),
      required: Type.Optional(Type.Boolean()),
      values: Type.Optional(
        Type.Array(Type.String(), { description: "Completion values offered for this argument." }),
      ),
    },
    closed,
  ),
);
const PromptMessage = named(
  "PromptMessage",
  Type.Object(
    {
      role: Type.Union([Type.Literal("user"), Type.Literal("assistant")]),
      text: Type.String({ description: "Message text with {{argument}} placeholders." }),
    },
    closed,
  ),
);
const StdioRoot = named(
  "StdioRoot",
  Type.Object(
    {
      uri: Type.String({
        pattern: "^file://",
        maxLength: 4096,
        description: "A file:// URI the child may work in.",
        "x-message": "must be a file:// URI",
      }),
      name: text("A name for it.", { maxLength: 256 }),
    },
    closed,
  ),
);
const StaticPrompt = named(
  "StaticPrompt",
  Type.Object(
    {
      ...meta,
      arguments: Type.Optional(Type.Array(PromptArgument, { description: "The prompt's arguments." })),
      messages: Type.Array(PromptMessage, {
        minItems: 1,
        description: "The messages the prompt returns.",
        "x-message": "must hold at least one message",
      }),
    },
    closed,
  ),
);
const StaticResource = named(
  "StaticResource",
  Type.Object(
    {
      uri: Type.String({
        description: "Absolute URI, unique within the tenant.",
        pattern: URI_SCHEME,
        "x-message": "must be an absolute URI with a scheme, e.g. docs://guide",
      }),
      ...meta,
      mimeType: text("MIME type, e.g. text/plain.", {
        pattern: MIME_TYPE,
        "x-message": "must be a MIME type such as text/plain",
      }),
      text: text("Text content (set exactly one of text and blob)."),
      blob: text("Base64 content (set exactly one of text and blob).", {
        contentEncoding: "base64",
        pattern: BASE64,
        "x-message": "must be base64 (RFC 4648 §4, with padding)",
      }),
    },
    closed,
  ),
);
const StaticResourceTemplate = named(
  "StaticResourceTemplate",
  Type.Object(
    {
      uriTemplate: Type.String({
        description: "RFC 6570 level-1 template, e.g. docs://pages/{page}.",
        pattern: URI_SCHEME,
        "x-message": "must be an absolute URI template with a scheme",
      }),
      ...meta,
      mimeType: text("MIME type of the expanded content.", {
        pattern: MIME_TYPE,
        "x-message": "must be a MIME type such as text/plain",
      }),
      text: Type.String({ description: "Content with {variable} placeholders filled from the URI." }),
      values: Type.Optional(keyed(Type.Array(Type.String()), "Completion values per template variable.")),
    },
    closed,
  ),
);

/**
 * The provider records, written once for both places they are checked: the records themselves
 * hold each secret as a string; the admin API also takes `{"set": true}` for a stored one.
 */
export function providerSchemas<S extends TSchema>(secret: S) {
  const Headers = named(
    "Headers",
    Type.Unsafe<Record<string, Static<S>>>({
      type: "object",
      description: "HTTP headers sent upstream. Values are secrets: stored encrypted, never returned.",
      propertyNames: { pattern: HEADER_NAME, maxLength: 256, "x-message": "is not a valid header name" },
      additionalProperties: secret,
      maxProperties: 64,
    }),
  );
  const BearerAuth = named(
    "BearerAuth",
    Type.Object(
      { type: Type.Literal("bearer"), token: secret },
      { ...closed, description: "A static bearer token: `Authorization: Bearer <token>`." },
    ),
  );
  const ClientCredentialsAuth = named(
    "ClientCredentialsAuth",
    Type.Object(
      {
        type: Type.Literal("client_credentials"),
        tokenUrl: httpUrl("The authorization server's token endpoint."),
        clientId: Type.String({ description: "OAuth client id.", minLength: 1 }),
        clientSecret: secret,
        scope: scope("Space-separated scopes to request."),
        resource: text("RFC 8707 resource indicator to request the token for.", RESOURCE),
        authMethod,
      },
      { ...closed, description: "OAuth 2.1 client credentials grant; tokens are cached until they expire." },
    ),
  );
  const TokenExchangeAuth = named(
    "TokenExchangeAuth",
    Type.Object(
      {
        type: Type.Literal("token_exchange"),
        tokenUrl: httpUrl("The security token service's token endpoint (RFC 8693)."),
        audience: text("RFC 8693 `audience` of the requested token (a logical name).", { maxLength: 2048 }),
        resource: text("RFC 8693 / RFC 8707 `resource` of the requested token.", RESOURCE),
        scope: scope("Space-separated scopes to request."),
        clientId: Type.String({ description: "How Portico is known to the STS.", minLength: 1 }),
        clientSecret: secret,
        authMethod,
      },
      {
        ...closed,
        description:
          "Per user (mcp and http providers): Portico signs a short-lived assertion of the MCP user and exchanges it at the STS for an upstream token (docs/upstream-auth.md).",
      },
    ),
  );
  const UserOAuthAuth = named(
    "UserOAuthAuth",
    Type.Object(
      {
        type: Type.Literal("user_oauth"),
        issuer: Type.Optional(
          httpUrl(
            "The upstream's authorization server. Absent: discovered from the upstream's 401 (RFC 9728 resource metadata, then RFC 8414 / OpenID Connect discovery).",
          ),
        ),
        scope: scope("Space-separated scopes to ask each user for."),
        registration: Type.Optional(
          Type.Union(
            [
              Type.Literal("auto"),
              Type.Literal("metadata_document"),
              Type.Literal("dynamic"),
              Type.Literal("preregistered"),
            ],
            {
              description:
                'How Portico is known to the upstream\'s authorization server: its Client ID Metadata Document, RFC 7591 dynamic registration, or the pre-registered `clientId`. Default "auto": the pre-registered client when `clientId` is set, else the first the server supports of metadata document and dynamic registration (docs/upstream-auth.md).',
            },
          ),
        ),
        clientId: text("A client id registered at the upstream's authorization server.", { minLength: 1 }),
        clientSecret: Type.Optional(secret),
      },
      {
        ...closed,
        description:
          "Each user connects their own account at the upstream (OAuth 2.1 authorization code with PKCE S256 and the RFC 8707 resource indicator); Portico calls the upstream with that user's token (docs/upstream-auth.md).",
      },
    ),
  );
  const UpstreamAuth = named(
    "UpstreamAuth",
    tagged("type", [BearerAuth, ClientCredentialsAuth, TokenExchangeAuth, UserOAuthAuth], {
      type: "object",
      description: "How Portico authenticates to the upstream (never with the MCP client's own token).",
    }),
  );
  const HttpTool = named(
    "HttpTool",
    Type.Object(
      {
        ...meta,
        inputSchema: Type.Optional(objectSchema("JSON Schema of the tool's arguments (an object schema).")),
        outputSchema: Type.Optional(objectSchema("JSON Schema of the structured result (an object schema).")),
        annotations: Type.Optional(jsonObject("MCP tool annotations (readOnlyHint, destructiveHint, ...).")),
        url: httpUrl("The endpoint the arguments are POSTed to (http or https)."),
        headers: Type.Optional(Headers),
        timeoutMs: Type.Optional(
          Type.Integer({ minimum: 1, maximum: 600_000, description: "Default 30000." }),
        ),
      },
      closed,
    ),
  );
  const base = {
    id: Slug,
    prefix: text("Namespace for this provider's tool and prompt names: `{prefix}{separator}{name}`.", {
      pattern: PREFIX.source,
      "x-message": "must be at most 32 characters of A–Z a–z 0–9 _ . -",
    }),
    separator: text('Between prefix and name; default "__".', {
      pattern: SEPARATOR.source,
      "x-message": "must be at most 8 characters of A–Z a–z 0–9 _ . -",
    }),
  };
  const StaticProvider = named(
    "StaticProvider",
    Type.Object(
      {
        ...base,
        kind: Type.Literal("static"),
        prompts: Type.Optional(Type.Array(StaticPrompt, { description: "Prompts served as data." })),
        resources: Type.Optional(Type.Array(StaticResource, { description: "Resources served as data." })),
        resourceTemplates: Type.Optional(
          Type.Array(StaticResourceTemplate, { description: "Resource templates served as data." }),
        ),
      },
      {
        ...closed,
        description: "Prompts, resources and resource templates held as data.",
        "x-unknown": {
          tasks:
            "static providers have no tools to mark (task marks apply to http, openapi and mcp providers)",
        },
      },
    ),
  );
  const HttpProvider = named(
    "HttpProvider",
    Type.Object(
      {
        ...base,
        kind: Type.Literal("http"),
        tools: Type.Array(HttpTool, {
          minItems: 1,
          description: "The tools, each backed by an HTTP endpoint.",
        }),
        auth: Type.Optional(UpstreamAuth),
        tasks: Type.Optional(ProviderTasks),
      },
      { ...closed, description: "Tools backed by plain HTTP endpoints." },
    ),
  );
  const McpProvider = named(
    "McpProvider",
    Type.Object(
      {
        ...base,
        kind: Type.Literal("mcp"),
        url: Type.Optional(
          httpUrl("The upstream's Streamable HTTP endpoint (required unless `transport` is stdio)."),
        ),
        // stdio upstreams (docs/upstream-mcp.md "stdio upstreams"): defined only in the bootstrap
        // file, whose command, args, cwd, env and limits are never stored; the admin API refuses them.
        transport: Type.Optional(
          Type.Union([Type.Literal("http"), Type.Literal("stdio")], {
            description:
              '"http" (default): Streamable HTTP at `url`. "stdio": a child process each replica starts from the command its own bootstrap file gives; such providers are defined in the bootstrap file only, never through the admin API.',
          }),
        ),
        roots: Type.Optional(
          Type.Array(StdioRoot, {
            maxItems: 100,
            description: "stdio only: the roots Portico answers the child's `roots/list` with.",
          }),
        ),
        start: Type.Optional(
          Type.Union([Type.Literal("boot"), Type.Literal("first-use")], {
            description:
              'stdio only: "boot" (default) starts the child when the provider starts; "first-use" when something first needs it (a listing by a client that declared capabilities, a request routed to it, the admin catalog); it lists nothing until then.',
          }),
        ),
        serverRequests: Type.Optional(
          Type.Union([Type.Literal("single-call"), Type.Literal("child-per-client")], {
            description:
              'stdio only: how the child\'s sampling and elicitation requests reach a client. "single-call" (default): one child for every client, a request relayed while exactly one client call is in flight on it and refused otherwise; "child-per-client": a client session that declares sampling, elicitation or roots gets a child of its own.',
          }),
        ),
        headers: Type.Optional(Headers),
        timeoutMs: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: 3_600_000,
            description: "Per-call timeout; default PORTICO_UPSTREAM_TIMEOUT_MS.",
          }),
        ),
        auth: Type.Optional(UpstreamAuth),
        referenceUser: text(
          "Per-user providers only: the user (`sub`) whose tool list is pinned as the reference shown to users who have not connected; for upstreams whose lists are the same for every user.",
          { minLength: 1, maxLength: 255 },
        ),
        pinning: Type.Optional(
          Pinning(
            'Whether the upstream\'s tool definitions and instructions are pinned to the ones an admin approved (docs/security.md "Pinned tool definitions"): "off", "warn" (a changed or new definition is served, recorded in the audit log and counted) or "block" (it is held back until approved; a changed description of an unchanged schema shows the approved one, changed instructions the approved text). Absent: the tenant\'s `pinning`, else off.',
          ),
        ),
        era: Type.Optional(
          Type.Union([Type.Literal("auto"), Type.Literal("session"), Type.Literal("stateless")], {
            description:
              'The protocol era Portico speaks upstream. "auto" (default): 2026-07-28 when server/discover lists it, else the session era (initialize); "session" or "stateless" pins one.',
          }),
        ),
        tasks: Type.Optional(ProviderTasks),
      },
      {
        ...closed,
        description:
          "An upstream MCP server reached over Streamable HTTP, or (`transport` stdio, bootstrap file only) a child process's stdio.",
      },
    ),
  );
  const Selector = Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 1000 });
  const OpenApiCredential = named(
    "OpenApiCredential",
    Type.Object(
      {
        value: Type.Optional({ ...secret, description: "An `apiKey` scheme's key." }),
        token: Type.Optional({ ...secret, description: "An `http` `bearer` scheme's token." }),
        username: text("An `http` `basic` scheme's user name.", { maxLength: 1024 }),
        password: Type.Optional({ ...secret, description: "An `http` `basic` scheme's password." }),
        tokenUrl: Type.Optional(
          httpUrl(
            "An `oauth2` (or `openIdConnect`) scheme's token endpoint, where Portico asks for a token with the client credentials grant. Set here, never taken from the document.",
          ),
        ),
        clientId: text("An `oauth2` scheme's client id at `tokenUrl`.", { minLength: 1, maxLength: 1024 }),
        clientSecret: Type.Optional({ ...secret, description: "An `oauth2` scheme's client secret." }),
        scope: scope("An `oauth2` scheme's scopes to ask for, space-separated."),
      },
      {
        ...closed,
        description:
          "The credential for one security scheme of the document, with the members its type takes (docs/openapi.md).",
      },
    ),
  );
  const OpenApiProvider = named(
    "OpenApiProvider",
    Type.Object(
      {
        ...base,
        kind: Type.Literal("openapi"),
        document: Type.Optional(
          Type.Unsafe<Record<string, unknown> | string>({
            anyOf: [{ type: "object" }, { type: "string", minLength: 1 }],
            description:
              "The OpenAPI 3.0/3.1 or Swagger 2.0 document: a JSON object, or its JSON or YAML text. One tool per operation (docs/openapi.md). Set this or `documentUrl`.",
          }),
        ),
        documentUrl: Type.Optional(
          httpUrl(
            "Where the document is fetched from (through the egress policy) when the provider is saved, and again only by the provider's refresh call; the copy is kept in the store for every replica. Set this or `document`.",
          ),
        ),
        baseUrl: Type.Optional(
          httpUrl(
            "Where the operations are called: the document's paths are appended to it. Absent: the document's own `servers` if `useDocumentServers` is true.",
          ),
        ),
        useDocumentServers: Type.Optional(
          Type.Boolean({
            description:
              "Without `baseUrl`, call each operation at the document's server for it (operation, path, then top-level `servers`, as OpenAPI says). Default false.",
          }),
        ),
        include: Type.Optional({
          ...Selector,
          description:
            "Only these operations become tools: a tag, an `operationId`, or `METHOD /path` (`*` matches any run of characters). Absent: all.",
        }),
        exclude: Type.Optional({
          ...Selector,
          description: "Operations left out, in the same forms as `include`; applied after it.",
        }),
        headers: Type.Optional(Headers),
        credentials: Type.Optional(
          Type.Record(Type.String({ minLength: 1, maxLength: 256 }), OpenApiCredential, {
            maxProperties: 50,
            description:
              "Credentials by the name of the document's security scheme (`components.securitySchemes`, Swagger 2.0's `securityDefinitions`): each call carries those of the first of its operation's `security` requirements they satisfy. Secret members are write-only and bound to where the calls go.",
          }),
        ),
        auth: Type.Optional(UpstreamAuth),
        timeoutMs: Type.Optional(
          Type.Integer({ minimum: 1, maximum: 600_000, description: "Per-call timeout; default 30000." }),
        ),
        tasks: Type.Optional(ProviderTasks),
      },
      { ...closed, description: "Tools compiled from an OpenAPI document: one per operation." },
    ),
  );
  const Provider = named(
    "Provider",
    tagged("kind", [StaticProvider, HttpProvider, McpProvider, OpenApiProvider], {
      type: "object",
      description:
        'A provider record. In responses every secret reads `{"set": true}`; the `ETag` header carries its version.',
    }),
  );
  return {
    Headers,
    UpstreamAuth,
    BearerAuth,
    ClientCredentialsAuth,
    TokenExchangeAuth,
    UserOAuthAuth,
    PromptArgument,
    PromptMessage,
    StaticPrompt,
    StdioRoot,
    StaticResource,
    StaticResourceTemplate,
    HttpTool,
    ProviderTasks,
    StaticProvider,
    HttpProvider,
    McpProvider,
    OpenApiCredential,
    OpenApiProvider,
    Provider,
  };
}

/** Provider records as stored: every secret a string. */
const SECRET = Type.String({ minLength: 1, maxLength: 8192 });
export const PROVIDER_RECORDS = providerSchemas(SECRET);

export type ProviderConfig = Static<typeof PROVIDER_RECORDS.Provider>;
export type ProviderConfigBase = Pick<ProviderConfig, "id" | "prefix" | "separator">;
export type StaticProviderConfig = Static<typeof PROVIDER_RECORDS.StaticProvider>;
export type HttpProviderConfig = Static<typeof PROVIDER_RECORDS.HttpProvider>;
export type McpProviderConfig = Static<typeof PROVIDER_RECORDS.McpProvider>;
export type OpenApiProviderConfig = Static<typeof PROVIDER_RECORDS.OpenApiProvider>;
/** The credential for one security scheme of an openapi provider's document. */
export type OpenApiCredential = Static<typeof PROVIDER_RECORDS.OpenApiCredential>;
export type StaticPromptArgument = Static<typeof PromptArgument>;
export type StaticPromptMessage = Static<typeof PromptMessage>;
export type StaticPrompt = Static<typeof StaticPrompt>;
export type StaticResource = Static<typeof StaticResource>;
export type StaticResourceTemplate = Static<typeof StaticResourceTemplate>;
export type HttpTool = Static<typeof PROVIDER_RECORDS.HttpTool>;
/** Credentials for an upstream, sent as its Authorization header; never the client's own token. */
export type UpstreamAuth = Static<typeof PROVIDER_RECORDS.UpstreamAuth>;
export type BearerAuth = Static<typeof PROVIDER_RECORDS.BearerAuth>;
export type ClientCredentialsAuth = Static<typeof PROVIDER_RECORDS.ClientCredentialsAuth>;
/** RFC 8693: Portico's own signed assertion of the user, exchanged at an STS for an upstream token. */
export type TokenExchangeAuth = Static<typeof PROVIDER_RECORDS.TokenExchangeAuth>;
/** Each user connects their own account at the upstream (OAuth 2.1 code flow with PKCE S256). */
export type UserOAuthAuth = Static<typeof PROVIDER_RECORDS.UserOAuthAuth>;
export type UpstreamEra = NonNullable<McpProviderConfig["era"]>;
export type PinningMode = NonNullable<McpProviderConfig["pinning"]>;

/** The `auth` types whose credential is each user's own (docs/upstream-auth.md): never shared across users. */
export const PER_USER_AUTH: ReadonlySet<string> = new Set(["user_oauth", "token_exchange"]);

/** True when a provider's upstream credential is per user (a connected account or a token exchange). */
export function perUserAuth(cfg: ProviderConfig): boolean {
  return cfg.kind !== "static" && cfg.auth !== undefined && PER_USER_AUTH.has(cfg.auth.type);
}

/** The largest session cap a tenant may set. */
const MAX_SESSIONS = 10_000_000;

/** The largest per-minute limit a tenant may set. */
const MAX_REQUESTS_PER_MINUTE = 100_000_000;

const perMinute = (description: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_REQUESTS_PER_MINUTE, description }));
const sessionCap = (description: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SESSIONS, description }));

/**
 * Rate limits and session caps of a tenant's MCP endpoint, counted across every replica. An
 * absent member takes the server default (PORTICO_RATE_LIMIT_*, PORTICO_MAX_SESSIONS_*); 0 means
 * no limit.
 */
export const TenantLimits = named(
  "TenantLimits",
  Type.Object(
    {
      requestsPerMinute: perMinute(
        "Requests to the tenant's MCP URL per minute, all clients together, counted across replicas. 0: no limit.",
      ),
      perClientRequestsPerMinute: perMinute(
        "Requests per minute of one client: one user (`sub`, whatever the OAuth client) when authenticated, else its IP address (IPv6 by /64). 0: no limit.",
      ),
      sessionsPerPrincipal: sessionCap(
        "Live MCP sessions one authenticated user (`sub`, whatever the client) may hold, counted across replicas. 0: no cap.",
      ),
      sessionsPerAddress: sessionCap(
        "Live MCP sessions one client address (IPv6 by /64) may hold when the tenant's auth is none. 0: no cap.",
      ),
    },
    {
      ...closed,
      description:
        "Rate limits (fixed one-minute windows) and session caps of the MCP endpoint; past one a request gets 429 with `Retry-After`. An absent member takes the server default (`PORTICO_RATE_LIMIT_REQUESTS_PER_MINUTE`, `PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE`, `PORTICO_MAX_SESSIONS_PER_PRINCIPAL`, `PORTICO_MAX_SESSIONS_PER_ADDRESS`).",
    },
  ),
);
export type TenantLimits = Static<typeof TenantLimits>;

/** A claim name, or a dotted path into nested claims (`realm_access.roles`). */
const claim = (what: string, where: string) =>
  text(
    `The claim of ${where} holding the user's ${what} (a list of names, or one name), matched by policy rules (docs/policy.md); a dotted path such as realm_access.roles reaches into nested claims. Absent: none.`,
    {
      pattern: "^[A-Za-z0-9_:/-]{1,64}(?:\\.[A-Za-z0-9_:/-]{1,64}){0,4}$",
      "x-message": "must be a claim name, or a dotted path of up to five names (A–Z a–z 0–9 _ : / -)",
    },
  );

/** The tenant's own `auth` mode. */
export const TenantAuth = Type.Union([Type.Literal("oauth"), Type.Literal("none")], {
  description: '"oauth" guards the MCP URL with OAuth 2.1; "none" serves it without sign-in.',
});

/** The tenant's display name. */
export const TenantName = Type.String({
  maxLength: 200,
  description: "Display name (serverInfo.title reads `Portico · {name}`).",
});

/**
 * How an "oauth" tenant's users are known, and the tenant record holding it, written once for
 * both places they are checked: records hold each secret as a string; the admin API also takes
 * `{"set": true}` for a stored one. "local": users managed through the admin API sign in with a
 * password. "oidc": they sign in at the tenant's own OpenID Connect provider (Portico is its
 * client). "external": the tenant's MCP clients bring tokens from another authorization server,
 * which Portico verifies against its JWKS.
 */
export function tenantSchemas<S extends TSchema, P extends TSchema>(secret: S, Provider: P) {
  const LocalIdentity = named(
    "LocalIdentity",
    Type.Object(
      { type: Type.Literal("local") },
      {
        ...closed,
        description: "Local users (/tenants/{tenant}/users) sign in with a password. The default.",
      },
    ),
  );
  const OidcIdentity = named(
    "OidcIdentity",
    Type.Object(
      {
        type: Type.Literal("oidc"),
        issuer: httpUrl("The OpenID provider's issuer URL."),
        clientId: Type.String({ description: "Portico's client id at the provider.", minLength: 1 }),
        clientSecret: secret,
        scope: text("Space-separated scopes to request at the provider."),
        label: text('Shown on the login button, e.g. "Acme SSO".', { maxLength: 200 }),
        groupsClaim: claim("groups", "the ID token or userinfo"),
        rolesClaim: claim("roles", "the ID token or userinfo"),
      },
      {
        ...closed,
        description: "Users sign in at the tenant's own OpenID Connect provider; Portico is its client.",
      },
    ),
  );
  const ExternalIdentity = named(
    "ExternalIdentity",
    Type.Object(
      {
        type: Type.Literal("external"),
        issuer: httpUrl("The authorization server's issuer."),
        jwksUrl: httpUrl("Where its signing keys are published."),
        audience: text("The audience its tokens must carry."),
        groupsClaim: claim("groups", "the access token"),
        rolesClaim: claim("roles", "the access token"),
        login: Type.Optional(
          Type.Object(
            {
              clientId: Type.String({ description: "Portico's client id at that issuer.", minLength: 1 }),
              clientSecret: secret,
            },
            {
              ...closed,
              description:
                "Portico's OpenID Connect client at that issuer: the connect and connected-accounts pages sign users in with it and compare their `sub` (docs/upstream-auth.md). Required for per-user (`user_oauth`) providers on this tenant.",
            },
          ),
        ),
      },
      {
        ...closed,
        description: "MCP clients bring tokens from another authorization server, verified against its keys.",
      },
    ),
  );
  const TenantIdentity = named(
    "TenantIdentity",
    tagged("type", [LocalIdentity, OidcIdentity, ExternalIdentity], {
      type: "object",
      description:
        'How an oauth tenant\'s users are known. In responses the OIDC client secret reads `{"set": true}`; the `ETag` header carries the version.',
    }),
  );
  const Tenant = Type.Object(
    {
      id: Slug,
      auth: TenantAuth,
      name: Type.Optional(TenantName),
      identity: Type.Optional(TenantIdentity),
      limits: Type.Optional(TenantLimits),
      // Absent in a tenants file reads as none (validateTenant fills it in).
      providers: Type.Array(Provider, { description: "The tenant's providers." }),
      servers: Type.Optional(VirtualServers),
      policy: Type.Optional(Policy),
      pinning: Type.Optional(
        Pinning(
          "The default `pinning` of the tenant's mcp providers (\"off\" when absent); a provider's own setting wins.",
        ),
      ),
      toolDiscovery: Type.Optional(ToolDiscovery),
      instructions: Type.Optional(Instructions),
    },
    {
      ...closed,
      description: "A tenant: its MCP URL /mcp/{id}, who may use it, and its providers, servers and policy.",
      "x-missing": {
        id: Slug.description!.replace(/^A/, "a").replace(/\.$/, ""),
        auth: 'set "auth": "oauth" or "none" (no sign-in)',
      },
    },
  );
  return { LocalIdentity, OidcIdentity, ExternalIdentity, TenantIdentity, Tenant };
}

/** Tenant records as stored: every secret a string. */
export const TENANT_RECORDS = tenantSchemas(SECRET, PROVIDER_RECORDS.Provider);

export type TenantIdentity = Static<typeof TENANT_RECORDS.TenantIdentity>;
/** A tenant record that passed validateTenant(): its providers always listed, [] for none. */
export type TenantConfig = Static<typeof TENANT_RECORDS.Tenant>;

/** Whether a provider's tool definitions are pinned: its own `pinning`, else its tenant's (mcp providers only). */
export function pinningOf(tenant: Pick<TenantConfig, "pinning">, provider: ProviderConfig): PinningMode {
  return (provider.kind === "mcp" && (provider.pinning ?? tenant.pinning)) || "off";
}

/** The name a client sees for a provider's tool or prompt. */
export function exposedName(provider: ProviderConfigBase, name: string): string {
  return provider.prefix ? `${provider.prefix}${provider.separator ?? DEFAULT_SEPARATOR}${name}` : name;
}
