// Every admin operation: its route, who may call it, its inputs and its responses. The OpenAPI
// document (document.ts) is built from this table and the routes are registered from it, so the
// two cannot drift; test/admin/openapi.test.ts checks the committed document too.
import { accountOperations } from "./accounts-operations.js";
import { consoleOperations } from "./console-operations.js";
import { oauthOperations } from "./oauth-operations.js";
import { serverOperations } from "./server-operations.js";
import { policyOperations } from "./policy-operations.js";
import { json, MERGE_PATCH, none, page, PAGED, type Operation } from "./operation-kit.js";
import { ref } from "./schema-kit.js";

const tenantOps: Operation[] = [
  {
    id: "listTenants",
    method: "get",
    path: "/tenants",
    tag: "tenants",
    summary: "List tenants",
    access: "platform",
    parameters: PAGED,
    responses: { 200: page("tenants (by id)", "Tenant") },
  },
  {
    id: "createTenant",
    method: "post",
    path: "/tenants",
    tag: "tenants",
    summary: "Create a tenant",
    description: "Its MCP URL is `/mcp/{id}`. Providers may be created with it.",
    access: "platform",
    body: { schema: ref("TenantInput") },
    responses: { 201: json("Created.", ref("Tenant"), ["ETag", "Location"]) },
  },
  {
    id: "getTenant",
    method: "get",
    path: "/tenants/{tenant}",
    tag: "tenants",
    summary: "Get a tenant",
    description:
      "Its settings as the list shows them (no identity configuration, no secret): a tenant principal may read its own tenant's.",
    access: "tenant",
    responses: { 200: json("The tenant.", ref("Tenant"), ["ETag"]) },
  },
  {
    id: "updateTenant",
    method: "patch",
    path: "/tenants/{tenant}",
    tag: "tenants",
    summary: "Update a tenant's name, auth or rate limits",
    access: "platform",
    parameters: ["If-Match"],
    body: { schema: ref("TenantPatch"), mediaTypes: MERGE_PATCH },
    responses: { 200: json("Updated.", ref("Tenant"), ["ETag"]) },
  },
  {
    id: "deleteTenant",
    method: "delete",
    path: "/tenants/{tenant}",
    tag: "tenants",
    summary: "Delete a tenant",
    description:
      "Removes its providers, sessions (their next request gets 404), API keys, local users, pre-registered OAuth clients and audit log, and revokes its grants with their tokens. The platform audit log keeps the deletion.",
    access: "platform",
    responses: { 204: none("Deleted.") },
  },
];

