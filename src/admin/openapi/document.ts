// Builds the admin API's OpenAPI 3.1 document from the operation table and the schemas.
// `npm run docs` writes it to openapi/portico-admin.json; a test fails when that file is stale.
import { PORTICO_INFO } from "../../protocol/version.js";
import { PROFILE_LABEL_PATTERN, PROFILE_NAMES } from "../../protocol/profile-names.js";
import { OPERATIONS, pathParameters } from "./operations.js";
import type { Operation } from "./operation-kit.js";
import { CLIENT_ID, GRANT_ID, OAUTH_SCHEMAS } from "./oauth-schemas.js";
import { ACCOUNT_SCHEMAS } from "./accounts-operations.js";
import { CONSOLE_PARAMETERS, CONSOLE_SCHEMAS } from "./console-operations.js";
import { ref } from "./schema-kit.js";
import { POLICY_SCHEMAS } from "./policy-schemas.js";
import { SCHEMAS } from "./schemas.js";

type Json = Record<string, unknown>;

export const ADMIN_PREFIX = "/admin/v1";

const PATH_PARAMETERS: Record<string, Json> = {
  tenant: { description: "Tenant id (a slug).", schema: ref("Slug") },
  provider: { description: "Provider id (a slug).", schema: ref("Slug") },
  server: { description: "Virtual server id (a slug).", schema: ref("Slug") },
  session: { description: "Mcp-Session-Id.", schema: { type: "string", pattern: "^[A-Za-z0-9_-]{16,64}$" } },
  key: { description: "API key id.", schema: { type: "string", pattern: "^key_[A-Za-z0-9_-]{16}$" } },
  user: { description: "Username.", schema: ref("Username") },
  client: { description: "Client id.", schema: { type: "string", pattern: CLIENT_ID } },
  grant: { description: "Grant id.", schema: { type: "string", pattern: GRANT_ID } },
  subject: {
    description: "A user's `sub`, as the MCP client's token carries it (percent-encoded).",
    schema: { type: "string", minLength: 1, maxLength: 255 },
  },
};

const PARAMETERS: Record<string, Json> = {
  ...Object.fromEntries(
    Object.entries(PATH_PARAMETERS).map(([name, p]) => [name, { name, in: "path", required: true, ...p }]),
  ),
  limit: {
    name: "limit",
    in: "query",
    description: "Page size.",
    schema: { type: "integer", minimum: 1, maximum: 200, default: 50 },
  },
  cursor: {
    name: "cursor",
    in: "query",
    description: "The nextCursor of the previous page, unchanged.",
    schema: { type: "string", maxLength: 512 },
  },
  from: {
    name: "from",
    in: "query",
    description: "The first sequence number whose MAC is checked (default: the oldest kept).",
    schema: { type: "integer", minimum: 1 },
  },
  to: {
    name: "to",
    in: "query",
    description: "The last sequence number whose MAC is checked (default: the newest).",
    schema: { type: "integer", minimum: 1 },
  },
  dryRun: {
    name: "dryRun",
    in: "query",
    description: "Validate (and for mcp providers, connect) without saving.",
    schema: { type: "boolean", default: false },
  },
  profile: {
    name: "profile",
    in: "query",
    description:
      "The capability profile to show the catalog for: `none` (a client that declared no capabilities), or comma-separated capability names of " +
      PROFILE_NAMES.map((n) => `\`${n}\``).join(", ") +
      " (`ui`: the MCP Apps extension with `text/html;profile=mcp-app`; `ui.bare`: without a MIME type), e.g. `sampling,elicitation.url,roots,tasks,ui`. Default: every capability.",
    schema: { type: "string", maxLength: 256, pattern: PROFILE_LABEL_PATTERN },
  },
  ...CONSOLE_PARAMETERS,
  "If-Match": {
    name: "If-Match",
    in: "header",
    description: "The ETag you last read; the write is refused with 412 when the record changed since.",
    schema: { type: "string" },
  },
};

const PROBLEMS: Record<number, string> = {
  400: "Malformed request: bad JSON, query parameter or id.",
  401: "Missing, unknown, revoked or expired key, or a console session that ended (with `WWW-Authenticate: Bearer`).",
  403: "The caller may not do this (a tenant key or tenant admin on a platform route), or a console session's write without its CSRF header or from another origin.",
  404: "No such resource, or one the key may not see.",
  409: "Conflicts with an existing resource; `detail` names both.",
  412: "`If-Match` names a version that is no longer current.",
  413: "Body too large.",
  415: "Body is not JSON.",
  422: "Valid JSON, invalid content; `errors` lists each member by JSON Pointer.",
  502: "The upstream could not be reached or answered badly.",
  503: "The store is unreachable; retry.",
};

