// The admin operations of connected accounts (docs/upstream-auth.md "Admin API"): a user's
// accounts, revoking one (audited), and the users connected to a provider. Never token material.
// Part of the one operation table (operations.ts).
import { json, none, PAGED, type Operation } from "./operation-kit.js";
import { list, obj, ref, str, type Schema } from "./schema-kit.js";
import { pageOf } from "./schemas.js";

const time = (description: string): Schema => str(description, { format: "date-time" });

export const ACCOUNT_SCHEMAS: Record<string, Schema> = {
  ConnectedAccount: obj(
    {
      provider: ref("Slug"),
      user: str("The user's `sub`, as the MCP client's token carries it."),
      issuer: str("The upstream's authorization server.", { format: "uri" }),
      scope: str("The scopes the upstream granted."),
      connectedAt: time("When the user connected."),
      refreshedAt: time("When Portico last refreshed the token."),
      expiresAt: time("When the current access token expires (Portico refreshes it ahead)."),
    },
    ["provider", "user", "issuer", "connectedAt"],
    { description: "One user's account at one per-user provider's upstream. Tokens are never shown." },
  ),
  ConnectedAccountList: obj({ items: list(ref("ConnectedAccount"), "By provider id.") }, ["items"]),
  ProviderAccountsPage: {
    ...pageOf(ref("ConnectedAccount")),
    properties: {
      ...(pageOf(ref("ConnectedAccount")).properties as Record<string, Schema>),
      count: {
        type: "integer",
        minimum: 0,
        description: "How many users are connected, all pages together.",
      },
    },
    required: ["items", "count"],
  },
};

export const accountOperations: Operation[] = [
  {
    id: "listUserAccounts",
    method: "get",
    path: "/tenants/{tenant}/subjects/{subject}/accounts",
    tag: "connected-accounts",
    summary: "List a user's connected accounts",
    description:
      "The per-user (`user_oauth`) providers the user connected their own account at. No token material.",
    access: "tenant",
    responses: { 200: json("The user's accounts (empty when none).", ref("ConnectedAccountList")) },
  },
  {
    id: "revokeUserAccount",
    method: "delete",
    path: "/tenants/{tenant}/subjects/{subject}/accounts/{provider}",
    tag: "connected-accounts",
    summary: "Revoke a user's connected account",
    description:
      "Portico forgets the user's tokens at once on every replica, and asks the upstream's authorization server to revoke them (RFC 7009, when it has a revocation endpoint; best effort). The user's next call asks them to connect again. Recorded in the audit log as `account.revoke`.",
    access: "tenant",
    responses: { 204: none("Revoked.") },
  },
  {
    id: "listProviderAccounts",
    method: "get",
    path: "/tenants/{tenant}/providers/{provider}/accounts",
    tag: "connected-accounts",
    summary: "List the users connected to a provider",
    description: "By user `sub`; `count` is the total. No token material.",
    access: "tenant",
    parameters: PAGED,
    responses: { 200: json("A page of connected users.", ref("ProviderAccountsPage")) },
  },
];