const providerOps: Operation[] = [
  {
    id: "listProviders",
    method: "get",
    path: "/tenants/{tenant}/providers",
    tag: "providers",
    summary: "List a tenant's providers",
    access: "tenant",
    parameters: PAGED,
    responses: {
      200: page("providers (in catalog order), each with its last known health", "Provider"),
    },
  },
  {
    id: "createProvider",
    method: "post",
    path: "/tenants/{tenant}/providers",
    tag: "providers",
    summary: "Create a provider",
    description:
      "Connected clients get `list_changed` for the lists it changes. The answer carries the provider's `health`, checked on saving (a ping of at most 3 s); an upstream that cannot be reached or fails is saved all the same (201) with a `warning`. With `?dryRun=true` nothing is saved: the provider is validated and, for `mcp`, the upstream is connected to and the catalog it would add is reported.",
    access: "tenant",
    parameters: ["dryRun"],
    body: { schema: ref("Provider") },
    responses: {
      201: json("Created; `health` says whether it answers, `warning` when it does not.", ref("Provider"), [
        "ETag",
        "Location",
      ]),
      200: json("Dry run: valid, nothing saved.", ref("DryRun")),
    },
  },
  {
    id: "getProvider",
    method: "get",
    path: "/tenants/{tenant}/providers/{provider}",
    tag: "providers",
    summary: "Get a provider",
    description: 'Secrets read `{"set": true}`.',
    access: "tenant",
    responses: { 200: json("The provider.", ref("Provider"), ["ETag"]) },
  },
  {
    id: "replaceProvider",
    method: "put",
    path: "/tenants/{tenant}/providers/{provider}",
    tag: "providers",
    summary: "Replace a provider",
    description:
      'Secrets sent as `{"set": true}` keep their stored value. With `If-Match`, a stale tag gets 412. The answer carries `health`, and a `warning` when the provider is unhealthy (saved all the same).',
    access: "tenant",
    parameters: ["If-Match", "dryRun"],
    body: { schema: ref("Provider") },
    responses: {
      200: json(
        "Replaced (or, with ?dryRun=true, the dry-run report).",
        {
          oneOf: [ref("Provider"), ref("DryRun")],
        },
        ["ETag"],
      ),
    },
  },
  {
    id: "patchProvider",
    method: "patch",
    path: "/tenants/{tenant}/providers/{provider}",
    tag: "providers",
    summary: "Patch a provider",
    description:
      "JSON Merge Patch (RFC 7396). With `If-Match`, a stale tag gets 412. The answer carries `health`, and a `warning` when the provider is unhealthy (saved all the same).",
    access: "tenant",
    parameters: ["If-Match", "dryRun"],
    body: { schema: ref("ProviderPatch"), mediaTypes: MERGE_PATCH },
    responses: {
      200: json(
        "Patched (or, with ?dryRun=true, the dry-run report).",
        {
          oneOf: [ref("Provider"), ref("DryRun")],
        },
        ["ETag"],
      ),
    },
  },
  {
    id: "deleteProvider",
    method: "delete",
    path: "/tenants/{tenant}/providers/{provider}",
    tag: "providers",
    summary: "Delete a provider",
    access: "tenant",
    parameters: ["If-Match"],
    responses: { 204: none("Deleted.") },
  },
  {
    id: "refreshProvider",
    method: "post",
    path: "/tenants/{tenant}/providers/{provider}/refresh",
    tag: "providers",
    summary: "Re-read an upstream's catalog",
    description: "On every replica. Clients get `list_changed` for the lists that changed.",
    access: "tenant",
    responses: { 200: json("Refreshed.", ref("Refreshed")) },
  },
  {
    id: "getProviderHealth",
    method: "get",
    path: "/tenants/{tenant}/providers/{provider}/health",
    tag: "providers",
    summary: "Check a provider's health now",
    access: "tenant",
    responses: { 200: json("Health as this replica sees it.", ref("Health")) },
  },
  {
    id: "getProviderPins",
    method: "get",
    path: "/tenants/{tenant}/providers/{provider}/pins",
    tag: "providers",
    summary: "A pinned provider's approved and pending tool definitions and instructions",
    description:
      "With `pinning` warn or block (docs/security.md \"Pinned tool definitions\"): the definitions an admin approved, and those the upstream served since that no approval covers, each with a diff against the tool's approved definition. The upstream's instructions are the definition named `#instructions` (their text its `description`). A provider with pinning off has neither.",
    access: "tenant",
    responses: { 200: json("The provider's pins.", ref("Pins")) },
  },
  {
    id: "approveProviderPins",
    method: "post",
    path: "/tenants/{tenant}/providers/{provider}/pins/approve",
    tag: "providers",
    summary: "Approve pending tool definitions",
    description:
      "Approves the pending definitions of the tools named in `tools` (each a name, or `{name, digest}`: 409 when the pending definition is no longer the one with that digest, so what is approved is what was reviewed), or all of them without a body; with nothing approved yet (an approval lost when the provider was saved), what the upstream lists now (and its instructions). Every replica serves them at once and clients get `tools/list_changed`; approved instructions (`#instructions`) reach the clients that connect (initialize, server/discover) from then on. Audited as `pins.approve`. 409 when the provider's pinning is off; 404 naming a tool without a pending definition.",
    access: "tenant",
    body: { schema: ref("PinApproval"), optional: true },
    responses: { 200: json("Approved.", ref("PinsApproved")) },
  },
  {
    id: "getCatalog",
    method: "get",
    path: "/tenants/{tenant}/catalog",
    tag: "providers",
    summary: "The tenant's catalog as clients see it",
    description:
      "Tools, prompts, resources and templates under their exposed names, each with its provider and health, as this replica serves them to clients of one capability profile (upstreams may list more to a client that can sample, elicit or list roots): by default a client declaring every capability, or the `profile` given.",
    access: "tenant",
    parameters: ["profile"],
    responses: { 200: json("The catalog.", ref("Catalog")) },
  },
];

const sessionOps: Operation[] = [
  {
    id: "listSessions",
    method: "get",
    path: "/tenants/{tenant}/sessions",
    tag: "sessions",
    summary: "List live MCP sessions",
    access: "tenant",
    parameters: PAGED,
    responses: { 200: page("sessions", "Session") },
  },
  {
    id: "getSession",
    method: "get",
    path: "/tenants/{tenant}/sessions/{session}",
    tag: "sessions",
    summary: "Get a session",
    access: "tenant",
    responses: { 200: json("The session.", ref("Session")) },
  },
  {
    id: "deleteSession",
    method: "delete",
    path: "/tenants/{tenant}/sessions/{session}",
    tag: "sessions",
    summary: "End a session",
    description: "Its streams close and its next request gets 404.",
    access: "tenant",
    responses: { 204: none("Ended.") },
  },
];

