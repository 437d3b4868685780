// The admin operations of a tenant's OAuth side: local users, OAuth clients, grants and identity
// settings. Part of the one operation table (operations.ts).
import { json, MERGE_PATCH, none, page, PAGED, type Operation } from "./operation-kit.js";
import { ref } from "./schema-kit.js";

const userOps: Operation[] = [
  {
    id: "listUsers",
    method: "get",
    path: "/tenants/{tenant}/users",
    tag: "users",
    summary: "List a tenant's local users",
    description: "Never shows passwords or their hashes.",
    access: "tenant",
    parameters: PAGED,
    responses: { 200: page("users (by username)", "User") },
  },
  {
    id: "createUser",
    method: "post",
    path: "/tenants/{tenant}/users",
    tag: "users",
    summary: "Create a local user",
    description:
      "The user signs in on the login page with this username and password (tenants whose identity is local). The password is stored only as a scrypt hash.",
    access: "tenant",
    body: { schema: ref("UserInput") },
    responses: { 201: json("Created.", ref("User"), ["Location"]) },
  },
  {
    id: "getUser",
    method: "get",
    path: "/tenants/{tenant}/users/{user}",
    tag: "users",
    summary: "Get a local user",
    access: "tenant",
    responses: { 200: json("The user.", ref("User")) },
  },
  {
    id: "updateUser",
    method: "patch",
    path: "/tenants/{tenant}/users/{user}",
    tag: "users",
    summary: "Change a user's password, e-mail, groups or roles",
    description:
      "JSON Merge Patch (RFC 7396). The user's grants and tokens stay; revoke them under /grants. New groups and roles reach the user's access tokens at their next issuance (a refresh or a sign-in): a token issued before keeps the old ones until it expires (docs/policy.md).",
    access: "tenant",
    body: { schema: ref("UserPatch"), mediaTypes: MERGE_PATCH },
    responses: { 200: json("Updated.", ref("User")) },
  },
  {
    id: "deleteUser",
    method: "delete",
    path: "/tenants/{tenant}/users/{user}",
    tag: "users",
    summary: "Delete a local user",
    description:
      "They can no longer sign in, and every grant they gave on the tenant is revoked with its tokens.",
    access: "tenant",
    responses: { 204: none("Deleted.") },
  },
  {
    id: "clearUserThrottle",
    method: "delete",
    path: "/tenants/{tenant}/users/{user}/throttle",
    tag: "users",
    summary: "Clear a user's login back-off",
    description:
      "Forgets the failed logins counted on the username, from every address, and ends any back-off in force (docs/security.md), so the user can sign in at once. Recorded in the audit log as `user.throttle-clear`.",
    access: "tenant",
    responses: { 204: none("Cleared.") },
  },
];

const clientOps: Operation[] = [
  {
    id: "listClients",
    method: "get",
    path: "/tenants/{tenant}/clients",
    tag: "clients",
    summary: "List a tenant's OAuth clients",
    description:
      "Clients pre-registered for the tenant (oldest first), then the other clients holding live grants on it; `preRegistered` tells them apart. Secrets are never shown.",
    access: "tenant",
    parameters: PAGED,
    responses: { 200: page("clients", "OAuthClient") },
  },
  {
    id: "createClient",
    method: "post",
    path: "/tenants/{tenant}/clients",
    tag: "clients",
    summary: "Pre-register an OAuth client",
    description:
      "RFC 7591 client metadata, checked as dynamic registration checks it. A confidential client's `client_secret` is in this response only; Portico keeps its SHA-256.",
    access: "tenant",
    body: { schema: ref("ClientRegistration") },
    responses: { 201: json("Registered.", ref("OAuthClientCreated"), ["Location"]) },
  },
  {
    id: "getClient",
    method: "get",
    path: "/tenants/{tenant}/clients/{client}",
    tag: "clients",
    summary: "Get an OAuth client",
    description: "A client pre-registered for the tenant or holding live grants on it.",
    access: "tenant",
    responses: { 200: json("The client.", ref("OAuthClient")) },
  },
  {
    id: "deleteClient",
    method: "delete",
    path: "/tenants/{tenant}/clients/{client}",
    tag: "clients",
    summary: "Delete a client, or end its access to the tenant",
    description:
      "Revokes the client's grants on the tenant with their tokens. A client pre-registered for the tenant is deleted too; one registered otherwise stays registered (it is not the tenant's), it just holds no grants here any more.",
    access: "tenant",
    responses: { 204: none("Deleted or revoked.") },
  },
  {
    id: "deleteRegisteredClient",
    method: "delete",
    path: "/clients/{client}",
    tag: "clients",
    summary: "Delete an OAuth client everywhere",
    description:
      "Revokes the client's grants on every tenant with their tokens, and deletes its registration: dynamic (RFC 7591) or pre-registered for a tenant. Its next token request answers invalid_client, and an MCP client built on the official SDKs then registers again. Recorded in the platform audit log as `client.delete`.",
    access: "platform",
    responses: { 204: none("Deleted.") },
  },
];

const grantOps: Operation[] = [
  {
    id: "listGrants",
    method: "get",
    path: "/tenants/{tenant}/grants",
    tag: "grants",
    summary: "List a tenant's grants",
    description: "What users granted clients on the tenant, newest first, revoked ones included.",
    access: "tenant",
    parameters: PAGED,
    responses: { 200: page("grants", "Grant") },
  },
  {
    id: "revokeGrant",
    method: "delete",
    path: "/tenants/{tenant}/grants/{grant}",
    tag: "grants",
    summary: "Revoke a grant",
    description:
      "Its refresh tokens stop working and its access tokens are refused at once, on every replica. Revoking a revoked grant is a no-op.",
    access: "tenant",
    responses: { 204: none("Revoked.") },
  },
];

const identityOps: Operation[] = [
  {
    id: "getIdentity",
    method: "get",
    path: "/tenants/{tenant}/identity",
    tag: "identity",
    summary: "How the tenant's users sign in",
    description: 'Local users unless set otherwise. The OIDC client secret reads `{"set": true}`.',
    access: "tenant",
    responses: { 200: json("The identity settings.", ref("TenantIdentity"), ["ETag"]) },
  },
  {
    id: "replaceIdentity",
    method: "put",
    path: "/tenants/{tenant}/identity",
    tag: "identity",
    summary: "Set how the tenant's users sign in",
    description:
      'Local users, the tenant\'s own OpenID provider, or an external authorization server. `{"set": true}` as `clientSecret` keeps the stored secret. With `If-Match`, a stale tag gets 412.',
    access: "tenant",
    parameters: ["If-Match"],
    body: { schema: ref("TenantIdentity") },
    responses: { 200: json("Saved.", ref("TenantIdentity"), ["ETag"]) },
  },
];

export const oauthOperations: readonly Operation[] = [...userOps, ...clientOps, ...grantOps, ...identityOps];
