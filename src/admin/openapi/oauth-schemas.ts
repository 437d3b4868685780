// JSON Schemas of the admin API's OAuth resources, from their records' own schemas: a tenant's
// local users (oauth/users.ts, plus the password they are created with), its OAuth clients (RFC 7591
// §2 metadata, wire spelling kept: oauth/clients.ts), its grants and its identity settings
// (records/tenant.ts). Rules a schema cannot say are checked after: oauth/clients.ts
// validateRegistration, records/validate.ts validateIdentity.
import { Type, type Static } from "@sinclair/typebox";
import { ClientMetadata } from "../../oauth/clients.js";
import { Email, User, Username } from "../../oauth/users.js";
import { described, named, Timestamp } from "../../records/schema-kit.js";
import { ADMIN_TENANTS } from "./provider-schemas.js";
import { components, obj, ref, str, type Schema } from "./schema-kit.js";

/** Client ids Portico issues (oauth/clients.ts): 128 random bits, base64url. */
export const CLIENT_ID = "^[A-Za-z0-9_-]{22}$";
/** Grant ids (oauth/grants.ts): `g_` and 96 random bits, base64url. */
export const GRANT_ID = "^g_[A-Za-z0-9_-]{16}$";

const Password = Type.String({
  description: "The password: 8 to 1024 characters. Write-only: never returned, stored as a scrypt hash.",
  minLength: 8,
  maxLength: 1024,
  writeOnly: true,
});
const { username, email, groups, roles } = User.properties;

/** A user as POST /tenants/{t}/users takes it: the record's own members and a password. */
export const UserInput = named(
  "UserInput",
  Type.Object({ username, password: Password, email, groups, roles }, { additionalProperties: false }),
);
export type UserInput = Static<typeof UserInput>;

export const UserPatch = named(
  "UserPatch",
  Type.Object(
    {
      password: Type.Optional(Password),
      email: Type.Optional(
        Type.Unsafe<string | null>({
          type: ["string", "null"],
          format: Email.format,
          maxLength: Email.maxLength,
          description: "E-mail address; null removes it.",
        }),
      ),
      groups,
      roles,
    },
    {
      additionalProperties: false,
      description:
        "JSON Merge Patch (RFC 7396) of a user: a new password, e-mail, groups or roles (a list replaces the previous one; [] removes them all).",
      minProperties: 1,
    },
  ),
);
export type UserPatch = Static<typeof UserPatch>;

const metadata = Type.Partial(ClientMetadata).properties;

/** The RFC 7591 metadata members the admin API takes. */
export const CLIENT_METADATA_MEMBERS: readonly string[] = Object.keys(ClientMetadata.properties);

/** A client as POST /tenants/{t}/clients takes it: its metadata, redirect URIs required. */
export const ClientRegistration = named(
  "ClientRegistration",
  Type.Object(
    { ...metadata, redirect_uris: ClientMetadata.properties.redirect_uris },
    {
      additionalProperties: false,
      description:
        "RFC 7591 §2 client metadata. A confidential client's secret is in the response to this request only.",
    },
  ),
);

const CLIENT = {
  client_id: Type.String({ description: "The client id." }),
  preRegistered: Type.Boolean({
    description:
      "true: pre-registered for this tenant through this API. false: registered otherwise (dynamically, or a Client ID Metadata Document) and listed because it holds grants on this tenant.",
  }),
  grants: Type.Integer({
    minimum: 0,
    description: "Live (unrevoked) grants the client holds on this tenant.",
  }),
  client_id_issued_at: Type.Optional(
    Type.Integer({ description: "When it was registered (epoch seconds)." }),
  ),
  client_secret_expires_at: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "Confidential clients: when the secret expires (epoch seconds), with a dynamic registration that goes unused; 0: never (pre-registered clients).",
    }),
  ),
  lastUsedAt: Type.Optional(
    described(
      Timestamp,
      "When the client last obtained a token (absent: never, or not since this was recorded).",
    ),
  ),
  expiresAt: Type.Optional(
    described(
      Timestamp,
      "Dynamically registered clients: when the registration is deleted unless the client obtains a token before (docs/oauth.md). Absent: never (pre-registered).",
    ),
  ),
  ...metadata,
};
export const OAuthClient = named(
  "OAuthClient",
  Type.Object(CLIENT, {
    additionalProperties: false,
    description:
      "An OAuth client of the tenant. Its secret is never shown; metadata is absent for a Client ID Metadata Document (an https client_id).",
  }),
);
export const OAuthClientCreated = named(
  "OAuthClientCreated",
  Type.Object(
    {
      ...CLIENT,
      client_secret: Type.Optional(
        Type.String({ description: "Confidential clients: the secret. Shown once: store it now." }),
      ),
    },
    { additionalProperties: false },
  ),
);

/** Component schemas of the OAuth resources, by name. */
export const OAUTH_SCHEMAS: Record<string, Schema> = {
  ...components(Username, User, UserInput, UserPatch),
  ...components(ClientRegistration, OAuthClient, OAuthClientCreated),
  Grant: obj(
    {
      id: str("Grant id.", { pattern: GRANT_ID }),
      client_id: str("The client it was granted to."),
      sub: str("The user who granted it (their `sub`)."),
      scope: str("Space-separated scopes granted."),
      createdAt: ref("Timestamp"),
      revokedAt: ref("Timestamp"),
    },
    ["id", "client_id", "sub", "scope", "createdAt"],
    {
      description: "What a user granted a client on the tenant; its refresh and access tokens live with it.",
    },
  ),
  ...components(
    ADMIN_TENANTS.LocalIdentity,
    ADMIN_TENANTS.OidcIdentity,
    ADMIN_TENANTS.ExternalIdentity,
    ADMIN_TENANTS.TenantIdentity,
  ),
};