function keyOps(scope: "tenant" | "platform"): Operation[] {
  const base = scope === "tenant" ? "/tenants/{tenant}/api-keys" : "/api-keys";
  const suffix = scope === "tenant" ? "TenantApiKey" : "PlatformApiKey";
  const what = scope === "tenant" ? "tenant" : "platform";
  const access = scope === "tenant" ? "tenant" : "platform";
  return [
    {
      id: `list${suffix}s`,
      method: "get",
      path: base,
      tag: "api-keys",
      summary: `List ${what} API keys`,
      description: "Never shows the keys themselves.",
      access,
      parameters: PAGED,
      responses: { 200: page(`${what} keys`, "ApiKey") },
    },
    {
      id: `create${suffix}`,
      method: "post",
      path: base,
      tag: "api-keys",
      summary: `Create a ${what} API key`,
      description: "The response holds the key; it is shown this once and stored only as a hash.",
      access,
      body: { schema: ref("ApiKeyInput") },
      responses: { 201: json("Created.", ref("ApiKeyCreated"), ["Location"]) },
    },
    {
      id: `revoke${suffix}`,
      method: "delete",
      path: `${base}/{key}`,
      tag: "api-keys",
      summary: `Revoke a ${what} API key`,
      description: "It stops working at once, on every replica.",
      access,
      responses: { 204: none("Revoked.") },
    },
  ];
}

const auditOps: Operation[] = [
  {
    id: "listTenantAudit",
    method: "get",
    path: "/tenants/{tenant}/audit",
    tag: "audit",
    summary: "A tenant's audit log",
    description: "Every admin write to the tenant, newest first, secrets redacted.",
    access: "tenant",
    parameters: PAGED,
    responses: { 200: page("audit entries", "AuditEntry") },
  },
  {
    id: "listPlatformAudit",
    method: "get",
    path: "/audit",
    tag: "audit",
    summary: "The platform audit log",
    description: "Tenant creation, changes and deletion, and platform keys; newest first.",
    access: "platform",
    parameters: PAGED,
    responses: { 200: page("audit entries", "AuditEntry") },
  },
  ...(["tenant", "platform"] as const).flatMap((log): Operation[] => {
    const path = log === "tenant" ? "/tenants/{tenant}/audit" : "/audit";
    const whose = log === "tenant" ? "Tenant" : "Platform";
    return [
      {
        id: `verify${whose}Audit`,
        method: "get",
        path: `${path}/verify`,
        tag: "audit",
        summary: `Verify the ${log} audit log's chain`,
        description:
          "Checks each entry's MAC (keyed by PORTICO_SECRET_KEY) over itself and the entry before it, in sequence from the anchor the old end was trimmed at, against the stored head: an edited entry, one re-chained without the key, entries deleted at either end or in the middle each name the first entry that breaks the chain (docs/operations.md).",
        access: log,
        parameters: ["from", "to"],
        responses: { 200: json("What was checked, and the first break if any.", ref("AuditVerification")) },
      },
      {
        id: `export${whose}Audit`,
        method: "get",
        path: `${path}/export`,
        tag: "audit",
        summary: `Export the ${log} audit log as JSON lines`,
        description:
          'The anchor (`{"anchor": …}`, the last entry trimmed, or null), then every entry oldest first with its `id`, `seq` and `mac`, then the head (`{"head": {"seq", "mac"}}`): what is needed to verify the chain off the store (docs/operations.md).',
        access: log,
        responses: {
          200: {
            description: "JSON lines (one JSON object per line).",
            mediaType: "application/x-ndjson",
            schema: { type: "string" },
          },
        },
      },
    ];
  }),
];

const secretOps: Operation[] = [
  {
    id: "resealSecrets",
    method: "post",
    path: "/secrets/reseal",
    tag: "secrets",
    summary: "Re-seal every stored secret under the current PORTICO_SECRET_KEY",
    description:
      "Provider and identity secrets of every tenant and the OAuth signing keys: what a key in PORTICO_SECRET_KEY_PREVIOUS sealed is sealed again under PORTICO_SECRET_KEY. Idempotent; run it after every replica runs with the new key, before dropping the old one (docs/operations.md). A value no key opens is left as it is and listed in `failed`.",
    access: "platform",
    responses: { 200: json("What was re-sealed.", ref("ResealReport")) },
  },
];

export const OPERATIONS: readonly Operation[] = [
  {
    id: "getOpenApi",
    method: "get",
    path: "/openapi.json",
    tag: "meta",
    summary: "This document",
    access: "public",
    responses: { 200: json("The OpenAPI 3.1 document.", { type: "object" }) },
  },
  ...tenantOps,
  ...providerOps,
  ...serverOperations,
  ...sessionOps,
  ...keyOps("tenant"),
  ...keyOps("platform"),
  ...auditOps,
  ...secretOps,
  ...oauthOperations,
  ...policyOperations,
  ...accountOperations,
  ...consoleOperations,
];

/** The path parameters of a path, in order. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}
