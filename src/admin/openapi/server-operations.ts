// The admin operations of virtual servers (docs/admin-api.md "Virtual servers"): the records live in
// the tenant's, so every write is a compare-and-set of the tenant and reaches every replica.
import { json, MERGE_PATCH, none, page, PAGED, type Operation } from "./operation-kit.js";
import { ref } from "./schema-kit.js";

const BASE = "/tenants/{tenant}/servers";

export const serverOperations: Operation[] = [
  {
    id: "listServers",
    method: "get",
    path: BASE,
    tag: "servers",
    summary: "List a tenant's virtual servers",
    access: "tenant",
    parameters: PAGED,
    responses: { 200: page("virtual servers (in the order created)", "VirtualServer") },
  },
  {
    id: "createServer",
    method: "post",
    path: BASE,
    tag: "servers",
    summary: "Create a virtual server",
    description:
      "Its MCP URL is `/mcp/{tenant}/{id}`, a protected resource of its own. Refused (409) when two selected entries would be listed under one name, checked against what a client declaring every capability sees now. With `?dryRun=true` nothing is saved and the server's resulting lists are returned.",
    access: "tenant",
    parameters: ["dryRun"],
    body: { schema: ref("VirtualServer") },
    responses: {
      201: json("Created.", ref("VirtualServer"), ["ETag", "Location"]),
      200: json("Dry run: valid, nothing saved.", ref("ServerDryRun")),
    },
  },
  {
    id: "getServer",
    method: "get",
    path: `${BASE}/{server}`,
    tag: "servers",
    summary: "Get a virtual server",
    access: "tenant",
    responses: { 200: json("The server.", ref("VirtualServer"), ["ETag"]) },
  },
  {
    id: "replaceServer",
    method: "put",
    path: `${BASE}/{server}`,
    tag: "servers",
    summary: "Replace a virtual server",
    description:
      "Its connected clients get `list_changed` for the lists that change. With `If-Match`, a stale tag gets 412. With `?dryRun=true` nothing is saved.",
    access: "tenant",
    parameters: ["If-Match", "dryRun"],
    body: { schema: ref("VirtualServer") },
    responses: {
      200: json("Replaced (or, with ?dryRun=true, the dry-run report).", {
        oneOf: [ref("VirtualServer"), ref("ServerDryRun")],
      }),
    },
  },
  {
    id: "patchServer",
    method: "patch",
    path: `${BASE}/{server}`,
    tag: "servers",
    summary: "Patch a virtual server",
    description:
      'JSON Merge Patch (RFC 7396), e.g. `{"name": "Eng"}`; `providers` is replaced whole. With `If-Match`, a stale tag gets 412. With `?dryRun=true` nothing is saved.',
    access: "tenant",
    parameters: ["If-Match", "dryRun"],
    body: { schema: ref("ServerPatch"), mediaTypes: MERGE_PATCH },
    responses: {
      200: json("Patched (or, with ?dryRun=true, the dry-run report).", {
        oneOf: [ref("VirtualServer"), ref("ServerDryRun")],
      }),
    },
  },
  {
    id: "deleteServer",
    method: "delete",
    path: `${BASE}/{server}`,
    tag: "servers",
    summary: "Delete a virtual server",
    description: "Its sessions' next request gets 404; its tokens are good nowhere else.",
    access: "tenant",
    parameters: ["If-Match"],
    responses: { 204: none("Deleted.") },
  },
  {
    id: "getServerCatalog",
    method: "get",
    path: `${BASE}/{server}/catalog`,
    tag: "servers",
    summary: "A virtual server's catalog as its clients see it",
    access: "tenant",
    parameters: ["profile"],
    responses: { 200: json("The catalog.", ref("Catalog")) },
  },
];
