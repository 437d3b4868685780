// The admin operations the console stands on (docs/admin-api.md "Console sessions"): who is signed
// in and signing out, platform users, a tenant's named admins, calling a tenant's MCP endpoint as
// the admin ("try it") and the traffic overview. Part of the one operation table (operations.ts).
import { PlatformUser } from "../platform-users.js";
import { TRY_METHODS } from "../try-it.js";
import { json, none, MERGE_PATCH, type Operation } from "./operation-kit.js";
import { components, jsonObject, list, obj, ref, str, type Schema } from "./schema-kit.js";

const time = (description: string): Schema => str(description, { format: "date-time" });

const password = str(
  "The password: 8 to 1024 characters. Write-only: never returned, stored as a scrypt hash.",
  {
    minLength: 8,
    maxLength: 1024,
    writeOnly: true,
  },
);

/** One series of a traffic chart: [unix seconds, value] points. */
const points = (what: string): Schema => ({
  type: "array",
  description: `[unix seconds, ${what}] pairs, oldest first.`,
  items: {
    type: "array",
    prefixItems: [{ type: "number" }, { type: "number" }],
    minItems: 2,
    maxItems: 2,
  },
});

const rateSeries = (what: string): Schema =>
  list(
    obj(
      {
        tenant: ref("Slug"),
        provider: str("The provider, when the series is one provider's (absent: the tenant's endpoint)."),
        points: points(`${what} per second`),
      },
      ["tenant", "points"],
    ),
    `${what} per second, per tenant (and per provider where the metric has one).`,
  );

export const CONSOLE_SCHEMAS: Record<string, Schema> = {
  ConsoleSession: obj(
    {
      via: { type: "string", enum: ["session", "key"], description: "How this request authenticated." },
      platform: { type: "boolean", description: "A platform principal (else a tenant's)." },
      tenant: { type: ["string", "null"], description: "The tenant a tenant principal administers." },
      name: str("Who: a platform user's or tenant admin's name, or an API key's."),
      csrf: str(
        "The console session's CSRF token: send it as `X-Portico-CSRF` on every write (via a session only).",
      ),
      expiresAt: time(
        "When the session ends unless used again (30 minutes idle, 8 hours at most; via a session only).",
      ),
    },
    ["via", "platform", "tenant", "name"],
    { description: "Who the admin API sees behind this request." },
  ),
  ...components(PlatformUser),
  PlatformUserInput: obj({ username: ref("Username"), password }, ["username", "password"], {
    description: "A new platform user.",
  }),
  PlatformUserPatch: obj({ password }, ["password"], { description: "A platform user's new password." }),
  PlatformUserList: obj({ items: list(ref("PlatformUser"), "By username.") }, ["items"]),
  TenantAdminList: obj(
    {
      items: list(
        str("A subject (`sub`) named an admin of the tenant."),
        "The subjects named admins, sorted. Local users with the role `tenant-admin` are admins too and are not listed here.",
      ),
    },
    ["items"],
  ),
  TryRequest: obj(
    {
      method: { type: "string", enum: [...TRY_METHODS], description: "The MCP method to call." },
      params: jsonObject(
        "The method's params, as an MCP client sends them (`name` and `arguments` for tools/call).",
      ),
      server: {
        ...ref("Slug"),
        description: "A virtual server of the tenant; absent: the tenant's own URL.",
      },
    },
    ["method"],
    { description: "One MCP request, made at the tenant's endpoint as the signed-in admin." },
  ),
  TryResult: {
    oneOf: [
      obj({ result: jsonObject("The MCP result, as a client would receive it.") }, ["result"]),
      obj(
        {
          error: obj(
            {
              code: { type: "number", description: "The JSON-RPC error code." },
              message: str("The error's message."),
              data: { description: "The error's data, when it has any." },
            },
            ["code", "message"],
          ),
        },
        ["error"],
      ),
    ],
    description: "The MCP endpoint's answer: its result, or its JSON-RPC error.",
  },
  Traffic: obj(
    {
      source: {
        type: "string",
        enum: ["prometheus", "replica"],
        description:
          "`prometheus`: every replica, from PORTICO_PROMETHEUS_URL; `replica`: only the figures of the replica that answered.",
      },
      replica: str("The answering replica's id (source `replica`)."),
      stepSeconds: { type: "number", description: "Seconds between points." },
      from: time("The first point's time."),
      to: time("The last point's time."),
      requests: rateSeries("MCP requests"),
      errors: rateSeries("MCP requests answered with an error"),
      latency: list(
        obj(
          {
            tenant: ref("Slug"),
            quantile: { type: "string", enum: ["0.5", "0.95", "0.99"] },
            points: points("seconds"),
          },
          ["tenant", "quantile", "points"],
        ),
        "MCP request latency percentiles, per tenant.",
      ),
    },
    ["source", "stepSeconds", "from", "to", "requests", "errors", "latency"],
    { description: "Requests, errors and latency over time, per tenant and provider." },
  ),
};