/** The problem statuses an operation can answer, from what it takes. */
function problemsOf(op: Operation): number[] {
  const codes = new Set<number>([503]);
  if (op.access !== "public") [401, 403].forEach((c) => codes.add(c));
  if (pathParameters(op.path).length > 0) [400, 404].forEach((c) => codes.add(c));
  if (op.parameters?.some((p) => p !== "If-Match")) codes.add(400);
  if (op.parameters?.includes("If-Match")) codes.add(412);
  if (op.body) [400, 413, 415, 422].forEach((c) => codes.add(c));
  if (
    op.body &&
    (op.tag === "providers" || op.tag === "servers" || op.id === "createTenant" || op.id === "createUser")
  )
    codes.add(409);
  // A provider a virtual server selects is not deleted (docs/admin-api.md "Virtual servers").
  if (op.id === "deleteProvider") codes.add(409);
  if (op.id === "refreshProvider" || op.id === "getTraffic") codes.add(502);
  if (op.id === "createPlatformUser" || op.id === "addTenantAdmin") codes.add(409);
  // Another tenant's figures are not found for a tenant principal (docs/admin-api.md "Traffic").
  if (op.id === "getTraffic") codes.add(404);
  return [...codes].sort();
}

function responsesOf(op: Operation): Json {
  const out: Json = {};
  for (const [status, r] of Object.entries(op.responses))
    out[status] = {
      description: r.description,
      ...(r.headers
        ? { headers: Object.fromEntries(r.headers.map((h) => [h, { $ref: `#/components/headers/${h}` }])) }
        : {}),
      ...(r.schema ? { content: { [r.mediaType ?? "application/json"]: { schema: r.schema } } } : {}),
    };
  for (const status of problemsOf(op)) out[status] = { $ref: `#/components/responses/Problem${status}` };
  return out;
}

function operationOf(op: Operation): Json {
  const parameters = [...pathParameters(op.path), ...(op.parameters ?? [])].map((name) => ({
    $ref: `#/components/parameters/${name}`,
  }));
  return {
    operationId: op.id,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    security: op.access === "public" ? [] : SECURITY,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.optional !== true,
            content: Object.fromEntries(
              (op.body.mediaTypes ?? ["application/json"]).map((m) => [m, { schema: op.body!.schema }]),
            ),
          },
        }
      : {}),
    responses: responsesOf(op),
    "x-access": op.access,
  };
}

/** Either scheme: a bearer key (machines) or the console's session cookie (people). */
const SECURITY = [{ bearer: [] }, { console: [] }];

/** The OpenAPI 3.1 document of /admin/v1. */
export function openApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operationOf(op);
  return {
    openapi: "3.1.0",
    info: {
      title: "Portico admin API",
      version: PORTICO_INFO.version,
      description:
        "Tenants, providers, OAuth users, clients, grants and identity settings, API keys, sessions and audit of a Portico MCP gateway. Scripts authenticate with `Authorization: Bearer <key>`: the platform key (PORTICO_ADMIN_TOKEN) or an API key. The console (/admin/console) authenticates with its session cookie, set by its sign-in; a write made with the cookie must carry `X-Portico-CSRF` (from GET /session) and Portico's own `Origin`. Errors are RFC 9457 problem details.",
    },
    servers: [{ url: ADMIN_PREFIX, description: "This Portico" }],
    security: SECURITY,
    tags: [
      { name: "tenants", description: "Tenants: one MCP URL each (platform keys only)." },
      { name: "providers", description: "What a tenant's MCP clients are served." },
      {
        name: "servers",
        description:
          "Virtual servers: more MCP URLs of a tenant, each a selection of its providers' entries.",
      },
      { name: "sessions", description: "Live MCP sessions." },
      { name: "users", description: "A tenant's local users, who sign in with a password." },
      { name: "clients", description: "OAuth clients of a tenant: pre-registered, or holding grants." },
      { name: "grants", description: "What users granted OAuth clients on a tenant." },
      { name: "identity", description: "How a tenant's users sign in." },
      { name: "policy", description: "Who may list and use which tools, prompts and resources." },
      { name: "connected-accounts", description: "Users' own accounts at per-user providers' upstreams." },
      { name: "api-keys", description: "Keys for this API." },
      { name: "audit", description: "Who changed what, when." },
      { name: "secrets", description: "Secrets at rest (platform keys only)." },
      {
        name: "console",
        description: "The console's session, platform users, tenant admins, try it and the traffic overview.",
      },
      { name: "meta", description: "This document." },
    ],
    paths,
    components: {
      schemas: { ...SCHEMAS, ...OAUTH_SCHEMAS, ...POLICY_SCHEMAS, ...ACCOUNT_SCHEMAS, ...CONSOLE_SCHEMAS },
      parameters: PARAMETERS,
      headers: {
        ETag: { description: "The record's version, for If-Match.", schema: { type: "string" } },
        Location: { description: "URL of the created resource.", schema: { type: "string" } },
      },
      responses: Object.fromEntries(
        Object.entries(PROBLEMS).map(([status, description]) => [
          `Problem${status}`,
          { description, content: { "application/problem+json": { schema: ref("Problem") } } },
        ]),
      ),
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "A platform key (PORTICO_ADMIN_TOKEN or created at /api-keys) or a tenant key.",
        },
        console: {
          type: "apiKey",
          in: "cookie",
          name: "__Host-portico-console",
          description:
            "The console's session, set by its sign-in at /admin/console/sign-in (`portico-console` when the public URL is http): HttpOnly, SameSite=Strict, 30 minutes idle, 8 hours at most. A write (any method but GET and HEAD) must also carry the session's `X-Portico-CSRF` header and an `Origin` equal to Portico's public URL's, else 403.",
        },
      },
    },
  };
}