export const CONSOLE_PARAMETERS: Record<string, Schema> = {
  minutes: {
    name: "minutes",
    in: "query",
    description: "How far back, in minutes.",
    schema: { type: "integer", minimum: 1, maximum: 1440, default: 60 },
  },
  trafficTenant: {
    name: "tenant",
    in: "query",
    description: "Only this tenant (a tenant principal always sees only its own).",
    schema: ref("Slug"),
  },
};

export const consoleOperations: Operation[] = [
  {
    id: "getConsoleSession",
    method: "get",
    path: "/session",
    tag: "console",
    summary: "Who is calling",
    description:
      "The principal behind this request: a console session (with its CSRF token and expiry) or a key.",
    access: "any",
    responses: { 200: json("The caller.", ref("ConsoleSession")) },
  },
  {
    id: "endConsoleSession",
    method: "delete",
    path: "/session",
    tag: "console",
    summary: "Sign out of the console",
    description:
      "Ends the console session on the server (its cookie is refused from then on, on every replica) and clears the cookie. With a key there is no session: nothing is ended.",
    access: "any",
    responses: { 204: none("Signed out.") },
  },
  {
    id: "listPlatformUsers",
    method: "get",
    path: "/platform-users",
    tag: "console",
    summary: "List platform users",
    access: "platform",
    responses: { 200: json("Every platform user.", ref("PlatformUserList")) },
  },
  {
    id: "createPlatformUser",
    method: "post",
    path: "/platform-users",
    tag: "console",
    summary: "Create a platform user",
    description:
      "A person who signs in to the console (/admin/console/sign-in) with this password and acts there as the platform key does. Audited in the platform log as `platform-user.create`.",
    access: "platform",
    body: { schema: ref("PlatformUserInput") },
    responses: { 201: json("Created.", ref("PlatformUser"), ["Location"]) },
  },
  {
    id: "updatePlatformUser",
    method: "patch",
    path: "/platform-users/{user}",
    tag: "console",
    summary: "Change a platform user's password",
    description: "Their console sessions go on; delete the user to end them.",
    access: "platform",
    body: { schema: ref("PlatformUserPatch"), mediaTypes: MERGE_PATCH },
    responses: { 200: json("Updated.", ref("PlatformUser")) },
  },
  {
    id: "deletePlatformUser",
    method: "delete",
    path: "/platform-users/{user}",
    tag: "console",
    summary: "Delete a platform user",
    description: "Their console sessions are refused from their next request on.",
    access: "platform",
    responses: { 204: none("Deleted.") },
  },
  {
    id: "listTenantAdmins",
    method: "get",
    path: "/tenants/{tenant}/admins",
    tag: "console",
    summary: "List the subjects named admins of a tenant",
    description:
      "Who may sign in to the console for this tenant besides local users with the role `tenant-admin`: how `oidc` and `external` tenants name their admins (a role in the identity provider's token is not enough).",
    access: "tenant",
    responses: { 200: json("The named admins.", ref("TenantAdminList")) },
  },
  {
    id: "addTenantAdmin",
    method: "put",
    path: "/tenants/{tenant}/admins/{subject}",
    tag: "console",
    summary: "Name a subject an admin of the tenant",
    description:
      "The subject is the user's `sub` as their tokens carry it: Portico's `oidc_…` subject on `oidc` tenants (as grants and the audit log show it), the issuer's own `sub` on `external` tenants. Idempotent. At most 1,000 named admins per tenant (409 beyond). Audited as `admin.add`.",
    access: "tenant",
    responses: { 204: none("Named.") },
  },
  {
    id: "removeTenantAdmin",
    method: "delete",
    path: "/tenants/{tenant}/admins/{subject}",
    tag: "console",
    summary: "Remove a named admin",
    description:
      "Their console sessions on the tenant are refused from their next request on. Audited as `admin.remove`.",
    access: "tenant",
    responses: { 204: none("Removed.") },
  },
  {
    id: "tryTenant",
    method: "post",
    path: "/tenants/{tenant}/try",
    tag: "console",
    summary: "Call the tenant's MCP endpoint as the admin",
    description:
      "Runs one MCP request (a 2026-07-28 stateless request, in-process) through the tenant's real endpoint, or one of its virtual servers', as the calling admin: policy sees them (a tenant admin as their own `sub`, groups and roles; others as `admin:…` subjects, docs/admin-api.md \"Try it\"), and the call is recorded in the tenant's audit log as `console.try`. No token is handed out.",
    access: "tenant",
    body: { schema: ref("TryRequest") },
    responses: { 200: json("The endpoint's answer.", ref("TryResult")) },
  },
  {
    id: "getTraffic",
    method: "get",
    path: "/traffic",
    tag: "console",
    summary: "Requests, errors and latency over time",
    description:
      "From Prometheus (every replica) when PORTICO_PROMETHEUS_URL is set, else this replica's own figures of the last hour (`source: replica`). A tenant principal sees only its tenant.",
    access: "any",
    parameters: ["minutes", "trafficTenant"],
    responses: { 200: json("The series.", ref("Traffic")) },
  },
];
